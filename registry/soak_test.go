package registry_test

import (
	"errors"
	"flag"
	"runtime"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/lifecycle"
	"github.com/promscope/promscope/registry"
	"github.com/promscope/promscope/registry/registrytest"
)

// soakLong selects the full memory soak: go test -run Soak ./registry -soak.
// Running the package's benchmarks (any -bench pattern) selects it too.
var soakLong = flag.Bool("soak", false, "run TestFailedConstructorSoak for 100,000 cycles instead of 2,000")

const (
	soakShortCycles = 2_000
	soakLongCycles  = 100_000
	soakWarmup      = 200       // cycles run before the baseline is taken
	soakMaxGrowth   = 256 << 10 // bytes the heap may grow over the cycles
	soakStateSize   = 1 << 10   // bytes of state each component holds
)

// errSoakConnect is the failure of every soak component's constructor.
var errSoakConnect = errors.New("connect: cluster unreachable")

// soakWatcher is a component whose constructor registers 10 metrics through
// its own scope and then fails, the leak that promscope exists to stop. Its
// GaugeFunc reads the watcher's state, so a metric left registered would keep
// the whole watcher, state included, reachable.
type soakWatcher struct {
	scope *registry.Scope
	state []byte
}

func newSoakWatcher(reg prometheus.Registerer) (_ *soakWatcher, err error) {
	scope := registry.NewScope(reg, registry.WithLabels(prometheus.Labels{"cluster": "east"}))
	defer lifecycle.CloseOnError(&err, scope)
	w := &soakWatcher{scope: scope, state: make([]byte, soakStateSize)}
	f := promauto.With(scope)
	f.NewGaugeFunc(prometheus.GaugeOpts{Name: "watcher_state_bytes", Help: "h"}, func() float64 { return float64(len(w.state)) })
	f.NewCounterFunc(prometheus.CounterOpts{Name: "watcher_state_reads_total", Help: "h"}, func() float64 { return float64(cap(w.state)) })
	f.NewGauge(prometheus.GaugeOpts{Name: "watcher_services", Help: "h"}).Set(3)
	f.NewGauge(prometheus.GaugeOpts{Name: "watcher_endpoints", Help: "h"}).Set(7)
	f.NewCounter(prometheus.CounterOpts{Name: "watcher_events_total", Help: "h"}).Inc()
	f.NewCounter(prometheus.CounterOpts{Name: "watcher_errors_total", Help: "h"}).Inc()
	f.NewCounterVec(prometheus.CounterOpts{Name: "watcher_requests_total", Help: "h"}, []string{"verb"}).WithLabelValues("list").Inc()
	f.NewGaugeVec(prometheus.GaugeOpts{Name: "watcher_queue_depth", Help: "h"}, []string{"queue"}).WithLabelValues("main").Set(1)
	f.NewHistogram(prometheus.HistogramOpts{Name: "watcher_sync_seconds", Help: "h"}).Observe(0.2)
	f.NewSummary(prometheus.SummaryOpts{Name: "watcher_latency_seconds", Help: "h"}).Observe(0.1)
	return nil, errSoakConnect // the constructor never gets to hand w out
}

func (w *soakWatcher) Close() error { return w.scope.Close() }

// soakCycle builds one watcher, which fails, and checks that it failed as
// the soak expects: a leak from an earlier cycle would make it fail
// differently (or panic, from promauto).
func soakCycle(tb testing.TB, reg prometheus.Registerer) {
	if w, err := newSoakWatcher(reg); w != nil || !errors.Is(err, errSoakConnect) {
		tb.Fatalf("newSoakWatcher returned %v and %v, want nil and %v", w, err, errSoakConnect)
	}
}

// soakHeap returns the bytes of live heap objects after a full collection.
func soakHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// soakCycles is how many cycles a soak runs: 100,000 with -soak or under
// -bench, else short.
func soakCycles() int {
	if f := flag.Lookup("test.bench"); *soakLong || (f != nil && f.Value.String() != "") {
		return soakLongCycles
	}
	return soakShortCycles
}

