// Package crash holds an SSA shape that made the analyzer panic, and
// functions around one whose analysis the test makes panic: the panic costs
// that function, reported as an internal error, and not the others.
package crash

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

var errFailed = errors.New("failed")

// metrics is a package-level struct whose field is registered inside a
// function with an error result: the name of the metric is looked for
// among the stores to the field, and a package variable has no list of
// the instructions that use it.
var metrics struct {
	requests prometheus.Counter
}

// Init registers a collector a package variable holds: the program owns
// it, so failing after is not reported.
func Init(reg prometheus.Registerer, start func() error) error { // want Init:"registers metrics at crash/crash.go:26"
	metrics.requests = prometheus.NewCounter(prometheus.CounterOpts{Name: "requests_total"})
	reg.MustRegister(metrics.requests)
	return start()
}

// Before is checked before Explode.
func Before(reg prometheus.Registerer) error { // want Before:"registers before_total"
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "before_total"}))
	return errFailed // want `^before_total registered at crash\.go:32 stays registered`
}

// Explode leaks, but the test makes its analysis panic: the panic is its
// only report.
func Explode(reg prometheus.Registerer) error { // want `^internal error: metricleak failed on Explode and skipped it: boom \(at \w+\.go:\d+\)$`
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "explode_total"}))
	return errFailed
}

// After is checked after Explode.
func After(reg prometheus.Registerer) error { // want After:"registers after_total"
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "after_total"}))
	return errFailed // want `^after_total registered at crash\.go:45 stays registered`
}
