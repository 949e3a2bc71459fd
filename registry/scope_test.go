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

	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/lifecycle"
	"github.com/promscope/promscope/registry"
	"github.com/promscope/promscope/registry/registrytest"
)

func TestRegister(t *testing.T) {
	t.Run("passes the collector to the parent and tracks it", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg)
		if err := scope.Register(promtest.Gauge("jobs", 3)); err != nil {
			t.Fatalf("Register: %v", err)
		}
		promtest.Expose(t, reg, "jobs{} 3")
		if got := scope.Len(); got != 1 {
			t.Errorf("Len() = %d, want 1", got)
		}
		if err := scope.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		registrytest.VerifyNone(t, reg)
	})

	holders := []struct {
		name string
		// give registers existing and returns the scope to register an
		// equal collector into.
		give func(reg *prometheus.Registry, existing prometheus.Collector) *registry.Scope
	}{
		{name: "the same scope", give: func(reg *prometheus.Registry, existing prometheus.Collector) *registry.Scope {
			s := registry.NewScope(reg)
			s.MustRegister(existing)
			return s
		}},
		{name: "the registry directly", give: func(reg *prometheus.Registry, existing prometheus.Collector) *registry.Scope {
			reg.MustRegister(existing)
			return registry.NewScope(reg)
		}},
		{name: "another scope", give: func(reg *prometheus.Registry, existing prometheus.Collector) *registry.Scope {
			registry.NewScope(reg).MustRegister(existing)
			return registry.NewScope(reg)
		}},
		{name: "a scope three levels deep", give: func(reg *prometheus.Registry, existing prometheus.Collector) *registry.Scope {
			inner := registry.NewScope(registry.NewScope(registry.NewScope(reg), registry.WithPrefix("app_")))
			inner.MustRegister(existing)
			return inner
		}},
		{name: "a sibling with the same labels", give: func(reg *prometheus.Registry, existing prometheus.Collector) *registry.Scope {
			outer, labels := registry.NewScope(reg), registry.WithLabels(prometheus.Labels{"cluster": "east"})
			registry.NewScope(outer, labels).MustRegister(existing)
			return registry.NewScope(outer, labels)
		}},
		{name: "the outer scope of a nested scope that adds nothing", give: func(reg *prometheus.Registry, existing prometheus.Collector) *registry.Scope {
			outer := registry.NewScope(reg, registry.WithPrefix("app_"))
			outer.MustRegister(existing)
			return outer.Child()
		}},
	}
	for _, tt := range holders {
		t.Run("returns an AlreadyRegisteredError naming both collectors when "+tt.name+" holds an equal one", func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			existing, again := promtest.Gauge("jobs", 3), promtest.Gauge("jobs", 4)
			scope := tt.give(reg, existing)
			before := scope.Len()
			var are prometheus.AlreadyRegisteredError
			if err := scope.Register(again); !errors.As(err, &are) {
				t.Fatalf("Register = %v, want an AlreadyRegisteredError", err)
			}
			if are.ExistingCollector != prometheus.Collector(existing) || are.NewCollector != prometheus.Collector(again) {
				t.Errorf("the error names %#v and %#v, want the first collector and the one just passed", are.ExistingCollector, are.NewCollector)
			}
			if got := scope.Len(); got != before {
				t.Errorf("Len() = %d after a failed registration, want %d", got, before)
			}
		})
	}

	// Each row is a registration the registry refuses with an error of its
	// own; the scope must return that error unchanged, track nothing and
	// leave a bystander's metrics alone.
	refused := []struct {
		name string
		opts []registry.Option
		give prometheus.Collector
		// same does what the scope does, straight on a registry with the
		// bystander's metrics, and returns the registry's error.
		same func(reg *prometheus.Registry) error
	}{
		{
			name: "an invalid metric name",
			give: promtest.Gauge("bad\xffname", 1),
			same: func(reg *prometheus.Registry) error { return reg.Register(promtest.Gauge("bad\xffname", 1)) },
		},
		{
			name: "a prefix that makes the name invalid",
			opts: []registry.Option{registry.WithPrefix("\xff_")},
			give: promtest.Gauge("jobs", 1),
			same: func(reg *prometheus.Registry) error {
				return prometheus.WrapRegistererWithPrefix("\xff_", reg).Register(promtest.Gauge("jobs", 1))
			},
		},
		{
			name: "an empty label name",
			opts: []registry.Option{registry.WithLabels(prometheus.Labels{"": "x"})},
			give: promtest.Gauge("jobs", 1),
			same: func(reg *prometheus.Registry) error {
				return prometheus.WrapRegistererWith(prometheus.Labels{"": "x"}, reg).Register(promtest.Gauge("jobs", 1))
			},
		},
		{
			name: "a scope label the collector already has",
			opts: []registry.Option{registry.WithLabels(prometheus.Labels{"zone": "a"})},
			give: prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobs", Help: "h", ConstLabels: prometheus.Labels{"zone": "b"}}),
			same: func(reg *prometheus.Registry) error {
				return prometheus.WrapRegistererWith(prometheus.Labels{"zone": "a"}, reg).Register(
					prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobs", Help: "h", ConstLabels: prometheus.Labels{"zone": "b"}}))
			},
		},
		{
			name: "another help string than the bystander registered the name with",
			give: prometheus.NewGauge(prometheus.GaugeOpts{Name: "other", Help: "Different.", ConstLabels: prometheus.Labels{"k": "v"}}),
			same: func(reg *prometheus.Registry) error {
				return reg.Register(prometheus.NewGauge(prometheus.GaugeOpts{Name: "other", Help: "Different.", ConstLabels: prometheus.Labels{"k": "v"}}))
			},
		},
		{
			name: "other label names than the bystander registered the name with",
			give: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "shared", Help: "Another owner's vector."}, []string{"region"}),
			same: func(reg *prometheus.Registry) error {
				return reg.Register(prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "shared", Help: "Another owner's vector."}, []string{"region"}))
			},
		},
		{
			name: "one name with two help strings in one collector",
			give: promtest.Gauges{
				prometheus.NewGauge(prometheus.GaugeOpts{Name: "pair", Help: "One.", ConstLabels: prometheus.Labels{"n": "1"}}),
				prometheus.NewGauge(prometheus.GaugeOpts{Name: "pair", Help: "Two.", ConstLabels: prometheus.Labels{"n": "2"}}),
			},
			same: func(reg *prometheus.Registry) error {
				return reg.Register(promtest.Gauges{
					prometheus.NewGauge(prometheus.GaugeOpts{Name: "pair", Help: "One.", ConstLabels: prometheus.Labels{"n": "1"}}),
					prometheus.NewGauge(prometheus.GaugeOpts{Name: "pair", Help: "Two.", ConstLabels: prometheus.Labels{"n": "2"}}),
				})
			},
		},
	}
	for _, tt := range refused {
		t.Run("returns the registry's own error for "+tt.name+", tracks nothing and loses nothing of others", func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			bystander := promtest.NewBystander(reg)
			scope := registry.NewScope(reg, tt.opts...)
			err := scope.Register(tt.give)
			plain := prometheus.NewPedanticRegistry()
			promtest.NewBystander(plain)
			if want := tt.same(plain); err == nil || want == nil || err.Error() != want.Error() {
				t.Errorf("Register = %v, want the registry's own %v", err, want)
			}
			if got := scope.Len(); got != 0 {
				t.Errorf("Len() = %d, want 0", got)
			}
			promtest.Expose(t, reg, bystander.Series()...)
		})
	}

	nils := []struct {
		name string
		give prometheus.Collector
	}{
		{name: "a nil collector"},
		{name: "a typed-nil vector", give: (*prometheus.GaugeVec)(nil)},
		{name: "a typed-nil custom collector", give: (*promtest.Unchecked)(nil)},
		{name: "a nil slice collector", give: promtest.Gauges(nil)},
	}
	for _, tt := range nils {
		t.Run("returns ErrNilCollector for "+tt.name+" without touching the parent, and MustRegister panics with it", func(t *testing.T) {
			parent := promtest.NewParent(nil)
			scope := registry.NewScope(parent)
			if err := scope.Register(tt.give); err != registry.ErrNilCollector { //nolint:errorlint // the sentinel itself, not wrapped
				t.Errorf("Register = %v, want ErrNilCollector itself", err)
			}
			if err, _ := promtest.Panic(func() { scope.MustRegister(tt.give) }).(error); !errors.Is(err, registry.ErrNilCollector) {
				t.Errorf("MustRegister panicked with %v", err)
			}
			if log := parent.Log(); len(log) != 0 || scope.Len() != 0 {
				t.Errorf("the parent saw %q, Len() = %d", log, scope.Len())
			}
		})
	}

	t.Run("MustRegister keeps what it registered before the failing collector", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg)
		v := promtest.Panic(func() { scope.MustRegister(promtest.Gauge("jobs", 3), nil, promtest.Gauge("never", 1)) })
		if err, _ := v.(error); !errors.Is(err, registry.ErrNilCollector) {
			t.Fatalf("MustRegister panicked with %v, want ErrNilCollector", v)
		}
		promtest.Expose(t, reg, "jobs{} 3")
		if err := scope.Close(); err != nil {
			t.Error(err)
		}
	})

	t.Run("promauto.With(scope) registers through the scope, and the metric is the user's own", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg, registry.WithLabels(prometheus.Labels{"cluster": "east"}))
		g := promauto.With(scope).NewGauge(prometheus.GaugeOpts{Name: "jobs", Help: "h"})
		g.Set(5)
		promauto.With(scope).NewCounterVec(prometheus.CounterOpts{Name: "requests_total", Help: "h"}, []string{"path"}).WithLabelValues("/a").Inc()
		promtest.Expose(t, reg, `jobs{cluster="east"} 5`, `requests_total{cluster="east",path="/a"} 1`)
		if !scope.Unregister(g) {
			t.Error("Unregister(g) = false")
		}
		if err := scope.Close(); err != nil {
			t.Error(err)
		}
		registrytest.VerifyNone(t, reg)
	})
}

