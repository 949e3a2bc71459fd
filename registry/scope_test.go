package registry_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"weak"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/promscope/promscope/internal/describe"
	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/lifecycle"
	"github.com/promscope/promscope/registry"
	"github.com/promscope/promscope/registry/registrytest"
)

func TestNewScope(t *testing.T) {
	// A scope on a nil parent, a typed-nil registry or a typed-nil scope
	// registers into a private registry, which refuses what a registry
	// refuses, and still tracks, gathers and closes.
	for _, tt := range []struct {
		name string
		give prometheus.Registerer
	}{
		{name: "nil parent"},
		{name: "typed-nil registry", give: (*prometheus.Registry)(nil)},
		{name: "typed-nil scope", give: (*registry.Scope)(nil)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			scope := registry.NewScope(tt.give, nil, registry.WithLabels(nil), registry.WithLabels(prometheus.Labels{"a": "b"}))
			first := promtest.Gauge("jobs", 1)
			scope.MustRegister(first)
			var are prometheus.AlreadyRegisteredError
			if err := scope.Register(promtest.Gauge("jobs", 2)); !errors.As(err, &are) || are.ExistingCollector != prometheus.Collector(first) {
				t.Errorf("Register of an equal gauge = %v", err)
			}
			inconsistent := prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobs", Help: "Other.", ConstLabels: prometheus.Labels{"x": "y"}})
			if err := scope.Register(inconsistent); err == nil || errors.As(err, &are) {
				t.Errorf("Register of an inconsistent gauge = %v, want the registry's error", err)
			}
			promtest.Expose(t, scope, `jobs{a="b"} 1`)
			if !scope.Unregister(first) {
				t.Error("Unregister = false")
			}
			if err := scope.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
		})
	}

	// A zero Scope, and a nil *Scope, panic with the package prefix where
	// they would register or make a scope, and are empty otherwise.
	for name, s := range map[string]*registry.Scope{"zero scope": {}, "nil scope": nil} {
		t.Run(name, func(t *testing.T) {
			for _, call := range []struct {
				method string
				f      func()
			}{
				{"Register", func() { _ = s.Register(promtest.Gauge("jobs", 1)) }},
				{"Register", func() { _ = s.Register(nil) }},
				{"MustRegister", func() { s.MustRegister(promtest.Gauge("jobs", 1)) }},
				{"MustRegister", func() { s.MustRegister() }},
				{"NewScope", func() { s.Child() }},
				{"DeleteOnClose", func() { s.DeleteOnClose(prometheus.Labels{"a": "b"}, promtest.CounterVec("v", "a")) }},
				// Through client_golang's wrappers, a zero vector or a
				// nil, which describe nothing a wrapper can pass on.
				{"Register", func() {
					_ = prometheus.WrapRegistererWith(prometheus.Labels{"a": "b"}, s).Register(&prometheus.GaugeVec{})
				}},
				{"Register", func() { _ = prometheus.WrapRegistererWithPrefix("p_", s).Register(nil) }},
			} {
				want := "registry: " + call.method + " on a Scope that NewScope did not make"
				if msg, ok := promtest.Panic(call.f).(string); !ok || msg != want {
					t.Errorf("%s panicked with %#v, want %q", call.method, msg, want)
				}
			}
			if mfs, err := s.Gather(); s.Unregister(promtest.Gauge("jobs", 1)) || s.Len() != 0 || s.Close() != nil || len(mfs) != 0 || err != nil || s.String() != "" {
				t.Error("the scope is not empty")
			}
		})
	}
	// NewScope on a zero Scope panics, as it does through client_golang's
	// wrappers of one; through wrappers of a nil *Scope, it makes a scope
	// on a private registry, as it does on a nil *Scope, with the
	// wrappers' prefix and labels.
	t.Run("zero scope parent", func(t *testing.T) {
		want := "registry: NewScope on a Scope that NewScope did not make"
		if msg, _ := promtest.Panic(func() { registry.NewScope(&registry.Scope{}) }).(string); msg != want {
			t.Errorf("NewScope panicked with %q", msg)
		}
		if msg, _ := promtest.Panic(func() {
			registry.NewScope(prometheus.WrapRegistererWith(prometheus.Labels{"a": "b"}, &registry.Scope{}))
		}).(string); msg != want {
			t.Errorf("NewScope on a wrapper of a zero scope panicked with %q, want %q", msg, want)
		}
	})
	t.Run("nil scope parent behind wrappers", func(t *testing.T) {
		var none *registry.Scope
		s := registry.NewScope(prometheus.WrapRegistererWithPrefix("p_", prometheus.WrapRegistererWith(prometheus.Labels{"a": "b"}, none)))
		if err := s.Register(promtest.Gauge("jobs", 1)); err != nil {
			t.Fatalf("Register = %v", err)
		}
		promtest.Expose(t, s, `p_jobs{a="b"} 1`)
		if err := s.Close(); err != nil || s.Len() != 0 {
			t.Errorf("Close = %v, Len = %d", err, s.Len())
		}
	})

	// A Registerer of the user's own that forwards to a scope, to
	// client_golang's wrappers of one, or to a scope with labels made on
	// another such Registerer, is a parent like any other: the scopes made
	// on it, with or without labels or a prefix, register through it and
	// take back what they registered, with Unregister and with Close, again
	// and again, whatever the scope behind it adds.
	betweens := []struct {
		name string
		wrap func(prometheus.Registerer) prometheus.Registerer
	}{
		{"", func(r prometheus.Registerer) prometheus.Registerer { return r }},
		{" on a wrapper", func(r prometheus.Registerer) prometheus.Registerer {
			return prometheus.WrapRegistererWith(prometheus.Labels{"w": "1"}, r)
		}},
		{" on a prefix wrapper", func(r prometheus.Registerer) prometheus.Registerer {
			return prometheus.WrapRegistererWithPrefix("w_", r)
		}},
		{" over a scope on another", func(r prometheus.Registerer) prometheus.Registerer {
			forwarder := promtest.NewParent(nil)
			forwarder.Next = r
			return registry.NewScope(forwarder, registry.WithLabels(prometheus.Labels{"m": "1"}))
		}},
	}
	for _, opts := range [][]registry.Option{nil, {registry.WithLabels(prometheus.Labels{"p": "1"})}} {
		for _, between := range betweens {
			t.Run(fmt.Sprintf("forwarder%s, %d options", between.name, len(opts)), func(t *testing.T) {
				reg := prometheus.NewPedanticRegistry()
				program := registry.NewScope(reg, opts...)
				forwarder := promtest.NewParent(nil)
				forwarder.Next = between.wrap(program)
				for round := range 3 {
					plain := registry.NewScope(forwarder)
					labelled := registry.NewScope(forwarder, registry.WithLabels(prometheus.Labels{"l": "1"}))
					prefixed := registry.NewScope(forwarder, registry.WithPrefix("x_"))
					plain.MustRegister(promtest.Gauge("jobs", 1))
					labelled.MustRegister(promtest.Gauge("tasks", 2))
					g := promtest.Gauge("runs", 3)
					prefixed.MustRegister(g)
					if got := program.Len(); got != 3 {
						t.Errorf("round %d: the program scope owns %d, want 3: the forwarded gauges", round, got)
					}
					if !prefixed.Unregister(g) {
						t.Errorf("round %d: Unregister = false", round)
					}
					prefixed.MustRegister(g)
					if err := errors.Join(plain.Close(), labelled.Close(), prefixed.Close()); err != nil {
						t.Errorf("round %d: %v", round, err)
					}
					if got := program.Len(); got != 0 {
						t.Errorf("round %d: the program scope owns %d after Close, want 0", round, got)
					}
				}
				if err := program.Close(); err != nil {
					t.Error(err)
				}
				registrytest.VerifyNone(t, reg)
			})
		}
	}

	// A client_golang wrapper of a registry is a parent like any other,
	// and the probe NewScope sends through it registers nothing.
	t.Run("wrapper of a registry", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		wrapped := registry.NewScope(prometheus.WrapRegistererWith(prometheus.Labels{"zone": "a"}, reg))
		wrapped.MustRegister(promtest.Gauge("up", 1))
		promtest.Expose(t, reg, `up{zone="a"} 1`)
		if err := wrapped.Close(); err != nil {
			t.Error(err)
		}
		registrytest.VerifyNone(t, reg)
	})

	// A scope on a wrapper of a Registerer that keeps nothing (a nil
	// one) registers and closes without errors; the probe that looked
	// for a scope behind a wrapper is not left in a Registerer that
	// keeps whatever it is given.
	t.Run("parents that keep nothing, or anything", func(t *testing.T) {
		nothing := registry.NewScope(prometheus.WrapRegistererWith(prometheus.Labels{"a": "b"}, nil))
		nothing.MustRegister(promtest.Gauge("jobs", 1))
		if err := nothing.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
		var anything keepAll
		registry.NewScope(prometheus.WrapRegistererWithPrefix("p_", &anything))
		if len(anything) != 0 {
			t.Errorf("the Registerer still holds %d collectors of the probe", len(anything))
		}
	})
}