// TestFailedConstructorSoak runs the constructor of a component that always
// fails, over and over, against one registry, and checks that the heap does
// not grow and the registry ends empty. It runs 2,000 cycles by default and
// 100,000 with -soak or under -bench. A constructor that leaked one
// watcher's state per cycle would grow the heap by 2 MiB even in the short
// run.
func TestFailedConstructorSoak(t *testing.T) {
	cycles := soakCycles()
	reg := prometheus.NewPedanticRegistry()
	for range soakWarmup {
		soakCycle(t, reg)
	}
	before := soakHeap()
	for range cycles {
		soakCycle(t, reg)
	}
	after := soakHeap()
	runtime.KeepAlive(reg) // the registry is what would hold a leak
	growth := int64(after) - int64(before)
	t.Logf("%d cycles of 10 metrics: live heap %d B before, %d B after, growth %d B (bound %d B)", cycles, before, after, growth, soakMaxGrowth)
	if growth >= soakMaxGrowth {
		t.Errorf("the live heap grew by %d B over %d failed constructions, want less than %d B", growth, cycles, soakMaxGrowth)
	}
	registrytest.VerifyNone(t, reg)
}

// soakUnchecked recycles n components whose only metric is an unchecked
// collector, each in a fresh scope on parent.
func soakUnchecked(tb testing.TB, parent prometheus.Registerer, n int) {
	for i := range n {
		s := registry.NewScope(parent, registry.WithLabels(prometheus.Labels{"cycle": "c"}))
		s.MustRegister(&promtest.Unchecked{Name: "cache_objects", Value: float64(i)})
		if err := s.Close(); err != nil {
			tb.Fatal(err)
		}
	}
}

// TestUncheckedRecycleSoak recycles a component with an unchecked collector
// over one registry, which cannot unregister unchecked collectors, in the two
// shapes a program gives its components: a scope of its own on the registry,
// which leaves its hub's eight-byte handle behind each time, and a scope
// nested in a long-lived program scope, which leaves nothing. It logs the
// live heap each shape leaves; BenchmarkGatherAfterUncheckedRecycles times
// the registry's Gather afterwards.
func TestUncheckedRecycleSoak(t *testing.T) {
	cycles := soakCycles()
	shapes := []struct {
		name     string
		parent   func(reg *prometheus.Registry) prometheus.Registerer
		perCycle int64 // bytes each cycle may leave
	}{
		{name: "scopes on the registry", parent: func(reg *prometheus.Registry) prometheus.Registerer { return reg }, perCycle: 64},
		{name: "scopes nested in a program scope", parent: func(reg *prometheus.Registry) prometheus.Registerer {
			return registry.NewScope(reg)
		}},
	}
	for _, sh := range shapes {
		// Recycled scopes leave at most their handles behind.
		t.Run(sh.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			parent := sh.parent(reg)
			soakUnchecked(t, parent, soakWarmup)
			before := soakHeap()
			soakUnchecked(t, parent, cycles)
			after := soakHeap()
			runtime.KeepAlive(parent)
			growth := int64(after) - int64(before)
			bound := sh.perCycle*int64(cycles) + soakMaxGrowth
			t.Logf("%d cycles: live heap grew %d B (%.1f B a cycle), bound %d B", cycles, growth, float64(growth)/float64(cycles), bound)
			if growth >= bound {
				t.Errorf("the live heap grew by %d B over %d cycles, want less than %d B", growth, cycles, bound)
			}
			registrytest.VerifyNone(t, reg)
		})
	}
}

