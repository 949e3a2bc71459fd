// Package scope registers through promscope scopes.
package scope

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/promscope/promscope/lifecycle"
	"github.com/promscope/promscope/registry"
)

var errFailed = errors.New("failed")

type Watcher struct{ scope *registry.Scope }

func (w *Watcher) Close() error { return w.scope.Close() } // want Close:"unregisters"

func gauge() prometheus.Gauge { return prometheus.NewGauge(prometheus.GaugeOpts{Name: "objects"}) }

func CloseOnError(reg prometheus.Registerer, connect func() error) (_ *Watcher, err error) { // want CloseOnError:"^registers"
	scope := registry.NewScope(reg)
	defer lifecycle.CloseOnError(&err, scope)
	scope.MustRegister(gauge())
	if err = connect(); err != nil {
		return nil, err
	}
	return &Watcher{scope: scope}, nil
}

func NoClose(reg prometheus.Registerer, connect func() error) (*Watcher, error) { // want NoClose:"^registers"
	scope := registry.NewScope(reg)
	scope.MustRegister(gauge())
	if err := connect(); err != nil {
		return nil, err // want `^objects registered at scope\.go:33 stays registered when this returns an error: close its scope before returning$`
	}
	return &Watcher{scope: scope}, nil
}

func DeferClose(reg prometheus.Registerer, connect func() error) error {
	scope := registry.NewScope(reg)
	defer scope.Close()
	scope.MustRegister(gauge())
	return connect()
}

func CloseOnOnePath(reg prometheus.Registerer, connect, sync func() error) (*Watcher, error) { // want CloseOnOnePath:"^registers"
	scope := registry.NewScope(reg)
	promauto.With(scope).NewGauge(prometheus.GaugeOpts{Name: "objects"})
	if err := connect(); err != nil {
		scope.Close()
		return nil, err
	}
	if err := sync(); err != nil {
		return nil, err // want `^objects registered at scope\.go:49 stays registered when this returns an error: close its scope before returning$`
	}
	return &Watcher{scope: scope}, nil
}

// CallerScope registers through the scope its caller owns.
func CallerScope(scope *registry.Scope, connect func() error) (prometheus.Gauge, error) { // want CallerScope:"registers objects at scope/scope.go:63 \\(result 0, registerer 0\\)"
	g := gauge()
	scope.MustRegister(g)
	if err := connect(); err != nil {
		return nil, err
	}
	return g, nil
}

func ChildOfCallerScope(scope *registry.Scope, connect func() error) error {
	child := scope.Child()
	child.MustRegister(gauge())
	return connect() // want `objects registered at scope\.go:72 stays registered when this returns an error: close its scope before returning`
}

func CloseParent(reg prometheus.Registerer, connect func() error) error {
	parent := registry.NewScope(reg)
	child := parent.Child()
	child.MustRegister(gauge())
	if err := connect(); err != nil {
		parent.Close()
		return err
	}
	return parent.Close()
}

// ThroughHelper's scope is registered on by a helper that returns nothing.
func ThroughHelper(reg prometheus.Registerer, connect func() error) error {
	scope := registry.NewScope(reg)
	if _, err := CallerScope(scope, connect); err != nil {
		return err
	}
	if err := connect(); err != nil {
		return err // want `^objects registered at scope\.go:63 \(via CallerScope\) stays registered when this returns an error: close its scope before returning$`
	}
	if err := connect(); err != nil {
		scope.Close()
		return err
	}
	return scope.Close()
}

func SlotBuild(slot *lifecycle.Slot[*Watcher], connect func() error) (*Watcher, error) {
	return slot.Replace(func(scope *registry.Scope) (*Watcher, error) {
		scope.MustRegister(gauge())
		if err := connect(); err != nil {
			return nil, err
		}
		return &Watcher{scope: scope}, nil
	})
}

func Stack(reg prometheus.Registerer, connect func() error) (*Watcher, error) { // want Stack:"^registers"
	var stack lifecycle.Stack
	scope := registry.NewScope(reg)
	stack.Push(scope)
	scope.MustRegister(gauge())
	if err := connect(); err != nil {
		stack.Close()
		return nil, err
	}
	return &Watcher{scope: scope}, nil
}

type Component struct{ stack lifecycle.Stack }

func (c *Component) Start(reg prometheus.Registerer, connect func() error) error {
	scope := registry.NewScope(reg)
	c.stack.Push(scope)
	scope.MustRegister(gauge())
	return connect()
}

func WatcherClose(reg prometheus.Registerer, connect func() error) (*Watcher, error) { // want WatcherClose:"^registers"
	w := &Watcher{scope: registry.NewScope(reg)}
	w.scope.MustRegister(gauge())
	if err := connect(); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// newSlotWatcher registers through an interface parameter and returns an
// error without undoing that: the constructor a lifecycle.Slot's build
// function calls. Every call passes it a scope, so the caller's scope owns
// what it registers, as if the parameter were a *registry.Scope.
func newSlotWatcher(reg prometheus.Registerer, connect func() error) (*Watcher, error) {
	if err := registerGauge(reg, connect); err != nil {
		return nil, err
	}
	reg.MustRegister(gauge())
	if err := connect(); err != nil {
		return nil, err
	}
	return &Watcher{}, nil
}

// registerGauge is called only by newSlotWatcher, with its parameter.
func registerGauge(reg prometheus.Registerer, connect func() error) error {
	reg.MustRegister(gauge())
	return connect()
}

func SlotWatcher(slot *lifecycle.Slot[*Watcher], connect func() error) (*Watcher, error) {
	return slot.Replace(func(scope *registry.Scope) (*Watcher, error) {
		return newSlotWatcher(scope, connect)
	})
}

// newMixedWatcher is given a scope by one call and the caller's registerer
// by another, which drops the watcher and keeps the gauge registered.
func newMixedWatcher(reg prometheus.Registerer, connect func() error) (*Watcher, error) {
	reg.MustRegister(gauge())
	if err := connect(); err != nil {
		return nil, err // want `^objects registered at scope\.go:\d+ stays registered`
	}
	return &Watcher{}, nil
}

func MixedWatchers(slot *lifecycle.Slot[*Watcher], reg prometheus.Registerer, connect func() error) (*Watcher, error) { // want MixedWatchers:"registers objects at scope/scope.go:\\d+ \\(result -1, registerer 1, own\\)"
	if _, err := newMixedWatcher(reg, connect); err != nil {
		return nil, err
	}
	return slot.Replace(func(scope *registry.Scope) (*Watcher, error) { // want `^objects registered at scope\.go:\d+ \(via newMixedWatcher\) stays registered when this returns an error: nothing here can unregister it: make newMixedWatcher hand it back, or call it after the last error return$`
		return newMixedWatcher(scope, connect)
	})
}

// newEscapingWatcher is used as a value too: who calls it is not known.
func newEscapingWatcher(reg prometheus.Registerer, connect func() error) (*Watcher, error) {
	reg.MustRegister(gauge())
	if err := connect(); err != nil {
		return nil, err // want `^objects registered at scope\.go:\d+ stays registered`
	}
	return &Watcher{}, nil
}

var build = newEscapingWatcher

func EscapingWatcher(slot *lifecycle.Slot[*Watcher], connect func() error) (*Watcher, error) {
	return slot.Replace(func(scope *registry.Scope) (*Watcher, error) {
		return newEscapingWatcher(scope, connect)
	})
}