// keepAll is a Registerer that keeps whatever it is given, invalid or not,
// and unregisters what describes the same descriptors.
type keepAll []prometheus.Collector

func (k *keepAll) Register(c prometheus.Collector) error { *k = append(*k, c); return nil }

func (k *keepAll) MustRegister(cs ...prometheus.Collector) { *k = append(*k, cs...) }

func (k *keepAll) Unregister(c prometheus.Collector) bool {
	n, want := len(*k), fmt.Sprint(describe.Descs(c))
	*k = slices.DeleteFunc(*k, func(x prometheus.Collector) bool { return fmt.Sprint(describe.Descs(x)) == want })
	return len(*k) < n
}

// keepNothing is a Registerer that accepts everything and keeps nothing.
type keepNothing struct{}

func (keepNothing) Register(prometheus.Collector) error { return nil }

func (keepNothing) MustRegister(...prometheus.Collector) {}

func (keepNothing) Unregister(prometheus.Collector) bool { return false }

// holder is a collector of a comparable struct type whose values hold
// something that cannot be compared: == on two of them panics.
type holder struct{ inner prometheus.Collector }

func (h holder) Describe(ch chan<- *prometheus.Desc) { h.inner.Describe(ch) }
func (h holder) Collect(ch chan<- prometheus.Metric) { h.inner.Collect(ch) }

