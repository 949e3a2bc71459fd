// Package onereport has functions that leave registrations behind at
// several returns: each set of registrations is reported once, at the first
// return that leaves it, and the other returns that leave the same set are
// related positions (marked "related" here; the test checks them).
package onereport

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

var errFailed = errors.New("failed")

// threeReturns leaves the same gauge behind at three returns.
func threeReturns(reg prometheus.Registerer, dial, sync, watch func() error) error {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "watch_up"})
	reg.MustRegister(g)
	if err := dial(); err != nil {
		return err // want `^watch_up registered at onereport\.go:18 stays registered when this or 2 other returns give an error: unregister it before returning, or register it after the last error return$`
	}
	if err := sync(); err != nil {
		return err // related
	}
	if err := watch(); err != nil {
		return err // related
	}
	return nil
}

// twoSets leaves one gauge behind at its first return, and two at the
// others: two reports.
func twoSets(reg prometheus.Registerer, dial, sync, watch func() error) error {
	up := prometheus.NewGauge(prometheus.GaugeOpts{Name: "up"})
	reg.MustRegister(up)
	if err := dial(); err != nil {
		return err // want `^up registered at onereport\.go:35 stays registered when this returns an error: unregister it before returning, or register it after the last error return$`
	}
	objects := prometheus.NewGauge(prometheus.GaugeOpts{Name: "objects"})
	reg.MustRegister(objects) // related: registered
	if err := sync(); err != nil {
		return err // want `^up and objects registered at onereport\.go:35 and 1 other place stay registered when this or 1 other return gives an error: unregister them before returning, or register them after the last error return$`
	}
	if err := watch(); err != nil {
		return err // related
	}
	return nil
}

// many names five of its metrics, and counts the rest.
func many(reg prometheus.Registerer, dial func() error) error {
	reg.MustRegister(
		prometheus.NewGauge(prometheus.GaugeOpts{Name: "a"}),
		prometheus.NewGauge(prometheus.GaugeOpts{Name: "b"}),
		prometheus.NewGauge(prometheus.GaugeOpts{Name: "c"}),
		prometheus.NewGauge(prometheus.GaugeOpts{Name: "d"}),
		prometheus.NewGauge(prometheus.GaugeOpts{Name: "e"}),
		prometheus.NewGauge(prometheus.GaugeOpts{Name: "f"}),
		prometheus.NewGauge(prometheus.GaugeOpts{Name: "g"}),
	)
	return dial() // want `^a, b, c, d, e and 2 more registered at onereport\.go:52 stay registered when this returns an error: unregister them before returning, or register them after the last error return$`
}

// undone leaves nothing behind on any return.
func undone(reg prometheus.Registerer, dial, sync func() error) error {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "undone"})
	reg.MustRegister(g)
	if err := dial(); err != nil {
		reg.Unregister(g)
		return err
	}
	if err := sync(); err != nil {
		reg.Unregister(g)
		return err
	}
	return nil
}

// cacheSize registers a gauge of a cache's size.
func cacheSize(reg prometheus.Registerer, name string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name + "_size"})
	reg.MustRegister(g)
	return g
}

// twoCaches registers through one helper twice: each call is a place of
// its own, so the two reports say how many calls their returns leave.
func twoCaches(reg prometheus.Registerer, dial, sync func() error) (prometheus.Gauge, prometheus.Gauge, error) {
	a := cacheSize(reg, "a")
	if err := dial(); err != nil {
		return nil, nil, err // want `^the metrics registered at onereport\.go:\d+ \(via cacheSize\) stay registered when this returns an error: unregister them before returning, or call cacheSize after the last error return$`
	}
	b := cacheSize(reg, "b") // related: registered
	if err := sync(); err != nil {
		return nil, nil, err // want `^the metrics registered at onereport\.go:\d+ \(via cacheSize\) and 1 other place stay registered when this returns an error: unregister them before returning, or call cacheSize after the last error return$`
	}
	return a, b, nil
}
