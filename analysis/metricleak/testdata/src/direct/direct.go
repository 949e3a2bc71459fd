// Package direct registers with Register and MustRegister.
package direct

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

var errFailed = errors.New("failed")

type Server struct{ requests prometheus.Counter }

func requests() prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "app", Subsystem: "http", Name: "requests_total"})
}

func MustRegisterThenFail(reg prometheus.Registerer, start func() error) (*Server, error) { // want MustRegisterThenFail:"registers requests_total at direct/direct.go:20 \\(result 0, registerer 0\\)"
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "requests_total"})
	reg.MustRegister(c)
	if err := start(); err != nil {
		return nil, err // want `^requests_total registered at direct\.go:20 stays registered when this returns an error: unregister it before returning, or register it after the last error return$`
	}
	return &Server{requests: c}, nil
}

func UnregisterThenFail(reg prometheus.Registerer, start func() error) (*Server, error) { // want UnregisterThenFail:"^registers"
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "requests_total"})
	reg.MustRegister(c)
	if err := start(); err != nil {
		reg.Unregister(c)
		return nil, err
	}
	return &Server{requests: c}, nil
}

func RegisterChecked(reg prometheus.Registerer, start func() error) (*Server, error) { // want RegisterChecked:"^registers"
	s := &Server{requests: prometheus.NewCounter(prometheus.CounterOpts{Name: "requests_total"})}
	if err := reg.Register(s.requests); err != nil {
		return nil, err // Register failed: nothing registered
	}
	if err := start(); err != nil {
		return nil, err // want `requests_total registered at direct\.go:39 stays registered`
	}
	return s, nil
}

// RegisterAlreadyRegistered tolerates a duplicate: registering again after a
// failure is fine, so it is not a registration that can leak.
func RegisterAlreadyRegistered(reg prometheus.Registerer, start func() error) (prometheus.Counter, error) {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "requests_total"})
	if err := reg.Register(c); err != nil {
		are, ok := err.(prometheus.AlreadyRegisteredError)
		if !ok {
			return nil, err
		}
		c = are.ExistingCollector.(prometheus.Counter)
	}
	if err := start(); err != nil {
		return nil, err
	}
	return c, nil
}

func RegisterErrorsAs(reg prometheus.Registerer, start func() error) (prometheus.Counter, error) {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "requests_total"})
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return nil, err
		}
		c = are.ExistingCollector.(prometheus.Counter)
	}
	return c, start()
}

func DefaultRegistry(start func() error) error {
	c := requests()
	prometheus.MustRegister(c)
	if err := start(); err != nil {
		return err // want `app_http_requests_total registered at direct\.go:79 stays registered`
	}
	return nil
}

func DefaultRegisterer(start func() error) error {
	c := requests()
	prometheus.DefaultRegisterer.MustRegister(c)
	return start() // want `app_http_requests_total registered at direct\.go:88`
}

func Several(reg prometheus.Registerer, start func() error) error { // want Several:"registers .* \\(result -1, registerer 0, own\\)"
	a := prometheus.NewCounter(prometheus.CounterOpts{Name: "a_total"})
	b := prometheus.NewCounter(prometheus.CounterOpts{Name: "b_total"})
	reg.MustRegister(a, b)
	reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "c"})) // related: registered
	reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "d"})) // related: registered
	if err := start(); err != nil {
		reg.Unregister(a)
		return err // want `^b_total, c and d registered at direct\.go:95 and 2 other places stay registered when this returns an error: unregister them before returning, or register them after the last error return$`
	}
	return nil
}

func Wrapped(reg prometheus.Registerer, start func() error) error { // want Wrapped:"^registers"
	wrapped := prometheus.WrapRegistererWith(prometheus.Labels{"cluster": "east"}, reg)
	wrapped.MustRegister(requests())
	return start() // want `app_http_requests_total registered at direct\.go:107`
}

func Loop(reg prometheus.Registerer) error { // want Loop:"^registers"
	cs := []prometheus.Collector{requests(), requests()}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return err // want `^app_http_requests_total registered at direct\.go:114 stays registered`
		}
	}
	return nil
}

