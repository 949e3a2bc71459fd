package registry_test

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"weak"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/multierr"

	"github.com/promscope/promscope/internal/describe"
	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/registry"
	"github.com/promscope/promscope/registry/registrytest"
)

// recorder is a parent Registerer that passes every call on to a pedantic
// registry and logs it, naming the metrics concerned, so that tests can see
// what a scope asked of its parent and in which order.
type recorder struct {
	reg *prometheus.Registry

	// refuse lists metric names (comma-separated when a collector has
	// several) whose Unregister the recorder refuses, as a faulty parent
	// would.
	refuse map[string]bool

	mu  sync.Mutex
	log []string // guarded by mu
}

func newRecorder() *recorder {
	return &recorder{reg: prometheus.NewPedanticRegistry()}
}

func (r *recorder) note(s string) {
	r.mu.Lock()
	r.log = append(r.log, s)
	r.mu.Unlock()
}

// calls returns a copy of the log.
func (r *recorder) calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.log)
}

// removals returns the successful unregistrations and the deletions, in order.
func (r *recorder) removals() []string {
	var out []string
	for _, c := range r.calls() {
		removed := strings.HasPrefix(c, "unregister ") && !strings.Contains(c, ":")
		if removed || strings.HasPrefix(c, "delete ") {
			out = append(out, c)
		}
	}
	return out
}

func (r *recorder) Register(c prometheus.Collector) error {
	name := scopeTestNames(c)
	err := r.reg.Register(c)
	if err != nil {
		r.note("register " + name + ": failed")
	} else {
		r.note("register " + name)
	}
	return err
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

func (r *recorder) Unregister(c prometheus.Collector) bool {
	name := scopeTestNames(c)
	if r.refuse[name] {
		r.note("unregister " + name + ": refused")
		return false
	}
	ok := r.reg.Unregister(c)
	if ok {
		r.note("unregister " + name)
	} else {
		r.note("unregister " + name + ": missed")
	}
	return ok
}

// deleteRecorder is a Deleter that only logs its calls into a recorder.
type deleteRecorder struct {
	rec  *recorder
	name string
}

func (d deleteRecorder) DeletePartialMatch(labels prometheus.Labels) int {
	pairs := make([]string, 0, len(labels))
	for k, v := range labels {
		pairs = append(pairs, k+"="+v)
	}
	slices.Sort(pairs)
	d.rec.note("delete " + d.name + "{" + strings.Join(pairs, ",") + "}")
	return 0
}

// scopeTestNames names the metrics that c describes, comma-separated.
func scopeTestNames(c prometheus.Collector) string {
	return strings.Join(describe.Names(describe.Descs(c)), ",")
}

func scopeTestGauge(name string, value float64) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: "Test gauge " + name + "."})
	g.Set(value)
	return g
}

// scopeTestMulti is a checked collector with one gauge per name.
type scopeTestMulti []prometheus.Gauge

func newScopeTestMulti(names ...string) scopeTestMulti {
	m := make(scopeTestMulti, 0, len(names))
	for _, name := range names {
		m = append(m, scopeTestGauge(name, 1))
	}
	return m
}

func (m scopeTestMulti) Describe(ch chan<- *prometheus.Desc) {
	for _, g := range m {
		g.Describe(ch)
	}
}

func (m scopeTestMulti) Collect(ch chan<- prometheus.Metric) {
	for _, g := range m {
		g.Collect(ch)
	}
}

// scopeTestUnchecked is an unchecked collector: its Describe yields nothing.
type scopeTestUnchecked struct {
	desc  *prometheus.Desc
	value func() float64
}

func newScopeTestUnchecked(name string, value func() float64) *scopeTestUnchecked {
	return &scopeTestUnchecked{
		desc:  prometheus.NewDesc(name, "Unchecked test metric "+name+".", nil, nil),
		value: value,
	}
}

func (*scopeTestUnchecked) Describe(chan<- *prometheus.Desc) {}

func (u *scopeTestUnchecked) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(u.desc, prometheus.GaugeValue, u.value())
}

// scopeTestFamilies returns the names of the families g exposes.
func scopeTestFamilies(t *testing.T, g prometheus.Gatherer) []string {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	names := make([]string, 0, len(mfs))
	for _, mf := range mfs {
		names = append(names, mf.GetName())
	}
	return names
}

