package registrytest_test

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/promscope/promscope/lifecycle"
	"github.com/promscope/promscope/registry"
	"github.com/promscope/promscope/registry/registrytest"
)

// printT prints what a test would report. In a real test, pass the
// *testing.T instead.
type printT struct{}

func (printT) Helper() {}

func (printT) Errorf(format string, args ...any) { fmt.Printf(format+"\n", args...) }

func ExampleVerifyNone() {
	var t printT // in a test: the *testing.T
	reg := prometheus.NewPedanticRegistry()
	scope := registry.NewScope(reg)
	promauto.With(scope).NewGauge(prometheus.GaugeOpts{Name: "jobs_running", Help: "Jobs running."}).Set(2)
	promauto.With(scope).NewCounterVec(prometheus.CounterOpts{Name: "jobs_failed_total", Help: "Failed jobs."}, []string{"reason"})

	registrytest.VerifyNone(t, reg)

	scope.Close()
	registrytest.VerifyNone(t, reg) // reports nothing
	fmt.Println("clean after Close")
	// Output:
	// registrytest: 1 metric family still exposed: jobs_running (1 series); 1 metric still registered with no series: jobs_failed_total
	// clean after Close
}

func ExampleVerifyRecycle() {
	var t printT // in a test: the *testing.T
	unreachable := errors.New("cluster unreachable")

	// A constructor that closes its scope when it fails is recycle-safe.
	registrytest.VerifyRecycle(t, 20, func(reg prometheus.Registerer) (_ *registry.Scope, err error) {
		scope := registry.NewScope(reg)
		defer lifecycle.CloseOnError(&err, scope)
		promauto.With(scope).NewGauge(prometheus.GaugeOpts{Name: "watcher_up", Help: "Watcher is up."})
		return nil, unreachable
	})
	fmt.Println("the careful constructor passed")

	// One whose Close forgets its scope leaves its gauge behind in the
	// first round.
	registrytest.VerifyRecycle(t, 20, func(reg prometheus.Registerer) (forgetful, error) {
		scope := registry.NewScope(reg, registry.WithName("watcher"))
		promauto.With(scope).NewGauge(prometheus.GaugeOpts{Name: "watcher_up", Help: "Watcher is up."})
		return forgetful{}, nil
	})
	// Output:
	// the careful constructor passed
	// registrytest: round 1 of 20: after a successful build and close: 1 metric family still exposed: watcher_up (1 series); owned by:
	// watcher (made at github.com/promscope/promscope/registry/registrytest/example_test.go:56): 1 collector: watcher_up
}

// forgetful is a component whose Close does nothing.
type forgetful struct{}

func (forgetful) Close() error { return nil }
