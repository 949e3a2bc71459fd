//go:build go1.27

package go127

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

type names struct{ Name string }

type gaugeNames struct{ names }

type conv struct{}

// As is a generic method, which Go 1.27 allows.
func (conv) As[T any](v T) T { return v } // want As:"shares 0<1"

// asString is a method value of an instance of it.
var asString = conv{}.As[string]

// New names its gauge in a literal that sets a promoted field, which Go
// 1.27 allows.
func New(reg prometheus.Registerer) error { // want New:"registers metrics at go127/go127.go:27"
	n := gaugeNames{Name: asString("pending")}
	reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: n.Name}))
	return errors.New("failed") // want `^the metrics registered at go127\.go:27 stay registered when this returns an error`
}

type handle struct {
	reg prometheus.Registerer
	c   prometheus.Collector
}

func newHandle(reg prometheus.Registerer) (*handle, error) {
	c := prometheus.NewGauge(prometheus.GaugeOpts{Name: "handle_open"})
	if err := reg.Register(c); err != nil {
		return nil, err
	}
	return &handle{reg: reg, c: c}, nil
}

// Undo undoes newHandle, but a call of it needs a type argument that
// neither the report nor a fix can choose.
func (h *handle) Undo[T any]() { h.reg.Unregister(h.c) } // want Undo:"unregisters"

func Open(reg prometheus.Registerer, dial func() error) error { // want Open:"registers handle_open at go127/go127.go:38"
	h, err := newHandle(reg)
	if err != nil {
		return err
	}
	if err := dial(); err != nil {
		return err // want `^handle_open registered at go127\.go:\d+ \(via newHandle\) stays registered when this returns an error: unregister it before returning, or call newHandle after the last error return$`
	}
	return h.close()
}

func (h *handle) close() error { return nil }