// scopeTestCompare fails t unless g exposes exactly want (text format,
// HELP and TYPE lines included).
func scopeTestCompare(t *testing.T, g prometheus.Gatherer, want string) {
	t.Helper()
	if err := testutil.GatherAndCompare(g, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

// scopeTestPanic runs f and returns what it panicked with, or nil.
func scopeTestPanic(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// scopeTestUnregisterErrors returns the metrics named by each UnregisterError
// combined in err, in order.
func scopeTestUnregisterErrors(t *testing.T, err error) [][]string {
	t.Helper()
	var out [][]string
	for _, e := range multierr.Errors(err) {
		var ue *registry.UnregisterError
		if !errors.As(e, &ue) {
			t.Errorf("error %q is not an *UnregisterError", e)
			continue
		}
		out = append(out, ue.Metrics)
	}
	return out
}

const scopeTestJobs = `
# HELP jobs Test gauge jobs.
# TYPE jobs gauge
jobs 3
`

func TestRegister(t *testing.T) {
	t.Run("passes the collector to the parent and tracks it", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg)
		if err := scope.Register(scopeTestGauge("jobs", 3)); err != nil {
			t.Fatalf("Register: %v", err)
		}
		scopeTestCompare(t, reg, scopeTestJobs)
		if got := scope.Len(); got != 1 {
			t.Errorf("Len() = %d, want 1", got)
		}
		if err := scope.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		registrytest.VerifyNone(t, reg)
	})

	tests := []struct {
		name string
		// setup registers existing and returns the scope to register the
		// equal collector into.
		setup func(t *testing.T, reg *prometheus.Registry, existing prometheus.Collector) *registry.Scope
	}{
		{
			name: "the existing collector was registered by the same scope",
			setup: func(t *testing.T, reg *prometheus.Registry, existing prometheus.Collector) *registry.Scope {
				scope := registry.NewScope(reg)
				scope.MustRegister(existing)
				return scope
			},
		},
		{
			name: "the existing collector was registered in the parent directly",
			setup: func(t *testing.T, reg *prometheus.Registry, existing prometheus.Collector) *registry.Scope {
				reg.MustRegister(existing)
				return registry.NewScope(reg)
			},
		},
		{
			name: "the existing collector was registered by another scope",
			setup: func(t *testing.T, reg *prometheus.Registry, existing prometheus.Collector) *registry.Scope {
				registry.NewScope(reg).MustRegister(existing)
				return registry.NewScope(reg)
			},
		},
		{
			name: "the scopes nest with labels",
			setup: func(t *testing.T, reg *prometheus.Registry, existing prometheus.Collector) *registry.Scope {
				outer := registry.NewScope(reg)
				inner := registry.NewScope(outer, registry.WithLabels(prometheus.Labels{"cluster": "east"}))
				inner.MustRegister(existing)
				return inner
			},
		},
		{
			name: "three scopes nest",
			setup: func(t *testing.T, reg *prometheus.Registry, existing prometheus.Collector) *registry.Scope {
				inner := registry.NewScope(registry.NewScope(registry.NewScope(reg), registry.WithPrefix("app_")))
				inner.MustRegister(existing)
				return inner
			},
		},
		{
			name: "two nested scopes with the same labels share an outer scope",
			setup: func(t *testing.T, reg *prometheus.Registry, existing prometheus.Collector) *registry.Scope {
				outer := registry.NewScope(reg)
				labels := registry.WithLabels(prometheus.Labels{"cluster": "east"})
				registry.NewScope(outer, labels).MustRegister(existing)
				return registry.NewScope(outer, labels)
			},
		},
		{
			name: "the existing collector was registered by the parent scope of a child",
			setup: func(t *testing.T, reg *prometheus.Registry, existing prometheus.Collector) *registry.Scope {
				parent := registry.NewScope(reg, registry.WithPrefix("app_"))
				parent.MustRegister(existing)
				// The child adds nothing, so it exposes the same identity.
				return parent.Child()
			},
		},
	}
	for _, tt := range tests {
		t.Run("returns the parent's AlreadyRegisteredError when "+tt.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			existing := scopeTestGauge("jobs", 3)
			scope := tt.setup(t, reg, existing)
			before := scope.Len()
			again := scopeTestGauge("jobs", 4)

			err := scope.Register(again)
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				t.Fatalf("Register = %v, want an AlreadyRegisteredError", err)
			}
			if are.ExistingCollector != existing {
				t.Errorf("ExistingCollector = %#v, want the collector registered first", are.ExistingCollector)
			}
			if are.NewCollector != again {
				t.Errorf("NewCollector = %#v, want the collector just passed", are.NewCollector)
			}
			if got := scope.Len(); got != before {
				t.Errorf("Len() = %d after a failed registration, want %d", got, before)
			}
			if before == 0 && scope.Unregister(again) {
				t.Error("Unregister(again) = true for a registration that failed")
			}
		})
	}

	t.Run("returns other parent errors unchanged and tracks nothing", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobs", Help: "One help."}))
		scope := registry.NewScope(reg)
		err := scope.Register(prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobs", Help: "Another help."}))
		if err == nil {
			t.Fatal("Register of an inconsistent descriptor succeeded")
		}
		if errors.As(err, &prometheus.AlreadyRegisteredError{}) {
			t.Errorf("Register = %v, want the registry's consistency error", err)
		}
		if got := scope.Len(); got != 0 {
			t.Errorf("Len() = %d, want 0", got)
		}
		if err := scope.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
}

func TestRegisterRejects(t *testing.T) {
	nils := []struct {
		name string
		give prometheus.Collector
	}{
		{name: "a nil collector", give: nil},
		{name: "a typed nil vector", give: (*prometheus.GaugeVec)(nil)},
		{name: "a typed nil custom collector", give: (*scopeTestUnchecked)(nil)},
		{name: "a nil collector slice", give: scopeTestMulti(nil)},
	}
	for _, tt := range nils {
		t.Run("Register of "+tt.name+" returns ErrNilCollector without touching the parent", func(t *testing.T) {
			rec := newRecorder()
			scope := registry.NewScope(rec)
			err := scope.Register(tt.give)
			if !errors.Is(err, registry.ErrNilCollector) {
				t.Errorf("Register = %v, want ErrNilCollector", err)
			}
			if calls := rec.calls(); len(calls) != 0 {
				t.Errorf("parent saw %q", calls)
			}
			if got := scope.Len(); got != 0 {
				t.Errorf("Len() = %d, want 0", got)
			}
		})
		t.Run("MustRegister of "+tt.name+" panics with ErrNilCollector", func(t *testing.T) {
			scope := registry.NewScope(prometheus.NewRegistry())
			v := scopeTestPanic(func() { scope.MustRegister(tt.give) })
			if err, ok := v.(error); !ok || !errors.Is(err, registry.ErrNilCollector) {
				t.Errorf("MustRegister panicked with %v, want ErrNilCollector", v)
			}
		})
	}

	t.Run("Register after Close returns ErrClosed without touching the parent", func(t *testing.T) {
		rec := newRecorder()
		scope := registry.NewScope(rec)
		scope.MustRegister(scopeTestGauge("jobs", 3))
		if err := scope.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		before := rec.calls()
		if err := scope.Register(scopeTestGauge("late", 1)); !errors.Is(err, registry.ErrClosed) {
			t.Errorf("Register = %v, want ErrClosed", err)
		}
		if after := rec.calls(); !slices.Equal(after, before) {
			t.Errorf("parent calls went from %q to %q", before, after)
		}
		registrytest.VerifyNone(t, rec.reg)
	})

	t.Run("MustRegister after Close panics with ErrClosed", func(t *testing.T) {
		scope := registry.NewScope(prometheus.NewRegistry())
		scope.Close()
		v := scopeTestPanic(func() { scope.MustRegister(scopeTestGauge("late", 1)) })
		if err, ok := v.(error); !ok || !errors.Is(err, registry.ErrClosed) {
			t.Errorf("MustRegister panicked with %v, want ErrClosed", v)
		}
	})

	t.Run("MustRegister keeps what it registered before the failing collector", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg)
		v := scopeTestPanic(func() { scope.MustRegister(scopeTestGauge("jobs", 3), nil, scopeTestGauge("never", 1)) })
		if err, ok := v.(error); !ok || !errors.Is(err, registry.ErrNilCollector) {
			t.Fatalf("MustRegister panicked with %v, want ErrNilCollector", v)
		}
		scopeTestCompare(t, reg, scopeTestJobs)
		if got := scope.Len(); got != 1 {
			t.Errorf("Len() = %d, want 1", got)
		}
		scope.Close()
		registrytest.VerifyNone(t, reg)
	})
}

