package registry_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/promscope/promscope/lifecycle"
	"github.com/promscope/promscope/registry"
	"github.com/promscope/promscope/registry/registrytest"
)

// Watcher watches one cluster and caches its objects.
type Watcher struct {
	scope   *registry.Scope
	objects atomic.Int64
}

// NewWatcher registers the watcher's metrics, then connects to the cluster.
// If anything fails, the deferred CloseOnError closes the scope, and the
// metrics are gone again.
func NewWatcher(reg prometheus.Registerer, cluster string, connect func() error) (_ *Watcher, err error) {
	scope := registry.NewScope(reg, registry.WithLabels(prometheus.Labels{"cluster": cluster}))
	defer lifecycle.CloseOnError(&err, scope)

	w := &Watcher{scope: scope}
	scope.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "watcher_cache_objects",
		Help: "Objects in the watcher's cache.",
	}, func() float64 { return float64(w.objects.Load()) }))

	if err := connect(); err != nil {
		return nil, fmt.Errorf("connect to %s: %w", cluster, err)
	}
	return w, nil
}

// Close removes the watcher's metrics.
func (w *Watcher) Close() error { return w.scope.Close() }

// The README's constructor survives being built and closed again and again,
// failing every other time.
func TestWatcherIsRecycleSafe(t *testing.T) {
	connect := failEveryOther() // a func() error that fails the first call and every other one
	registrytest.VerifyRecycle(t, 20, func(reg prometheus.Registerer) (*Watcher, error) {
		return NewWatcher(reg, "east", connect)
	})
}

// failEveryOther returns a connect function that fails every other call,
// the first included.
func failEveryOther() func() error {
	calls := 0
	return func() error {
		if calls++; calls%2 == 1 {
			return errors.New("connection refused")
		}
		return nil
	}
}

// A constructor that fails is retried until it succeeds. Without the scope,
// the second try would fail with "duplicate metrics collector registration
// attempted", and the first watcher's gauge would stay registered.
func ExampleNewScope() {
	reg := prometheus.NewPedanticRegistry()
	failures := 2 // the cluster comes up on the third try
	connect := func() error {
		if failures > 0 {
			failures--
			return errors.New("connection refused")
		}
		return nil
	}

	w, err := NewWatcher(reg, "east", connect)
	for err != nil {
		fmt.Println("retrying:", err)
		w, err = NewWatcher(reg, "east", connect)
	}
	defer w.Close()

	w.objects.Store(42)
	exampleDump(reg)
	// Output:
	// retrying: connect to east: connection refused
	// retrying: connect to east: connection refused
	// watcher_cache_objects{cluster="east"} 42
}

// A reconnect loop keeps the watcher in a lifecycle.Slot, which closes the
// current instance before it builds the next, and closes whatever a failed
// build registered.
func ExampleNewScope_restart() {
	reg := prometheus.NewPedanticRegistry()
	cluster, tries := "east", 0
	connect := func() error {
		if tries++; tries < 3 {
			return errors.New("connection refused")
		}
		return nil
	}

	slot := lifecycle.NewSlot[*Watcher](reg)
	defer slot.Close()
	for {
		_, err := slot.Replace(func(scope *registry.Scope) (*Watcher, error) {
			return NewWatcher(scope, cluster, connect)
		})
		if err == nil {
			break
		}
		fmt.Println("retrying:", err) // a real loop backs off here
	}
	exampleDump(reg)
	// Output:
	// retrying: connect to east: connection refused
	// retrying: connect to east: connection refused
	// watcher_cache_objects{cluster="east"} 0
}

func ExampleScope_Close() {
	reg := prometheus.NewRegistry()
	scope := registry.NewScope(reg)
	jobs := promauto.With(scope).NewGauge(prometheus.GaugeOpts{Name: "jobs_running", Help: "Jobs running."})
	jobs.Set(3)
	exampleDump(reg)

	if err := scope.Close(); err != nil {
		fmt.Println("close:", err)
	}
	exampleDump(reg)

	err := scope.Register(prometheus.NewGauge(prometheus.GaugeOpts{Name: "late", Help: "Too late."}))
	fmt.Println(errors.Is(err, registry.ErrClosed))
	// Output:
	// jobs_running 3
	// (nothing)
	// true
}

