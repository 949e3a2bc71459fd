// Package sqlstore has the shape of a storage package whose opener
// registers a collector of its own on the registerer its caller gives it,
// and hands back a value that does not hold it.
package sqlstore

import (
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