func TestUnregister(t *testing.T) {
	options := []struct {
		name string
		give []registry.Option
		// want is how the parent names the metric "other".
		want string
	}{
		{name: "no options", want: "other"},
		{name: "a prefix and labels", give: []registry.Option{
			registry.WithPrefix("app_"), registry.WithLabels(prometheus.Labels{"cluster": "east"}),
		}, want: "app_other"},
	}
	for _, o := range options {
		t.Run("removes the same object with "+o.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			scope := registry.NewScope(reg, o.give...)
			g := scopeTestGauge("jobs", 3)
			scope.MustRegister(g)
			if !scope.Unregister(g) {
				t.Fatal("Unregister = false, want true")
			}
			registrytest.VerifyNone(t, reg)
			if got := scope.Len(); got != 0 {
				t.Errorf("Len() = %d, want 0", got)
			}
			if err := scope.Register(g); err != nil {
				t.Errorf("Register again: %v", err)
			}
			scope.Close()
		})
		t.Run("removes by an equal collector with the same descriptors with "+o.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			scope := registry.NewScope(reg, o.give...)
			scope.MustRegister(scopeTestGauge("jobs", 3), scopeTestGauge("other", 1))
			if !scope.Unregister(scopeTestGauge("jobs", 0)) {
				t.Fatal("Unregister(equal) = false, want true")
			}
			if got := scopeTestFamilies(t, reg); !slices.Equal(got, []string{o.want}) {
				t.Errorf("parent exposes %q, want [%s]", got, o.want)
			}
			if got := scope.Len(); got != 1 {
				t.Errorf("Len() = %d, want 1", got)
			}
			scope.Close()
			registrytest.VerifyNone(t, reg)
		})
	}

	t.Run("returns false for a collector registered in the parent directly, which stays", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		foreign := scopeTestGauge("jobs", 3)
		reg.MustRegister(foreign)
		scope := registry.NewScope(reg)
		if scope.Unregister(foreign) {
			t.Error("Unregister(foreign) = true")
		}
		if scope.Unregister(scopeTestGauge("jobs", 0)) {
			t.Error("Unregister(equal to foreign) = true")
		}
		scopeTestCompare(t, reg, scopeTestJobs)
	})

	t.Run("returns false for a collector of another scope, which stays", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		theirs := registry.NewScope(reg)
		g := scopeTestGauge("jobs", 3)
		theirs.MustRegister(g)
		ours := registry.NewScope(reg)
		ours.MustRegister(scopeTestGauge("mine", 1))
		if ours.Unregister(g) {
			t.Error("Unregister(their collector) = true")
		}
		if got, want := scopeTestFamilies(t, reg), []string{"jobs", "mine"}; !slices.Equal(got, want) {
			t.Errorf("parent exposes %q, want %q", got, want)
		}
		if got := theirs.Len(); got != 1 {
			t.Errorf("their Len() = %d, want 1", got)
		}
	})

	t.Run("returns false when somebody else replaced the scope's collector, and leaves theirs", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg)
		ours := scopeTestGauge("jobs", 1)
		scope.MustRegister(ours)
		if !reg.Unregister(ours) { // by descriptors: removes the scope's registration
			t.Fatal("setup: the registry did not unregister the scope's collector")
		}
		reg.MustRegister(scopeTestGauge("jobs", 3))
		if scope.Unregister(ours) {
			t.Error("Unregister = true for a collector somebody else replaced")
		}
		scopeTestCompare(t, reg, scopeTestJobs)
		if got := scope.Len(); got != 0 {
			t.Errorf("Len() = %d, want 0: the entry is gone either way", got)
		}
	})

	t.Run("returns false for nil and on a closed scope", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg)
		g := scopeTestGauge("jobs", 3)
		scope.MustRegister(g)
		if scope.Unregister(nil) {
			t.Error("Unregister(nil) = true")
		}
		scope.Close()
		if scope.Unregister(g) {
			t.Error("Unregister after Close = true")
		}
	})

	t.Run("removes through nested scopes", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		outer := registry.NewScope(reg)
		inner := registry.NewScope(outer, registry.WithLabels(prometheus.Labels{"cluster": "east"}))
		inner.MustRegister(scopeTestGauge("jobs", 3))
		if !inner.Unregister(scopeTestGauge("jobs", 0)) {
			t.Fatal("Unregister(equal) through nested scopes = false")
		}
		if got := outer.Len(); got != 0 {
			t.Errorf("outer Len() = %d, want 0", got)
		}
		registrytest.VerifyNone(t, reg)
	})

	t.Run("silences an unchecked collector and reports true", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg)
		u := newScopeTestUnchecked("unchecked_value", func() float64 { return 3 })
		scope.MustRegister(u)
		if !scope.Unregister(u) {
			t.Fatal("Unregister(unchecked) = false")
		}
		registrytest.VerifyNone(t, reg)
	})
}

func TestClose(t *testing.T) {
	t.Run("closes children newest first, then deletes series, then removes collectors newest first", func(t *testing.T) {
		rec := newRecorder()
		scope := registry.NewScope(rec)
		scope.MustRegister(scopeTestGauge("a", 1))
		first := scope.Child(registry.WithPrefix("first_"))
		first.MustRegister(scopeTestGauge("x", 1))
		scope.DeleteOnClose(prometheus.Labels{"tenant": "acme"}, deleteRecorder{rec: rec, name: "shared"})
		scope.MustRegister(scopeTestGauge("b", 1))
		second := scope.Child(registry.WithPrefix("second_"))
		second.MustRegister(scopeTestGauge("x", 1), scopeTestGauge("y", 1))
		scope.MustRegister(scopeTestGauge("c", 1))

		if err := scope.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		want := []string{
			"unregister second_y",
			"unregister second_x",
			"unregister first_x",
			"delete shared{tenant=acme}",
			"unregister c",
			"unregister b",
			"unregister a",
		}
		if got := rec.removals(); !slices.Equal(got, want) {
			t.Errorf("Close did\n\t%q\nwant\n\t%q", got, want)
		}
		registrytest.VerifyNone(t, rec.reg)
	})

	t.Run("is best effort and names the metrics of each collector it could not remove", func(t *testing.T) {
		rec := newRecorder()
		rec.refuse = map[string]bool{"app_a": true, "app_pair_one,app_pair_two": true, "app_child_x": true}
		scope := registry.NewScope(rec, registry.WithPrefix("app_"))
		scope.MustRegister(scopeTestGauge("a", 1), scopeTestGauge("b", 1), newScopeTestMulti("pair_one", "pair_two"), scopeTestGauge("c", 1))
		child := scope.Child(registry.WithPrefix("child_"))
		child.MustRegister(scopeTestGauge("x", 1), scopeTestGauge("y", 1))

		err := scope.Close()
		if !errors.Is(err, registry.ErrNotRegistered) {
			t.Errorf("Close = %v, want an error wrapping ErrNotRegistered", err)
		}
		want := [][]string{{"app_child_x"}, {"app_pair_one", "app_pair_two"}, {"app_a"}}
		if got := scopeTestUnregisterErrors(t, err); !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("Close reported %q, want %q", got, want)
		}
		for _, name := range []string{"app_child_x", "app_a"} {
			if msg := err.Error(); !strings.Contains(msg, name) {
				t.Errorf("error %q does not name %s", msg, name)
			}
		}
		wantRemoved := []string{"unregister app_child_y", "unregister app_c", "unregister app_b"}
		if got := rec.removals(); !slices.Equal(got, wantRemoved) {
			t.Errorf("Close removed %q, want %q", got, wantRemoved)
		}
		// What the parent refused to give back is silenced.
		if got := scopeTestFamilies(t, rec.reg); len(got) != 0 {
			t.Errorf("parent still exposes %q", got)
		}

		if err := scope.Close(); err != nil {
			t.Errorf("second Close = %v, want nil", err)
		}
		if err := child.Close(); err != nil {
			t.Errorf("Close of the closed child = %v, want nil", err)
		}
	})

	t.Run("returns nil the second time after a clean first time", func(t *testing.T) {
		rec := newRecorder()
		scope := registry.NewScope(rec)
		scope.MustRegister(scopeTestGauge("a", 1))
		if err := scope.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		before := len(rec.calls())
		if err := scope.Close(); err != nil {
			t.Errorf("second Close = %v, want nil", err)
		}
		if after := len(rec.calls()); after != before {
			t.Errorf("second Close made %d parent calls, want none", after-before)
		}
	})

	t.Run("on a nil scope returns nil", func(t *testing.T) {
		var scope *registry.Scope
		if err := scope.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
	})

	t.Run("racing with Register never leaves anything registered", func(t *testing.T) {
		const workers = 8
		for round := range 10 {
			reg := prometheus.NewPedanticRegistry()
			scope := registry.NewScope(reg)
			var registered atomic.Int64
			busy := make(chan struct{})
			closed := make(chan struct{}) // so that workers stop even if Register never fails
			var once sync.Once
			var wg sync.WaitGroup
			errs := make(chan error, workers)
			for w := range workers {
				wg.Go(func() {
					for i := 0; ; i++ {
						err := scope.Register(scopeTestGauge(fmt.Sprintf("race_%d_%d", w, i), 1))
						if err != nil {
							errs <- err
							return
						}
						if registered.Add(1) >= 4*workers {
							once.Do(func() { close(busy) })
						}
						select {
						case <-closed:
							return
						default:
						}
					}
				})
			}
			<-busy
			if err := scope.Close(); err != nil {
				t.Errorf("round %d: Close: %v", round, err)
			}
			close(closed)
			wg.Wait()
			close(errs)
			for err := range errs {
				if !errors.Is(err, registry.ErrClosed) {
					t.Errorf("round %d: Register = %v, want ErrClosed", round, err)
				}
			}
			registrytest.VerifyNone(t, reg)
			if t.Failed() {
				t.Fatalf("round %d (after %d registrations) left something behind", round, registered.Load())
			}
		}
	})
}

