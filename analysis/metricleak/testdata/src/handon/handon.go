// Package handon hands registrations on instead of undoing them. A function
// that stores the owner of a registration where it outlives the call,
// rather than handing it back to its caller, carries no registersFact: its
// caller owns nothing.
package handon

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"kube"
)

var errFailed = errors.New("failed")

type watcher struct {
	api  *kube.API
	stop func()
	name string
}

// PartialResult returns the API with the error: the caller owns it.
func PartialResult(reg prometheus.Registerer, connect func() error) (*kube.API, error) { // want PartialResult:"^registers"
	api, err := kube.NewAPI(reg)
	if err != nil {
		return nil, err
	}
	return api, connect()
}

// Controller keeps what it starts.
type Controller struct {
	api      *kube.API
	stop     func()
	stops    map[string]func()
	watchers watchers
	byName   sync.Map
	current  atomic.Pointer[kube.API]
	latest   atomic.Value
}

// watchers keeps the APIs it is given.
type watchers struct{ apis []*kube.API }

func (w *watchers) add(api *kube.API) { w.apis = append(w.apis, api) }

// PassedToKeeper hands the API to a method that keeps it in the receiver.
func (c *Controller) PassedToKeeper(reg prometheus.Registerer, connect func() error) error {
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	c.watchers.add(api)
	return connect()
}

// PassedToLocalKeeper hands it to one that is dropped.
func PassedToLocalKeeper(reg prometheus.Registerer, connect func() error) (*watchers, error) { // want PassedToLocalKeeper:"^registers"
	var ws watchers
	api, err := kube.NewAPI(reg)
	if err != nil {
		return nil, err
	}
	ws.add(api)
	if err := connect(); err != nil {
		return nil, err // want `via kube\.NewAPI\) stay registered`
	}
	return &ws, nil
}

func (c *Controller) StoreInReceiver(reg prometheus.Registerer, connect func() error) error {
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	c.api = api
	return connect()
}

func (c *Controller) StoreBeforeRegistering(reg prometheus.Registerer, connect func() error) error {
	w := &watcher{}
	c.stop = func() { w.stop() }
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	w.api = api
	return connect()
}

func (c *Controller) MethodValueInReceiver(reg prometheus.Registerer, connect func() error) error {
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	c.stop = api.UnregisterGauges
	return connect()
}

func (c *Controller) MethodValueInMap(reg prometheus.Registerer, connect func() error) error {
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	c.stops["east"] = api.UnregisterGauges
	return connect()
}

// StoreInSyncMap, StoreInAtomic and StoreInAtomicValue keep the API in
// the receiver through the standard library's concurrent setters.
func (c *Controller) StoreInSyncMap(reg prometheus.Registerer, connect func() error) error {
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	c.byName.Store("east", api)
	return connect()
}

func (c *Controller) StoreInAtomic(reg prometheus.Registerer, connect func() error) error {
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	if old := c.current.Swap(api); old != nil {
		old.UnregisterGauges()
	}
	return connect()
}

func (c *Controller) StoreInAtomicValue(reg prometheus.Registerer, connect func() error) error {
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	c.latest.Store(api)
	return connect()
}

// byNameSet keeps an API in a sync.Map, so it carries a keepsFact.
func (c *Controller) byNameSet(api *kube.API) { c.byName.Store("east", api) }

func (c *Controller) StoreThroughSetter(reg prometheus.Registerer, connect func() error) error {
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	c.byNameSet(api)
	return connect()
}

// StoreDeferred keeps the API in the receiver when it returns, on failure
// too.
func (c *Controller) StoreDeferred(reg prometheus.Registerer, connect func() error) error {
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	defer c.watchers.add(api)
	return connect()
}

// StoreInLocalSyncMap keeps it in a map that is dropped.
func StoreInLocalSyncMap(reg prometheus.Registerer, connect func() error) error { // want StoreInLocalSyncMap:"^registers"
	var m sync.Map
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	m.Store("east", api)
	if err := connect(); err != nil {
		return err // want `via kube\.NewAPI\) stay registered`
	}
	m.Range(func(k, v any) bool { return true })
	return nil
}

var current *kube.API

