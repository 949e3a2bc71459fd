package registry_test

import (
	"errors"
	"flag"
	"runtime"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

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
	soakWarmup      = 200     // cycles run before the baseline is taken
	soakMaxGrowth   = 1 << 20 // bytes the heap may grow over the cycles
	soakStateSize   = 1 << 10 // bytes of state each component holds
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

// TestFailedConstructorSoak runs the constructor of a component that always
// fails, over and over, against one registry, and checks that the heap does
// not grow and the registry ends empty. It runs 2,000 cycles by default and
// 100,000 with -soak or under -bench. A constructor that leaked one
// watcher's state per cycle would grow the heap by 2 MiB even in the short
// run.
func TestFailedConstructorSoak(t *testing.T) {
	cycles := soakShortCycles
	if f := flag.Lookup("test.bench"); *soakLong || (f != nil && f.Value.String() != "") {
		cycles = soakLongCycles
	}
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