// BenchmarkGatherAfterUncheckedRecycles times a Gather of a registry holding
// one unchecked collector after 100,000 components with an unchecked
// collector of their own came and went: shape=fresh is a registry that never
// saw them, shape=root had each in a scope on the registry, shape=nested
// each in a scope nested in one program scope.
func BenchmarkGatherAfterUncheckedRecycles(b *testing.B) {
	shapes := []struct {
		name   string
		cycles int
		parent func(reg *prometheus.Registry) prometheus.Registerer
	}{
		{name: "fresh", parent: func(reg *prometheus.Registry) prometheus.Registerer { return reg }},
		{name: "root", cycles: soakLongCycles, parent: func(reg *prometheus.Registry) prometheus.Registerer { return reg }},
		{name: "nested", cycles: soakLongCycles, parent: func(reg *prometheus.Registry) prometheus.Registerer {
			return registry.NewScope(reg)
		}},
	}
	for _, sh := range shapes {
		b.Run("shape="+sh.name, func(b *testing.B) {
			reg := prometheus.NewRegistry()
			parent := sh.parent(reg)
			soakUnchecked(b, parent, sh.cycles)
			reg.MustRegister(&promtest.Unchecked{Name: "survivor", Value: 1})
			for b.Loop() {
				if mfs, err := reg.Gather(); err != nil || len(mfs) != 1 {
					b.Fatalf("Gather = %d families, %v", len(mfs), err)
				}
			}
		})
	}
}

// BenchmarkFailedConstructor times one cycle of TestFailedConstructorSoak's
// failing constructor: impl=scope is the watcher above; impl=raw is the same
// constructor written against raw client_golang, unregistering its 10
// metrics by hand before it returns its error.
func BenchmarkFailedConstructor(b *testing.B) {
	b.Run("impl=raw", func(b *testing.B) {
		reg := prometheus.NewPedanticRegistry()
		for b.Loop() {
			if err := soakRawConstructor(reg); !errors.Is(err, errSoakConnect) {
				b.Fatalf("got %v, want %v", err, errSoakConnect)
			}
		}
		registrytest.VerifyNone(b, reg)
	})
	b.Run("impl=scope", func(b *testing.B) {
		reg := prometheus.NewPedanticRegistry()
		for b.Loop() {
			soakCycle(b, reg)
		}
		registrytest.VerifyNone(b, reg)
	})
}

// soakRawConstructor is newSoakWatcher by hand: what it registers, it
// unregisters again on the way out.
func soakRawConstructor(parent prometheus.Registerer) (err error) {
	reg := prometheus.WrapRegistererWith(prometheus.Labels{"cluster": "east"}, parent)
	var registered []prometheus.Collector
	defer func() {
		for _, c := range registered {
			reg.Unregister(c)
		}
	}()
	w := &soakWatcher{state: make([]byte, soakStateSize)}
	gf := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "watcher_state_bytes", Help: "h"}, func() float64 { return float64(len(w.state)) })
	cf := prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "watcher_state_reads_total", Help: "h"}, func() float64 { return float64(cap(w.state)) })
	services := prometheus.NewGauge(prometheus.GaugeOpts{Name: "watcher_services", Help: "h"})
	endpoints := prometheus.NewGauge(prometheus.GaugeOpts{Name: "watcher_endpoints", Help: "h"})
	events := prometheus.NewCounter(prometheus.CounterOpts{Name: "watcher_events_total", Help: "h"})
	errs := prometheus.NewCounter(prometheus.CounterOpts{Name: "watcher_errors_total", Help: "h"})
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "watcher_requests_total", Help: "h"}, []string{"verb"})
	depth := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "watcher_queue_depth", Help: "h"}, []string{"queue"})
	syncSeconds := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "watcher_sync_seconds", Help: "h"})
	latency := prometheus.NewSummary(prometheus.SummaryOpts{Name: "watcher_latency_seconds", Help: "h"})
	for _, c := range []prometheus.Collector{gf, cf, services, endpoints, events, errs, requests, depth, syncSeconds, latency} {
		if err := reg.Register(c); err != nil {
			return err
		}
		registered = append(registered, c)
	}
	services.Set(3)
	endpoints.Set(7)
	events.Inc()
	errs.Inc()
	requests.WithLabelValues("list").Inc()
	depth.WithLabelValues("main").Set(1)
	syncSeconds.Observe(0.2)
	latency.Observe(0.1)
	return errSoakConnect
}