// A library that is handed a Registerer may wrap it, or make a scope of its
// own on it, without knowing that it was given a scope. Whatever it
// registers is still the program's to close, and is gone when the program
// closes its scope, even if the library never closes its own.
func ExampleNewScope_library() {
	reg := prometheus.NewRegistry()
	program := registry.NewScope(reg, registry.WithLabels(prometheus.Labels{"cluster": "east"}))

	// The library's constructor, as it might be written anywhere.
	newCache := func(r prometheus.Registerer) {
		own := registry.NewScope(prometheus.WrapRegistererWithPrefix("cache_", r))
		promauto.With(own).NewGauge(prometheus.GaugeOpts{Name: "objects", Help: "Cached objects."}).Set(12)
	}
	newCache(program)
	exampleDump(reg)

	program.Close()
	exampleDump(reg)
	// Output:
	// cache_objects{cluster="east"} 12
	// (nothing)
}

// One child scope per tenant: closing it removes that tenant's metrics only,
// and closing the parent would remove them all.
func ExampleScope_Child() {
	reg := prometheus.NewRegistry()
	app := registry.NewScope(reg, registry.WithPrefix("app_"), registry.WithLabels(prometheus.Labels{"cluster": "east"}))
	defer app.Close()

	tenants := map[string]*registry.Scope{}
	for i, name := range []string{"acme", "globex"} {
		tenant := app.Child(registry.WithLabels(prometheus.Labels{"tenant": name}))
		queue := promauto.With(tenant).NewGauge(prometheus.GaugeOpts{Name: "queue_depth", Help: "Queued items."})
		queue.Set(float64(10 * (i + 1)))
		tenants[name] = tenant
	}
	exampleDump(reg)

	tenants["acme"].Close()
	fmt.Println("after acme left:")
	exampleDump(reg)
	// Output:
	// app_queue_depth{cluster="east",tenant="acme"} 10
	// app_queue_depth{cluster="east",tenant="globex"} 20
	// after acme left:
	// app_queue_depth{cluster="east",tenant="globex"} 20
}

// Components share one vector, labelled per link. Each deletes its own
// series when it closes; the vector stays registered for the others.
func ExampleScope_DeleteOnClose() {
	reg := prometheus.NewRegistry()
	requests := promauto.With(reg).NewCounterVec(prometheus.CounterOpts{
		Name: "link_requests_total",
		Help: "Requests sent, per link.",
	}, []string{"link"})

	open := func(link string) *registry.Scope {
		scope := registry.NewScope(reg)
		scope.DeleteOnClose(prometheus.Labels{"link": link}, requests)
		requests.WithLabelValues(link).Inc()
		return scope
	}
	a, b := open("a"), open("b")
	defer b.Close()

	a.Close()
	exampleDump(reg)
	// Output:
	// link_requests_total{link="b"} 1
}

// Gather shows one component's metrics alone, as the shared registry exposes
// them: this is how testutil.GatherAndCompare(scope, ...) tests a component.
func ExampleScope_Gather() {
	reg := prometheus.NewRegistry()
	promauto.With(reg).NewGauge(prometheus.GaugeOpts{Name: "process_up", Help: "Up."}).Set(1)

	scope := registry.NewScope(reg, registry.WithPrefix("cache_"), registry.WithLabels(prometheus.Labels{"shard": "1"}))
	defer scope.Close()
	promauto.With(scope).NewCounter(prometheus.CounterOpts{Name: "hits_total", Help: "Cache hits."}).Add(7)

	exampleDump(scope)
	// Output:
	// cache_hits_total{shard="1"} 7
}

// Register returns the parent's AlreadyRegisteredError, holding the collector
// really registered, so the usual way to share a metric still works.
func ExampleScope_Register() {
	reg := prometheus.NewRegistry()
	scope := registry.NewScope(reg)
	defer scope.Close()

	opts := prometheus.CounterOpts{Name: "events_total", Help: "Events seen."}
	first := prometheus.NewCounter(opts)
	scope.MustRegister(first)

	events := prometheus.NewCounter(opts)
	if err := scope.Register(events); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			panic(err)
		}
		events = are.ExistingCollector.(prometheus.Counter) // use the one already registered
	}
	events.Inc()
	fmt.Println(events == first)
	exampleDump(reg)

	err := scope.Register(nil)
	fmt.Println(errors.Is(err, registry.ErrNilCollector))
	// Output:
	// true
	// events_total 1
	// true
}

