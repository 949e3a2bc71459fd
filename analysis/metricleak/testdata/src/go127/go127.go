//go:build go1.27

package go127

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

type names struct{ Name string }

type gaugeNames struct{ names }

// New names its gauge in a literal that sets a promoted field, which Go
// 1.27 allows.
func New(reg prometheus.Registerer) error { // want New:"registers metrics at go127/go127.go:19"
	n := gaugeNames{Name: "pending"}
	reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: n.Name}))
	return errors.New("failed") // want `^metrics registered at go127\.go:19 stay registered when this returns an error`
}