func TestUnregister(t *testing.T) {
	for _, opts := range [][]registry.Option{nil, {registry.WithPrefix("app_"), registry.WithLabels(prometheus.Labels{"cluster": "east"})}} {
		name := "without options"
		if opts != nil {
			name = "with a prefix and labels"
		}
		t.Run("removes the same collector, or an equal one, "+name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			scope := registry.NewScope(reg, opts...)
			g := promtest.Gauge("jobs", 3)
			scope.MustRegister(g, promtest.Gauge("other", 1))
			if !scope.Unregister(g) || !scope.Unregister(promtest.Gauge("other", 0)) {
				t.Fatal("Unregister = false")
			}
			if got := scope.Len(); got != 0 {
				t.Errorf("Len() = %d, want 0", got)
			}
			registrytest.VerifyNone(t, reg)
			if err := scope.Register(g); err != nil {
				t.Errorf("Register again: %v", err)
			}
			scope.Close()
		})
	}

	t.Run("returns false and removes nothing for a collector the scope does not own", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		direct, theirs := promtest.Gauge("direct", 1), promtest.Gauge("theirs", 2)
		reg.MustRegister(direct)
		registry.NewScope(reg).MustRegister(theirs)
		scope := registry.NewScope(reg)
		for _, c := range []prometheus.Collector{direct, promtest.Gauge("direct", 0), theirs, promtest.Gauge("theirs", 0), nil} {
			if scope.Unregister(c) {
				t.Errorf("Unregister(%v) = true", c)
			}
		}
		promtest.Expose(t, reg, "direct{} 1", "theirs{} 2")
	})

	t.Run("returns false when somebody else replaced the scope's collector, leaves theirs, and forgets its own", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg)
		ours := promtest.Gauge("jobs", 1)
		scope.MustRegister(ours)
		reg.Unregister(ours) // by identity: removes the scope's registration
		reg.MustRegister(promtest.Gauge("jobs", 3))
		if scope.Unregister(ours) {
			t.Error("Unregister = true")
		}
		promtest.Expose(t, reg, "jobs{} 3")
		if got := scope.Len(); got != 0 {
			t.Errorf("Len() = %d, want 0", got)
		}
	})

	t.Run("takes every registration of a collector registered again after an outsider removed it", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg)
		g := promtest.Gauge("jobs", 1)
		scope.MustRegister(g, promtest.Gauge("other", 2))
		reg.Unregister(g)
		scope.MustRegister(g) // the parent holds nothing of it: a second registration
		if got := scope.Len(); got != 3 {
			t.Fatalf("Len() = %d, want 3", got)
		}
		if !scope.Unregister(g) {
			t.Error("Unregister = false")
		}
		if got := scope.Len(); got != 1 {
			t.Errorf("Len() = %d, want 1: other", got)
		}
		promtest.Expose(t, reg, "other{} 2")
		if err := scope.Close(); err != nil {
			t.Errorf("Close = %v, want nil: no stale record left to report", err)
		}
		registrytest.VerifyNone(t, reg)
	})

	t.Run("says true when the registration the parent held is older than a stale one", func(t *testing.T) {
		// Two Registers of one gauge race an outsider's Unregister: the
		// first is in the registry but not yet recorded when the outsider
		// removes it and the second registers, so the scope records the
		// live registration before the stale one.
		parent := promtest.NewParent(promtest.On("register", "jobs", 0, promtest.BlockAfter))
		scope := registry.NewScope(parent)
		g := promtest.Gauge("jobs", 1)
		first := make(chan error)
		go func() { first <- scope.Register(g) }()
		<-parent.Entered
		parent.Reg.Unregister(promtest.Gauge("jobs", 0))
		if err := scope.Register(g); err != nil {
			t.Fatalf("second Register = %v", err)
		}
		parent.Release()
		if err := <-first; err != nil {
			t.Fatalf("first Register = %v", err)
		}
		promtest.Expose(t, parent.Reg, "jobs{} 1")
		if !scope.Unregister(g) {
			t.Error("Unregister = false, want true: it removed the scope's gauge")
		}
		if got := scope.Len(); got != 0 {
			t.Errorf("Len() = %d, want 0", got)
		}
		if err := scope.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
		registrytest.VerifyNone(t, parent.Reg)
	})

	t.Run("removes through nested scopes, and an unchecked collector, and returns false once closed", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		outer := registry.NewScope(reg)
		inner := registry.NewScope(outer, registry.WithLabels(prometheus.Labels{"cluster": "east"}))
		u := &promtest.Unchecked{Name: "u", Value: 3}
		inner.MustRegister(promtest.Gauge("jobs", 3), u)
		if !inner.Unregister(promtest.Gauge("jobs", 0)) || !inner.Unregister(u) {
			t.Error("Unregister = false")
		}
		if got := outer.Len(); got != 0 {
			t.Errorf("outer Len() = %d, want 0", got)
		}
		registrytest.VerifyNone(t, reg)
		inner.MustRegister(u)
		outer.Close()
		if inner.Unregister(u) {
			t.Error("Unregister after Close = true")
		}
	})
}