// sharing is a collector of one descriptor that others may share, as
// exporters share one descriptor between the collectors of many targets.
type sharing struct{ d *prometheus.Desc }

func (s sharing) Describe(ch chan<- *prometheus.Desc) { ch <- s.d }
func (s sharing) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(s.d, prometheus.GaugeValue, 1)
}

// shared is the descriptor the sharing collectors of the tests share.
var shared = prometheus.NewDesc("shared_desc", "h", nil, nil)

// valued is an unchecked collector whose values are compared field by field.
type valued struct {
	n     int
	arr   [2]string
	m     map[string]int
	f     func()
	inner any
	sl    []int
}

func (valued) Describe(chan<- *prometheus.Desc) {}
func (valued) Collect(chan<- prometheus.Metric) {}

// odd is a checked collector of a non-pointer type whose values == cannot
// compare as the Words of docs/GUARANTEES.md do: one may hold a function, a
// NaN, or itself (through a slice or a map); or two slices of one array.
type odd struct {
	prometheus.Gauge
	read   func() float64
	nan    float64
	self   []any
	index  map[string]any
	window []any
}

// odds returns the odd values of g that the tests register: each kind of
// content, made anew on every call, each value equal to the one of the same
// name from another call.
func odds(g prometheus.Gauge) map[string]odd {
	v := new(float64) // captured: each call's function is a closure of its own
	itself := odd{Gauge: g, self: make([]any, 1)}
	itself.self[0] = itself
	indexed := odd{Gauge: g, index: map[string]any{}}
	indexed.index["self"] = indexed
	array := []any{1, 2}
	return map[string]odd{
		"function":        {Gauge: g, read: func() float64 { return *v }},
		"NaN":             {Gauge: g, nan: math.NaN()},
		"itself":          itself,
		"itself in a map": indexed,
		"windows":         {Gauge: g, self: array[:1], window: array[:2]},
	}
}

