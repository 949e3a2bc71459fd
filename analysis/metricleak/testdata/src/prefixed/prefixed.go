// Package prefixed registers through client_golang's prefixing wrappers:
// reports name the metrics as the registry sees them.
package prefixed

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

func requests() prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Subsystem: "http", Name: "requests_total"})
}

// Twice registers through two prefixing wrappers: the inner one's prefix
// comes first.
func Twice(reg prometheus.Registerer, start func() error) error { // want Twice:"^registers"
	inner := prometheus.WrapRegistererWithPrefix("app_", reg)
	prometheus.WrapRegistererWithPrefix("west_", inner).MustRegister(requests())
	if err := start(); err != nil {
		return err // want `^app_west_http_requests_total registered at prefixed\.go:\d+ stays registered`
	}
	return nil
}

// By registers through a prefix that is not a constant: the name the
// registry sees is not known.
func By(reg prometheus.Registerer, prefix string, start func() error) error { // want By:"^registers"
	prometheus.WrapRegistererWithPrefix(prefix, reg).MustRegister(requests())
	if err := start(); err != nil {
		return err // want `^the metrics registered at prefixed\.go:\d+ stay registered`
	}
	return nil
}

// Factory registers through promauto.With of a prefixing wrapper.
func Factory(reg prometheus.Registerer, start func() error) (prometheus.Gauge, error) { // want Factory:"^registers"
	g := promauto.With(prometheus.WrapRegistererWithPrefix("app_", reg)).NewGauge(prometheus.GaugeOpts{Name: "up"})
	if err := start(); err != nil {
		return nil, err // want `^app_up registered at prefixed\.go:\d+ stays registered`
	}
	return g, nil
}