func TestClose(t *testing.T) {
	t.Run("closes nested scopes newest first, then deletes series, then removes collectors newest first", func(t *testing.T) {
		parent := promtest.NewParent(nil)
		shared := promtest.CounterVec("shared", "tenant")
		shared.WithLabelValues("acme").Inc()
		parent.MustRegister(shared)
		scope := registry.NewScope(parent)
		scope.MustRegister(promtest.Gauge("a", 1))
		registry.NewScope(scope, registry.WithPrefix("first_")).MustRegister(promtest.Gauge("x", 1))
		scope.DeleteOnClose(prometheus.Labels{"tenant": "acme"}, shared)
		scope.MustRegister(promtest.Gauge("b", 1))
		registry.NewScope(scope, registry.WithPrefix("second_")).MustRegister(promtest.Gauge("x", 1), promtest.Gauge("y", 1))
		before := len(parent.Log())
		if err := scope.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		var got []string
		for _, l := range parent.Log()[before:] {
			if strings.HasPrefix(l, "unregister ") {
				got = append(got, strings.TrimSuffix(l, ": true"))
			}
		}
		want := []string{"unregister second_y", "unregister second_x", "unregister first_x", "unregister b", "unregister a"}
		if !slices.Equal(got, want) {
			t.Errorf("Close unregistered %q, want %q", got, want)
		}
		registrytest.VerifyNone(t, parent.Reg, "shared")
	})

	t.Run("is best effort, and names the scope and the metrics of each collector it could not remove", func(t *testing.T) {
		parent := promtest.NewParent(func(c promtest.Call) promtest.Fault {
			if c.Op == "unregister" && (c.Names == "app_a" || c.Names == "app_one,app_two" || c.Names == "app_child_x") {
				return promtest.Refuse
			}
			return promtest.Pass
		})
		scope := registry.NewScope(parent, registry.WithName("app"), registry.WithPrefix("app_"))
		scope.MustRegister(promtest.Gauge("a", 1), promtest.Gauge("b", 1), promtest.Gauges{promtest.Gauge("one", 1), promtest.Gauge("two", 1)})
		child := scope.Child(registry.WithPrefix("child_"))
		child.MustRegister(promtest.Gauge("x", 1), promtest.Gauge("y", 1))
		err := scope.Close()
		metrics, others := promtest.UnregisterErrors(err)
		want := [][]string{{"app_child_x"}, {"app_one", "app_two"}, {"app_a"}}
		if !slices.EqualFunc(metrics, want, slices.Equal) || len(others) > 0 || !errors.Is(err, registry.ErrNotRegistered) {
			t.Errorf("Close = %v, want UnregisterErrors for %q", err, want)
		}
		var ue *registry.UnregisterError
		if errors.As(err, &ue) && ue.Error() != `registry: scope app prefix="app_child_": unregister app_child_x: the parent refused to unregister it` {
			t.Errorf("the first error reads %q", ue.Error())
		}
		promtest.Expose(t, parent.Reg) // what the parent refused to give back is silenced
		if err := scope.Close(); err != nil {
			t.Errorf("second Close = %v", err)
		}
	})

	t.Run("a second Close, and Close on a nil scope, return nil and call nothing", func(t *testing.T) {
		parent := promtest.NewParent(nil)
		scope := registry.NewScope(parent)
		scope.MustRegister(promtest.Gauge("a", 1))
		if err := scope.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		before := len(parent.Log())
		if err := scope.Close(); err != nil || len(parent.Log()) != before {
			t.Errorf("second Close = %v after %d more parent calls", err, len(parent.Log())-before)
		}
		if err := (*registry.Scope)(nil).Close(); err != nil {
			t.Errorf("Close on nil = %v", err)
		}
	})

	t.Run("after it, Register says ErrClosed in the scope and in nested ones, and the rest answers empty", func(t *testing.T) {
		parent := promtest.NewParent(nil)
		scope := registry.NewScope(parent)
		g := promtest.Gauge("mine", 1)
		scope.MustRegister(g)
		nested := registry.NewScope(scope)
		scope.Close()
		before := len(parent.Log())
		for _, s := range []*registry.Scope{scope, nested, registry.NewScope(scope), scope.Child()} {
			if err := s.Register(promtest.Gauge("late", 1)); !errors.Is(err, registry.ErrClosed) {
				t.Errorf("Register = %v, want ErrClosed", err)
			}
			if err, _ := promtest.Panic(func() { s.MustRegister(promtest.Gauge("late", 1)) }).(error); !errors.Is(err, registry.ErrClosed) {
				t.Errorf("MustRegister panicked with %v", err)
			}
		}
		mfs, err := scope.Gather()
		if scope.Unregister(g) || scope.Len() != 0 || len(mfs) != 0 || err != nil || len(parent.Log()) != before {
			t.Errorf("after Close: Unregister true, Len %d, Gather %d families %v, or the parent was called", scope.Len(), len(mfs), err)
		}
	})

	t.Run("racing with Register never leaves anything registered", func(t *testing.T) {
		const workers = 8
		for round := range 10 {
			reg := prometheus.NewPedanticRegistry()
			scope := registry.NewScope(reg)
			var registered atomic.Int64
			busy, stop := make(chan struct{}), make(chan struct{})
			var once sync.Once
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for i := 0; ; i++ {
						if err := scope.Register(promtest.Gauge(fmt.Sprintf("race_%d_%d", w, i), 1)); err != nil {
							if !errors.Is(err, registry.ErrClosed) {
								t.Errorf("Register = %v, want ErrClosed", err)
							}
							return
						}
						if registered.Add(1) >= 4*workers {
							once.Do(func() { close(busy) })
						}
						select {
						case <-stop:
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
			close(stop)
			wg.Wait()
			registrytest.VerifyNone(t, reg)
		}
	})
}

func TestNesting(t *testing.T) {
	t.Run("a nested scope registers into the same parent with prefixes and labels composed, and is counted by the outer scope", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		app := registry.NewScope(reg, registry.WithPrefix("app_"), registry.WithLabels(prometheus.Labels{"cluster": "east"}))
		tenant := app.Child(registry.WithPrefix("tenant_"), registry.WithLabels(prometheus.Labels{"tenant": "acme"}))
		worker := registry.NewScope(tenant, registry.WithLabels(prometheus.Labels{"worker": "1"}))
		app.MustRegister(promtest.Gauge("up", 1))
		tenant.MustRegister(promtest.Gauge("jobs", 2))
		worker.MustRegister(promtest.Gauge("busy", 3))
		promtest.Expose(t, reg, `app_tenant_busy{cluster="east",tenant="acme",worker="1"} 3`,
			`app_tenant_jobs{cluster="east",tenant="acme"} 2`, `app_up{cluster="east"} 1`)
		if got := app.Len(); got != 3 {
			t.Errorf("Len() = %d, want 3", got)
		}
		if err := app.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		registrytest.VerifyNone(t, reg)
		if err := worker.Register(promtest.Gauge("late", 1)); !errors.Is(err, registry.ErrClosed) {
			t.Errorf("Register in a nested scope after the outer Close = %v", err)
		}
	})

	t.Run("a nested scope leaves the outer scope when it closes, and is not kept by it", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		outer := registry.NewScope(reg)
		outer.MustRegister(promtest.Gauge("a", 1))
		wp := closedNested(t, outer)
		if got := outer.Len(); got != 1 {
			t.Errorf("Len() after the nested scope closed = %d, want 1", got)
		}
		promtest.Expose(t, outer, "a{} 1")
		if !promtest.Collected(wp) {
			t.Error("the outer scope still holds its closed nested scope")
		}
		runtime.KeepAlive(outer)
	})

	conflicts := []struct {
		name string
		give func() *registry.Scope
	}{
		{name: "the scope around it", give: func() *registry.Scope {
			return registry.NewScope(nil, registry.WithLabels(prometheus.Labels{"cluster": "east"}))
		}},
		{name: "a scope two levels up", give: func() *registry.Scope {
			return registry.NewScope(nil, registry.WithLabels(prometheus.Labels{"cluster": "east"})).
				Child(registry.WithLabels(prometheus.Labels{"tenant": "acme"}))
		}},
	}
	for _, tt := range conflicts {
		t.Run("a scope that sets a label of "+tt.name+" fails every registration, as nested wrappers do, and registers nothing", func(t *testing.T) {
			outer := tt.give()
			s := outer.Child(registry.WithLabels(prometheus.Labels{"cluster": "west"}))
			for _, r := range []*registry.Scope{s, s.Child(registry.WithPrefix("sub_"))} {
				if err := r.Register(promtest.Gauge("jobs", 1)); err == nil || !strings.HasPrefix(err.Error(), `registry: label "cluster"`) {
					t.Errorf("Register = %v, want an error naming the label", err)
				}
			}
			if got := outer.Len(); got != 0 {
				t.Errorf("Len() = %d", got)
			}
		})
	}

	wrappers := []struct {
		name string
		give func(inner *registry.Scope) prometheus.Registerer
		want string
	}{
		{name: "WrapRegistererWith", give: func(inner *registry.Scope) prometheus.Registerer {
			return prometheus.WrapRegistererWith(prometheus.Labels{"zone": "a"}, inner)
		}, want: `jobs{cluster="east",zone="a"} 3`},
		{name: "WrapRegistererWithPrefix", give: func(inner *registry.Scope) prometheus.Registerer {
			return prometheus.WrapRegistererWithPrefix("svc_", inner)
		}, want: `svc_jobs{cluster="east"} 3`},
	}
	for _, tt := range wrappers {
		for _, innerFirst := range []bool{false, true} {
			t.Run(fmt.Sprintf("a scope on client_golang's %s of a scope closes cleanly, the wrapped scope first: %v", tt.name, innerFirst), func(t *testing.T) {
				reg := prometheus.NewPedanticRegistry()
				inner := registry.NewScope(reg)
				outer := registry.NewScope(tt.give(inner), registry.WithLabels(prometheus.Labels{"cluster": "east"}))
				outer.MustRegister(promtest.Gauge("jobs", 3))
				promtest.Expose(t, reg, tt.want)
				if got := inner.Len(); got != 1 {
					t.Errorf("the wrapped scope owns %d collectors, want 1", got)
				}
				first, second := outer, inner
				if innerFirst {
					first, second = inner, outer
				}
				if err := errors.Join(first.Close(), second.Close()); err != nil {
					t.Errorf("Close = %v", err)
				}
				registrytest.VerifyNone(t, reg)
			})
		}
	}
}

