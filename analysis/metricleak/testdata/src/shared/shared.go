// Package shared registers collectors that getters of package variables
// hand out, and fails: they are the program's, and are not reported. Those
// that the getters make anew are.
package shared

import (
	"getters"

	"github.com/prometheus/client_golang/prometheus"
)

var own = []prometheus.Collector{prometheus.NewGauge(prometheus.GaugeOpts{Name: "build_info"})}

func local() []prometheus.Collector {
	return own
}

// Loop registers the getter's package variables in a loop and returns on
// the first failure, as prometheus's client-go metrics do.
func Loop(reg prometheus.Registerer, start func() error) error { // want Loop:"registers metrics at shared/shared.go:\\d+ \\(result -1, registerer 0\\)"
	for _, c := range getters.All() {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	for _, c := range local() {
		reg.MustRegister(c)
	}
	return start()
}

// Lazy registers a gauge a getter makes once.
func Lazy(reg prometheus.Registerer, start func() error) error { // want Lazy:"registers metrics at shared/shared.go:\\d+ \\(result -1, registerer 0\\)"
	reg.MustRegister(getters.Depth())
	return start()
}

// Fluent registers a field of the program's collector, reached through a
// method that returns its receiver.
func Fluent(reg prometheus.Registerer, client any, start func() error) error { // want Fluent:"registers metrics at shared/shared.go:\\d+ \\(result -1, registerer 0\\)"
	reg.MustRegister(getters.Default.WithClient(client).Requests)
	return start()
}

// Through calls a function that registers the package's collectors through
// the registerer it is given: nothing of its own stays there.
func Through(reg prometheus.Registerer, start func() error) error {
	if err := getters.RegisterAll(reg); err != nil {
		return err
	}
	return start()
}

// Fresh registers a counter that the getter makes anew.
func Fresh(reg prometheus.Registerer, start func() error) error { // want Fresh:"registers metrics at shared/shared.go:\\d+ \\(result -1, registerer 0, own\\)"
	reg.MustRegister(getters.Fresh())
	return start() // want `^the metrics registered at shared\.go:\d+ stay registered when this returns an error: unregister them before returning, or register them after the last error return$`
}

// Either registers a counter that may be a new one.
func Either(reg prometheus.Registerer, shared bool, start func() error) error { // want Either:"registers metrics at shared/shared.go:\\d+ \\(result -1, registerer 0, own\\)"
	reg.MustRegister(getters.Either(shared))
	return start() // want `^the metrics registered at shared\.go:\d+ stay registered`
}

// FluentFresh registers a field of a collector it made, reached through a
// method that returns its receiver: its own.
func FluentFresh(reg prometheus.Registerer, start func() error) error { // want FluentFresh:"registers metrics at shared/shared.go:\\d+ \\(result -1, registerer 0, own\\)"
	c := &getters.Collector{Requests: getters.Fresh()}
	reg.MustRegister(c.WithClient(nil).Requests)
	return start() // want `^the metrics registered at shared\.go:\d+ stay registered`
}

// Copies registers what getters made anew in a copy of the program's
// collector, or in a literal of the program's counters.
func Copies(reg prometheus.Registerer, start func() error) error { // want Copies:"registers metrics at shared/shared.go:\\d+ \\(result -1, registerer 0, own\\)"
	reg.MustRegister(getters.Default.With().Requests)
	for _, c := range getters.Replaced() {
		reg.MustRegister(c) // related: registered
	}
	for _, c := range getters.Copied() {
		reg.MustRegister(c) // related: registered
	}
	return start() // want `^the metrics registered at shared\.go:\d+ and 2 other places stay registered`
}
