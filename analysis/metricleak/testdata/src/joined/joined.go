// Package joined returns, with what was registered, the errors of
// registering calls, alone, joined with errors.Join or merged by a phi.
// Such an error may be nil, so the return hands back what it gives; but
// where the error is not nil because one of the calls failed, the others'
// collectors stay registered, and the caller, given an error, ignores all
// the return gives. Paths on which that failure is undone, or cannot
// happen, leave nothing.
package joined

import (
	"errors"
	"sync"

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
	return m, err // want `^joined_a and joined_b registered at joined\.go:\d+ and 1 other place stay registered when this returns an error: unregister each whose registration succeeded before returning: Unregister of one that failed removes the collector it collided with$`
}

// newInline joins them in the return itself, which gives only the error.
func newInline(reg prometheus.Registerer) error {
	a := prometheus.NewGauge(prometheus.GaugeOpts{Name: "inline_a"})
	b := prometheus.NewGauge(prometheus.GaugeOpts{Name: "inline_b"})
	return errors.Join(reg.Register(a), reg.Register(b)) // want `^inline_a and inline_b registered at joined\.go:\d+ stay registered when this returns an error: unregister each whose registration succeeded`
}

// newLast returns the last registration's own error: when it fails, the
// first, which surely succeeded, stays.
func newLast(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		a: prometheus.NewGauge(prometheus.GaugeOpts{Name: "last_a"}),
		b: prometheus.NewGauge(prometheus.GaugeOpts{Name: "last_b"}),
	}
	reg.MustRegister(m.a)
	return m, reg.Register(m.b) // want `^last_a registered at joined\.go:\d+ stays registered when this returns an error: unregister it before returning, or register it after the last error return$`
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

// NewCollectors returns the collectors themselves with the joined error:
// they are handed back (see Limitations).
func NewCollectors(reg prometheus.Registerer) ([]prometheus.Collector, error) { // want NewCollectors:"registers collectors_a,collectors_b at joined/joined.go:\\d+ \\(result 0, registerer 0\\)"
	a := prometheus.NewGauge(prometheus.GaugeOpts{Name: "collectors_a"})
	b := prometheus.NewGauge(prometheus.GaugeOpts{Name: "collectors_b"})
	return []prometheus.Collector{a, b}, errors.Join(reg.Register(a), reg.Register(b))
}

// registered hands back the collectors registered before one failed.
func registered(reg prometheus.Registerer) ([]prometheus.Collector, error) {
	var done []prometheus.Collector
	var err error
	for _, c := range []prometheus.Collector{
		prometheus.NewGauge(prometheus.GaugeOpts{Name: "registered_a"}),
		prometheus.NewGauge(prometheus.GaugeOpts{Name: "registered_b"}),
	} {
		if err = reg.Register(c); err != nil {
			break
		}
		done = append(done, c)
	}
	return done, err
}

// undoneOnFailure takes a back when b fails: m is handed back only with
// a nil error.
func undoneOnFailure(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		a: prometheus.NewGauge(prometheus.GaugeOpts{Name: "failure_a"}),
		b: prometheus.NewGauge(prometheus.GaugeOpts{Name: "failure_b"}),
	}
	reg.MustRegister(m.a)
	err := reg.Register(m.b)
	if err != nil {
		reg.Unregister(m.a)
	}
	return m, err
}

// undoneOnJoined unregisters each that succeeded when the joined error is
// not nil, and returns m with it.
func undoneOnJoined(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		a: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ifjoined_a"}),
		b: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ifjoined_b"}),
	}
	errA := reg.Register(m.a)
	errB := reg.Register(m.b)
	err := errors.Join(errA, errB)
	if err != nil {
		if errA == nil {
			reg.Unregister(m.a)
		}
		if errB == nil {
			reg.Unregister(m.b)
		}
	}
	return m, err
}

// testedFirst returns errors that were both tested nil before: the Join is
// nil.
func testedFirst(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		a: prometheus.NewGauge(prometheus.GaugeOpts{Name: "first_a"}),
		b: prometheus.NewGauge(prometheus.GaugeOpts{Name: "first_b"}),
	}
	errA := reg.Register(m.a)
	if errA != nil {
		return nil, errA
	}
	errB := reg.Register(m.b)
	if errB != nil {
		reg.Unregister(m.a)
		return nil, errB
	}
	return m, errors.Join(errA, errB)
}

