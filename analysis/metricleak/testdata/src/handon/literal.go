package handon

import (
	"errors"
	"log"

	"github.com/prometheus/client_golang/prometheus"
)

// SDMetrics are a component's metrics, registered in a loop over a literal
// of its fields, as prometheus's discovery metrics are.
type SDMetrics struct {
	Failed  prometheus.Gauge
	Updates prometheus.Counter
}

// NewSDMetrics hands back the struct whose fields its loop registered.
func NewSDMetrics(reg prometheus.Registerer) (*SDMetrics, error) { // want NewSDMetrics:"registers sd_failed_configs,sd_updates_total at handon/literal.go:\\d+ \\(result 0, registerer 0\\)"
	m := &SDMetrics{
		Failed:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "sd_failed_configs"}),
		Updates: prometheus.NewCounter(prometheus.CounterOpts{Name: "sd_updates_total"}),
	}
	for _, c := range []prometheus.Collector{m.Failed, m.Updates} {
		if err := reg.Register(c); err != nil {
			return nil, err // want `^sd_failed_configs and sd_updates_total registered at literal\.go:\d+ stay registered`
		}
	}
	return m, nil
}

// An SDManager keeps its metrics.
type SDManager struct{ metrics *SDMetrics }

// NewSDManager logs a failure and returns nil: otherwise it hands back the
// manager that holds the metrics.
func NewSDManager(reg prometheus.Registerer) *SDManager { // want NewSDManager:"registers sd_failed_configs,sd_updates_total at handon/literal.go:\\d+ \\(result 0, registerer 0\\)"
	m, err := NewSDMetrics(reg)
	if err != nil {
		log.Print(err)
		return nil
	}
	mgr := &SDManager{}
	mgr.metrics = m
	return mgr
}

type receiver struct{ mgr *SDManager }

// start keeps the manager in its receiver, whose Shutdown can take the
// metrics back.
func (r *receiver) start(reg prometheus.Registerer, run func() error) error {
	r.mgr = NewSDManager(reg)
	if r.mgr == nil {
		return errors.New("no manager")
	}
	return run()
}

// StartSD fails after it made the manager: the metrics stay. Before, a nil
// manager holds nothing.
func StartSD(reg prometheus.Registerer, run func() error) (*SDManager, error) { // want StartSD:"registers sd_failed_configs,sd_updates_total at handon/literal.go:\\d+ \\(result 0, registerer 0\\)"
	mgr := NewSDManager(reg)
	if mgr == nil {
		return nil, errors.New("no manager")
	}
	if err := run(); err != nil {
		return nil, err // want `^sd_failed_configs and sd_updates_total registered at literal\.go:\d+ \(via NewSDManager\) stay registered when this returns an error: unregister them before returning, or call NewSDManager after the last error return$`
	}
	return mgr, nil
}

// UndoOne registers two counters of its own in a loop over a literal of
// them and, when it fails, unregisters only the first.
func UndoOne(reg prometheus.Registerer, run func() error) error { // want UndoOne:"registers"
	a := prometheus.NewCounter(prometheus.CounterOpts{Name: "first_total"})
	b := prometheus.NewCounter(prometheus.CounterOpts{Name: "second_total"})
	for _, c := range []prometheus.Collector{a, b} {
		reg.MustRegister(c)
	}
	if err := run(); err != nil {
		reg.Unregister(a)
		return err // want `^first_total and second_total registered at literal\.go:\d+ stay registered`
	}
	return nil
}