func PrivateRegistry(start func() error) error {
	reg := prometheus.NewRegistry()
	reg.MustRegister(requests())
	return start()
}

func CallerCollector(reg prometheus.Registerer, c prometheus.Collector, start func() error) error { // want CallerCollector:"^registers"
	reg.MustRegister(c)
	return start()
}

var global = requests()

func GlobalCollector(start func() error) error {
	prometheus.MustRegister(global)
	return start()
}

func (s *Server) ReceiverCollector(reg prometheus.Registerer, start func() error) error { // want ReceiverCollector:"^registers"
	reg.MustRegister(s.requests)
	return start()
}

func NilErrors(reg prometheus.Registerer) (*Server, error) { // want NilErrors:"^registers" NilErrors:"never fails"
	c := requests()
	reg.MustRegister(c)
	if c == nil {
		return nil, nil
	}
	return &Server{requests: c}, nil
}

func NoErrorResult(reg prometheus.Registerer, start func() error) { // want NoErrorResult:"^registers"
	reg.MustRegister(requests())
	if start() != nil {
		return
	}
}

type wrapper struct{ next prometheus.Registerer }

// Register returns the error of the registration itself: where it is not
// nil, nothing was registered.
func (w *wrapper) Register(c prometheus.Collector) error { // want Register:"^registers"
	return w.next.Register(&wrapped{c})
}

type wrapped struct{ prometheus.Collector }

// unregisterer wraps a registerer and can undo all it registered.
type unregisterer struct {
	next prometheus.Registerer
	cs   []prometheus.Collector
}

// Register keeps c in u, which can undo it: what it registers is u's, not
// its caller's.
func (u *unregisterer) Register(c prometheus.Collector) error { // want Register:"keeps 1>0"
	if err := u.next.Register(c); err != nil {
		return err
	}
	u.cs = append(u.cs, c)
	return nil
}

func (u *unregisterer) MustRegister(cs ...prometheus.Collector) { // want MustRegister:"registers metrics at direct/direct.go:188 \\(result -1, registerer 0, collectors \\[1\\]\\)"
	for _, c := range cs {
		if err := u.Register(c); err != nil {
			panic(err)
		}
	}
}

func (u *unregisterer) Unregister(c prometheus.Collector) bool { return u.next.Unregister(c) } // want Unregister:"unregisters"

func (u *unregisterer) UnregisterAll() { // want UnregisterAll:"unregisters"
	for _, c := range u.cs {
		u.next.Unregister(c)
	}
}

// ThroughUnregisterer registers through a wrapper it made; undoing all the
// wrapper registered undoes the registration.
func ThroughUnregisterer(reg prometheus.Registerer, start func() error) error {
	u := &unregisterer{next: reg}
	wrapped := prometheus.WrapRegistererWith(prometheus.Labels{"tenant": "a"}, u)
	wrapped.MustRegister(requests())
	if err := start(); err != nil {
		u.UnregisterAll()
		return err
	}
	return start() // want `^app_http_requests_total registered at direct\.go:\d+ stays registered`
}

type counters struct{ copied prometheus.Counter }

// Copied registers a counter held in a struct that is a copy of another, the
// shape newer SSA builders give every composite literal: the name is found
// through the copy.
func Copied(reg prometheus.Registerer, start func() error) (*counters, error) { // want Copied:"registers copied_total at direct/direct.go:\\d+ \\(result 0, registerer 0\\)"
	made := counters{copied: prometheus.NewCounter(prometheus.CounterOpts{Name: "copied_total"})}
	cs := made
	reg.MustRegister(cs.copied)
	if err := start(); err != nil {
		return nil, err // want `^copied_total registered at direct\.go:\d+ stays registered`
	}
	return &cs, nil
}

type walMetrics struct {
	reg       prometheus.Registerer
	truncated prometheus.Counter
}

