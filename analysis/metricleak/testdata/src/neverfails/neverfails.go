// Package neverfails branches on the errors of functions that never fail:
// those branches are never taken, so they leave nothing behind.
package neverfails

import (
	"errors"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"kube"
)

var errFailed = errors.New("failed")

func gauge() prometheus.Gauge { return prometheus.NewGauge(prometheus.GaugeOpts{Name: "up"}) }

// Start never fails; other packages know it by a fact.
func Start() error { return nil } // want Start:"never fails"

// startAll never fails either: it returns what Start does.
func startAll() error {
	if err := Start(); err != nil {
		return err
	}
	return Start()
}

type server struct {
	mu   sync.Mutex
	port int
}

func (*server) listen() error { return nil }

// Configure never fails: its deferred call cannot set an unnamed result.
func (s *server) Configure(port int) error { // want Configure:"never fails"
	s.mu.Lock()
	defer s.mu.Unlock()
	s.port = port
	return nil
}

// lockedMayFail fails sometimes, and defers a call.
func (s *server) lockedMayFail(ok bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !ok {
		return errFailed
	}
	return nil
}

// mayFail fails sometimes.
func mayFail(ok bool) error {
	if !ok {
		return errFailed
	}
	return nil
}

// recovering has a named error result that its deferred call may set.
func recovering() (err error) {
	defer func() {
		if recover() != nil {
			err = errFailed
		}
	}()
	return nil
}

// retry calls itself: it is taken to fail sometimes.
func retry(n int) error {
	if n == 0 {
		return nil
	}
	return retry(n - 1)
}

// deadBranches returns errors of its own on branches that are never taken.
func deadBranches(reg prometheus.Registerer, api *kube.API, s *server) error {
	reg.MustRegister(gauge())
	if err := startAll(); err != nil {
		return errFailed
	}
	if err := api.Sync(); err != nil { // kube's fact
		return fmt.Errorf("sync: %w", err)
	}
	if err := s.Configure(80); err != nil {
		return err
	}
	if err := s.listen(); err == nil {
		return nil
	}
	return errFailed
}

// nilReturns returns only errors that are nil.
func nilReturns(reg prometheus.Registerer) error {
	reg.MustRegister(gauge())
	if err := startAll(); err != nil {
		return err
	}
	return startAll()
}

func liveBranch(reg prometheus.Registerer, ok bool) error {
	reg.MustRegister(gauge())
	if err := mayFail(ok); err != nil {
		return err // want `^up registered at neverfails\.go:\d+ stays registered`
	}
	return nil
}

func deferringMayFail(reg prometheus.Registerer, s *server, ok bool) error {
	reg.MustRegister(gauge())
	return s.lockedMayFail(ok) // want `^up registered at neverfails\.go:\d+ stays registered`
}

func deferredResult(reg prometheus.Registerer) error {
	reg.MustRegister(gauge())
	return recovering() // want `^up registered at neverfails\.go:\d+ stays registered`
}

func recursive(reg prometheus.Registerer) error {
	reg.MustRegister(gauge())
	return retry(3) // want `^up registered at neverfails\.go:\d+ stays registered`
}

// throughInterface calls a method of an interface: nothing is known of it.
func throughInterface(reg prometheus.Registerer, api kube.Interface) error {
	reg.MustRegister(gauge())
	if err := api.Sync(); err != nil {
		return err // want `^up registered at neverfails\.go:\d+ stays registered`
	}
	return nil
}

// checkedFirst returns err after testing it: on the last return it is nil.
func checkedFirst(reg prometheus.Registerer, open func() (int, error)) (string, error) {
	n, err := open()
	if err != nil {
		return "", err
	}
	reg.MustRegister(gauge())
	return fmt.Sprint(n), err
}

// checkedEqual tests err the other way round.
func checkedEqual(reg prometheus.Registerer, open func() (int, error)) (string, error) {
	n, err := open()
	if err == nil {
		reg.MustRegister(gauge())
		return fmt.Sprint(n), err
	}
	return "", err
}

// checkedOnOnePath tests err on one path to the return only.
func checkedOnOnePath(reg prometheus.Registerer, open func() (int, error)) (string, error) {
	n, err := open()
	if n < 0 {
		if err != nil {
			return "", err
		}
	}
	reg.MustRegister(gauge())
	return fmt.Sprint(n), err // want `^up registered at neverfails\.go:\d+ stays registered`
}

// Swallow never fails: it returns its error only where it tested it nil.
func Swallow(ok bool) error { // want Swallow:"never fails"
	err := mayFail(ok)
	if err != nil {
		return nil
	}
	return err
}