// closedNested makes a scope nested in outer, registers through it, closes
// it, and returns only a weak pointer to it.
//
//go:noinline
func closedNested(t *testing.T, outer *registry.Scope) weak.Pointer[registry.Scope] {
	t.Helper()
	s := registry.NewScope(outer, registry.WithPrefix("nested_"))
	s.MustRegister(promtest.Gauge("jobs", 1))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return weak.Make(s)
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
			if msg, ok := promtest.Panic(f).(string); !ok || msg != "registry: "+strings.Replace(name, "Child", "NewScope", 1)+" on a Scope that NewScope did not make" {
				t.Errorf("%s panicked with %#v", name, msg)
			}
		}
		if mfs, err := s.Gather(); s.Unregister(promtest.Gauge("jobs", 1)) || s.Len() != 0 || s.Close() != nil || len(mfs) != 0 || err != nil || s.String() != "" {
			t.Error("the zero scope is not empty")
		}
	})
}

func TestNilParent(t *testing.T) {
	parents := []struct {
		name string
		give prometheus.Registerer
	}{
		{name: "a nil parent"},
		{name: "a typed-nil registry", give: (*prometheus.Registry)(nil)},
		{name: "a typed-nil scope", give: (*registry.Scope)(nil)},
	}
	for _, tt := range parents {
		t.Run("a scope on "+tt.name+" registers into a private registry that refuses what a registry refuses", func(t *testing.T) {
			scope := registry.NewScope(tt.give, nil, registry.WithLabels(nil), registry.WithLabels(prometheus.Labels{"a": "b"}))
			first := promtest.Gauge("jobs", 1)
			scope.MustRegister(first)
			var are prometheus.AlreadyRegisteredError
			if err := scope.Register(promtest.Gauge("jobs", 2)); !errors.As(err, &are) || are.ExistingCollector != prometheus.Collector(first) {
				t.Errorf("Register of an equal gauge = %v", err)
			}
			if err := scope.Register(prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobs", Help: "Other.", ConstLabels: prometheus.Labels{"x": "y"}})); err == nil || errors.As(err, &are) {
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
}

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

// funcUnchecked is an unchecked collector of a gauge that f reads.
type funcUnchecked struct{ f func() float64 }

func (*funcUnchecked) Describe(chan<- *prometheus.Desc) {}
func (u *funcUnchecked) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(prometheus.NewDesc("cache_objects", "Objects.", nil, nil), prometheus.GaugeValue, u.f())
}

func TestCloseReleasesComponent(t *testing.T) {
	plain := func(p prometheus.Registerer) *registry.Scope { return registry.NewScope(p) }
	tests := []struct {
		name      string
		unchecked bool
		scope     func(parent prometheus.Registerer) *registry.Scope
		after     func(reg *prometheus.Registry) // between registration and Close
		script    func(promtest.Call) promtest.Fault
	}{
		{name: "a GaugeFunc", scope: plain},
		{name: "an unchecked collector", unchecked: true, scope: plain},
		{name: "a GaugeFunc in a labelled nested scope", scope: func(p prometheus.Registerer) *registry.Scope {
			return registry.NewScope(p, registry.WithPrefix("app_")).Child(registry.WithLabels(prometheus.Labels{"cluster": "east"}))
		}},
		{name: "a GaugeFunc somebody else replaced", scope: plain, after: func(reg *prometheus.Registry) {
			reg.Unregister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "cache_objects", Help: "Objects."}))
			reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "cache_objects", Help: "Objects."}))
		}},
		{name: "a GaugeFunc the parent refused to unregister", scope: plain, script: promtest.On("unregister", "cache_objects", -1, promtest.Refuse)},
	}
	for _, tt := range tests {
		t.Run("nothing keeps the component of "+tt.name+" reachable after Close", func(t *testing.T) {
			parent := promtest.NewParent(tt.script)
			scope := tt.scope(parent)
			wp := build(t, scope, tt.unchecked, nil)
			if _, err := parent.Reg.Gather(); err != nil {
				t.Fatal(err)
			}
			if tt.after != nil {
				tt.after(parent.Reg)
			}
			if promtest.Collected(wp) {
				t.Fatal("the component was collected while its metric was registered")
			}
			scope.Close()
			if !promtest.Collected(wp) {
				t.Error("the component is still reachable after Close")
			}
			runtime.KeepAlive(parent)
			runtime.KeepAlive(scope)
		})
	}

	t.Run("a scrape in flight during Close lets go of the component when it is done, and Close does not wait for it", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg)
		entered, proceed := make(chan struct{}), make(chan struct{})
		var once sync.Once
		wp := build(t, scope, true, func() { once.Do(func() { close(entered); <-proceed }) })
		gathered := make(chan error, 1)
		go func() {
			_, err := reg.Gather()
			gathered <- err
		}()
		<-entered
		if err := scope.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
		if wp.Value() == nil {
			t.Fatal("the component was collected while a scrape was reading it")
		}
		close(proceed)
		if err := <-gathered; err != nil {
			t.Errorf("the Gather in flight = %v", err)
		}
		if !promtest.Collected(wp) {
			t.Error("the component is still reachable after the scrape finished")
		}
		promtest.Expose(t, reg)
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
				nested := root.Child(registry.WithLabels(prometheus.Labels{"worker": label}))
				nested.DeleteOnClose(prometheus.Labels{"worker": label}, shared)
				for i := range 30 {
					g := promtest.Gauge(fmt.Sprintf("g_%d", i%5), float64(i))
					if err := nested.Register(g); err != nil && !errors.As(err, &prometheus.AlreadyRegisteredError{}) {
						t.Errorf("Register: %v", err)
					}
					shared.WithLabelValues(label).Set(float64(i))
					if _, err := root.Gather(); err != nil {
						t.Errorf("Gather: %v", err)
					}
					if _, err := reg.Gather(); err != nil {
						t.Errorf("the registry's Gather: %v", err)
					}
					_, _ = root.Len(), root.String()
					if i%3 == 0 {
						nested.Unregister(g)
					}
				}
				if w%2 == 0 {
					if err := nested.Close(); err != nil {
						t.Errorf("Close: %v", err)
					}
				}
			})
		}
		wg.Wait()
		if err := root.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		registrytest.VerifyNone(t, reg, "shared")
		promtest.Expose(t, reg)
	})
}