// FieldAfterLiteral sets a field of a struct made by a literal, as
// Prometheus's agent does: the name is found, also where the SSA builder
// makes the literal in an object of its own and copies it.
func FieldAfterLiteral(reg prometheus.Registerer, start func() error) (*walMetrics, error) { // want FieldAfterLiteral:"registers wal_truncated_total at direct/direct.go:\\d+ \\(result 0, registerer 0\\)"
	m := walMetrics{reg: reg}
	m.truncated = prometheus.NewCounter(prometheus.CounterOpts{Name: "wal_truncated_total"})
	reg.MustRegister(m.truncated)
	if err := start(); err != nil {
		return nil, err // want `^wal_truncated_total registered at direct\.go:\d+ stays registered`
	}
	return &m, nil
}

// RegisterAll registers collectors its caller made, through its caller's
// registerer: its caller owns the registrations.
func RegisterAll(reg prometheus.Registerer, cs ...prometheus.Collector) error { // want RegisterAll:"registers metrics at direct/direct.go:\\d+ \\(result -1, registerer 0, collectors \\[1\\]\\)"
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// registerOne does so for one collector, and never fails.
func registerOne(reg prometheus.Registerer, c prometheus.Collector) { reg.MustRegister(c) }

func ThroughHelpers(reg prometheus.Registerer, start func() error) error { // want ThroughHelpers:"registers sessions,queued,dropped_total at direct/direct.go:\\d+ \\(result -1, registerer 0, own\\)"
	sessions := prometheus.NewGauge(prometheus.GaugeOpts{Name: "sessions"})
	registerOne(reg, sessions)
	queued := prometheus.NewGauge(prometheus.GaugeOpts{Name: "queued"})
	dropped := prometheus.NewCounter(prometheus.CounterOpts{Name: "dropped_total"})
	if err := RegisterAll(reg, queued, dropped); err != nil {
		return err // want `^sessions registered at direct\.go:\d+ \(via registerOne\) stays registered`
	}
	if err := start(); err != nil {
		reg.Unregister(sessions)
		reg.Unregister(queued)
		return err // want `^dropped_total registered at direct\.go:\d+ \(via RegisterAll\) stays registered`
	}
	return nil
}

// NothingThroughHelpers passes the helpers no collector: nothing is
// registered.
func NothingThroughHelpers(reg prometheus.Registerer, start func() error) error {
	registerOne(reg, nil)
	if err := RegisterAll(reg); err != nil {
		return err
	}
	return start()
}

// constGauges is a collector made from its caller's values.
type constGauges []string

func (g constGauges) Describe(ch chan<- *prometheus.Desc) {
	for range g {
		ch <- nil
	}
}

func (constGauges) Collect(chan<- prometheus.Metric) {}

// registerNames registers a collector it makes from names: a collector of
// its own, not its caller's.
func registerNames(reg prometheus.Registerer, names []string) {
	reg.MustRegister(constGauges(names))
}

func ConvertedByHelper(reg prometheus.Registerer, start func() error) error {
	names := []string{"a", "b"}
	registerNames(reg, names)
	return start()
}

type adder struct{}

// AddTo registers c, not other.
func (adder) AddTo(reg prometheus.Registerer, c, other prometheus.Collector) { // want AddTo:"registers metrics at direct/direct.go:\\d+ \\(result -1, registerer 1, collectors \\[2\\]\\)"
	reg.MustRegister(c)
}

// BoundHelper calls the helper as a method value, whose arguments do not
// count the receiver.
func BoundHelper(reg prometheus.Registerer, start func() error) error { // want BoundHelper:"registers used_total at direct/direct.go:\\d+ \\(result -1, registerer 0, own\\)"
	used := prometheus.NewCounter(prometheus.CounterOpts{Name: "used_total"})
	spare := prometheus.NewCounter(prometheus.CounterOpts{Name: "spare_total"})
	add := adder{}.AddTo
	add(reg, used, spare)
	return start() // want `^used_total registered at direct\.go:\d+ \(via adder\.AddTo\) stays registered`
}

// HelperOnReceiver registers the receiver's collector through a helper: the
// receiver owns it, and so does the method's caller, which gave both.
func (s *Server) HelperOnReceiver(reg prometheus.Registerer, start func() error) error { // want HelperOnReceiver:"registers metrics at direct/direct.go:\\d+ \\(result -1, registerer 1, collectors \\[0\\]\\)"
	registerOne(reg, s.requests)
	return start()
}

// ArrayParam registers the collectors of its caller's array: the caller's.
func ArrayParam(reg prometheus.Registerer, cs [2]prometheus.Collector, start func() error) error { // want ArrayParam:"registers metrics at direct/direct.go:\\d+ \\(result -1, registerer 0, collectors \\[1\\]\\)"
	reg.MustRegister(cs[:]...)
	return start()
}

// ThroughArrayHelper hands its own collectors to ArrayParam in an array.
func ThroughArrayHelper(reg prometheus.Registerer, start func() error) error { // want ThroughArrayHelper:"registers array_a_total,array_b_total at direct/direct.go:\\d+ \\(result -1, registerer 0, own\\)"
	a := prometheus.NewCounter(prometheus.CounterOpts{Name: "array_a_total"})
	b := prometheus.NewCounter(prometheus.CounterOpts{Name: "array_b_total"})
	if err := ArrayParam(reg, [2]prometheus.Collector{a, b}, start); err != nil {
		return err
	}
	return start() // want `^array_a_total and array_b_total registered at direct\.go:\d+ \(via ArrayParam\) stay registered`
}

// RegisterTyped is a generic helper: its type parameter's value is its
// caller's collector.
func RegisterTyped[C prometheus.Collector](reg prometheus.Registerer, c C) { // want RegisterTyped:"registers metrics at direct/direct.go:\\d+ \\(result -1, registerer 0, collectors \\[1\\]\\)"
	reg.MustRegister(c)
}

func ThroughTypedHelper(reg prometheus.Registerer, start func() error) error { // want ThroughTypedHelper:"registers typed_total at direct/direct.go:\\d+ \\(result -1, registerer 0, own\\)"
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "typed_total"})
	RegisterTyped(reg, c)
	return start() // want `^typed_total registered at direct\.go:\d+ \(via RegisterTyped\) stays registered`
}