func StoreInGlobal(reg prometheus.Registerer, connect func() error) error {
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	current = api
	return connect()
}

func Send(reg prometheus.Registerer, ch chan<- *kube.API, connect func() error) error { // want Send:"^registers"
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	ch <- api
	return connect()
}

// MethodValueInStruct keeps the unregistering method value in a struct and
// calls it on failure.
func MethodValueInStruct(reg prometheus.Registerer, connect func() error) (*watcher, error) { // want MethodValueInStruct:"^registers"
	api, err := kube.NewAPI(reg)
	if err != nil {
		return nil, err
	}
	w := &watcher{api: api, stop: api.UnregisterGauges}
	if err := connect(); err != nil {
		w.stop()
		return nil, err
	}
	return w, nil
}

// MethodValueDropped keeps it in a struct that is dropped on failure.
func MethodValueDropped(reg prometheus.Registerer, connect func() error) (*watcher, error) { // want MethodValueDropped:"^registers"
	api, err := kube.NewAPI(reg)
	if err != nil {
		return nil, err
	}
	w := &watcher{stop: api.UnregisterGauges}
	if err := connect(); err != nil {
		return nil, err // want `via kube\.NewAPI\) stay registered`
	}
	return w, nil
}

// CleanupClosure undoes through a local closure.
func CleanupClosure(reg prometheus.Registerer, connect func() error) error { // want CleanupClosure:"^registers"
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "attempts_total"})
	reg.MustRegister(c)
	cleanup := func() { reg.Unregister(c) }
	if err := connect(); err != nil {
		cleanup()
		return err
	}
	return errFailed // want `attempts_total registered at handon\.go:232 stays registered`
}

// Cleanup hands a cleanup function back; its caller calls it on failure.
func Cleanup(reg prometheus.Registerer) (func(), error) { // want Cleanup:"registers attempts_total at handon/handon\\.go:244 \\(result 0, registerer 0\\)" Cleanup:"never fails"
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "attempts_total"})
	reg.MustRegister(c)
	return func() { reg.Unregister(c) }, nil
}

func UseCleanup(reg prometheus.Registerer, connect func() error) error { // want UseCleanup:"^registers"
	cleanup, err := Cleanup(reg)
	if err != nil {
		return err
	}
	if err := connect(); err != nil {
		cleanup()
		return err
	}
	return connect() // want `^attempts_total registered at handon\.go:244 \(via Cleanup\) stays registered when this returns an error: unregister it before returning, or call Cleanup after the last error return$`
}

func Goroutine(reg prometheus.Registerer, connect func() error) error { // want Goroutine:"^registers"
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	go func() { _ = api.Sync() }()
	return connect()
}

// StoreOnSuccess stores the API in the receiver only when it succeeds;
// storing something else of the receiver's on the way hands nothing on.
func (c *Controller) StoreOnSuccess(reg prometheus.Registerer, connect func() error) error { // want StoreOnSuccess:"^registers"
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	c.stop = c.stops["default"]
	if err := connect(); err != nil {
		return err // want `via kube\.NewAPI\) stay registered`
	}
	c.api = api
	return nil
}

var seen []any

func remember(v any) { seen = append(seen, v) }

// KeptNameOnly keeps a string read from the owner: that keeps no owner.
func KeptNameOnly(reg prometheus.Registerer, connect func() error) (*watcher, error) { // want KeptNameOnly:"^registers"
	api, err := kube.NewAPI(reg)
	if err != nil {
		return nil, err
	}
	w := &watcher{api: api, name: "east"}
	remember(w.name)
	if err := connect(); err != nil {
		return nil, err // want `via kube\.NewAPI\) stay registered`
	}
	return w, nil
}

// KeptWhole keeps the owner itself: that hands it on.
func KeptWhole(reg prometheus.Registerer, connect func() error) (*watcher, error) {
	api, err := kube.NewAPI(reg)
	if err != nil {
		return nil, err
	}
	w := &watcher{api: api, name: "east"}
	remember(w)
	if err := connect(); err != nil {
		return nil, err
	}
	return w, nil
}

// tenants makes one API per tenant on first use, and keeps it.
type tenants struct {
	reg  prometheus.Registerer
	apis map[string]*kube.API
}