func TestCloseOwnership(t *testing.T) {
	t.Run("leaves an equal collector of somebody else's registered and reports ErrNotRegistered", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg)
		ours := scopeTestGauge("jobs", 1)
		scope.MustRegister(ours, scopeTestGauge("mine", 1))
		if !reg.Unregister(scopeTestGauge("jobs", 0)) {
			t.Fatal("setup: the registry did not unregister the scope's collector")
		}
		theirs := scopeTestGauge("jobs", 3)
		reg.MustRegister(theirs)

		err := scope.Close()
		if !errors.Is(err, registry.ErrNotRegistered) {
			t.Errorf("Close = %v, want an error wrapping ErrNotRegistered", err)
		}
		if got, want := scopeTestUnregisterErrors(t, err), [][]string{{"jobs"}}; !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("Close reported %q, want %q", got, want)
		}
		scopeTestCompare(t, reg, scopeTestJobs)
		if !reg.Unregister(theirs) {
			t.Error("their collector is no longer registered")
		}
	})

	t.Run("reports a collector somebody else unregistered, and leaves nothing behind", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg, registry.WithLabels(prometheus.Labels{"cluster": "east"}))
		scope.MustRegister(scopeTestGauge("jobs", 1))
		if !prometheus.WrapRegistererWith(prometheus.Labels{"cluster": "east"}, reg).Unregister(scopeTestGauge("jobs", 0)) {
			t.Fatal("setup: the registry did not unregister the scope's collector")
		}
		err := scope.Close()
		if !errors.Is(err, registry.ErrNotRegistered) {
			t.Errorf("Close = %v, want an error wrapping ErrNotRegistered", err)
		}
		registrytest.VerifyNone(t, reg)
	})

	t.Run("lets the parent's error through, wrapped", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg)
		scope.MustRegister(scopeTestGauge("jobs", 1))
		reg.Unregister(scopeTestGauge("jobs", 0))
		// Somebody else's collector now holds the descriptor as part of
		// another identity: the probe fails with the registry's
		// duplicate-descriptor error, not an AlreadyRegisteredError.
		theirs := newScopeTestMulti("jobs", "extra")
		reg.MustRegister(theirs)
		err := scope.Close()
		if !errors.Is(err, registry.ErrNotRegistered) {
			t.Errorf("Close = %v, want an error wrapping ErrNotRegistered", err)
		}
		if errors.As(err, &prometheus.AlreadyRegisteredError{}) {
			t.Errorf("Close = %v: the setup should not produce an AlreadyRegisteredError", err)
		}
		if got, want := scopeTestFamilies(t, reg), []string{"extra", "jobs"}; !slices.Equal(got, want) {
			t.Errorf("parent exposes %q, want %q", got, want)
		}
		if !reg.Unregister(theirs) {
			t.Error("their collector is no longer registered")
		}
	})
}

func TestUncheckedCollectors(t *testing.T) {
	options := []struct {
		name string
		give []registry.Option
		want string
	}{
		{name: "no options", want: "unchecked_value 3\n"},
		{
			name: "a prefix and labels",
			give: []registry.Option{registry.WithPrefix("app_"), registry.WithLabels(prometheus.Labels{"cluster": "east"})},
			want: "app_unchecked_value{cluster=\"east\"} 3\n",
		},
	}
	for _, o := range options {
		t.Run("expose nothing after Close, without an error, with "+o.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			scope := registry.NewScope(reg, o.give...)
			scope.MustRegister(newScopeTestUnchecked("unchecked_value", func() float64 { return 3 }))
			name := strings.Fields(o.want)[0]
			name, _, _ = strings.Cut(name, "{")
			scopeTestCompare(t, reg, "# HELP "+name+" Unchecked test metric unchecked_value.\n# TYPE "+name+" gauge\n"+o.want)
			if err := scope.Close(); err != nil {
				t.Errorf("Close = %v, want nil", err)
			}
			registrytest.VerifyNone(t, reg)
		})
	}

	t.Run("through a nested scope leave nothing in the outer scope", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		outer := registry.NewScope(reg)
		for i := range 3 {
			inner := registry.NewScope(outer, registry.WithLabels(prometheus.Labels{"round": fmt.Sprint(i)}))
			inner.MustRegister(newScopeTestUnchecked("unchecked_value", func() float64 { return 3 }))
			if got := outer.Len(); got != 1 {
				t.Errorf("round %d: outer Len() = %d with the inner scope open, want 1", i, got)
			}
			if err := inner.Close(); err != nil {
				t.Errorf("round %d: Close = %v, want nil", i, err)
			}
			if got := outer.Len(); got != 0 {
				t.Errorf("round %d: outer Len() = %d after the inner scope closed, want 0", i, got)
			}
		}
		registrytest.VerifyNone(t, reg)
		if err := outer.Close(); err != nil {
			t.Errorf("outer Close = %v, want nil", err)
		}
	})

	t.Run("can be registered again by the next scope", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		for i := range 3 {
			scope := registry.NewScope(reg)
			scope.MustRegister(newScopeTestUnchecked("unchecked_value", func() float64 { return float64(i) }))
			scopeTestCompare(t, reg, fmt.Sprintf("# HELP unchecked_value Unchecked test metric unchecked_value.\n# TYPE unchecked_value gauge\nunchecked_value %d\n", i))
			scope.Close()
		}
		registrytest.VerifyNone(t, reg)
	})
}

// scopeTestComponent stands for a component whose metrics read its state.
type scopeTestComponent struct {
	cache map[string]int
	name  string
}