// ThroughMethodValues registers and unregisters through method values of
// the registerer.
func ThroughMethodValues(reg prometheus.Registerer, start func() error) error { // want ThroughMethodValues:"registers value_total at direct/direct.go:\\d+ \\(result -1, registerer 0, own\\)"
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "value_total"})
	register := reg.MustRegister
	register(c)
	if err := start(); err != nil {
		unregister := reg.Unregister
		unregister(c)
		return err
	}
	return start() // want `^value_total registered at direct\.go:\d+ stays registered`
}

type pipeline struct {
	reg    prometheus.Registerer
	queued prometheus.Gauge
}

// Stop undoes what newPipeline registered of its own.
func (p *pipeline) Stop() { p.reg.Unregister(p.queued) } // want Stop:"unregisters"

// NewPipeline registers a gauge of its own, which it hands back, and its
// caller's extra collector.
func NewPipeline(reg prometheus.Registerer, extra prometheus.Collector) *pipeline { // want NewPipeline:"registers pipeline_queued at direct/direct.go:\\d+ \\(result 0, registerer 0, collectors \\[1\\]\\)"
	p := &pipeline{reg: reg, queued: prometheus.NewGauge(prometheus.GaugeOpts{Name: "pipeline_queued"})}
	reg.MustRegister(p.queued, extra)
	return p
}

// StoppedPipeline stops the pipeline, which leaves the extra collector.
func StoppedPipeline(reg prometheus.Registerer, start func() error) error { // want StoppedPipeline:"registers .* \\(result -1, registerer 0, own\\)"
	extra := prometheus.NewCounter(prometheus.CounterOpts{Name: "pipeline_extra_total"})
	p := NewPipeline(reg, extra)
	if err := start(); err != nil {
		p.Stop()
		return err // want `^pipeline_extra_total registered at direct\.go:\d+ \(via NewPipeline\) stays registered`
	}
	return nil
}

