// Package defers undoes registrations in deferred calls.
package defers

import (
	"github.com/prometheus/client_golang/prometheus"

	"kube"
)

type Watcher struct{ api *kube.API }

func DeferredClosure(reg prometheus.Registerer, connect func() error) (_ *Watcher, err error) { // want DeferredClosure:"^registers"
	api, err := kube.NewAPI(reg)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			api.UnregisterGauges()
		}
	}()
	if err = connect(); err != nil {
		return nil, err
	}
	return &Watcher{api: api}, nil
}

func DeclaredBefore(reg prometheus.Registerer, connect func() error) (_ *Watcher, err error) { // want DeclaredBefore:"^registers"
	var api *kube.API
	defer func() {
		if err != nil && api != nil {
			api.UnregisterGauges()
		}
	}()
	api, err = kube.NewAPI(reg)
	if err != nil {
		return nil, err
	}
	if err = connect(); err != nil {
		return nil, err
	}
	return &Watcher{api: api}, nil
}

func DeferredMethod(reg prometheus.Registerer, connect func() error) error {
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	defer api.UnregisterGauges()
	return connect()
}

func DeferredUnregister(reg prometheus.Registerer, connect func() error) error {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "attempts_total"})
	reg.MustRegister(c)
	defer reg.Unregister(c)
	return connect()
}

func DeferredUnrelated(reg prometheus.Registerer, connect func() error) error { // want DeferredUnrelated:"^registers"
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	other := &kube.API{}
	defer other.UnregisterGauges()
	defer api.Close()
	return connect() // want `service_cache_size and endpoints_cache_size registered at kube/kube\.go:29 \(via kube\.NewAPI\) stay registered`
}

func DeferredAfterReturn(reg prometheus.Registerer, connect func() error) error { // want DeferredAfterReturn:"^registers"
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	if err := connect(); err != nil {
		return err // want `via kube\.NewAPI`
	}
	defer api.UnregisterGauges()
	return connect()
}

// CleanupSlice appends the undo to a slice of cleanups that a deferred
// closure runs, as projects without a cleanup type of their own do.
func CleanupSlice(reg prometheus.Registerer, connect func() error) error {
	var cleanups []func()
	defer func() {
		for _, f := range cleanups {
			f()
		}
	}()
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	cleanups = append(cleanups, api.UnregisterGauges)
	return connect()
}

// CleanupSliceOfOthers runs cleanups that undo nothing of the API's.
func CleanupSliceOfOthers(reg prometheus.Registerer, connect, other func() error) error { // want CleanupSliceOfOthers:"^registers"
	var cleanups []func() error
	defer func() {
		for _, f := range cleanups {
			_ = f()
		}
	}()
	api, err := kube.NewAPI(reg)
	if err != nil {
		return err
	}
	cleanups = append(cleanups, other)
	if err := connect(); err != nil {
		return err // want `via kube\.NewAPI\) stay registered`
	}
	return api.Sync()
}
