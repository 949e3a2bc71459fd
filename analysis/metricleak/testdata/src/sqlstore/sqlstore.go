// Package sqlstore has the shape of a storage package whose opener
// registers a collector of its own on the registerer its caller gives it,
// and hands back a value that does not hold it.
package sqlstore

import (
	"context"
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// DB is an open database. It does not hold the collector Open registered.
type DB struct{ name string }

// Open registers a collector of the database's pool on reg, and hands back
// the database: nothing the caller holds can unregister the collector.
func Open(name string, reg prometheus.Registerer) (*DB, error) { // want Open:"registers sqlstore_open_connections at sqlstore/sqlstore.go:\\d+ \\(result -1, registerer 1, own\\)"
	if name == "" {
		return nil, errors.New("sqlstore: no name")
	}
	reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "sqlstore_open_connections"}))
	return &DB{name: name}, nil
}

// Shared is the pool gauge of the program, registered once.
var Shared = prometheus.NewGauge(prometheus.GaugeOpts{Name: "sqlstore_shared"})

// RegisterShared registers the program's gauge on reg: the program owns it.
func RegisterShared(reg prometheus.Registerer) error { // want RegisterShared:"registers metrics at sqlstore/sqlstore.go:\\d+ \\(result -1, registerer 0\\)"
	return reg.Register(Shared)
}

// Tolerant registers a gauge of its own, and takes a registration already
// there for success: calling it again is harmless.
func Tolerant(reg prometheus.Registerer) error {
	if err := reg.Register(prometheus.NewGauge(prometheus.GaugeOpts{Name: "sqlstore_tolerant"})); err != nil {
		if _, ok := err.(prometheus.AlreadyRegisteredError); !ok {
			return err
		}
	}
	return nil
}

// Store keeps what it registers.
type Store struct {
	reg   prometheus.Registerer
	gauge prometheus.Gauge
}

// Instrument registers a gauge it keeps in the store, which owns it.
func (s *Store) Instrument(reg prometheus.Registerer) { // want Instrument:"registers sqlstore_store_size at sqlstore/sqlstore.go:\\d+ \\(result -1, registerer 1, collectors \\[0\\]\\)" Instrument:"keeps 1>0"
	s.reg = reg
	s.gauge = prometheus.NewGauge(prometheus.GaugeOpts{Name: "sqlstore_store_size"})
	reg.MustRegister(s.gauge)
}

// Failing registers on reg, and fails after: it leaves the gauge behind
// when it fails, which is reported here, and hands it to nobody when it
// succeeds.
func Failing(reg prometheus.Registerer, ping func() error) error { // want Failing:"registers sqlstore_pings_total at sqlstore/sqlstore.go:\\d+ \\(result -1, registerer 0, own\\)"
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "sqlstore_pings_total"}))
	if err := ping(); err != nil {
		return err // want `^sqlstore_pings_total registered at sqlstore\.go:\d+ stays registered when this returns an error: unregister it before returning, or register it after the last error return$`
	}
	return nil
}

// Pool holds the gauge of a pool.
type Pool struct{ size prometheus.Gauge }

func newPool(size prometheus.Gauge) *Pool { return &Pool{size: size} }

// OpenPool hands back the gauge it registers inside a pool that newPool
// makes, which the analysis does not see: it takes the gauge for one handed
// to nobody (see Limitations).
func OpenPool(reg prometheus.Registerer) *Pool { // want OpenPool:"registers sqlstore_pool_size at sqlstore/sqlstore.go:\\d+ \\(result -1, registerer 0, own\\)"
	size := prometheus.NewGauge(prometheus.GaugeOpts{Name: "sqlstore_pool_size"})
	reg.MustRegister(size)
	return newPool(size)
}

// OpenAll hands back the collectors it registered, also when it then
// fails, for its caller to unregister: that return is no leak of its own.
func OpenAll(reg prometheus.Registerer, ping func() error) ([]prometheus.Collector, error) { // want OpenAll:"registers sqlstore_all_open at sqlstore/sqlstore.go:\\d+ \\(result 0, registerer 0, on error\\)"
	open := prometheus.NewGauge(prometheus.GaugeOpts{Name: "sqlstore_all_open"})
	if err := reg.Register(open); err != nil {
		return nil, err
	}
	cs := []prometheus.Collector{open}
	if err := ping(); err != nil {
		return cs, err
	}
	return cs, nil
}

// found is what the registerer a probe is given answers with.
type found struct{}

func (*found) Error() string { return "sqlstore: found" }

var errFound = &found{}

// Probe registers a probe, which the registerer refuses with an error
// saying what it found, and takes it back if the registerer took it.
func Probe(reg prometheus.Registerer) bool {
	p := prometheus.NewGauge(prometheus.GaugeOpts{Name: "sqlstore_probe"})
	err := reg.Register(p)
	var f *found
	if errors.As(err, &f) {
		return true
	}
	if err == nil {
		reg.Unregister(p)
	}
	return false
}

// ProbeIs and ProbeAsType do so with errors.Is and errors.AsType.
func ProbeIs(reg prometheus.Registerer) bool {
	p := prometheus.NewGauge(prometheus.GaugeOpts{Name: "sqlstore_probe"})
	err := reg.Register(p)
	if errors.Is(err, errFound) {
		return true
	}
	if err == nil {
		reg.Unregister(p)
	}
	return false
}

func ProbeAsType(reg prometheus.Registerer) bool {
	p := prometheus.NewGauge(prometheus.GaugeOpts{Name: "sqlstore_probe"})
	err := reg.Register(p)
	if _, ok := errors.AsType[*found](err); ok {
		return true
	}
	if err == nil {
		reg.Unregister(p)
	}
	return false
}

// Watch unregisters what it registers when ctx ends, in a goroutine it
// starts: its caller owns the registration through ctx.
func Watch(ctx context.Context, reg prometheus.Registerer) error { // want Watch:"registers sqlstore_watched at sqlstore/sqlstore.go:\\d+ \\(result -1, registerer 1\\)" Watch:"never fails" Watch:"keeps 0>-1 1>-1"
	c := prometheus.NewGauge(prometheus.GaugeOpts{Name: "sqlstore_watched"})
	reg.MustRegister(c)
	go func() {
		<-ctx.Done()
		reg.Unregister(c)
	}()
	return nil
}

// Send sends what it registers to its caller.
func Send(reg prometheus.Registerer, ch chan<- prometheus.Collector) { // want Send:"registers sqlstore_sent at sqlstore/sqlstore.go:\\d+ \\(result -1, registerer 0\\)"
	c := prometheus.NewGauge(prometheus.GaugeOpts{Name: "sqlstore_sent"})
	reg.MustRegister(c)
	ch <- c
}

// Connector is a connection that holds its gauge.
type Connector struct{ connects prometheus.Gauge }

// Instrument hands back the collectors it registered beside a connector
// that holds them, and the collectors alone when it then fails: they are
// the owner its fact names.
func Instrument(reg prometheus.Registerer, ping func() error) (*Connector, []prometheus.Collector, error) { // want Instrument:"registers sqlstore_connects at sqlstore/sqlstore.go:\\d+ \\(result 1, registerer 0, on error\\)"
	connects := prometheus.NewGauge(prometheus.GaugeOpts{Name: "sqlstore_connects"})
	if err := reg.Register(connects); err != nil {
		return nil, nil, err
	}
	cs := []prometheus.Collector{connects}
	if err := ping(); err != nil {
		return nil, cs, err
	}
	return &Connector{connects: connects}, cs, nil
}
