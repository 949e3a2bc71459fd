// Package listener calls functions that register collectors of their own on
// the registerer it gives them and hand back nothing to unregister them
// with: when it fails after such a call, the collectors stay, and the next
// call fails with a duplicate registration.
package listener

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/promscope/promscope/registry"

	"sqlstore"
)

// Listen opens the store, then fails to listen.
func Listen(reg prometheus.Registerer, listen func() error) (*sqlstore.DB, error) { // want Listen:"registers sqlstore_open_connections at sqlstore/sqlstore.go:\\d+ \\(result -1, registerer 0, own\\)"
	db, err := sqlstore.Open("kv", reg)
	if err != nil {
		return nil, err
	}
	if err := listen(); err != nil {
		return nil, err // want `^sqlstore_open_connections registered at sqlstore/sqlstore\.go:\d+ \(via sqlstore\.Open\) stays registered when this returns an error: nothing here can unregister it: make sqlstore\.Open hand it back, or call it after the last error return$`
	}
	return db, nil
}

// ListenAfter opens the store after the last error return: nothing is left
// when it fails, and its caller is told what is left when it succeeds.
func ListenAfter(reg prometheus.Registerer, listen func() error) (*sqlstore.DB, error) { // want ListenAfter:"registers sqlstore_open_connections at sqlstore/sqlstore.go:\\d+ \\(result -1, registerer 0, own\\)"
	if err := listen(); err != nil {
		return nil, err
	}
	return sqlstore.Open("kv", reg)
}

// ListenScoped gives the store a scope, which it closes when it fails.
func ListenScoped(scope *registry.Scope, listen func() error) (*sqlstore.DB, error) { // want ListenScoped:"registers sqlstore_open_connections at sqlstore/sqlstore.go:\\d+ \\(result -1, registerer 0\\)"
	db, err := sqlstore.Open("kv", scope)
	if err != nil {
		return nil, err
	}
	if err := listen(); err != nil {
		scope.Close()
		return nil, err
	}
	return db, nil
}

// ListenPrivately gives the store a registry of its own, which goes away
// with what is in it.
func ListenPrivately(listen func() error) (*sqlstore.DB, error) {
	db, err := sqlstore.Open("kv", prometheus.NewRegistry())
	if err != nil {
		return nil, err
	}
	if err := listen(); err != nil {
		return nil, err
	}
	return db, nil
}

// ListenShared registers the program's gauge, and one that is harmless to
// register again, and keeps the store's: none of them is left behind.
func ListenShared(reg prometheus.Registerer, s *sqlstore.Store, listen func() error) error { // want ListenShared:"registers metrics at sqlstore/sqlstore.go:\\d+ \\(result -1, registerer 0, collectors \\[1\\]\\)"
	if err := sqlstore.RegisterShared(reg); err != nil {
		return err
	}
	if err := sqlstore.Tolerant(reg); err != nil {
		return err
	}
	s.Instrument(reg)
	return listen()
}

// ListenPinged fails after a call that fails itself: its failure is
// reported in the callee, and its success leaves the counter behind.
func ListenPinged(reg prometheus.Registerer, ping, listen func() error) error { // want ListenPinged:"registers sqlstore_pings_total at sqlstore/sqlstore.go:\\d+ \\(result -1, registerer 0, own\\)"
	if err := sqlstore.Failing(reg, ping); err != nil {
		return err
	}
	return listen() // want `^sqlstore_pings_total registered at sqlstore/sqlstore\.go:\d+ \(via sqlstore\.Failing\) stays registered when this returns an error: nothing here can unregister it: make sqlstore\.Failing hand it back, or call it after the last error return$`
}

// ListenCounted registers a counter of its own too: that one it can
// unregister.
func ListenCounted(reg prometheus.Registerer, listen func() error) (*sqlstore.DB, error) { // want ListenCounted:"registers .* \\(result -1, registerer 0, own\\)"
	accepted := prometheus.NewCounter(prometheus.CounterOpts{Name: "accepted_total"})
	if err := reg.Register(accepted); err != nil {
		return nil, err
	}
	db, err := sqlstore.Open("kv", reg) // related: registered
	if err != nil {
		reg.Unregister(accepted)
		return nil, err
	}
	if err := listen(); err != nil {
		return nil, err // want `^accepted_total and sqlstore_open_connections registered at listener\.go:\d+ and 1 other place stay registered when this returns an error: unregister them before returning, and call sqlstore\.Open, which hands back nothing to unregister with, after the last error return$`
	}
	return db, nil
}

// ListenTwice calls two such functions before it may fail.
func ListenTwice(reg prometheus.Registerer, ping, listen func() error) error { // want ListenTwice:"registers .* \\(result -1, registerer 0, own\\)"
	if _, err := sqlstore.Open("kv", reg); err != nil {
		return err
	}
	if err := sqlstore.Failing(reg, ping); err != nil { // related: registered
		return err // want `^sqlstore_open_connections registered at sqlstore/sqlstore\.go:\d+ \(via sqlstore\.Open\) stays registered when this returns an error: nothing here can unregister it: make sqlstore\.Open hand it back, or call it after the last error return$`
	}
	return listen() // want `^sqlstore_open_connections and sqlstore_pings_total registered at sqlstore/sqlstore\.go:\d+ \(via sqlstore\.Open\) and 1 other place stay registered when this returns an error: nothing here can unregister them, so make those calls after the last error return$`
}

// ListenAll takes back what OpenAll hands back, when OpenAll fails too.
func ListenAll(reg prometheus.Registerer, ping, listen func() error) error { // want ListenAll:"registers sqlstore_all_open at sqlstore/sqlstore.go:\\d+ \\(result -1, registerer 0, own\\)"
	cs, err := sqlstore.OpenAll(reg, ping)
	if err != nil {
		for _, c := range cs {
			reg.Unregister(c)
		}
		return err
	}
	if err := listen(); err != nil {
		for _, c := range cs {
			reg.Unregister(c)
		}
		return err
	}
	return nil
}