// scopeTestBuild makes a component that registers a metric reading it through
// scope, and returns only a weak pointer to it. The metric calls onRead, if
// not nil, each time it reads the component. scopeTestBuild is not inlined,
// so that no strong pointer survives in the caller's frame.
//
//go:noinline
func scopeTestBuild(t *testing.T, scope *registry.Scope, unchecked bool, onRead func()) weak.Pointer[scopeTestComponent] {
	t.Helper()
	c := &scopeTestComponent{cache: map[string]int{"a": 1, "b": 2}, name: "east"}
	size := func() float64 {
		if onRead != nil {
			onRead()
		}
		return float64(len(c.cache))
	}
	var col prometheus.Collector = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cache_objects", Help: "Objects."}, size)
	if unchecked {
		col = newScopeTestUnchecked("cache_objects", size)
	}
	if err := scope.Register(col); err != nil {
		t.Fatalf("Register: %v", err)
	}
	return weak.Make(c)
}

// scopeTestCollected runs the GC until wp is cleared, and reports whether it was.
func scopeTestCollected[T any](wp weak.Pointer[T]) bool {
	for range 20 {
		runtime.GC()
		if wp.Value() == nil {
			return true
		}
	}
	return false
}

func TestCloseReleasesComponent(t *testing.T) {
	tests := []struct {
		name      string
		unchecked bool
		// scope returns the scope to register into, on parent.
		scope func(parent prometheus.Registerer) *registry.Scope
		// after runs between registration and Close.
		after func(t *testing.T, reg *prometheus.Registry)
	}{
		{name: "a GaugeFunc", scope: func(p prometheus.Registerer) *registry.Scope { return registry.NewScope(p) }},
		{name: "an unchecked collector", unchecked: true, scope: func(p prometheus.Registerer) *registry.Scope { return registry.NewScope(p) }},
		{
			name: "a GaugeFunc in a labelled child",
			scope: func(p prometheus.Registerer) *registry.Scope {
				return registry.NewScope(p, registry.WithPrefix("app_")).Child(registry.WithLabels(prometheus.Labels{"cluster": "east"}))
			},
		},
		{
			name:  "a GaugeFunc in nested scopes",
			scope: func(p prometheus.Registerer) *registry.Scope { return registry.NewScope(registry.NewScope(p)) },
		},
		{
			name:  "a GaugeFunc somebody else replaced",
			scope: func(p prometheus.Registerer) *registry.Scope { return registry.NewScope(p) },
			after: func(t *testing.T, reg *prometheus.Registry) {
				reg.Unregister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "cache_objects", Help: "Objects."}))
				reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "cache_objects", Help: "Objects."}))
			},
		},
	}
	for _, tt := range tests {
		t.Run("nothing keeps the component of "+tt.name+" reachable after Close", func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			scope := tt.scope(reg)
			wp := scopeTestBuild(t, scope, tt.unchecked, nil)
			if _, err := reg.Gather(); err != nil {
				t.Fatalf("Gather: %v", err)
			}
			if tt.after != nil {
				tt.after(t, reg)
			}
			scope.Close()
			if !scopeTestCollected(wp) {
				t.Error("the component is still reachable after Close")
			}
			runtime.KeepAlive(reg)
			runtime.KeepAlive(scope)
		})
	}

	t.Run("the check sees a component kept reachable by an open scope", func(t *testing.T) {
		for _, unchecked := range []bool{false, true} {
			reg := prometheus.NewPedanticRegistry()
			scope := registry.NewScope(reg)
			wp := scopeTestBuild(t, scope, unchecked, nil)
			if scopeTestCollected(wp) {
				t.Errorf("unchecked=%v: the component was collected while its metric was registered", unchecked)
			}
			scope.Close()
			runtime.KeepAlive(reg)
		}
	})

	t.Run("nothing keeps the component reachable after a parent refused to unregister it", func(t *testing.T) {
		rec := newRecorder()
		rec.refuse = map[string]bool{"cache_objects": true}
		scope := registry.NewScope(rec)
		wp := scopeTestBuild(t, scope, false, nil)
		if err := scope.Close(); !errors.Is(err, registry.ErrNotRegistered) {
			t.Errorf("Close = %v, want ErrNotRegistered", err)
		}
		if !scopeTestCollected(wp) {
			t.Error("the component is still reachable after Close")
		}
		runtime.KeepAlive(rec)
	})
}

func TestCloseDuringScrapeReleasesComponent(t *testing.T) {
	// A prometheus.Registry keeps an unchecked collector for good, so the
	// scope's wrapper stays in it. The scrape in flight when Close runs
	// still reads the component; the last reference to it must go when
	// that scrape is done, not stay with the wrapper.
	reg := prometheus.NewPedanticRegistry()
	scope := registry.NewScope(reg)
	entered, proceed := make(chan struct{}), make(chan struct{})
	var once sync.Once
	wp := scopeTestBuild(t, scope, true, func() {
		once.Do(func() {
			close(entered)
			<-proceed
		})
	})
	gathered := make(chan error, 1)
	go func() {
		_, err := reg.Gather()
		gathered <- err
	}()
	<-entered
	if err := scope.Close(); err != nil {
		t.Errorf("Close = %v, want nil", err)
	}
	if wp.Value() == nil {
		t.Fatal("the component was collected while a scrape was still reading it")
	}
	close(proceed)
	if err := <-gathered; err != nil {
		t.Errorf("the Gather in flight = %v", err)
	}
	if !scopeTestCollected(wp) {
		t.Error("the component is still reachable after the scrape in flight finished")
	}
	if got := scopeTestFamilies(t, reg); len(got) != 0 {
		t.Errorf("after Close the registry exposes %v, want nothing", got)
	}
	runtime.KeepAlive(reg)
}

// scopeTestClosedChild makes a child of parent, registers through it,
// closes it and returns only a weak pointer to it.
//
//go:noinline
func scopeTestClosedChild(t *testing.T, parent *registry.Scope) weak.Pointer[registry.Scope] {
	t.Helper()
	child := parent.Child(registry.WithPrefix("child_"))
	child.MustRegister(scopeTestGauge("jobs", 1))
	if err := child.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return weak.Make(child)
}

