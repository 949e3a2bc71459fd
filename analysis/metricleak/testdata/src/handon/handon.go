// Package handon hands registrations on instead of undoing them.
package handon

import (
	"errors"

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
}

// watchers keeps the APIs it is given.
type watchers struct{ apis []*kube.API }

func (w *watchers) add(api *kube.API) { w.apis = append(w.apis, api) } // want add:"keeps 1>0"

// PassedToKeeper hands the API to a method that keeps it in the receiver.
func (c *Controller) PassedToKeeper(reg prometheus.Registerer, connect func() error) error { // want PassedToKeeper:"^registers"
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

func (c *Controller) StoreInReceiver(reg prometheus.Registerer, connect func() error) error { // want StoreInReceiver:"^registers"
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	c.api = api
	return connect()
}

func (c *Controller) StoreBeforeRegistering(reg prometheus.Registerer, connect func() error) error { // want StoreBeforeRegistering:"^registers"
	w := &watcher{}
	c.stop = func() { w.stop() }
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	w.api = api
	return connect()
}

func (c *Controller) MethodValueInReceiver(reg prometheus.Registerer, connect func() error) error { // want MethodValueInReceiver:"^registers"
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	c.stop = api.UnregisterGauges
	return connect()
}

func (c *Controller) MethodValueInMap(reg prometheus.Registerer, connect func() error) error { // want MethodValueInMap:"^registers"
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	c.stops["east"] = api.UnregisterGauges
	return connect()
}

var current *kube.API

func StoreInGlobal(reg prometheus.Registerer, connect func() error) error { // want StoreInGlobal:"^registers"
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
	return errFailed // want `attempts_total registered at handon\.go:155 stays registered`
}

// Cleanup hands a cleanup function back; its caller calls it on failure.
func Cleanup(reg prometheus.Registerer) (func(), error) { // want Cleanup:"registers attempts_total at handon\\.go:167 \\(result 0, registerer 0\\)"
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
	return connect() // want `^attempts_total registered at handon\.go:167 \(via Cleanup\) stays registered when this returns an error: close its scope, or unregister it, before returning$`
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

func remember(v any) { seen = append(seen, v) } // want remember:"keeps 0>-1"

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
func KeptWhole(reg prometheus.Registerer, connect func() error) (*watcher, error) { // want KeptWhole:"^registers"
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
