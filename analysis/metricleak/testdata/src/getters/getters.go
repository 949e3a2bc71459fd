// Package getters hands out collectors that package variables hold, as
// getters and fluent methods do: the program owns them, so registering them
// and then failing leaves nothing that a retry would not find in place.
package getters

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	requests = prometheus.NewCounter(prometheus.CounterOpts{Name: "requests_total"})
	errs     = prometheus.NewCounter(prometheus.CounterOpts{Name: "errors_total"})
)

// All returns the package's collectors in a fresh slice, for its caller to
// register in a loop.
func All() []prometheus.Collector { // want All:"shares 0"
	return []prometheus.Collector{requests, errs}
}

// Last returns the last of the package's collectors, found in a loop.
func Last() prometheus.Collector { // want Last:"shares 0"
	var last prometheus.Collector = requests
	for _, c := range All() {
		last = c
	}
	return last
}

var (
	once  sync.Once
	depth prometheus.Gauge
)

// Depth makes its gauge on the first call and returns it on every call.
func Depth() prometheus.Gauge { // want Depth:"shares 0"
	once.Do(func() {
		depth = prometheus.NewGauge(prometheus.GaugeOpts{Name: "queue_depth"})
	})
	return depth
}

// Collector holds a counter and what it counts for.
type Collector struct {
	Requests prometheus.Counter
	client   any
}

// Default is the program's collector.
var Default = &Collector{Requests: prometheus.NewCounter(prometheus.CounterOpts{Name: "daemon_requests_total"})}

// WithClient sets the collector's client and returns the collector itself.
func (c *Collector) WithClient(client any) *Collector { // want WithClient:"shares 0<0" WithClient:"keeps 1>0"
	c.client = client
	return c
}

// With returns a copy of the collector with a new counter: the copy is
// the function's own.
func (c Collector) With() *Collector {
	c.Requests = Fresh()
	return &c
}

// Replaced returns a literal of the package's counter in which it then
// puts a new one.
func Replaced() []prometheus.Collector {
	s := []prometheus.Collector{requests}
	s[0] = Fresh()
	return s
}

// Copied copies new counters into a literal of the package's.
func Copied() []prometheus.Collector {
	s := []prometheus.Collector{requests}
	copy(s, []prometheus.Collector{Fresh()})
	return s
}

// Fresh makes a new counter on every call: its caller owns it.
func Fresh() prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: "fresh_total"})
}

// Either returns the package's counter or a new one.
func Either(shared bool) prometheus.Counter {
	if shared {
		return requests
	}
	return Fresh()
}

// RegisterAll registers the package's collectors through its caller's
// registerer: they are the program's, not its own.
func RegisterAll(reg prometheus.Registerer) error { // want RegisterAll:"registers metrics at getters/getters.go:\\d+ \\(result -1, registerer 0\\)"
	for _, c := range All() {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
