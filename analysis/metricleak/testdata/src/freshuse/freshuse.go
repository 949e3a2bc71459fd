// Package freshuse registers into a registry that a function of another
// package made, known by its fact.
package freshuse

import (
	"fresh"

	"github.com/prometheus/client_golang/prometheus"
)

// Serve registers into a registry fresh.NewAppRegistry made for this call.
func Serve(start func() error) (*prometheus.Registry, error) {
	reg := fresh.NewAppRegistry()
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "served_total"}))
	if err := start(); err != nil {
		return nil, err
	}
	return reg, nil
}

// OnShared registers into fresh's shared registry, which no fact calls
// made for the call.
func OnShared(start func() error) error {
	fresh.SharedRegistry().MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "served_total"}))
	return start() // want `^served_total registered at freshuse\.go:\d+ stays registered`
}

// OnNoop registers into fresh's no-op registerer, whose methods' facts say
// they do nothing: nowhere.
func OnNoop(start func() error) error {
	fresh.Noop.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "served_total"}))
	return start()
}
