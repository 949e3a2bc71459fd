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
func (conv) As[T any](v T) T { return v }

// asString is a method value of an instance of it.
var asString = conv{}.As[string]

// New names its gauge in a literal that sets a promoted field, which Go
// 1.27 allows.
func New(reg prometheus.Registerer) error { // want New:"registers metrics at go127/go127.go:27"
	n := gaugeNames{Name: asString("pending")}
	reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: n.Name}))
	return errors.New("failed") // want `^metrics registered at go127\.go:27 stay registered when this returns an error`
}