// client_golang unregisters by descriptors, not by object, so other code can
// take over a scope's metric. Close then leaves the other collector alone and
// reports an UnregisterError.
func ExampleUnregisterError() {
	reg := prometheus.NewRegistry()
	scope := registry.NewScope(reg, registry.WithPrefix("app_"))
	scope.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobs", Help: "Jobs."}))

	// Somebody else replaces it with an equal gauge of their own.
	theirs := prometheus.NewGauge(prometheus.GaugeOpts{Name: "app_jobs", Help: "Jobs."})
	reg.Unregister(theirs) // removes the scope's gauge: same descriptors
	reg.MustRegister(theirs)
	theirs.Set(7)

	err := scope.Close()
	fmt.Println(errors.Is(err, registry.ErrNotRegistered))
	var ue *registry.UnregisterError
	if errors.As(err, &ue) {
		fmt.Println(ue.Metrics)
	}
	exampleDump(reg)
	// Output:
	// true
	// [app_jobs]
	// app_jobs 7
}

// Names make scopes easy to tell apart in logs, errors, leak reports and the
// ownership page.
func ExampleWithName() {
	reg := prometheus.NewRegistry()
	mirror := registry.NewScope(reg, registry.WithName("mirror"), registry.WithPrefix("mirror_"))
	west := registry.NewScope(mirror, registry.WithName("west"), registry.WithLabels(prometheus.Labels{"cluster": "west"}))
	defer mirror.Close()
	fmt.Println(mirror)
	fmt.Println(west)
	// Output:
	// mirror prefix="mirror_"
	// mirror/west{cluster="west"} prefix="mirror_"
}

// A constructor that forgets to close its scope when it fails is reported
// once the scope is garbage: with the scope's name, where it was made, and
// what it left registered.
func ExampleWithLeakReport() {
	reg := prometheus.NewRegistry()
	leaks := make(chan registry.Leak, 1)
	report := registry.WithLeakReport(func(l registry.Leak) { leaks <- l })

	// A component that is replaced without being closed drops its
	// scope, with the gauge still registered.
	startWatcher := func() {
		scope := registry.NewScope(reg, registry.WithName("watcher"), report)
		promauto.With(scope).NewGauge(prometheus.GaugeOpts{Name: "watcher_up", Help: "Up."})
	}
	startWatcher()

	for {
		runtime.GC() // in a program, the garbage collector runs on its own
		select {
		case l := <-leaks:
			fmt.Println(l.Scope, l.Metrics, strings.HasPrefix(l.Created, "github.com/promscope/promscope/registry/example_test.go:"))
			// Nobody can close the scope any more but the report.
			fmt.Println("reclaimed:", l.Close())
			mfs, _ := reg.Gather()
			fmt.Println(len(mfs), "families left")
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
	// Output:
	// watcher [watcher_up] true
	// reclaimed: <nil>
	// 0 families left
}

// The ownership page lists the open scopes, which metrics each holds, and,
// with WithLeakReport, where each was made. Serve it next to /metrics.
func ExampleHandler() {
	reg := prometheus.NewRegistry()
	mirror := registry.NewScope(reg, registry.WithName("mirror"))
	defer mirror.Close()
	for _, cluster := range []string{"east", "west"} {
		link := registry.NewScope(mirror, registry.WithName(cluster), registry.WithLabels(prometheus.Labels{"cluster": cluster}))
		promauto.With(link).NewGauge(prometheus.GaugeOpts{Name: "service_cache_size", Help: "Services cached."})
	}

	rec := httptest.NewRecorder()
	registry.Handler(mirror).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/scopes", nil))
	fmt.Print(rec.Body)
	// Output:
	// mirror: 0 collectors
	//   mirror/east{cluster="east"}: 1 collector: service_cache_size
	//   mirror/west{cluster="west"}: 1 collector: service_cache_size
}

// exampleDump prints each series g exposes as name{labels} value, or
// "(nothing)".
func exampleDump(g prometheus.Gatherer) {
	mfs, err := g.Gather()
	if err != nil {
		fmt.Println("gather:", err)
		return
	}
	if len(mfs) == 0 {
		fmt.Println("(nothing)")
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			pairs := make([]string, 0, len(m.GetLabel()))
			for _, lp := range m.GetLabel() {
				pairs = append(pairs, fmt.Sprintf("%s=%q", lp.GetName(), lp.GetValue()))
			}
			labels := ""
			if len(pairs) > 0 {
				labels = "{" + strings.Join(pairs, ",") + "}"
			}
			value := m.GetGauge().GetValue() + m.GetCounter().GetValue() + m.GetUntyped().GetValue()
			fmt.Printf("%s%s %g\n", mf.GetName(), labels, value)
		}
	}
}
