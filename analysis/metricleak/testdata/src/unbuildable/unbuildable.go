// Package unbuildable is a package whose SSA the test makes fail to build,
// as x/tools' builder fails on syntax newer than it knows: the package is
// reported once, as an internal error, and its leak is not.
package unbuildable // want `^internal error: metricleak could not build package unbuildable and skipped it: boom \(at \w+\.go:\d+\)$`

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Leak would be reported if the package were built.
func Leak(reg prometheus.Registerer) error {
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "leaked_total"}))
	return errors.New("failed")
}