// ListenAllCarelessly drops what OpenAll hands back with its error.
func ListenAllCarelessly(reg prometheus.Registerer, ping func() error) error { // want ListenAllCarelessly:"registers sqlstore_all_open at sqlstore/sqlstore.go:\\d+ \\(result -1, registerer 0, own\\)"
	if _, err := sqlstore.OpenAll(reg, ping); err != nil {
		return err // want `^sqlstore_all_open registered at sqlstore/sqlstore\.go:\d+ \(via sqlstore\.OpenAll\) stays registered when this returns an error: unregister it before returning`
	}
	return nil
}

// ListenProbed asks the registerer with a probe, which sqlstore.Probe
// takes back or which the registerer refused: nothing is left.
func ListenProbed(reg prometheus.Registerer, listen func() error) error {
	if sqlstore.Probe(reg) || sqlstore.ProbeIs(reg) || sqlstore.ProbeAsType(reg) {
		return nil
	}
	return listen()
}

// ListenWatched gives the store a context whose end unregisters what it
// registered, and ListenSent receives it.
func ListenWatched(ctx context.Context, reg prometheus.Registerer, listen func() error) error {
	ctx, cancel := context.WithCancel(ctx)
	if err := sqlstore.Watch(ctx, reg); err != nil {
		cancel()
		return err
	}
	if err := listen(); err != nil {
		cancel()
		return err
	}
	return nil
}

func ListenSent(reg prometheus.Registerer, listen func() error) error {
	ch := make(chan prometheus.Collector, 1)
	sqlstore.Send(reg, ch)
	if err := listen(); err != nil {
		reg.Unregister(<-ch)
		return err
	}
	return nil
}

// tracking is a registerer of the program's own that can unregister all
// that went through it.
type tracking struct {
	prometheus.Registerer
	cs []prometheus.Collector
}

func (t *tracking) Register(c prometheus.Collector) error { // want Register:"keeps 1>0"
	t.cs = append(t.cs, c)
	return t.Registerer.Register(c)
}

func (t *tracking) MustRegister(cs ...prometheus.Collector) { // want MustRegister:"registers metrics at listener/listener.go:\\d+ \\(result -1, registerer 0, collectors \\[1\\]\\)"
	for _, c := range cs {
		if err := t.Register(c); err != nil {
			panic(err)
		}
	}
}

func (t *tracking) UnregisterAll() { // want UnregisterAll:"unregisters"
	for _, c := range t.cs {
		t.Registerer.Unregister(c)
	}
}

// ListenTracked gives the store a registerer it made, which can take back
// what the store registered: it does so when it fails.
func ListenTracked(reg prometheus.Registerer, listen func() error) error {
	t := &tracking{Registerer: reg}
	if _, err := sqlstore.Open("kv", t); err != nil {
		return err
	}
	if err := listen(); err != nil {
		t.UnregisterAll()
		return err
	}
	return nil
}

// ListenTrackedCarelessly does not.
func ListenTrackedCarelessly(reg prometheus.Registerer, listen func() error) error {
	t := &tracking{Registerer: reg}
	if _, err := sqlstore.Open("kv", t); err != nil {
		return err
	}
	return listen() // want `^sqlstore_open_connections registered at sqlstore/sqlstore\.go:\d+ \(via sqlstore\.Open\) stays registered when this returns an error: unregister it before returning, or call sqlstore\.Open after the last error return$`
}

// ListenScopedAndNot registers through a scope, and calls sqlstore.Open on
// its caller's registerer: closing the scope does not undo the call.
func ListenScopedAndNot(parent *registry.Scope, reg prometheus.Registerer, listen func() error) error { // want ListenScopedAndNot:"registers .* \\(result -1, registerer 1, own\\)"
	s := parent.Child()
	s.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "scoped"}))
	if _, err := sqlstore.Open("kv", reg); err != nil { // related: registered
		return err // want `^scoped registered at listener\.go:\d+ stays registered when this returns an error: close its scope before returning$`
	}
	return listen() // want `^scoped and sqlstore_open_connections registered at listener\.go:\d+ and 1 other place stay registered when this returns an error: close its scope before returning; for the others, nothing here can unregister them: make sqlstore\.Open hand them back, or call it after the last error return$`
}

// ListenPrefixed gives the store a client_golang wrapper it made, which
// cannot unregister what went through it.
func ListenPrefixed(reg prometheus.Registerer, listen func() error) error { // want ListenPrefixed:"registers kv_sqlstore_open_connections at sqlstore/sqlstore.go:\\d+ \\(result -1, registerer 0, own\\)"
	if _, err := sqlstore.Open("kv", prometheus.WrapRegistererWithPrefix("kv_", reg)); err != nil {
		return err
	}
	return listen() // want `^kv_sqlstore_open_connections registered at sqlstore/sqlstore\.go:\d+ \(via sqlstore\.Open\) stays registered when this returns an error: nothing here can unregister it: make sqlstore\.Open hand it back, or call it after the last error return$`
}

// Connect hands on what sqlstore.Instrument hands back, also when it fails.
func Connect(reg prometheus.Registerer, ping func() error) (*sqlstore.Connector, []prometheus.Collector, error) { // want Connect:"registers sqlstore_connects at sqlstore/sqlstore.go:\\d+ \\(result 1, registerer 0, on error\\)"
	c, cs, err := sqlstore.Instrument(reg, ping)
	if err != nil {
		return nil, cs, err
	}
	return c, cs, nil
}
