// Package joined returns the errors of registering calls, joined with
// errors.Join or alone, together with what was registered. Such an error
// is not nil when one of the calls failed, and then the others'
// collectors stay registered, though the return gives them back: by Go's
// convention the caller ignores the other results of a failure.
package joined

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	a, b prometheus.Gauge
}

// newMetrics has the shape of avalanchego's metrics helpers.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		a: prometheus.NewGauge(prometheus.GaugeOpts{Name: "joined_a"}),
		b: prometheus.NewGauge(prometheus.GaugeOpts{Name: "joined_b"}),
	}
	err := errors.Join(
		reg.Register(m.a),
		reg.Register(m.b), // related: registered
	)
	return m, err // want `^joined_a and joined_b registered at joined\.go:25 and 1 other place stay registered when this returns an error: unregister each whose registration succeeded before returning: Unregister of one that failed removes the collector it collided with$`
}

// newInline joins them in the return itself, which gives only the error.
func newInline(reg prometheus.Registerer) error {
	a := prometheus.NewGauge(prometheus.GaugeOpts{Name: "inline_a"})
	b := prometheus.NewGauge(prometheus.GaugeOpts{Name: "inline_b"})
	return errors.Join(reg.Register(a), reg.Register(b)) // want `^inline_a and inline_b registered at joined\.go:35 stay registered when this returns an error: unregister each whose registration succeeded`
}

// newLast returns the last registration's own error: when it fails, the
// first, which surely succeeded, stays.
func newLast(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		a: prometheus.NewGauge(prometheus.GaugeOpts{Name: "last_a"}),
		b: prometheus.NewGauge(prometheus.GaugeOpts{Name: "last_b"}),
	}
	reg.MustRegister(m.a)
	return m, reg.Register(m.b) // want `^last_a registered at joined\.go:45 stays registered when this returns an error: unregister it before returning, or register it after the last error return$`
}

type pair struct{ a, b *metrics }

// newPair joins the errors of two constructors that hand back what they
// registered: when the second fails, the first's stay.
func newPair(reg prometheus.Registerer) (*pair, error) {
	a, errA := newOne(reg)
	b, errB := newTwo(reg)                      // related: registered
	return &pair{a, b}, errors.Join(errA, errB) // want `^one_a and two_a registered at joined\.go:\d+ \(via newOne\) and 1 other place stay registered when this returns an error: unregister each whose registration succeeded before returning$`
}

// newTested tests the joined error, and returns nothing with it.
func newTested(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		a: prometheus.NewGauge(prometheus.GaugeOpts{Name: "tested_a"}),
		b: prometheus.NewGauge(prometheus.GaugeOpts{Name: "tested_b"}),
	}
	if err := errors.Join(reg.Register(m.a), reg.Register(m.b)); err != nil {
		return nil, err // want `^tested_a and tested_b registered at joined\.go:\d+ stay registered when this returns an error: unregister each whose registration succeeded before returning: Unregister of one that failed removes the collector it collided with$`
	}
	return m, nil
}

// newOne registers one collector: when it fails, nothing was registered.
func newOne(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{a: prometheus.NewGauge(prometheus.GaugeOpts{Name: "one_a"})}
	return m, errors.Join(reg.Register(m.a))
}

// newTwo does the same, without errors.Join.
func newTwo(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{a: prometheus.NewGauge(prometheus.GaugeOpts{Name: "two_a"})}
	return m, reg.Register(m.a)
}

// newChecked joins a registration's error with one of another kind: that
// one may be nil, so the return is taken to hand m back.
func newChecked(reg prometheus.Registerer, check func() error) (*metrics, error) {
	m := &metrics{a: prometheus.NewGauge(prometheus.GaugeOpts{Name: "checked_a"})}
	return m, errors.Join(reg.Register(m.a), check())
}

// newUndone unregisters what was registered when the joined error is not
// nil.
func newUndone(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		a: prometheus.NewGauge(prometheus.GaugeOpts{Name: "undone_a"}),
		b: prometheus.NewGauge(prometheus.GaugeOpts{Name: "undone_b"}),
	}
	errA, errB := reg.Register(m.a), reg.Register(m.b)
	if err := errors.Join(errA, errB); err != nil {
		if errA == nil {
			reg.Unregister(m.a)
		}
		if errB == nil {
			reg.Unregister(m.b)
		}
		return nil, err
	}
	return m, nil
}

// NewCollectors hands the collectors themselves back with the error, for
// the caller to take back, when it fails too.
func NewCollectors(reg prometheus.Registerer) ([]prometheus.Collector, error) { // want NewCollectors:"registers collectors_a,collectors_b at joined/joined.go:\\d+ \\(result 0, registerer 0, on error\\)"
	a := prometheus.NewGauge(prometheus.GaugeOpts{Name: "collectors_a"})
	b := prometheus.NewGauge(prometheus.GaugeOpts{Name: "collectors_b"})
	return []prometheus.Collector{a, b}, errors.Join(reg.Register(a), reg.Register(b))
}

// useCollectors drops them when NewCollectors fails.
func useCollectors(reg prometheus.Registerer) ([]prometheus.Collector, error) {
	cs, err := NewCollectors(reg)
	if err != nil {
		return nil, err // want `^collectors_a and collectors_b registered at joined\.go:\d+ \(via NewCollectors\) stay registered when this returns an error`
	}
	return cs, nil
}

// takeBack unregisters them when NewCollectors fails.
func takeBack(reg prometheus.Registerer) ([]prometheus.Collector, error) {
	cs, err := NewCollectors(reg)
	if err != nil {
		for _, c := range cs {
			reg.Unregister(c)
		}
		return nil, err
	}
	return cs, nil
}

type cache struct{ m *metrics }

// newCache uses newMetrics: its failure is newMetrics's leak, reported
// there.
func newCache(reg prometheus.Registerer) (*cache, error) {
	m, err := newMetrics(reg)
	if err != nil {
		return nil, err
	}
	return &cache{m: m}, nil
}

// registerAll returns the error of the registration that failed: those
// that an earlier turn of the loop registered stay.
func registerAll(reg prometheus.Registerer, names []string) ([]prometheus.Gauge, error) {
	var gs []prometheus.Gauge
	for _, n := range names {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: n})
		if err := reg.Register(g); err != nil {
			return nil, err // want `^the metrics registered at joined\.go:\d+ stay registered when this returns an error: unregister each whose registration succeeded before returning: Unregister of one that failed removes the collector it collided with$`
		}
		gs = append(gs, g)
	}
	return gs, nil
}
