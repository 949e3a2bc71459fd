// Package fresh registers into registries made in the call, which go away
// with what is in them: made here, by a callee that returns one, or held in
// a field of an object made here.
package fresh

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

var errFailed = errors.New("failed")

func requests() prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: "requests_total"})
}

// NewAppRegistry returns a registry it made, with a collector in it.
func NewAppRegistry() *prometheus.Registry { // want NewAppRegistry:"makes a registry"
	reg := prometheus.NewRegistry()
	reg.MustRegister(requests())
	return reg
}

// newPedantic returns a registry it made, through another that does.
func newPedantic(pedantic bool) *prometheus.Registry {
	if pedantic {
		return prometheus.NewPedanticRegistry()
	}
	return NewAppRegistry()
}

// Server serves the metrics of a registry of its own.
type Server struct{ reg *prometheus.Registry }

// NewServer registers into a registry that a callee made: a failure leaves
// nothing anywhere else.
func NewServer(start func() error) (*Server, error) {
	reg := newPedantic(false)
	reg.MustRegister(requests())
	if err := start(); err != nil {
		return nil, err
	}
	return &Server{reg: reg}, nil
}

// MetricsRegistry is a registry with its metrics, as a struct that embeds
// the registry.
type MetricsRegistry struct {
	*prometheus.Registry
	requests prometheus.Counter
}

// NewMetricsRegistry registers into the registry held in the struct it
// made, through the embedded registry's method.
func NewMetricsRegistry(start func() error) (*MetricsRegistry, error) {
	r := &MetricsRegistry{Registry: prometheus.NewRegistry(), requests: requests()}
	r.MustRegister(r.requests)
	if err := start(); err != nil {
		return nil, err
	}
	return r, nil
}

type holder struct{ reg prometheus.Registerer }

// Copied registers into a registry held in a field of a struct copied
// whole from another.
func Copied(start func() error) (*holder, error) {
	made := holder{reg: prometheus.NewRegistry()}
	h := made
	h.reg.MustRegister(requests())
	if err := start(); err != nil {
		return nil, err
	}
	return &h, nil
}

var shared *prometheus.Registry

// SharedRegistry returns the same registry on every call after the first:
// it does not make a registry per call.
func SharedRegistry() *prometheus.Registry { // want SharedRegistry:"shares 0"
	if shared == nil {
		shared = prometheus.NewRegistry()
	}
	return shared
}

// OnShared registers into the shared registry and then fails.
func OnShared(start func() error) error {
	SharedRegistry().MustRegister(requests())
	return start() // want `^requests_total registered at fresh\.go:\d+ stays registered`
}

// EitherRegistry stores a registry of its own in a field, or the caller's:
// the field may hold the caller's.
func EitherRegistry(reg prometheus.Registerer, own bool, start func() error) error {
	h := &holder{reg: prometheus.NewRegistry()}
	if !own {
		h.reg = reg
	}
	h.reg.MustRegister(requests())
	return start() // want `^requests_total registered at fresh\.go:\d+ stays registered`
}

// OnField registers into a registry held in a field of its receiver, which
// may hold anything.
func (h *holder) OnField(start func() error) error { // want OnField:"^registers"
	h.reg.MustRegister(requests())
	return start() // want `^requests_total registered at fresh\.go:\d+ stays registered`
}

// Start makes its receiver a registry and registers there: a call again
// makes another, so nothing is left for it to collide with.
func (h *holder) Start(start func() error) error {
	h.reg = prometheus.NewRegistry()
	h.reg.MustRegister(requests())
	return start()
}

// StartShared makes its receiver a registry, then lets a method of the
// receiver set the field.
func (h *holder) StartShared(start func() error) error { // want StartShared:"^registers"
	h.reg = prometheus.NewRegistry()
	h.useShared()
	h.reg.MustRegister(requests())
	return start() // want `^requests_total registered at fresh\.go:\d+ stays registered`
}

func (h *holder) useShared() { h.reg = prometheus.DefaultRegisterer }

// Serve makes its receiver a registry and registers there, then gives a
// goroutine the receiver: the goroutine comes after.
func (h *holder) Serve(start func() error) error { // want Serve:"keeps 0>-1"
	h.reg = prometheus.NewRegistry()
	h.reg.MustRegister(requests())
	go func() { h.useShared() }()
	return start()
}

