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

// By registers through a prefix that is not a constant: the name is the
// one the code writes.
func By(reg prometheus.Registerer, prefix string, start func() error) error { // want By:"^registers"
	prometheus.WrapRegistererWithPrefix(prefix, reg).MustRegister(requests())
	if err := start(); err != nil {
		return err // want `^http_requests_total registered at prefixed\.go:\d+ stays registered`
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

type Client struct{ requests prometheus.Counter }

// NewClient registers and hands back what it registered.
func NewClient(reg prometheus.Registerer) *Client { // want NewClient:"^registers"
	c := requests()
	reg.MustRegister(c)
	return &Client{requests: c}
}

// TwoClients makes two clients, each through a prefixing wrapper: each
// call's names have the prefix once.
func TwoClients(reg prometheus.Registerer, start func() error) (*Client, *Client, error) { // want TwoClients:"^registers"
	a := NewClient(prometheus.WrapRegistererWithPrefix("a_", reg))
	b := NewClient(prometheus.WrapRegistererWithPrefix("a_", reg)) // related: registered
	if err := start(); err != nil {
		return nil, nil, err // want `^a_http_requests_total registered at prefixed\.go:\d+ \(via NewClient\) and 1 other place stays registered`
	}
	return a, b, nil
}