// onlyAfter registers b only when a succeeded: when a's error is returned,
// b was not registered.
func onlyAfter(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		a: prometheus.NewGauge(prometheus.GaugeOpts{Name: "after_a"}),
		b: prometheus.NewGauge(prometheus.GaugeOpts{Name: "after_b"}),
	}
	errA := reg.Register(m.a)
	if errA == nil {
		reg.MustRegister(m.b)
	}
	return m, errA
}

// chained registers b when a succeeded, into the same err: when b fails,
// a stays.
func chained(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		a: prometheus.NewGauge(prometheus.GaugeOpts{Name: "chained_a"}),
		b: prometheus.NewGauge(prometheus.GaugeOpts{Name: "chained_b"}),
	}
	err := reg.Register(m.a)
	if err == nil {
		err = reg.Register(m.b)
	}
	return m, err // want `^chained_a registered at joined\.go:\d+ stays registered when this returns an error: unregister it before returning, or register it after the last error return$`
}

// accumulated joins the errors of a loop's registrations: when a later one
// fails, the earlier stay.
func accumulated(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		a: prometheus.NewGauge(prometheus.GaugeOpts{Name: "loop_a"}),
		b: prometheus.NewGauge(prometheus.GaugeOpts{Name: "loop_b"}),
	}
	var err error
	for _, c := range []prometheus.Collector{m.a, m.b} {
		err = errors.Join(err, reg.Register(c))
	}
	return m, err // want `^loop_a and loop_b registered at joined\.go:\d+ stay registered when this returns an error: unregister each whose registration succeeded before returning: Unregister of one that failed removes the collector it collided with$`
}

// eitherWay joins them on both branches.
func eitherWay(reg prometheus.Registerer, both bool) (*metrics, error) {
	m := &metrics{
		a: prometheus.NewGauge(prometheus.GaugeOpts{Name: "either_a"}),
		b: prometheus.NewGauge(prometheus.GaugeOpts{Name: "either_b"}),
	}
	var err error
	if both {
		err = errors.Join(reg.Register(m.a), reg.Register(m.b))
	} else {
		err = errors.Join(reg.Register(m.b), reg.Register(m.a)) // related: registered
	}
	return m, err // want `^either_a and either_b registered at joined\.go:\d+ and 1 other place stay registered when this returns an error: unregister each whose registration succeeded before returning`
}

// register registers the collector its caller gives it.
func register(reg prometheus.Registerer, c prometheus.Collector) error {
	return reg.Register(c)
}

// throughHelper joins the errors of a helper that registers the caller's
// collectors: the caller holds them, and Unregister of the one that failed
// would take the one it collided with.
func throughHelper(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		a: prometheus.NewGauge(prometheus.GaugeOpts{Name: "helper_a"}),
		b: prometheus.NewGauge(prometheus.GaugeOpts{Name: "helper_b"}),
	}
	err := errors.Join(
		register(reg, m.a),
		register(reg, m.b), // related: registered
	)
	return m, err // want `^helper_a and helper_b registered at joined\.go:\d+ \(via register\) and 1 other place stay registered when this returns an error: unregister each whose registration succeeded before returning: Unregister of one that failed removes the collector it collided with$`
}

