// Package ignore silences reports with staticcheck's directives: a
// //lint:ignore on the line before the reported return, or a
// //lint:file-ignore anywhere in the file (see fileignore.go). Each needs a
// reason after the check's name.
package ignore

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

var errFailed = errors.New("failed")

func gauge() prometheus.Gauge { return prometheus.NewGauge(prometheus.GaugeOpts{Name: "up"}) }

func ignored(reg prometheus.Registerer, start func() error) error {
	reg.MustRegister(gauge())
	if err := start(); err != nil {
		//lint:ignore metricleak the process exits when start fails
		return err
	}
	return nil
}

// ignoredAmongOthers names metricleak among other checks.
func ignoredAmongOthers(reg prometheus.Registerer, start func() error) error {
	reg.MustRegister(gauge())
	//lint:ignore SA4006,metricleak the process exits when start fails
	return start()
}

// otherCheck silences another check only.
func otherCheck(reg prometheus.Registerer, start func() error) error {
	reg.MustRegister(gauge())
	//lint:ignore SA4006 a reason
	return start() // want `^up registered at ignore\.go:\d+ stays registered`
}

// noReason has a directive without a reason: it is not honoured, and it is
// reported. (The want comment of that report must share the directive's
// line, so it sits in a block comment before it.)
func noReason(reg prometheus.Registerer, start func() error) error {
	reg.MustRegister(gauge())
	/* want `^this //lint:ignore directive has no reason` */ //lint:ignore metricleak
	return start()                                           // want `^up registered at ignore\.go:\d+ stays registered`
}

// notTheLineBefore has a directive two lines before the return.
func notTheLineBefore(reg prometheus.Registerer, start func() error) error {
	reg.MustRegister(gauge())
	//lint:ignore metricleak the process exits when start fails

	return start() // want `^up registered at ignore\.go:\d+ stays registered`
}

// relatedOnly silences a return that is not the one reported: the report
// stands, at the first return.
func relatedOnly(reg prometheus.Registerer, start, sync func() error) error {
	reg.MustRegister(gauge())
	if err := start(); err != nil {
		return err // want `^up registered at ignore\.go:\d+ stays registered when this or 1 other return gives an error`
	}
	//lint:ignore metricleak sync never fails in practice
	return sync() // related
}
