// Command daemon registers in init, in package variables, in main and in a
// setup function. A package main is checked only with -commands, and then
// init, main and package variables are still not.
package main

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var errFailed = errors.New("failed")

var requests = promauto.NewCounter(prometheus.CounterOpts{Name: "requests_total"})

var setup = func(reg prometheus.Registerer) error {
	reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "up"}))
	return errFailed
}

func init() {
	check := func() error {
		prometheus.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "build_info"}))
		return errFailed
	}
	_ = check()
}

func main() {
	run := func(reg prometheus.Registerer) error {
		promauto.With(reg).NewGauge(prometheus.GaugeOpts{Name: "ready"})
		return errFailed
	}
	_ = run(prometheus.DefaultRegisterer)
	_ = serve(prometheus.DefaultRegisterer)
	_ = setup(prometheus.NewRegistry())
}

// serve is not main: it is checked.
func serve(reg prometheus.Registerer) error {
	promauto.With(reg).NewGauge(prometheus.GaugeOpts{Name: "serving"})
	return errFailed // want `^serving registered at main\.go:42 stays registered`
}