// The failing-constructor story: a cluster watcher registers two GaugeFuncs
// that read its cache, then connects to the cluster. While the cluster is
// unreachable the constructor fails and is retried. Without a scope, every
// retry after the first fails with "duplicate metrics collector registration
// attempted" and the first watcher's gauges stay behind, holding it.

// storyCache is the watcher's cache of cluster objects.
type storyCache struct {
	mu      sync.Mutex
	objects map[string]int // guarded by mu
}

func (c *storyCache) count() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return float64(len(c.objects))
}

func (c *storyCache) bytes() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
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

func TestFailingConstructorStory(t *testing.T) {
	t.Run("a constructor that fails 100 times leaves nothing behind, then comes up and reads its cache live", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		for try := 1; try <= 100; try++ {
			if _, _, err := newStoryWatcher(reg, func() error { return errStoryUnreachable }); !errors.Is(err, errStoryUnreachable) {
				t.Fatalf("try %d: %v, want the connection error", try, err)
			}
			registrytest.VerifyNone(t, reg)
		}
		cache, scope, err := newStoryWatcher(reg, func() error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		cache.objects["pod/a"], cache.objects["pod/b"] = 100, 20
		promtest.Expose(t, reg, `watcher_cache_bytes{cluster="east"} 120`, `watcher_cache_objects{cluster="east"} 2`)
		if err := scope.Close(); err != nil {
			t.Error(err)
		}
		registrytest.VerifyNone(t, reg)
	})
}