// errorOnly returns only the error, which it found not nil where it took
// a back.
func errorOnly(reg prometheus.Registerer) error {
	a := prometheus.NewGauge(prometheus.GaugeOpts{Name: "only_a"})
	b := prometheus.NewGauge(prometheus.GaugeOpts{Name: "only_b"})
	reg.MustRegister(a)
	err := reg.Register(b)
	if err != nil {
		reg.Unregister(a)
	}
	return err
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

// named joins them into a named result that a deferred call reads.
func named(reg prometheus.Registerer, log func(error)) (m *metrics, err error) {
	defer func() { log(err) }()
	m = &metrics{
		a: prometheus.NewGauge(prometheus.GaugeOpts{Name: "named_a"}),
		b: prometheus.NewGauge(prometheus.GaugeOpts{Name: "named_b"}),
	}
	err = errors.Join(reg.Register(m.a), reg.Register(m.b))
	return // want `^the metrics registered at joined\.go:\d+ stay registered when this returns an error: unregister each whose registration succeeded before returning: Unregister of one that failed removes the collector it collided with$`
}

var mu sync.Mutex

// deferred keeps its named results in memory, as it defers a call: the
// error tested after the first step is not the one the last return gives.
func deferred(reg prometheus.Registerer, step1, step2 func() error) (m *metrics, err error) {
	mu.Lock()
	defer mu.Unlock()
	a := prometheus.NewGauge(prometheus.GaugeOpts{Name: "deferred_a"})
	reg.MustRegister(a)
	if err = step1(); err != nil {
		reg.Unregister(a)
		return nil, err
	}
	if err = step2(); err != nil {
		return nil, err // want `^deferred_a registered at joined\.go:\d+ stays registered when this returns an error: unregister it before returning, or register it after the last error return$`
	}
	return &metrics{a: a}, nil
}

// optional keeps err in memory too, and sets it again after b's error
// was dropped: the return gives start's error, which may be nil.
func optional(reg prometheus.Registerer, start func() error) (m *metrics, err error) {
	mu.Lock()
	defer mu.Unlock()
	m = &metrics{
		a: prometheus.NewGauge(prometheus.GaugeOpts{Name: "optional_a"}),
		b: prometheus.NewGauge(prometheus.GaugeOpts{Name: "optional_b"}),
	}
	reg.MustRegister(m.a)
	if err = reg.Register(m.b); err != nil {
		err = nil // b is optional
	}
	err = start()
	return m, err
}

// registerBoth registers the collectors its caller gives it, stopping at
// the first that fails.
func registerBoth(reg prometheus.Registerer, a, b prometheus.Collector) error {
	if err := reg.Register(a); err != nil {
		return err
	}
	if err := reg.Register(b); err != nil {
		reg.Unregister(a)
		return err
	}
	return nil
}

// oneCall registers both through one call: when it fails, it registered
// nothing.
func oneCall(reg prometheus.Registerer, check func() error) (*metrics, error) {
	m := &metrics{
		a: prometheus.NewGauge(prometheus.GaugeOpts{Name: "onecall_a"}),
		b: prometheus.NewGauge(prometheus.GaugeOpts{Name: "onecall_b"}),
	}
	err := registerBoth(reg, m.a, m.b)
	return m, errors.Join(err, check())
}

type undoable struct{ g prometheus.Gauge }

// Unregister takes back what newUndoable registered.
func (u *undoable) Unregister(reg prometheus.Registerer) { reg.Unregister(u.g) } // want Unregister:"unregisters"

func newUndoable(reg prometheus.Registerer, name string) (*undoable, error) {
	u := &undoable{g: prometheus.NewGauge(prometheus.GaugeOpts{Name: name})}
	return u, reg.Register(u.g)
}

// undoables joins two calls' errors whose values have a method that
// undoes them: the one that failed must not be undone.
func undoables(reg prometheus.Registerer) ([]*undoable, error) {
	x, errX := newUndoable(reg, "undoable_x")
	y, errY := newUndoable(reg, "undoable_y")         // related: registered
	return []*undoable{x, y}, errors.Join(errX, errY) // want `^the metrics registered at joined\.go:\d+ \(via newUndoable\) and 1 other place stay registered when this returns an error: unregister each whose registration succeeded before returning$`
}

// quiet describes nothing: Unregister cannot take it back.
type quiet struct{}

func (quiet) Describe(chan<- *prometheus.Desc) {} // want Describe:"does nothing"
func (quiet) Collect(chan<- prometheus.Metric) {}

// mixed joins the errors of a collector that describes nothing and one
// that does: the message says what to do for each.
func mixed(reg prometheus.Registerer) error {
	a := prometheus.NewGauge(prometheus.GaugeOpts{Name: "mixed_a"})
	var q quiet
	return errors.Join(reg.Register(a), reg.Register(q)) // want `^mixed_a and other metrics registered at joined\.go:\d+ stay registered when this returns an error: unregister each whose registration succeeded before returning: Unregister of one that failed removes the collector it collided with; register those that describe nothing, which Unregister cannot take back, after the last error return$`
}