// ServeFirst gives a goroutine the receiver before it registers: the
// goroutine may set the field in between.
func (h *holder) ServeFirst(start func() error) error { // want ServeFirst:"^registers" ServeFirst:"keeps 0>-1"
	h.reg = prometheus.NewRegistry()
	go func() { h.useShared() }()
	h.reg.MustRegister(requests())
	return start() // want `^requests_total registered at fresh\.go:\d+ stays registered`
}

type options struct{ reg prometheus.Registerer }

// Option sets an option of NewClient.
type Option func(*options)

// NewClient registers into a registry of its own unless an option gave
// another: the options may set the field, so it is not the function's alone.
func NewClient(start func() error, opts ...Option) error {
	o := &options{reg: prometheus.NewRegistry()}
	for _, opt := range opts {
		opt(o)
	}
	o.reg.MustRegister(requests())
	return start() // want `^requests_total registered at fresh\.go:\d+ stays registered`
}

func (o *options) useDefault() { o.reg = prometheus.DefaultRegisterer }

// MethodAfter registers into the registry of an object it made, and then
// calls a method of the object, which cannot change where the registration
// went: a failure leaves nothing anywhere else.
func MethodAfter(start func() error) (*options, error) {
	o := &options{reg: prometheus.NewRegistry()}
	o.reg.MustRegister(requests())
	o.useDefault()
	if err := start(); err != nil {
		return nil, err
	}
	return o, nil
}

// InLoop registers into the registry of an object it made, in a loop
// whose later passes may have had a method change the field.
func InLoop(names []string, shared bool, start func() error) error {
	o := &options{reg: prometheus.NewRegistry()}
	for _, n := range names {
		o.reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: n}))
		if shared {
			o.useDefault()
		}
	}
	return start() // want `^the metrics registered at fresh\.go:\d+ stay registered`
}

// Overwritten replaces the whole object before it registers.
func Overwritten(start func() error) error {
	o := &options{reg: prometheus.NewRegistry()}
	*o = options{reg: prometheus.DefaultRegisterer}
	o.reg.MustRegister(requests())
	return start() // want `^requests_total registered at fresh\.go:\d+ stays registered`
}

// AfterMethod lets a method of the object set the field.
func AfterMethod(start func() error) error {
	o := &options{reg: prometheus.NewRegistry()}
	o.useDefault()
	o.reg.MustRegister(requests())
	return start() // want `^requests_total registered at fresh\.go:\d+ stays registered`
}

func registererFor(global bool, fallback prometheus.Registerer) prometheus.Registerer {
	if global {
		return prometheus.DefaultRegisterer
	}
	return fallback
}

// Chosen registers into what registererFor picks: a call that takes a
// registerer and returns one is no wrapper of client_golang's, and may
// return another.
func Chosen(global bool, start func() error) error {
	reg := registererFor(global, prometheus.NewRegistry())
	reg.MustRegister(requests())
	return start() // want `^requests_total registered at fresh\.go:\d+ stays registered`
}

// Labelled registers through client_golang's wrapper of a registry made
// here, which passes everything to it.
func Labelled(start func() error) error {
	reg := prometheus.WrapRegistererWith(prometheus.Labels{"a": "b"}, prometheus.NewRegistry())
	reg.MustRegister(requests())
	return start()
}

// Swapped registers into a variable that a closure may set to the shared
// registry.
func Swapped(useShared bool, start func() error) error {
	r := prometheus.NewRegistry()
	pick := func() { r = SharedRegistry() }
	if useShared {
		pick()
	}
	r.MustRegister(requests())
	return start() // want `^requests_total registered at fresh\.go:\d+ stays registered`
}

// registerInto registers through registererFor, which may pick the shared
// registry whatever it is given: its fact says so.
func registerInto(reg prometheus.Registerer, c prometheus.Collector) {
	registererFor(false, reg).MustRegister(c)
}

// ThroughOpaqueHelper gives that helper a registry of its own, which says
// nothing of where the collector went.
func ThroughOpaqueHelper(start func() error) error {
	registerInto(prometheus.NewRegistry(), requests())
	return start() // want `^requests_total registered at fresh\.go:\d+ \(via registerInto\) stays registered`
}