func TestChild(t *testing.T) {
	t.Run("registers into the same parent with prefixes and labels composed", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		app := registry.NewScope(reg, registry.WithPrefix("app_"), registry.WithLabels(prometheus.Labels{"cluster": "east"}))
		tenant := app.Child(registry.WithPrefix("tenant_"), registry.WithLabels(prometheus.Labels{"tenant": "acme"}))
		worker := tenant.Child(registry.WithLabels(prometheus.Labels{"worker": "1"}))
		app.MustRegister(scopeTestGauge("up", 1))
		tenant.MustRegister(scopeTestGauge("jobs", 2))
		worker.MustRegister(scopeTestGauge("busy", 3))
		scopeTestCompare(t, reg, `
# HELP app_tenant_busy Test gauge busy.
# TYPE app_tenant_busy gauge
app_tenant_busy{cluster="east",tenant="acme",worker="1"} 3
# HELP app_tenant_jobs Test gauge jobs.
# TYPE app_tenant_jobs gauge
app_tenant_jobs{cluster="east",tenant="acme"} 2
# HELP app_up Test gauge up.
# TYPE app_up gauge
app_up{cluster="east"} 1
`)
		if got := app.Len(); got != 3 {
			t.Errorf("Len() = %d, want 3 (children included)", got)
		}
		if err := app.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		registrytest.VerifyNone(t, reg)
	})

	t.Run("is closed when its parent closes", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		parent := registry.NewScope(reg)
		child := parent.Child()
		grandchild := child.Child()
		grandchild.MustRegister(scopeTestGauge("jobs", 3))
		parent.Close()
		registrytest.VerifyNone(t, reg)
		for name, s := range map[string]*registry.Scope{"child": child, "grandchild": grandchild} {
			if err := s.Register(scopeTestGauge("late", 1)); !errors.Is(err, registry.ErrClosed) {
				t.Errorf("%s Register = %v, want ErrClosed", name, err)
			}
			if got := s.Len(); got != 0 {
				t.Errorf("%s Len() = %d, want 0", name, got)
			}
		}
	})

	t.Run("is detached from its parent when closed", func(t *testing.T) {
		rec := newRecorder()
		parent := registry.NewScope(rec)
		parent.MustRegister(scopeTestGauge("a", 1))
		child := parent.Child()
		child.MustRegister(scopeTestGauge("b", 1))
		if got := parent.Len(); got != 2 {
			t.Fatalf("Len() = %d, want 2", got)
		}
		if err := child.Close(); err != nil {
			t.Fatalf("child Close: %v", err)
		}
		if got := parent.Len(); got != 1 {
			t.Errorf("Len() after the child closed = %d, want 1", got)
		}
		if got := scopeTestFamilies(t, parent); !slices.Equal(got, []string{"a"}) {
			t.Errorf("parent gathers %q, want [a]", got)
		}
		if err := parent.Close(); err != nil {
			t.Errorf("parent Close: %v", err)
		}
		if got, want := rec.removals(), []string{"unregister b", "unregister a"}; !slices.Equal(got, want) {
			t.Errorf("removals %q, want %q", got, want)
		}
	})

	t.Run("is not kept by its parent once closed", func(t *testing.T) {
		parent := registry.NewScope(prometheus.NewPedanticRegistry())
		wp := scopeTestClosedChild(t, parent)
		if !scopeTestCollected(wp) {
			t.Error("the open parent still holds its closed child")
		}
		runtime.KeepAlive(parent)
	})

	t.Run("of a closed scope is closed", func(t *testing.T) {
		rec := newRecorder()
		parent := registry.NewScope(rec)
		parent.Close()
		child := parent.Child(registry.WithPrefix("late_"))
		if err := child.Register(scopeTestGauge("jobs", 1)); !errors.Is(err, registry.ErrClosed) {
			t.Errorf("Register = %v, want ErrClosed", err)
		}
		if calls := rec.calls(); len(calls) != 0 {
			t.Errorf("parent saw %q", calls)
		}
		if err := child.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
	})

	conflicts := []struct {
		name  string
		build func() *registry.Scope
		give  prometheus.Labels
	}{
		{
			name: "a label of the parent",
			build: func() *registry.Scope {
				return registry.NewScope(nil, registry.WithLabels(prometheus.Labels{"cluster": "east"}))
			},
			give: prometheus.Labels{"cluster": "west"},
		},
		{
			name: "a label of the grandparent",
			build: func() *registry.Scope {
				return registry.NewScope(nil, registry.WithLabels(prometheus.Labels{"cluster": "east"})).
					Child(registry.WithLabels(prometheus.Labels{"tenant": "acme"}))
			},
			give: prometheus.Labels{"cluster": "east"},
		},
	}
	for _, tt := range conflicts {
		t.Run("that sets "+tt.name+" fails every registration, as nested client_golang wrappers do, and touches nothing", func(t *testing.T) {
			parent := tt.build()
			child := parent.Child(registry.WithLabels(tt.give))
			err := child.Register(scopeTestGauge("jobs", 1))
			if err == nil || !strings.HasPrefix(err.Error(), "registry: label ") {
				t.Errorf("Register = %v, want an error naming the label", err)
			}
			grandchild := child.Child(registry.WithPrefix("sub_"))
			if err := grandchild.Register(scopeTestGauge("more", 1)); err == nil {
				t.Error("Register in a scope nested in it = nil, want the same error")
			}
			if got := parent.Len(); got != 0 {
				t.Errorf("Len() = %d", got)
			}
			if err := parent.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
		})
	}
}

func TestDeleteOnClose(t *testing.T) {
	// shared returns two vectors that several components share, registered
	// in reg directly, with series for two tenants.
	shared := func(reg *prometheus.Registry) (*prometheus.CounterVec, *prometheus.GaugeVec) {
		requests := promauto.With(reg).NewCounterVec(prometheus.CounterOpts{Name: "requests_total", Help: "Requests."}, []string{"tenant", "path"})
		queue := promauto.With(reg).NewGaugeVec(prometheus.GaugeOpts{Name: "queue_depth", Help: "Queue depth."}, []string{"tenant"})
		for _, tenant := range []string{"acme", "globex"} {
			requests.WithLabelValues(tenant, "/a").Inc()
			requests.WithLabelValues(tenant, "/b").Add(2)
			queue.WithLabelValues(tenant).Set(5)
		}
		return requests, queue
	}
	const globexOnly = `
# HELP queue_depth Queue depth.
# TYPE queue_depth gauge
queue_depth{tenant="globex"} 5
# HELP requests_total Requests.
# TYPE requests_total counter
requests_total{path="/a",tenant="globex"} 1
requests_total{path="/b",tenant="globex"} 2
`

	t.Run("deletes only the matching series of shared vectors on Close", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		requests, queue := shared(reg)
		// The scope's labels do not apply to vectors it did not register.
		scope := registry.NewScope(reg, registry.WithLabels(prometheus.Labels{"cluster": "east"}))
		scope.DeleteOnClose(prometheus.Labels{"tenant": "acme"}, requests, queue)
		if got := testutil.CollectAndCount(requests); got != 4 {
			t.Fatalf("before Close: %d request series, want 4", got)
		}
		if err := scope.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		scopeTestCompare(t, reg, globexOnly)
	})

	t.Run("deletes at once on a closed scope", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		requests, queue := shared(reg)
		scope := registry.NewScope(reg)
		scope.Close()
		scope.DeleteOnClose(prometheus.Labels{"tenant": "acme"}, requests, queue)
		scopeTestCompare(t, reg, globexOnly)
	})

	t.Run("of a child runs when the parent closes", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		requests, queue := shared(reg)
		parent := registry.NewScope(reg)
		parent.Child().DeleteOnClose(prometheus.Labels{"tenant": "acme"}, requests, queue)
		parent.Close()
		scopeTestCompare(t, reg, globexOnly)
	})

	t.Run("matches several labels together", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		requests, _ := shared(reg)
		scope := registry.NewScope(reg)
		scope.DeleteOnClose(prometheus.Labels{"tenant": "acme", "path": "/a"}, requests)
		scope.Close()
		if err := testutil.CollectAndCompare(requests, strings.NewReader(`
# HELP requests_total Requests.
# TYPE requests_total counter
requests_total{path="/a",tenant="globex"} 1
requests_total{path="/b",tenant="acme"} 2
requests_total{path="/b",tenant="globex"} 2
`)); err != nil {
			t.Error(err)
		}
	})

	misuse := []struct {
		name   string
		labels prometheus.Labels
		vecs   []registry.Deleter
	}{
		{name: "nil labels", labels: nil, vecs: []registry.Deleter{prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "x", Help: "x"}, []string{"tenant"})}},
		{name: "empty labels", labels: prometheus.Labels{}, vecs: []registry.Deleter{prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "x", Help: "x"}, []string{"tenant"})}},
		{name: "a nil vector", labels: prometheus.Labels{"tenant": "acme"}, vecs: []registry.Deleter{nil}},
		{name: "a typed nil vector", labels: prometheus.Labels{"tenant": "acme"}, vecs: []registry.Deleter{
			prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "x", Help: "x"}, []string{"tenant"}), (*prometheus.GaugeVec)(nil),
		}},
	}
	for _, tt := range misuse {
		t.Run("panics with the package prefix on "+tt.name, func(t *testing.T) {
			for _, closed := range []bool{false, true} {
				scope := registry.NewScope(nil)
				if closed {
					scope.Close()
				}
				v := scopeTestPanic(func() { scope.DeleteOnClose(tt.labels, tt.vecs...) })
				msg, ok := v.(string)
				if !ok || !strings.HasPrefix(msg, "registry:") {
					t.Errorf("closed=%v: DeleteOnClose panicked with %#v, want a message starting %q", closed, v, "registry:")
				}
			}
		})
	}
}