// newOptional registers a counter only when it is enabled, and hands back
// nil otherwise.
func newOptional(reg prometheus.Registerer, enabled bool) (prometheus.Counter, error) {
	if !enabled {
		return nil, nil
	}
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "optional_total"})
	if err := reg.Register(c); err != nil {
		return nil, err
	}
	return c, nil
}

// GuardedUndo unregisters the counter where it is not nil: where it is,
// nothing was registered.
func GuardedUndo(reg prometheus.Registerer, enabled bool, start func() error) (prometheus.Counter, error) { // want GuardedUndo:"registers optional_total at direct/direct.go:\\d+ \\(result 0, registerer 0\\)"
	c, err := newOptional(reg, enabled)
	if err != nil {
		return nil, err
	}
	if err := start(); err != nil {
		if c != nil {
			reg.Unregister(c)
		}
		return nil, err
	}
	return c, nil
}

// GuardedDeferredUndo registers only when enabled, and defers the undo
// where it did.
func GuardedDeferredUndo(reg prometheus.Registerer, enabled bool, start func() error) error {
	var c prometheus.Counter
	if enabled {
		c = prometheus.NewCounter(prometheus.CounterOpts{Name: "guarded_total"})
		reg.MustRegister(c)
	}
	if c != nil {
		defer reg.Unregister(c)
	}
	return start()
}

// RolledBack registers its collectors one by one and, when one fails,
// unregisters those before it in a loop, which takes all of them back.
func RolledBack(reg prometheus.Registerer) error { // want RolledBack:"registers first_total,second_total at direct/direct.go:\\d+ \\(result -1, registerer 0, own\\)"
	cs := []prometheus.Collector{
		prometheus.NewCounter(prometheus.CounterOpts{Name: "first_total"}),
		prometheus.NewCounter(prometheus.CounterOpts{Name: "second_total"}),
	}
	for i, c := range cs {
		if err := reg.Register(c); err != nil {
			for _, done := range cs[:i] {
				reg.Unregister(done)
			}
			return err
		}
	}
	return nil
}

// RolledBackOthers unregisters a list that is not the one it registered.
func RolledBackOthers(reg prometheus.Registerer, others []prometheus.Collector) error { // want RolledBackOthers:"registers kept_total at direct/direct.go:\\d+ \\(result -1, registerer 0, own\\)"
	cs := []prometheus.Collector{prometheus.NewCounter(prometheus.CounterOpts{Name: "kept_total"})}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			for _, o := range others {
				reg.Unregister(o)
			}
			return err // want `^kept_total registered at direct\.go:\d+ stays registered`
		}
	}
	return nil
}

type compactorMetrics struct{ compactions prometheus.Counter }

func newCompactorMetrics(reg prometheus.Registerer) *compactorMetrics {
	m := &compactorMetrics{compactions: prometheus.NewCounter(prometheus.CounterOpts{Name: "compactions_total"})}
	reg.MustRegister(m.compactions)
	return m
}

type compactorOptions struct{ metrics *compactorMetrics }

type compactor struct{ metrics *compactorMetrics }

// NewCompactor fills in its own copy of the options, as Prometheus's
// NewLeveledCompactorWithOptions does: that keeps nothing, and the metrics
// go to its caller in the compactor.
func NewCompactor(reg prometheus.Registerer, opts compactorOptions) (*compactor, error) { // want NewCompactor:"registers compactions_total at direct/direct.go:\\d+ \\(result 0, registerer 0\\)" NewCompactor:"never fails"
	if opts.metrics == nil {
		opts.metrics = newCompactorMetrics(reg)
	}
	return &compactor{metrics: opts.metrics}, nil
}

func RegisterErrorsAsType(reg prometheus.Registerer, start func() error) (prometheus.Counter, error) {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "requests_total"})
	if err := reg.Register(c); err != nil {
		are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err)
		if !ok {
			return nil, err
		}
		c = are.ExistingCollector.(prometheus.Counter)
	}
	return c, start()
}