// registerPlain registers through what it is given, or a wrapper of it.
func registerPlain(reg prometheus.Registerer, c prometheus.Collector) {
	prometheus.WrapRegistererWithPrefix("app_", reg).MustRegister(c)
}

// ThroughPlainHelper gives that one a registry of its own: no leak.
func ThroughPlainHelper(start func() error) error {
	registerPlain(prometheus.NewRegistry(), requests())
	return start()
}

// noop is a Registerer of the project's own that keeps nothing, as tests
// use one.
type noop struct{}

func (*noop) Register(prometheus.Collector) error { return nil } // want Register:"never fails" Register:"does nothing"

func (*noop) MustRegister(...prometheus.Collector) {} // want MustRegister:"does nothing"

func (*noop) Unregister(prometheus.Collector) bool { return true }

// Noop is what tests give constructors.
var Noop = &noop{}

// OnNoop registers into it: nowhere.
func OnNoop(start func() error) error {
	Noop.MustRegister(requests())
	return start()
}

// registerOn registers through what it is given and hands the collector
// back.
func registerOn(reg prometheus.Registerer) (prometheus.Counter, error) {
	c := requests()
	if err := reg.Register(c); err != nil {
		return nil, err
	}
	return c, nil
}

// ThroughNoop gives it to a helper: no leak.
func ThroughNoop(start func() error) error {
	if _, err := registerOn(Noop); err != nil {
		return err
	}
	return start()
}

// counting is a Registerer that counts what it is given: it does
// something, so it may keep it.
type counting struct{ n int }

func (r *counting) Register(prometheus.Collector) error { r.n++; return nil } // want Register:"never fails"

func (r *counting) MustRegister(...prometheus.Collector) {} // want MustRegister:"does nothing"

func (*counting) Unregister(prometheus.Collector) bool { return true }

// ThroughCounting is reported.
func ThroughCounting(start func() error) error {
	c, err := registerOn(&counting{})
	if err != nil {
		return err
	}
	_ = c
	return start() // want `^requests_total registered at fresh\.go:\d+ \(via registerOn\) stays registered`
}

// wrappedRegistry returns client_golang's wrapper of a registry it made,
// and the registry: each call gives a new one.
func wrappedRegistry() (prometheus.Registerer, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	return prometheus.WrapRegistererWithPrefix("app_", reg), reg
}

type service struct{ requests prometheus.Counter }

func (s *service) register(reg prometheus.Registerer) { reg.MustRegister(s.requests) }

// ThroughWrappedRegistry registers, through a method, into what
// wrappedRegistry returned: no leak.
func ThroughWrappedRegistry(start func() error) error {
	reg, _ := wrappedRegistry()
	s := &service{requests: requests()}
	s.register(reg)
	return start()
}

type config struct{ Registerer prometheus.Registerer }

func newConfig() *config { return &config{} }

// InConfig registers through a field that holds client_golang's wrapper of
// a registry made here, on an object that a constructor returned.
func InConfig(start func(*config) error) error {
	cfg := newConfig()
	cfg.Registerer = prometheus.WrapRegistererWith(prometheus.Labels{"app": "x"}, prometheus.NewRegistry())
	cfg.Registerer.MustRegister(requests())
	return start(cfg)
}

// A worker runs goroutines that count its ticks.
type worker struct {
	reg   *prometheus.Registry
	ticks int
}

// StartWorking makes its receiver a registry and gives a call a closure
// that reads the field and writes another: the closure cannot change where
// the registration goes.
func (w *worker) StartWorking(start func() error, run func(func())) error {
	w.reg = prometheus.NewRegistry()
	run(func() {
		w.ticks++
		if w.reg == nil {
			w.ticks = 0
		}
	})
	w.reg.MustRegister(requests())
	return start()
}

// StartSwapping gives the call a closure that sets the field.
func (w *worker) StartSwapping(start func() error, run func(func())) error { // want StartSwapping:"^registers"
	w.reg = prometheus.NewRegistry()
	run(func() { w.reg = SharedRegistry() })
	w.reg.MustRegister(requests())
	return start() // want `^requests_total registered at fresh\.go:\d+ stays registered`
}