func TestGather(t *testing.T) {
	t.Run("returns what the scope and its children own as the parent exposes it, sorted", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		registry.NewScope(reg).MustRegister(scopeTestGauge("other_component", 9))
		scope := registry.NewScope(reg, registry.WithPrefix("app_"), registry.WithLabels(prometheus.Labels{"cluster": "east"}))
		scope.MustRegister(scopeTestGauge("zeta", 1))
		scope.Child(registry.WithLabels(prometheus.Labels{"tenant": "acme"})).MustRegister(scopeTestGauge("mid", 2))
		scope.MustRegister(scopeTestGauge("alpha", 3))
		scopeTestCompare(t, scope, `
# HELP app_alpha Test gauge alpha.
# TYPE app_alpha gauge
app_alpha{cluster="east"} 3
# HELP app_mid Test gauge mid.
# TYPE app_mid gauge
app_mid{cluster="east",tenant="acme"} 2
# HELP app_zeta Test gauge zeta.
# TYPE app_zeta gauge
app_zeta{cluster="east"} 1
`)
		if got, want := scopeTestFamilies(t, scope), []string{"app_alpha", "app_mid", "app_zeta"}; !slices.Equal(got, want) {
			t.Errorf("Gather order %q, want %q", got, want)
		}
		// The parent exposes the same families, plus the other component's.
		if got, want := scopeTestFamilies(t, reg), []string{"app_alpha", "app_mid", "app_zeta", "other_component"}; !slices.Equal(got, want) {
			t.Errorf("parent exposes %q, want %q", got, want)
		}
	})

	t.Run("returns no families and no error after Close", func(t *testing.T) {
		scope := registry.NewScope(prometheus.NewPedanticRegistry())
		scope.MustRegister(scopeTestGauge("jobs", 3))
		scope.Child().MustRegister(scopeTestGauge("child", 1))
		scope.Close()
		mfs, err := scope.Gather()
		if err != nil || len(mfs) != 0 {
			t.Errorf("Gather = %d families, %v; want none, nil", len(mfs), err)
		}
	})

	t.Run("includes unchecked collectors", func(t *testing.T) {
		scope := registry.NewScope(prometheus.NewPedanticRegistry())
		scope.MustRegister(newScopeTestUnchecked("unchecked_value", func() float64 { return 3 }))
		scopeTestCompare(t, scope, "# HELP unchecked_value Unchecked test metric unchecked_value.\n# TYPE unchecked_value gauge\nunchecked_value 3\n")
	})
}

func TestNilParent(t *testing.T) {
	parents := []struct {
		name string
		give prometheus.Registerer
	}{
		{name: "a nil parent"},
		{name: "a typed nil registry", give: (*prometheus.Registry)(nil)},
		{name: "a no-op wrapping registerer", give: prometheus.WrapRegistererWith(prometheus.Labels{"x": "y"}, nil)},
	}
	for _, tt := range parents {
		t.Run("a scope on "+tt.name+" tracks, gathers and deletes", func(t *testing.T) {
			scope := registry.NewScope(tt.give, registry.WithPrefix("app_"))
			g := scopeTestGauge("jobs", 3)
			if err := scope.Register(g); err != nil {
				t.Fatalf("Register: %v", err)
			}
			if got := scope.Len(); got != 1 {
				t.Errorf("Len() = %d, want 1", got)
			}
			scopeTestCompare(t, scope, "# HELP app_jobs Test gauge jobs.\n# TYPE app_jobs gauge\napp_jobs 3\n")
			if !scope.Unregister(g) {
				t.Error("Unregister = false")
			}
			vec := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "queue", Help: "Queue."}, []string{"tenant"})
			vec.WithLabelValues("acme").Set(1)
			vec.WithLabelValues("globex").Set(2)
			scope.DeleteOnClose(prometheus.Labels{"tenant": "acme"}, vec)
			scope.MustRegister(scopeTestGauge("other", 1))
			if err := scope.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if got := testutil.CollectAndCount(vec); got != 1 {
				t.Errorf("vec has %d series after Close, want 1", got)
			}
			if got := scope.Len(); got != 0 {
				t.Errorf("Len() after Close = %d", got)
			}
		})
	}
}

func TestPromauto(t *testing.T) {
	t.Run("registers through the scope, and the metric registered is the user's own", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg, registry.WithLabels(prometheus.Labels{"cluster": "east"}))
		g := promauto.With(scope).NewGauge(prometheus.GaugeOpts{Name: "jobs", Help: "Test gauge jobs."})
		requests := promauto.With(scope).NewCounterVec(prometheus.CounterOpts{Name: "requests_total", Help: "Requests."}, []string{"path"})
		g.Set(5)
		requests.WithLabelValues("/a").Inc()
		scopeTestCompare(t, reg, `
# HELP jobs Test gauge jobs.
# TYPE jobs gauge
jobs{cluster="east"} 5
# HELP requests_total Requests.
# TYPE requests_total counter
requests_total{cluster="east",path="/a"} 1
`)
		err := scope.Register(prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobs", Help: "Test gauge jobs."}))
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) || are.ExistingCollector != g {
			t.Errorf("registering an equal gauge: %v, want an AlreadyRegisteredError holding the promauto gauge", err)
		}
		if !scope.Unregister(g) {
			t.Error("Unregister(g) = false")
		}
		if err := scope.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		registrytest.VerifyNone(t, reg)
	})

	t.Run("panics with ErrClosed on a closed scope", func(t *testing.T) {
		scope := registry.NewScope(prometheus.NewRegistry())
		scope.Close()
		v := scopeTestPanic(func() {
			promauto.With(scope).NewGauge(prometheus.GaugeOpts{Name: "jobs", Help: "Jobs."})
		})
		if err, ok := v.(error); !ok || !errors.Is(err, registry.ErrClosed) {
			t.Errorf("promauto panicked with %v, want ErrClosed", v)
		}
	})
}