// ForTenant is a get-or-create method: the API it makes is kept in a map
// of the receiver as well as returned, so the receiver owns it, and its
// caller does not.
func (t *tenants) ForTenant(name string) (*kube.API, error) {
	if api, ok := t.apis[name]; ok {
		return api, nil
	}
	api, err := kube.NewAPI(t.reg)
	if err != nil {
		return nil, err
	}
	t.apis[name] = api
	return api, nil
}

func (t *tenants) SyncTenant(name string, connect func() error) error {
	api, err := t.ForTenant(name)
	if err != nil {
		return err
	}
	if err := connect(); err != nil {
		return err
	}
	return api.Sync()
}

// NewTenant makes an API without keeping it: its caller owns it.
func (t *tenants) NewTenant() (*kube.API, error) { // want NewTenant:"registers .* \\(result 0, registerer 0\\)"
	return kube.NewAPI(t.reg)
}

func (t *tenants) StartTenant(name string, connect func() error) error { // want StartTenant:"registers .* \\(result -1, registerer 0\\)"
	api, err := t.NewTenant()
	if err != nil {
		return err
	}
	if err := connect(); err != nil {
		return err // want `\(via \(\*tenants\)\.NewTenant\) stay registered`
	}
	t.apis[name] = api
	return nil
}

// KeptByDeferredClosure and KeptByClosure store the API in the receiver from
// a closure, deferred or called at once.
func (c *Controller) KeptByDeferredClosure(reg prometheus.Registerer, connect func() error) error {
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	defer func() { c.api = api }()
	return connect()
}

func (c *Controller) KeptByClosure(reg prometheus.Registerer, connect func() error) error {
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	func() { c.api = api }()
	return connect()
}

// KeptInLocalByClosure stores it in a local variable: not kept.
func KeptInLocalByClosure(reg prometheus.Registerer, connect func() error) error { // want KeptInLocalByClosure:"^registers"
	var kept *kube.API
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	func() { kept = api }()
	if err := connect(); err != nil {
		return err // want `via kube\.NewAPI\) stay registered`
	}
	return kept.Sync()
}

// KeptByMethodValue stores the API through a method value of the receiver's
// sync.Map.
func (c *Controller) KeptByMethodValue(reg prometheus.Registerer, connect func() error) error {
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	store := c.byName.Store
	store("east", api)
	return connect()
}

// ReturnedWithError returns the API with an error that is never nil: by Go's
// convention a caller ignores the other results then, so nothing is handed
// back there.
func ReturnedWithError(reg prometheus.Registerer, connect func() error) (*kube.API, error) { // want ReturnedWithError:"^registers"
	api, err := kube.NewAPI(reg)
	if err != nil {
		return nil, err
	}
	if err := connect(); err != nil {
		return api, err // want `via kube\.NewAPI\) stay registered`
	}
	if !api.Ready() {
		return api, errFailed // related
	}
	return api, nil
}

// connectError is an error of WrappedWithError's.
type connectError struct{ err error }

func (e *connectError) Error() string { return "connecting: " + e.err.Error() }

// WrappedWithError returns a value that holds the API, with a new error.
func WrappedWithError(reg prometheus.Registerer, connect func() error) (*watcher, error) { // want WrappedWithError:"^registers"
	api, err := kube.NewAPI(reg)
	if err != nil {
		return nil, err
	}
	if err := connect(); err != nil {
		return &watcher{api: api}, &connectError{err} // want `via kube\.NewAPI\) stay registered`
	}
	return &watcher{api: api}, nil
}

// ReturnedWithErrorDeferred is ReturnedWithError with a deferred call, for
// which the results are kept in memory and reloaded at the returns.
func ReturnedWithErrorDeferred(reg prometheus.Registerer, connect func() error, done func()) (*kube.API, error) { // want ReturnedWithErrorDeferred:"^registers"
	defer done()
	api, err := kube.NewAPI(reg)
	if err != nil {
		return nil, err
	}
	if err := connect(); err != nil {
		return api, err // want `via kube\.NewAPI\) stay registered`
	}
	return api, nil
}