// shifty is a collector whose Describe yields gauges of names with the
// constant labels, which the test changes after Register, and which
// collects nothing.
type shifty struct {
	names  []string
	labels prometheus.Labels
	panics bool // Describe panics, as on a component closed first
}

func (s *shifty) Describe(ch chan<- *prometheus.Desc) {
	if s.panics {
		panic("shifty: described after its component closed")
	}
	for _, n := range s.names {
		ch <- prometheus.NewDesc(n, promtest.Help(n), nil, s.labels)
	}
}

func (*shifty) Collect(chan<- prometheus.Metric) {}

// nilDescriber is a broken collector: it describes a gauge and a nil
// descriptor.
type nilDescriber struct{}

func (nilDescriber) Describe(ch chan<- *prometheus.Desc) {
	ch <- prometheus.NewDesc("broken", promtest.Help("broken"), nil, nil)
	ch <- nil
}

func (nilDescriber) Collect(chan<- prometheus.Metric) {}

// component stands for a component whose metrics read its state.
type component struct{ cache map[string]int }

// build makes a component that registers a metric reading it through scope,
// and returns only a weak pointer to it. The metric calls onRead, if not
// nil, each time it reads the component.
//
//go:noinline
func build(t *testing.T, scope *registry.Scope, unchecked bool, onRead func()) weak.Pointer[component] {
	t.Helper()
	c := &component{cache: map[string]int{"a": 1, "b": 2}}
	size := func() float64 {
		if onRead != nil {
			onRead()
		}
		return float64(len(c.cache))
	}
	var col prometheus.Collector = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cache_objects", Help: "Objects."}, size)
	if unchecked {
		col = &funcUnchecked{f: size}
	}
	scope.MustRegister(col)
	return weak.Make(c)
}

// buildPanicking is build for a parent that panics when the metric is
// registered: it returns the weak pointer to the component, and what
// Register panicked with.
//
//go:noinline
func buildPanicking(scope *registry.Scope) (weak.Pointer[component], error) {
	c := &component{cache: map[string]int{"a": 1}}
	g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cache_objects", Help: "Objects."}, func() float64 { return float64(len(c.cache)) })
	v, _ := promtest.Panic(func() { _ = scope.Register(g) }).(error)
	return weak.Make(c), v
}

// funcUnchecked is an unchecked collector of a gauge that f reads.
type funcUnchecked struct{ f func() float64 }

func (*funcUnchecked) Describe(chan<- *prometheus.Desc) {}
func (u *funcUnchecked) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(prometheus.NewDesc("cache_objects", "Objects.", nil, nil), prometheus.GaugeValue, u.f())
}

// The failing-constructor story: a cluster watcher registers two GaugeFuncs
// that read its cache, then connects to the cluster. While the cluster is
// unreachable the constructor fails and is retried.

// storyCache is the watcher's cache of cluster objects.
type storyCache struct {
	objects map[string]int
}

func (c *storyCache) count() float64 { return float64(len(c.objects)) }

func (c *storyCache) bytes() float64 {
	n := 0
	for _, size := range c.objects {
		n += size
	}
	return float64(n)
}

var errStoryUnreachable = errors.New("cluster unreachable")

// newStoryWatcher is written as a user would write it: a scope for the
// component's metrics, closed by a deferred CloseOnError if it fails.
func newStoryWatcher(reg prometheus.Registerer, connect func() error) (_ *storyCache, _ *registry.Scope, err error) {
	scope := registry.NewScope(reg, registry.WithLabels(prometheus.Labels{"cluster": "east"}))
	defer lifecycle.CloseOnError(&err, scope)
	cache := &storyCache{objects: map[string]int{}}
	f := promauto.With(scope)
	f.NewGaugeFunc(prometheus.GaugeOpts{Name: "watcher_cache_objects", Help: "Objects cached."}, cache.count)
	f.NewGaugeFunc(prometheus.GaugeOpts{Name: "watcher_cache_bytes", Help: "Bytes cached."}, cache.bytes)
	if err := connect(); err != nil {
		return nil, nil, fmt.Errorf("connect: %w", err)
	}
	return cache, scope, nil
}