func TestConcurrentUse(t *testing.T) {
	t.Run("every method may be called from many goroutines at once", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		root := registry.NewScope(reg, registry.WithPrefix("app_"))
		shared := promauto.With(reg).NewGaugeVec(prometheus.GaugeOpts{Name: "shared", Help: "Shared."}, []string{"worker"})
		var wg sync.WaitGroup
		for w := range 6 {
			wg.Go(func() {
				label := fmt.Sprint(w)
				child := root.Child(registry.WithLabels(prometheus.Labels{"worker": label}))
				child.DeleteOnClose(prometheus.Labels{"worker": label}, shared)
				for i := range 30 {
					g := scopeTestGauge(fmt.Sprintf("g_%d", i%5), float64(i))
					if err := child.Register(g); err != nil && !errors.As(err, &prometheus.AlreadyRegisteredError{}) {
						t.Errorf("Register: %v", err)
					}
					shared.WithLabelValues(label).Set(float64(i))
					if _, err := root.Gather(); err != nil {
						t.Errorf("Gather: %v", err)
					}
					if _, err := reg.Gather(); err != nil {
						t.Errorf("parent Gather: %v", err)
					}
					_ = root.Len()
					if i%3 == 0 {
						child.Unregister(g)
					}
				}
				if w%2 == 0 {
					if err := child.Close(); err != nil {
						t.Errorf("child Close: %v", err)
					}
				}
			})
		}
		wg.Wait()
		if err := root.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		registrytest.VerifyNone(t, reg, "shared")
		if got := testutil.CollectAndCount(shared); got != 0 {
			t.Errorf("shared vector still has %d series", got)
		}
	})
}

func TestNesting(t *testing.T) {
	tests := []struct {
		name string
		// outer wraps inner the way the test names.
		outer func(inner *registry.Scope) prometheus.Registerer
		want  string
	}{
		{
			name:  "a scope on another scope with labels",
			outer: func(inner *registry.Scope) prometheus.Registerer { return inner },
			want:  "jobs{cluster=\"east\"} 3\n",
		},
		{
			name: "a scope on prometheus.WrapRegistererWith over another scope",
			outer: func(inner *registry.Scope) prometheus.Registerer {
				return prometheus.WrapRegistererWith(prometheus.Labels{"zone": "a"}, inner)
			},
			want: "jobs{cluster=\"east\",zone=\"a\"} 3\n",
		},
		{
			name: "a scope on prometheus.WrapRegistererWithPrefix over another scope",
			outer: func(inner *registry.Scope) prometheus.Registerer {
				return prometheus.WrapRegistererWithPrefix("svc_", inner)
			},
			want: "svc_jobs{cluster=\"east\"} 3\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name+" closes cleanly and leaves the inner scope empty", func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			inner := registry.NewScope(reg)
			outer := registry.NewScope(tt.outer(inner), registry.WithLabels(prometheus.Labels{"cluster": "east"}))
			outer.MustRegister(scopeTestGauge("jobs", 3))
			name, _, _ := strings.Cut(tt.want, "{")
			scopeTestCompare(t, reg, "# HELP "+name+" Test gauge jobs.\n# TYPE "+name+" gauge\n"+tt.want)
			if got := inner.Len(); got != 1 {
				t.Errorf("inner Len() = %d, want 1", got)
			}
			if err := outer.Close(); err != nil {
				t.Errorf("Close = %v, want nil", err)
			}
			if got := inner.Len(); got != 0 {
				t.Errorf("inner Len() after Close = %d, want 0", got)
			}
			registrytest.VerifyNone(t, reg)
		})
		t.Run(tt.name+" closes cleanly after the inner scope closed", func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			inner := registry.NewScope(reg)
			outer := registry.NewScope(tt.outer(inner), registry.WithLabels(prometheus.Labels{"cluster": "east"}))
			outer.MustRegister(scopeTestGauge("jobs", 3))
			if err := inner.Close(); err != nil {
				t.Fatalf("inner Close: %v", err)
			}
			if err := outer.Close(); err != nil {
				t.Errorf("outer Close = %v, want nil", err)
			}
			registrytest.VerifyNone(t, reg)
		})
	}
}

func TestZeroScope(t *testing.T) {
	t.Run("panics with the package prefix where it would register, and is empty otherwise", func(t *testing.T) {
		var s registry.Scope
		for name, f := range map[string]func(){
			"Register":      func() { _ = s.Register(promtest.Gauge("jobs", 1)) },
			"Child":         func() { s.Child() },
			"NewScope":      func() { registry.NewScope(&s) },
			"DeleteOnClose": func() { s.DeleteOnClose(prometheus.Labels{"a": "b"}, promtest.CounterVec("v", "a")) },
		} {
			if msg, ok := promtest.Panic(f).(string); !ok || !strings.HasPrefix(msg, "registry: ") || !strings.HasSuffix(msg, "on a Scope that NewScope did not make") {
				t.Errorf("%s panicked with %#v", name, msg)
			}
		}
		if s.Unregister(promtest.Gauge("jobs", 1)) || s.Len() != 0 || s.Close() != nil {
			t.Error("the zero scope is not empty")
		}
		if mfs, err := s.Gather(); len(mfs) != 0 || err != nil {
			t.Errorf("Gather = %v, %v", mfs, err)
		}
	})
}

func TestNilParentRefusesAsARegistry(t *testing.T) {
	t.Run("a scope with no parent refuses an equal collector and an inconsistent one, as a registry would", func(t *testing.T) {
		scope := registry.NewScope(nil, registry.WithLabels(prometheus.Labels{"a": "b"}))
		first := promtest.Gauge("jobs", 1)
		scope.MustRegister(first)
		var are prometheus.AlreadyRegisteredError
		if err := scope.Register(promtest.Gauge("jobs", 2)); !errors.As(err, &are) || are.ExistingCollector != prometheus.Collector(first) {
			t.Errorf("Register of an equal gauge = %v, want an AlreadyRegisteredError naming the first", err)
		}
		other := prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobs", Help: "Other help.", ConstLabels: prometheus.Labels{"x": "y"}})
		if err := scope.Register(other); err == nil || errors.As(err, &are) {
			t.Errorf("Register of an inconsistent gauge = %v, want the registry's error", err)
		}
		if got, err := promtest.Series(scope); err != nil || !slices.Equal(got, []string{`jobs{a="b"} 1`}) {
			t.Errorf("Gather = %q, %v", got, err)
		}
		if err := scope.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
	})
}