// custom is a collector whose metric has no name the analyzer can read.
type custom struct{}

func (custom) Describe(ch chan<- *prometheus.Desc) { ch <- &prometheus.Desc{} }

func (custom) Collect(chan<- prometheus.Metric) {}

type both struct {
	c prometheus.Collector
	g prometheus.Gauge
}

func newBoth(reg prometheus.Registerer) *both {
	b := &both{c: custom{}, g: prometheus.NewGauge(prometheus.GaugeOpts{Name: "in_flight"})}
	reg.MustRegister(b.c, b.g)
	return b
}

func NamedAndUnnamed(reg prometheus.Registerer, start func() error) (*both, error) { // want NamedAndUnnamed:"registers in_flight at direct/direct.go:527 \\(result 0, registerer 0, and unnamed ones\\)"
	b := newBoth(reg)
	if err := start(); err != nil {
		return nil, err // want `^in_flight and other metrics registered at direct\.go:527 \(via newBoth\) stay registered when this returns an error: unregister them before returning, or call newBoth after the last error return$`
	}
	return b, nil
}

// UnnamedFirst registers a collector whose metric has no name the analyzer
// can read, then in_queue: the message names in_queue's place, where the
// names it lists come from.
func UnnamedFirst(reg prometheus.Registerer, start func() error) error { // want UnnamedFirst:"registers in_queue at direct/direct.go:545 \\(result -1, registerer 0, and unnamed ones, own\\)"
	reg.MustRegister(custom{}) // related: registered
	queue := prometheus.NewGauge(prometheus.GaugeOpts{Name: "in_queue"})
	reg.MustRegister(queue)
	if err := start(); err != nil {
		return err // want `^in_queue and other metrics registered at direct\.go:545 and 1 other place stay registered when this returns an error: unregister them before returning, or register them after the last error return$`
	}
	return nil
}

// ReceiverLoop registers the receiver's collectors in a loop over a slice
// literal and returns the first error: they are the receiver's, as they
// are when registered one by one.
func (s *Server) ReceiverLoop(reg prometheus.Registerer, errors prometheus.Counter) error { // want ReceiverLoop:"registers metrics at direct/direct.go:\\d+ \\(result -1, registerer 1, collectors \\[0 2\\]\\)"
	for _, c := range []prometheus.Collector{s.requests, errors} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// LocalLoop registers collectors of its own in the same loop: those
// registered before the one that fails stay.
func LocalLoop(reg prometheus.Registerer) error { // want LocalLoop:"registers loop_a_total,loop_b_total at direct/direct.go:\\d+ \\(result -1, registerer 0, own\\)"
	a := prometheus.NewCounter(prometheus.CounterOpts{Name: "loop_a_total"})
	b := prometheus.NewCounter(prometheus.CounterOpts{Name: "loop_b_total"})
	for _, c := range []prometheus.Collector{a, b} {
		if err := reg.Register(c); err != nil {
			return err // want `^loop_a_total and loop_b_total registered at direct\.go:\d+ stay registered when this returns an error`
		}
	}
	return nil
}

// RegisterDefault registers the collector it is given on the default
// registerer: its caller owns that registration.
func RegisterDefault(c prometheus.Collector) { prometheus.MustRegister(c) } // want RegisterDefault:"registers metrics at direct/direct.go:\\d+ \\(result -1, registerer default, collectors \\[0\\]\\)"

// ThroughDefaultHelper leaves its counter on the default registerer,
// through the helper, when it fails.
func ThroughDefaultHelper(start func() error) error {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "default_total"})
	RegisterDefault(c)
	return start() // want `^default_total registered at direct\.go:\d+ \(via RegisterDefault\) stays registered`
}

// registerOwnDefault registers a counter of its own on the default
// registerer: its own leak, if any, not its caller's.
func registerOwnDefault() {
	prometheus.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "own_total"}))
}

// ThroughOwnDefaultHelper calls it, then fails: nothing of its own is left.
func ThroughOwnDefaultHelper(start func() error) error {
	registerOwnDefault()
	return start()
}
