package registry_test

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"weak"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
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
			for name, f := range map[string]func(){
				"Register":      func() { _ = s.Register(promtest.Gauge("jobs", 1)) },
				"MustRegister":  func() { s.MustRegister(promtest.Gauge("jobs", 1)) },
				"NewScope":      func() { s.Child() },
				"DeleteOnClose": func() { s.DeleteOnClose(prometheus.Labels{"a": "b"}, promtest.CounterVec("v", "a")) },
			} {
				want := "registry: " + strings.TrimPrefix(name, "Must") + " on a Scope that NewScope did not make"
				if msg, ok := promtest.Panic(f).(string); !ok || msg != want {
					t.Errorf("%s panicked with %#v", name, msg)
				}
			}
			if mfs, err := s.Gather(); s.Unregister(promtest.Gauge("jobs", 1)) || s.Len() != 0 || s.Close() != nil || len(mfs) != 0 || err != nil || s.String() != "" {
				t.Error("the scope is not empty")
			}
		})
	}
	t.Run("zero scope parent", func(t *testing.T) {
		want := "registry: NewScope on a Scope that NewScope did not make"
		if msg, _ := promtest.Panic(func() { registry.NewScope(&registry.Scope{}) }).(string); msg != want {
			t.Errorf("NewScope panicked with %q", msg)
		}
		if msg, _ := promtest.Panic(func() {
			registry.NewScope(prometheus.WrapRegistererWith(prometheus.Labels{"a": "b"}, &registry.Scope{}))
		}).(string); msg != "" {
			t.Errorf("NewScope on a wrapper of a zero scope panicked with %q", msg)
		}
	})

	// A Registerer of the user's own that forwards to a scope is a parent
	// like any other: the scopes made on it, with or without labels,
	// register through it and take back what they registered, again and
	// again, whatever the scope behind it adds.
	for _, opts := range [][]registry.Option{nil, {registry.WithLabels(prometheus.Labels{"p": "1"})}} {
		t.Run(fmt.Sprintf("forwarder, %d options", len(opts)), func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			program := registry.NewScope(reg, opts...)
			forwarder := promtest.NewParent(nil)
			forwarder.Next = program
			for round := range 3 {
				plain := registry.NewScope(forwarder)
				labelled := registry.NewScope(forwarder, registry.WithLabels(prometheus.Labels{"l": "1"}))
				plain.MustRegister(promtest.Gauge("jobs", 1))
				labelled.MustRegister(promtest.Gauge("tasks", 2))
				if got := program.Len(); got != 2 {
					t.Errorf("round %d: the program scope owns %d, want 2: the forwarded gauges", round, got)
				}
				if err := errors.Join(plain.Close(), labelled.Close()); err != nil {
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

func TestRegister(t *testing.T) {
	// Register passes the collector to the parent, which exposes it, and
	// the scope counts it.
	t.Run("registers", func(t *testing.T) {
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

	// An AlreadyRegisteredError names the collector that its owner
	// registered, whoever holds the identity, and the one just passed.
	for _, tt := range []struct {
		name string
		give func(reg *prometheus.Registry, existing prometheus.Collector) *registry.Scope
	}{
		{name: "same scope", give: func(reg *prometheus.Registry, existing prometheus.Collector) *registry.Scope {
			s := registry.NewScope(reg)
			s.MustRegister(existing)
			return s
		}},
		{name: "registry", give: func(reg *prometheus.Registry, existing prometheus.Collector) *registry.Scope {
			reg.MustRegister(existing)
			return registry.NewScope(reg)
		}},
		{name: "another scope", give: func(reg *prometheus.Registry, existing prometheus.Collector) *registry.Scope {
			registry.NewScope(reg).MustRegister(existing)
			return registry.NewScope(reg)
		}},
		{name: "scope three levels deep", give: func(reg *prometheus.Registry, existing prometheus.Collector) *registry.Scope {
			inner := registry.NewScope(registry.NewScope(registry.NewScope(reg), registry.WithPrefix("app_")))
			inner.MustRegister(existing)
			return inner
		}},
		{name: "sibling with the same labels", give: func(reg *prometheus.Registry, existing prometheus.Collector) *registry.Scope {
			outer, labels := registry.NewScope(reg), registry.WithLabels(prometheus.Labels{"cluster": "east"})
			registry.NewScope(outer, labels).MustRegister(existing)
			return registry.NewScope(outer, labels)
		}},
		{name: "sibling through a wrapper", give: func(reg *prometheus.Registry, existing prometheus.Collector) *registry.Scope {
			outer, labels := registry.NewScope(reg), prometheus.Labels{"cluster": "east"}
			registry.NewScope(prometheus.WrapRegistererWith(labels, outer)).MustRegister(existing)
			return outer.Child(registry.WithLabels(labels))
		}},
	} {
		t.Run("duplicate held by "+tt.name, func(t *testing.T) {
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

	// client_golang's reuse idiom, on an AlreadyRegisteredError use the
	// vector already there, gets the first vector back through every
	// shape of scopes and wrappers.
	reuse := func(reg prometheus.Registerer, cv *prometheus.CounterVec) (*prometheus.CounterVec, error) {
		if err := reg.Register(cv); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, err
			}
			existing, ok := are.ExistingCollector.(*prometheus.CounterVec)
			if !ok {
				return nil, fmt.Errorf("ExistingCollector is a %T", are.ExistingCollector)
			}
			return existing, nil
		}
		return cv, nil
	}
	labels := prometheus.Labels{"lib": "cache"}
	for _, sh := range []struct {
		name string
		give func(reg *prometheus.Registry) (first, second prometheus.Registerer)
	}{
		{name: "registry", give: func(reg *prometheus.Registry) (_, _ prometheus.Registerer) { return reg, reg }},
		{name: "scope", give: func(reg *prometheus.Registry) (_, _ prometheus.Registerer) {
			s := registry.NewScope(reg)
			return s, s
		}},
		{name: "labelled scope in a prefixed one", give: func(reg *prometheus.Registry) (_, _ prometheus.Registerer) {
			s := registry.NewScope(registry.NewScope(reg, registry.WithPrefix("p_")), registry.WithLabels(labels))
			return s, s
		}},
		{name: "wrapper of a scope", give: func(reg *prometheus.Registry) (_, _ prometheus.Registerer) {
			w := prometheus.WrapRegistererWith(labels, registry.NewScope(reg))
			return w, w
		}},
		{name: "scope on a wrapper of a scope", give: func(reg *prometheus.Registry) (_, _ prometheus.Registerer) {
			s := registry.NewScope(prometheus.WrapRegistererWith(labels, registry.NewScope(reg)))
			return s, s
		}},
		{name: "outsider after an unlabelled scope", give: func(reg *prometheus.Registry) (_, _ prometheus.Registerer) {
			return registry.NewScope(reg), reg
		}},
		{name: "outsider after a scope on a wrapper", give: func(reg *prometheus.Registry) (_, _ prometheus.Registerer) {
			return registry.NewScope(prometheus.WrapRegistererWith(labels, reg)), prometheus.WrapRegistererWith(labels, reg)
		}},
	} {
		t.Run("reuse idiom through "+sh.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			r1, r2 := sh.give(reg)
			first := promtest.CounterVec("hits_total", "code")
			if got, err := reuse(r1, first); err != nil || got != first {
				t.Fatalf("first registration = %p, %v", got, err)
			}
			got, err := reuse(r2, promtest.CounterVec("hits_total", "code"))
			if err != nil || got != first {
				t.Errorf("second registration = %p, %v; want the first vector %p", got, err, first)
			}
		})
	}

	// Code registering straight on the registry that collides with a
	// labelled scope's registration meets the scope's collector, which
	// prints as the metric and the scope, and unwraps to the user's
	// collector until the scope takes it back.
	t.Run("outsider meets a labelled scope", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg, registry.WithName("watcher"), registry.WithPrefix("w_"))
		mine := promtest.Gauge("jobs", 1)
		scope.MustRegister(mine)
		var are prometheus.AlreadyRegisteredError
		if !errors.As(reg.Register(prometheus.NewGauge(prometheus.GaugeOpts{Name: "w_jobs", Help: promtest.Help("jobs")})), &are) {
			t.Fatal("the registry accepted an equal gauge")
		}
		if got := fmt.Sprint(are.ExistingCollector); got != "registry: w_jobs, registered through promscope scope watcher prefix=\"w_\"" {
			t.Errorf("ExistingCollector prints as %q", got)
		}
		u, ok := are.ExistingCollector.(interface{ Unwrap() prometheus.Collector })
		if !ok || u.Unwrap() != prometheus.Collector(mine) {
			t.Fatalf("ExistingCollector (%T) does not unwrap to the scope's gauge", are.ExistingCollector)
		}
		scope.Close()
		if u.Unwrap() != nil || fmt.Sprint(are.ExistingCollector) != "registry: w_jobs, registered through a promscope scope" {
			t.Error("after Close, the registration still unwraps to the gauge, or names the scope")
		}
	})

	// A scope's MustRegister that collides panics with an error naming the
	// scope that holds the metric, or saying no scope of the tree holds
	// it, which errors.As still finds an AlreadyRegisteredError in.
	t.Run("MustRegister names the holder", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		program := registry.NewScope(reg, registry.WithName("mirror"))
		jobs := promtest.Gauge("jobs", 1)
		program.Child(registry.WithName("west")).MustRegister(jobs)
		program.Child(registry.WithName("pre"), registry.WithPrefix("p_")).MustRegister(jobs)
		prometheus.WrapRegistererWithPrefix("w_", program.Child(registry.WithName("wrapped"))).MustRegister(promtest.Gauge("jobs", 1))
		program.Child().MustRegister(promtest.Gauge("anon", 1))
		reg.MustRegister(promtest.Gauge("direct", 1))
		for _, tt := range []struct {
			give, want string
			opts       []registry.Option
		}{
			{give: "jobs", want: "registry: jobs is already registered by scope mirror/west: duplicate metrics collector registration attempted"},
			{give: "jobs", opts: []registry.Option{registry.WithPrefix("p_")},
				want: "registry: p_jobs is already registered by scope mirror/pre prefix=\"p_\": duplicate metrics collector registration attempted"},
			{give: "jobs", opts: []registry.Option{registry.WithPrefix("w_")},
				want: "registry: w_jobs is already registered by scope mirror/wrapped: duplicate metrics collector registration attempted"},
			{give: "anon", want: "registry: anon is already registered by scope mirror: duplicate metrics collector registration attempted"},
			{give: "direct", want: "registry: direct is already registered outside this scope's tree: duplicate metrics collector registration attempted"},
		} {
			err, _ := promtest.Panic(func() {
				program.Child(append(tt.opts, registry.WithName("east"))...).MustRegister(promtest.Gauge(tt.give, 2))
			}).(error)
			var are prometheus.AlreadyRegisteredError
			if err == nil || err.Error() != tt.want || !errors.As(err, &are) {
				t.Errorf("MustRegister(%s) panicked with %v, want %q wrapping an AlreadyRegisteredError", tt.give, err, tt.want)
			}
		}
		if err := registry.NewScope(reg).Register(promtest.Gauge("jobs", 2)); !errors.As(err, new(prometheus.AlreadyRegisteredError)) || err.Error() != "duplicate metrics collector registration attempted" {
			t.Errorf("Register = %v, want client_golang's own error", err)
		}
		unnamed := registry.NewScope(reg)
		unnamed.MustRegister(promtest.Gauge("plain", 1))
		want := "registry: plain is already registered by a scope with no name, labels or prefix: duplicate metrics collector registration attempted"
		if err, _ := promtest.Panic(func() { unnamed.Child().MustRegister(promtest.Gauge("plain", 2)) }).(error); err == nil || err.Error() != want {
			t.Errorf("MustRegister panicked with %v, want %q", err, want)
		}
	})

	// The parent's own errors come back unchanged; nothing is tracked and
	// nothing of a bystander's is lost.
	for _, tt := range []struct {
		name string
		opts []registry.Option
		give func() prometheus.Collector
		// through wraps a registry as the scope's view does.
		through func(reg prometheus.Registerer) prometheus.Registerer
	}{
		{name: "invalid name", give: func() prometheus.Collector { return promtest.Gauge("bad\xffname", 1) }},
		{name: "prefix making the name invalid", opts: []registry.Option{registry.WithPrefix("\xff_")},
			give: func() prometheus.Collector { return promtest.Gauge("jobs", 1) },
			through: func(reg prometheus.Registerer) prometheus.Registerer {
				return prometheus.WrapRegistererWithPrefix("\xff_", reg)
			}},
		{name: "empty label name", opts: []registry.Option{registry.WithLabels(prometheus.Labels{"": "x"})},
			give: func() prometheus.Collector { return promtest.Gauge("jobs", 1) },
			through: func(reg prometheus.Registerer) prometheus.Registerer {
				return prometheus.WrapRegistererWith(prometheus.Labels{"": "x"}, reg)
			}},
		{name: "scope label the collector has", opts: []registry.Option{registry.WithLabels(prometheus.Labels{"zone": "a"})},
			give: func() prometheus.Collector {
				return prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobs", Help: "h", ConstLabels: prometheus.Labels{"zone": "b"}})
			},
			through: func(reg prometheus.Registerer) prometheus.Registerer {
				return prometheus.WrapRegistererWith(prometheus.Labels{"zone": "a"}, reg)
			}},
		{name: "other help than a bystander's", give: func() prometheus.Collector {
			return prometheus.NewGauge(prometheus.GaugeOpts{Name: "other", Help: "Different.", ConstLabels: prometheus.Labels{"k": "v"}})
		}},
		{name: "other label names than a bystander's", give: func() prometheus.Collector {
			return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "shared", Help: "Another owner's vector."}, []string{"region"})
		}},
		{name: "two help strings in one collector", give: func() prometheus.Collector {
			return promtest.Gauges{
				prometheus.NewGauge(prometheus.GaugeOpts{Name: "pair", Help: "One.", ConstLabels: prometheus.Labels{"n": "1"}}),
				prometheus.NewGauge(prometheus.GaugeOpts{Name: "pair", Help: "Two.", ConstLabels: prometheus.Labels{"n": "2"}}),
			}
		}},
	} {
		t.Run("registry error: "+tt.name, func(t *testing.T) {
			plain := prometheus.NewPedanticRegistry()
			promtest.NewBystander(plain)
			var through prometheus.Registerer = plain
			if tt.through != nil {
				through = tt.through(plain)
			}
			want := through.Register(tt.give())

			reg := prometheus.NewPedanticRegistry()
			bystander := promtest.NewBystander(reg)
			scope := registry.NewScope(reg, tt.opts...)
			if err := scope.Register(tt.give()); err == nil || want == nil || err.Error() != want.Error() {
				t.Errorf("Register = %v, want the registry's own %v", err, want)
			}
			if got := scope.Len(); got != 0 {
				t.Errorf("Len() = %d, want 0", got)
			}
			promtest.Expose(t, reg, bystander.Series()...)
		})
	}

	// A nil collector, or an interface holding a nil, gives
	// ErrNilCollector without touching the parent; MustRegister panics
	// with it.
	for _, tt := range []struct {
		name string
		give prometheus.Collector
	}{
		{name: "nil"},
		{name: "typed-nil vector", give: (*prometheus.GaugeVec)(nil)},
		{name: "typed-nil custom collector", give: (*promtest.Unchecked)(nil)},
		{name: "nil slice collector", give: promtest.Gauges(nil)},
	} {
		t.Run("ErrNilCollector for "+tt.name, func(t *testing.T) {
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

	// MustRegister keeps what it registered before the collector that
	// failed.
	t.Run("MustRegister keeps earlier ones", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg)
		v := promtest.Panic(func() { scope.MustRegister(promtest.Gauge("jobs", 3), nil, promtest.Gauge("never", 1)) })
		if err, _ := v.(error); !errors.Is(err, registry.ErrNilCollector) {
			t.Fatalf("MustRegister panicked with %v, want ErrNilCollector", v)
		}
		promtest.Expose(t, reg, "jobs{} 3")
	})

	// promauto.With(scope) registers through the scope, and the metric it
	// returns is the user's own.
	t.Run("promauto", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg, registry.WithLabels(prometheus.Labels{"cluster": "east"}))
		g := promauto.With(scope).NewGauge(prometheus.GaugeOpts{Name: "jobs", Help: "h"})
		g.Set(5)
		promtest.Expose(t, reg, `jobs{cluster="east"} 5`)
		if !scope.Unregister(g) {
			t.Error("Unregister(g) = false")
		}
		registrytest.VerifyNone(t, reg)
	})

	// A collector registered through client_golang's wrappers of a scope,
	// however deeply stacked, is the scope's: it is exposed with the
	// wrappers' prefix and labels, Unregister through wrappers that add the
	// same in all takes it back, and so does Close; checked, unchecked and
	// values.
	for _, tt := range []struct {
		name string
		give func() prometheus.Collector
		want string
	}{
		{name: "gauge", give: func() prometheus.Collector { return promtest.Gauge("jobs", 1) }, want: `a_b_jobs{x="1",y="2"} 1`},
		{name: "unchecked", give: func() prometheus.Collector { return &promtest.Unchecked{Name: "u", Value: 2} }, want: `a_b_u{x="1",y="2"} 2`},
		{name: "value", give: func() prometheus.Collector { return promtest.Gauges{promtest.Gauge("pair", 3)} }, want: `a_b_pair{x="1",y="2"} 3`},
	} {
		t.Run("through stacked wrappers: "+tt.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			scope := registry.NewScope(reg)
			w := prometheus.WrapRegistererWithPrefix("b_", prometheus.WrapRegistererWith(prometheus.Labels{"y": "2"},
				prometheus.WrapRegistererWithPrefix("a_", prometheus.WrapRegistererWith(prometheus.Labels{"x": "1"}, scope))))
			c := tt.give()
			w.MustRegister(c)
			promtest.Expose(t, reg, tt.want)
			// The same prefixes and labels, stacked otherwise.
			other := prometheus.WrapRegistererWithPrefix("b_", prometheus.WrapRegistererWithPrefix("a_",
				prometheus.WrapRegistererWith(prometheus.Labels{"x": "1", "y": "2"}, prometheus.WrapRegistererWith(nil, scope))))
			if !other.Unregister(c) || scope.Len() != 0 {
				t.Errorf("Unregister through the wrappers = false, or Len() = %d", scope.Len())
			}
			promtest.Expose(t, reg)
			w.MustRegister(c)
			if err := scope.Close(); err != nil {
				t.Error(err)
			}
			registrytest.VerifyNone(t, reg)
		})
	}

	// A parent that fails a registration, or says a stranger holds it, is
	// answered as it said: nothing is recorded.
	stranger := collectors.NewBuildInfoCollector()
	for _, tt := range []struct {
		name  string
		fault promtest.Fault
		want  func(err error) bool
	}{
		{name: "fails", fault: promtest.Fail, want: func(err error) bool { return errors.Is(err, promtest.ErrInjected) }},
		{name: "claims", fault: promtest.Claim, want: func(err error) bool {
			var are prometheus.AlreadyRegisteredError
			return errors.As(err, &are) && are.ExistingCollector == stranger
		}},
	} {
		t.Run("parent "+tt.name, func(t *testing.T) {
			p := promtest.NewParent(promtest.On("register", "jobs", 0, tt.fault))
			p.Stranger = stranger
			scope := registry.NewScope(p)
			if err := scope.Register(promtest.Gauge("jobs", 1)); !tt.want(err) {
				t.Errorf("Register = %v", err)
			}
			if scope.Len() != 0 {
				t.Errorf("Len() = %d", scope.Len())
			}
			promtest.Expose(t, p.Reg)
		})
	}

	// After a parent refused to let go of a labelled scope's
	// registration, an equal registration gets an AlreadyRegisteredError
	// that names no collector, not the silenced registration; the same
	// when the holder is a question that another scope's Close is asking.
	t.Run("holder taken back", func(t *testing.T) {
		labels := registry.WithLabels(prometheus.Labels{"c": "1"})
		p := promtest.NewParent(promtest.On("unregister", "jobs", -1, promtest.Refuse))
		old := registry.NewScope(p, labels)
		old.MustRegister(promtest.Gauge("jobs", 1))
		if err := old.Close(); !errors.Is(err, registry.ErrNotRegistered) {
			t.Errorf("Close = %v", err)
		}
		var are prometheus.AlreadyRegisteredError
		if err := registry.NewScope(p, labels).Register(promtest.Gauge("jobs", 2)); !errors.As(err, &are) || are.ExistingCollector != nil {
			t.Errorf("Register = %v, naming %v, want an AlreadyRegisteredError naming nothing", err, are.ExistingCollector)
		}

		p = promtest.NewParent(promtest.On("unregister", "jobs", 0, promtest.Block))
		asking := registry.NewScope(p)
		asking.MustRegister(promtest.Gauge("jobs", 1))
		p.Reg.Unregister(promtest.Gauge("jobs", 0))
		closed := make(chan error, 1)
		go func() { closed <- asking.Close() }() // its question holds the identity until Release
		<-p.Entered
		if err := registry.NewScope(p).Register(promtest.Gauge("jobs", 2)); !errors.As(err, &are) || are.ExistingCollector != nil {
			t.Errorf("Register = %v, naming %v, want an AlreadyRegisteredError naming nothing", err, are.ExistingCollector)
		}
		p.Release()
		if err := <-closed; !errors.Is(err, registry.ErrNotRegistered) {
			t.Errorf("Close = %v, want a report of what somebody else unregistered", err)
		}
	})

	// A parent that names a client_golang wrapper as the holder has the
	// error name what the wrapper wraps; a parent that refuses the hub of
	// unchecked collectors has Register return its error.
	t.Run("parent names a wrapper", func(t *testing.T) {
		theirs := promtest.Gauge("jobs", 1)
		p := promtest.NewParent(promtest.On("register", "jobs", -1, promtest.Claim))
		p.Stranger = promtest.Wrapped(prometheus.Labels{"w": "1"}, "x_", theirs)
		var are prometheus.AlreadyRegisteredError
		if err := registry.NewScope(p).Register(promtest.Gauge("jobs", 2)); !errors.As(err, &are) || are.ExistingCollector != prometheus.Collector(theirs) {
			t.Errorf("Register = %v, naming %v", err, are.ExistingCollector)
		}
		// A wrapper of an unchecked collector cannot be looked into: it is
		// named as it is.
		p.Stranger = promtest.Wrapped(nil, "x_", &promtest.Unchecked{Name: "u"})
		if err := registry.NewScope(p).Register(promtest.Gauge("jobs", 2)); !errors.As(err, &are) || are.ExistingCollector != p.Stranger {
			t.Errorf("Register = %v, naming %v", err, are.ExistingCollector)
		}
		p = promtest.NewParent(promtest.On("register", "", 0, promtest.Fail))
		scope := registry.NewScope(p)
		if err := scope.Register(&promtest.Unchecked{Name: "u", Value: 1}); !errors.Is(err, promtest.ErrInjected) || scope.Len() != 0 {
			t.Errorf("Register = %v, Len %d", err, scope.Len())
		}
		if err := scope.Register(&promtest.Unchecked{Name: "u", Value: 1}); err != nil {
			t.Errorf("Register again = %v", err)
		}
		promtest.Expose(t, p.Reg, "u{} 1")
	})

	// A collector of the user's whose metric is named like the probe that
	// finds a scope behind wrappers is registered like any other.
	t.Run("named like the probe", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg)
		w := prometheus.WrapRegistererWith(prometheus.Labels{"w": "1"}, scope)
		w.MustRegister(promtest.Gauge("x_promscope_scope_probe", 1),
			promtest.Gauges{promtest.Gauge("promscope_scope_probe", 2), promtest.Gauge("y_promscope_scope_probe", 3)})
		promtest.Expose(t, reg, `promscope_scope_probe{w="1"} 2`, `x_promscope_scope_probe{w="1"} 1`, `y_promscope_scope_probe{w="1"} 3`)
		if got := scope.Len(); got != 2 {
			t.Errorf("Len() = %d, want 2", got)
		}
	})

	// When the parent names, as the holder, a registration that another
	// scope took back after the parent answered, Register asks once more:
	// the identity is free by then.
	t.Run("holder on its way out", func(t *testing.T) {
		labels := registry.WithLabels(prometheus.Labels{"c": "1"})
		p := promtest.NewParent(promtest.On("register", "jobs", 1, promtest.BlockAfter))
		old := registry.NewScope(p, labels)
		old.MustRegister(promtest.Gauge("jobs", 1))
		again := make(chan error)
		go func() { again <- registry.NewScope(p, labels).Register(promtest.Gauge("jobs", 2)) }()
		<-p.Entered // the registry has named the old scope's gauge
		if err := old.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
		p.Release()
		if err := <-again; err != nil {
			t.Errorf("Register = %v", err)
		}
		promtest.Expose(t, p.Reg, `jobs{c="1"} 2`)
	})
}

func TestUnregister(t *testing.T) {
	// Unregister removes the same collector, or an equal one, with or
	// without a view, and the identity is free again.
	for _, opts := range [][]registry.Option{nil, {registry.WithPrefix("app_"), registry.WithLabels(prometheus.Labels{"cluster": "east"})}} {
		t.Run(fmt.Sprintf("same or equal, %d options", len(opts)), func(t *testing.T) {
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
		})
	}

	// A scope finds a collector as client_golang does: by the same
	// collector, or by identity, whatever help strings and variable
	// labels; each row is first checked against a plain registry.
	for _, tt := range []struct {
		name     string
		register prometheus.Collector
		give     prometheus.Collector // nil: the registered one
		want     bool
	}{
		{name: "same gauge", register: promtest.Gauge("jobs", 1), want: true},
		{name: "other help", register: promtest.Gauge("jobs", 1),
			give: prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobs", Help: "Something else."}), want: true},
		{name: "other variable labels", register: promtest.CounterVec("requests_total", "code"),
			give: promtest.CounterVec("requests_total", "path", "method"), want: true},
		{name: "other constant label values",
			register: prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobs", Help: "h", ConstLabels: prometheus.Labels{"q": "a"}}),
			give:     prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobs", Help: "h", ConstLabels: prometheus.Labels{"q": "b"}})},
		{name: "other name", register: promtest.Gauge("jobs", 1), give: promtest.Gauge("jobs_total", 1)},
		{name: "value with unhashable content", register: holder{inner: promtest.Gauges{promtest.Gauge("a", 1), promtest.Gauge("b", 2)}}, want: true},
		{name: "shared descriptor objects", register: sharing{shared}, give: sharing{shared}, want: true},
		{name: "another type, same name", register: promtest.Gauge("jobs", 1),
			give: prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "jobs", Help: "h"}, func() float64 { return 1 }), want: true},
		{name: "value of an uncomparable type", register: promtest.Gauges{promtest.Gauge("a", 1)}, want: true},
	} {
		t.Run("as client_golang: "+tt.name, func(t *testing.T) {
			give := tt.give
			if give == nil {
				give = tt.register
			}
			plain := prometheus.NewRegistry()
			plain.MustRegister(tt.register)
			if got := plain.Unregister(give); got != tt.want {
				t.Fatalf("the test is wrong: a registry's Unregister = %v, want %v", got, tt.want)
			}
			reg := prometheus.NewPedanticRegistry()
			scope := registry.NewScope(reg)
			scope.MustRegister(tt.register)
			if got := scope.Unregister(give); got != tt.want {
				t.Errorf("Unregister = %v, want %v", got, tt.want)
			}
			if tt.want {
				registrytest.VerifyNone(t, reg)
				if err := scope.Register(tt.register); err != nil {
					t.Errorf("Register again = %v", err)
				}
			}
		})
	}

	// An unchecked collector is found only as the same collector: equal
	// values field by field, maps entry by entry, functions never.
	base := valued{n: 1, arr: [2]string{"a", "b"}, m: map[string]int{"x": 1}, inner: 2, sl: []int{1, 2}}
	for _, tt := range []struct {
		name string
		give func(v valued) valued
		want bool
	}{
		{name: "equal map", give: func(v valued) valued { v.m = map[string]int{"x": 1}; return v }, want: true},
		{name: "other number", give: func(v valued) valued { v.n = 2; return v }},
		{name: "other array element", give: func(v valued) valued { v.arr[1] = "c"; return v }},
		{name: "other map value", give: func(v valued) valued { v.m = map[string]int{"x": 2}; return v }},
		{name: "other map key", give: func(v valued) valued { v.m = map[string]int{"y": 1}; return v }},
		{name: "longer map", give: func(v valued) valued { v.m = map[string]int{"x": 1, "y": 2}; return v }},
		{name: "nil interface field", give: func(v valued) valued { v.inner = nil; return v }},
		{name: "function", give: func(v valued) valued { v.f = func() {}; return v }},
		{name: "other pointer inside", give: func(v valued) valued { v.inner = &promtest.Unchecked{}; return v }},
		{name: "equal slice", give: func(v valued) valued { v.sl = []int{1, 2}; return v }, want: true},
		{name: "other slice element", give: func(v valued) valued { v.sl = []int{1, 3}; return v }},
	} {
		t.Run("unchecked value: "+tt.name, func(t *testing.T) {
			scope := registry.NewScope(nil)
			scope.MustRegister(base)
			if got := scope.Unregister(tt.give(base)); got != tt.want {
				t.Errorf("Unregister = %v", got)
			}
			if got, want := scope.Len(), map[bool]int{false: 1}[tt.want]; got != want {
				t.Errorf("Len() = %d, want %d", got, want)
			}
		})
	}

	// Unregister returns false and removes nothing for a collector the
	// scope does not own: one on the registry, another scope's, one of a
	// nested scope, or nil.
	t.Run("not owned", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		direct, theirs, nested := promtest.Gauge("direct", 1), promtest.Gauge("theirs", 2), promtest.Gauge("nested", 3)
		reg.MustRegister(direct)
		registry.NewScope(reg).MustRegister(theirs)
		scope := registry.NewScope(reg)
		scope.Child().MustRegister(nested)
		for _, c := range []prometheus.Collector{direct, promtest.Gauge("direct", 0), theirs, promtest.Gauge("theirs", 0), nested, nil} {
			if scope.Unregister(c) {
				t.Errorf("Unregister(%v) = true", c)
			}
		}
		promtest.Expose(t, reg, "direct{} 1", "nested{} 3", "theirs{} 2")
	})

	// When somebody else replaced the scope's registration with an equal
	// collector of their own, Unregister leaves theirs, forgets its own,
	// and returns false; with or without a view.
	for _, opts := range [][]registry.Option{nil, {registry.WithLabels(prometheus.Labels{"c": "1"})}} {
		t.Run(fmt.Sprintf("replaced, %d options", len(opts)), func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			scope := registry.NewScope(reg, opts...)
			ours := promtest.Gauge("jobs", 1)
			scope.MustRegister(ours)
			outsider := prometheus.WrapRegistererWith(prometheus.Labels(nil), reg)
			if opts != nil {
				outsider = prometheus.WrapRegistererWith(prometheus.Labels{"c": "1"}, reg)
			}
			outsider.Unregister(promtest.Gauge("jobs", 0)) // by identity: removes the scope's registration
			outsider.MustRegister(promtest.Gauge("jobs", 3))
			if scope.Unregister(ours) {
				t.Error("Unregister = true")
			}
			promtest.Expose(t, reg, strings.Replace("jobs{} 3", "{}", map[bool]string{false: "{}", true: `{c="1"}`}[opts != nil], 1))
			if got := scope.Len(); got != 0 {
				t.Errorf("Len() = %d, want 0", got)
			}
		})
	}

	// A collector registered again after an outsider removed it leaves
	// the scope two records of one registration; Unregister takes both,
	// and Close has nothing stale to report.
	t.Run("stale record", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg)
		g := promtest.Gauge("jobs", 1)
		scope.MustRegister(g, promtest.Gauge("other", 2))
		reg.Unregister(g)
		scope.MustRegister(g)
		if got := scope.Len(); got != 3 {
			t.Fatalf("Len() = %d, want 3", got)
		}
		if !scope.Unregister(g) {
			t.Error("Unregister = false")
		}
		if got := scope.Len(); got != 1 {
			t.Errorf("Len() = %d, want 1: other", got)
		}
		if err := scope.Close(); err != nil {
			t.Errorf("Close = %v, want nil", err)
		}
		registrytest.VerifyNone(t, reg)
	})

	// Two Registers of one labelled gauge race an outsider's Unregister:
	// the first is in the registry but not yet recorded when the outsider
	// removes it and the second registers, so the scope records the live
	// registration before the stale one. Unregister says true.
	t.Run("live record older than a stale one", func(t *testing.T) {
		parent := promtest.NewParent(promtest.On("register", "jobs", 0, promtest.BlockAfter))
		scope := registry.NewScope(parent, registry.WithLabels(prometheus.Labels{"c": "1"}))
		g := promtest.Gauge("jobs", 1)
		first := make(chan error)
		go func() { first <- scope.Register(g) }()
		<-parent.Entered
		prometheus.WrapRegistererWith(prometheus.Labels{"c": "1"}, parent.Reg).Unregister(promtest.Gauge("jobs", 0))
		if err := scope.Register(g); err != nil {
			t.Fatalf("second Register = %v", err)
		}
		parent.Release()
		if err := <-first; err != nil {
			t.Fatalf("first Register = %v", err)
		}
		promtest.Expose(t, parent.Reg, `jobs{c="1"} 1`)
		if !scope.Unregister(g) {
			t.Error("Unregister = false, want true: it removed the scope's gauge")
		}
		if got := scope.Len(); got != 0 {
			t.Errorf("Len() = %d, want 0", got)
		}
		registrytest.VerifyNone(t, parent.Reg)
	})

	// The same collector comes first: a collector whose Describe has
	// changed is found as itself, not as the one its descriptors now
	// name.
	t.Run("same collector first", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg)
		x := &shifty{names: []string{"a"}}
		scope.MustRegister(x, promtest.Gauge("b", 2))
		x.names = []string{"b"}
		if !scope.Unregister(x) {
			t.Error("Unregister = false")
		}
		promtest.Expose(t, reg, "b{} 2")
		if err := reg.Register(promtest.Gauge("a", 1)); err != nil {
			t.Errorf("a is still held: %v", err)
		}
	})

	// An Unregister runs alone on its scope: a second Unregister and a
	// Register of the same collector wait for it, then find nothing to
	// take and register anew.
	t.Run("racing Unregister and Register", func(t *testing.T) {
		p := promtest.NewParent(promtest.On("unregister", "jobs", 0, promtest.BlockAfter))
		scope := registry.NewScope(p)
		g := promtest.Gauge("jobs", 1)
		scope.MustRegister(g)
		first, second := make(chan bool), make(chan bool)
		go func() { first <- scope.Unregister(g) }()
		<-p.Entered // removed, not yet returned
		go func() { second <- scope.Unregister(g) }()
		registered := make(chan error)
		go func() { registered <- scope.Register(g) }()
		p.Release()
		if !<-first {
			t.Error("the first Unregister = false")
		}
		if err := <-registered; err != nil {
			t.Fatalf("Register = %v", err)
		}
		// Both orders of the other two are right: the second Unregister
		// comes first and finds nothing, or takes the new registration
		// back. Either way the scope records what the registry holds.
		want := []string{"jobs{} 1"}
		if <-second {
			want = nil
		}
		promtest.Expose(t, p.Reg, want...)
		if got := scope.Len(); got != len(want) {
			t.Errorf("Len() = %d, want %d", got, len(want))
		}
		if err := scope.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
		registrytest.VerifyNone(t, p.Reg)
	})

	// A parent that panics while Unregister takes a registration back lets
	// the panic go on; the scope still records it, and Close takes it back.
	t.Run("parent panics", func(t *testing.T) {
		p := promtest.NewParent(promtest.On("unregister", "jobs", 0, promtest.Panicking))
		scope := registry.NewScope(p)
		g := promtest.Gauge("jobs", 1)
		scope.MustRegister(g)
		if v, _ := promtest.Panic(func() { scope.Unregister(g) }).(error); !errors.Is(v, promtest.ErrInjected) {
			t.Fatalf("Unregister panicked with %v", v)
		}
		if got := scope.Len(); got != 1 {
			t.Errorf("Len() = %d, want 1", got)
		}
		if err := scope.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
		registrytest.VerifyNone(t, p.Reg)
	})

	// Unregister returns false, and touches nothing, once Close has begun.
	t.Run("closed", func(t *testing.T) {
		parent := promtest.NewParent(nil)
		scope := registry.NewScope(parent)
		nested := scope.Child()
		g := promtest.Gauge("jobs", 1)
		nested.MustRegister(g)
		scope.Close()
		before := len(parent.Log())
		if nested.Unregister(g) || scope.Unregister(g) || len(parent.Log()) != before {
			t.Error("Unregister after Close = true, or the parent was called")
		}
	})
}

func TestClose(t *testing.T) {
	// Close undoes everything newest first, as deferred calls run:
	// registrations, nested scopes and DeleteOnClose in one order.
	t.Run("newest first", func(t *testing.T) {
		parent := promtest.NewParent(nil)
		shared := promtest.CounterVec("shared", "tenant")
		shared.WithLabelValues("acme").Inc()
		parent.MustRegister(shared)
		scope := registry.NewScope(parent)
		scope.MustRegister(promtest.Gauge("a", 1))
		registry.NewScope(scope, registry.WithPrefix("first_")).MustRegister(promtest.Gauge("x", 1))
		scope.DeleteOnClose(prometheus.Labels{"tenant": "acme"}, deleteLogger{shared, parent})
		scope.MustRegister(promtest.Gauge("b", 1))
		registry.NewScope(scope, registry.WithPrefix("second_")).MustRegister(promtest.Gauge("x", 1), promtest.Gauge("y", 1))
		before := len(parent.Log())
		if err := scope.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		var got []string
		for _, l := range parent.Log()[before:] {
			if op, _, _ := strings.Cut(l, ":"); !strings.HasPrefix(op, "register") {
				got = append(got, op)
			}
		}
		want := []string{"unregister second_y", "unregister second_x", "unregister b", "delete tenant=acme", "unregister first_x", "unregister a"}
		if !slices.Equal(got, want) {
			t.Errorf("Close did %q, want %q", got, want)
		}
		registrytest.VerifyNone(t, parent.Reg, "shared")
	})

	// Close is best effort: it names the scope and the metrics of each
	// collector it could not take back, and goes on with the rest.
	t.Run("best effort", func(t *testing.T) {
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
	})

	// A second Close, and Close on a nil scope, return nil and call
	// nothing.
	t.Run("twice", func(t *testing.T) {
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

	// After Close, Register says ErrClosed in the scope, in scopes nested
	// in it and in scopes made on it or on a wrapper of it, and the rest
	// answers empty without calling the parent.
	t.Run("after", func(t *testing.T) {
		parent := promtest.NewParent(nil)
		scope := registry.NewScope(parent)
		g := promtest.Gauge("mine", 1)
		scope.MustRegister(g)
		nested := registry.NewScope(scope)
		scope.Close()
		before := len(parent.Log())
		for _, s := range []*registry.Scope{scope, nested, registry.NewScope(scope), scope.Child(),
			registry.NewScope(prometheus.WrapRegistererWith(prometheus.Labels{"a": "b"}, scope))} {
			if err := s.Register(promtest.Gauge("late", 1)); !errors.Is(err, registry.ErrClosed) {
				t.Errorf("Register = %v, want ErrClosed", err)
			}
			if err, _ := promtest.Panic(func() { s.MustRegister(promtest.Gauge("late", 1)) }).(error); !errors.Is(err, registry.ErrClosed) {
				t.Errorf("MustRegister panicked with %v", err)
			}
		}
		if err := prometheus.WrapRegistererWith(prometheus.Labels{"a": "b"}, scope).Register(promtest.Gauge("late", 1)); !errors.Is(err, registry.ErrClosed) {
			t.Errorf("Register through a wrapper = %v, want ErrClosed", err)
		}
		mfs, err := scope.Gather()
		if scope.Unregister(g) || scope.Len() != 0 || len(mfs) != 0 || err != nil || len(parent.Log()) != before {
			t.Errorf("after Close: Unregister true, Len %d, Gather %d families %v, or the parent was called", scope.Len(), len(mfs), err)
		}
	})

	// Close leaves an outsider's equal collector, put in place of the
	// scope's, and reports it; with or without a view, however the
	// outsider got it there.
	for _, tt := range []struct {
		name string
		opts []registry.Option
		swap func(reg *prometheus.Registry)
		want string
	}{
		{name: "replaced", swap: func(reg *prometheus.Registry) {
			reg.Unregister(promtest.Gauge("b", 0))
			reg.MustRegister(promtest.Gauge("b", 7))
		}, want: "b{} 7"},
		{name: "replaced, labelled", opts: []registry.Option{registry.WithLabels(prometheus.Labels{"c": "1"})}, swap: func(reg *prometheus.Registry) {
			w := prometheus.WrapRegistererWith(prometheus.Labels{"c": "1"}, reg)
			w.Unregister(promtest.Gauge("b", 0))
			w.MustRegister(promtest.Gauge("b", 7))
		}, want: `b{c="1"} 7`},
	} {
		t.Run("outsider's left alone: "+tt.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			scope := registry.NewScope(reg, tt.opts...)
			scope.MustRegister(promtest.Gauge("a", 1), promtest.Gauge("b", 1))
			tt.swap(reg)
			err := scope.Close()
			if metrics, _ := promtest.UnregisterErrors(err); len(metrics) != 1 || metrics[0][0] != "b" || !errors.Is(err, registry.ErrNotRegistered) ||
				!strings.Contains(err.Error(), "an equal collector of somebody else's is registered in its place and was left alone") {
				t.Errorf("Close = %v", err)
			}
			promtest.Expose(t, reg, tt.want)
		})
	}

	// Close reports a collector that somebody else unregistered, and
	// leaves nothing behind.
	t.Run("unregistered by somebody else", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg, registry.WithName("w"))
		scope.MustRegister(promtest.Gauge("a", 1))
		reg.Unregister(promtest.Gauge("a", 0))
		err := scope.Close()
		if err == nil || err.Error() != "registry: scope w: unregister a: somebody else unregistered it" || !errors.Is(err, registry.ErrNotRegistered) {
			t.Errorf("Close = %v", err)
		}
		registrytest.VerifyNone(t, reg)
	})

	// A collector that somebody else unregistered, on a parent that then
	// refuses to unregister the question Close asked about it, is
	// reported as both, and the parent keeps nothing of the component.
	t.Run("question kept", func(t *testing.T) {
		p := promtest.NewParent(promtest.On("unregister", "cache_objects", 0, promtest.Refuse))
		scope := registry.NewScope(p)
		wp := build(t, scope, false, nil)
		p.Reg.Unregister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "cache_objects", Help: "Objects."}))
		err := scope.Close()
		if !errors.Is(err, registry.ErrNotRegistered) || !strings.Contains(err.Error(), "somebody else unregistered it, and the parent refused to unregister the question") {
			t.Errorf("Close = %v", err)
		}
		if !promtest.Collected(wp) {
			t.Error("the component is still reachable after Close")
		}
		runtime.KeepAlive(p)
	})

	// Close passes on the registry's own error when the scope's descriptor
	// went into somebody else's collector.
	t.Run("identity split by somebody else", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg)
		scope.MustRegister(promtest.Gauges{promtest.Gauge("a", 1), promtest.Gauge("b", 1)})
		reg.Unregister(promtest.Gauges{promtest.Gauge("a", 0), promtest.Gauge("b", 0)})
		reg.MustRegister(promtest.Gauge("a", 2))
		err := scope.Close()
		if !errors.Is(err, registry.ErrNotRegistered) || !strings.Contains(err.Error(), "the parent failed the ownership check: descriptor") {
			t.Errorf("Close = %v", err)
		}
		promtest.Expose(t, reg, "a{} 2")
	})

	// A collector that describes something else after Register, even
	// where it described nothing before, is taken back, and its identity
	// is free.
	for _, tt := range []struct {
		name   string
		before []string
	}{
		{name: "describe changes", before: []string{"jobs"}},
		{name: "describe appears", before: nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			scope := registry.NewScope(reg)
			s := &shifty{names: tt.before}
			scope.MustRegister(s)
			s.names = []string{"other"}
			if err := scope.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
			registrytest.VerifyNone(t, reg)
			for _, name := range tt.before {
				reg.MustRegister(promtest.Gauge(name, 1))
			}
		})
	}

	// Nothing keeps the component reachable after Close: not a GaugeFunc,
	// an unchecked collector, a labelled nested scope, an outsider's
	// replacement, nor a labelled scope's parent that refused to let go.
	plain := func(p prometheus.Registerer) *registry.Scope { return registry.NewScope(p) }
	labelled := func(p prometheus.Registerer) *registry.Scope {
		return registry.NewScope(p, registry.WithLabels(prometheus.Labels{"c": "1"}))
	}
	for _, tt := range []struct {
		name      string
		unchecked bool
		scope     func(parent prometheus.Registerer) *registry.Scope
		after     func(reg *prometheus.Registry)
		script    func(promtest.Call) promtest.Fault
	}{
		{name: "GaugeFunc", scope: plain},
		{name: "unchecked", unchecked: true, scope: plain},
		{name: "nested labelled", scope: func(p prometheus.Registerer) *registry.Scope {
			return registry.NewScope(p, registry.WithPrefix("app_")).Child(registry.WithLabels(prometheus.Labels{"cluster": "east"}))
		}},
		{name: "replaced", scope: plain, after: func(reg *prometheus.Registry) {
			reg.Unregister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "cache_objects", Help: "Objects."}))
			reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "cache_objects", Help: "Objects."}))
		}},
		{name: "refused, labelled", scope: labelled, script: promtest.On("unregister", "cache_objects", -1, promtest.Refuse)},
	} {
		t.Run("releases the component: "+tt.name, func(t *testing.T) {
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

	// A parent that fails or lies at Close: each failure is reported as an
	// UnregisterError wrapping ErrNotRegistered (and the parent's error),
	// at any depth; a labelled scope's registration is silenced whatever
	// happens, an unlabelled one's stays where the parent kept it; the
	// bystander's metrics stay.
	onB := func(op string, n int, fault promtest.Fault) func(promtest.Call) promtest.Fault {
		return promtest.On(op, "b", n, fault)
	}
	for _, tt := range []struct {
		name   string
		give   func(promtest.Call) promtest.Fault
		want   string // the cause Close reports for b, "" for none
		kept   bool   // whether the registry still holds b's registration
		silent bool   // whether the parent's Unregister said true
	}{
		{name: "probe fails", give: onB("register", 1, promtest.Fail), want: "the parent failed the ownership check: " + promtest.ErrInjected.Error(), kept: true},
		{name: "probe names a stranger", give: onB("register", 1, promtest.Claim), want: "an equal collector of somebody else's", kept: true},
		{name: "probe names nobody", give: onB("register", 1, promtest.ClaimNobody), want: "an equal collector of somebody else's", kept: true},
		{name: "refuses", give: onB("unregister", 0, promtest.Refuse), want: "the parent refused to unregister it", kept: true},
		{name: "lies it kept", give: onB("unregister", 0, promtest.LieKept), kept: true, silent: true},
		{name: "lies it removed", give: onB("unregister", 0, promtest.LieRemoved), want: "the parent refused to unregister it"},
	} {
		for _, view := range []bool{false, true} {
			t.Run(fmt.Sprintf("faulty parent: %s, view %v", tt.name, view), func(t *testing.T) {
				p := promtest.NewParent(tt.give)
				p.Stranger = promtest.Gauge("stranger", 0)
				bystander := promtest.NewBystander(p.Reg)
				var opts []registry.Option
				if view {
					opts = append(opts, registry.WithLabels(prometheus.Labels{"c": "1"}))
				}
				scope := registry.NewScope(registry.NewScope(p), opts...)
				scope.MustRegister(promtest.Gauge("a", 1), promtest.Gauge("b", 2))
				err := scope.Close()
				metrics, others := promtest.UnregisterErrors(err)
				if tt.want == "" && err != nil || tt.want != "" && (len(metrics) != 1 || len(others) != 0 ||
					!errors.Is(err, registry.ErrNotRegistered) || !strings.Contains(err.Error(), tt.want) ||
					errors.Is(err, promtest.ErrInjected) != strings.Contains(tt.want, promtest.ErrInjected.Error())) {
					t.Errorf("Close = %v, want one UnregisterError: %s", err, tt.want)
				}
				want := bystander.Series()
				if tt.kept && !view {
					want = append(want, "b{} 2")
				}
				promtest.Expose(t, p.Reg, want...)
			})
		}
	}

	// A parent that panics while Close takes a registration back: the
	// panic goes on; the registration stays recorded and exposed, the
	// scope refuses new registrations, and the next Close carries on.
	for _, op := range []string{"register", "unregister"} {
		for _, view := range []bool{false, true} {
			t.Run(fmt.Sprintf("parent panics on %s, view %v", op, view), func(t *testing.T) {
				p := promtest.NewParent(promtest.On(op, "b", map[string]int{"register": 1, "unregister": 0}[op], promtest.Panicking))
				var opts []registry.Option
				want := []string{"a{} 1", "b{} 2"}
				if view {
					opts = append(opts, registry.WithLabels(prometheus.Labels{"c": "1"}))
					want = []string{`a{c="1"} 1`, `b{c="1"} 2`}
				}
				scope := registry.NewScope(p, opts...)
				scope.MustRegister(promtest.Gauge("a", 1), promtest.Gauge("b", 2), promtest.Gauge("c", 3))
				if v, _ := promtest.Panic(func() { scope.Close() }).(error); !errors.Is(v, promtest.ErrInjected) {
					t.Fatalf("Close panicked with %v, want the parent's panic", v)
				}
				promtest.Expose(t, p.Reg, want...)
				promtest.Expose(t, scope, want...)
				if got := scope.Len(); got != 2 {
					t.Errorf("Len() = %d, want 2: a and b", got)
				}
				if err := scope.Register(promtest.Gauge("d", 1)); !errors.Is(err, registry.ErrClosed) {
					t.Errorf("Register after the panic = %v, want ErrClosed", err)
				}
				if err := scope.Close(); err != nil {
					t.Errorf("second Close = %v", err)
				}
				registrytest.VerifyNone(t, p.Reg)
			})
		}
	}

	// A parent that panics while it registers or unregisters the tree's
	// collector of unchecked ones lets the panic go on, and the scope goes
	// on working: the next registration and Close do not wait for ever.
	for _, op := range []string{"register", "unregister"} {
		t.Run("parent panics on the hub's "+op, func(t *testing.T) {
			p := promtest.NewParent(promtest.On(op, "", 0, promtest.Panicking))
			scope := registry.NewScope(p)
			u := &promtest.Unchecked{Name: "u", Value: 1}
			if op == "register" {
				if v, _ := promtest.Panic(func() { _ = scope.Register(u) }).(error); !errors.Is(v, promtest.ErrInjected) {
					t.Fatalf("Register panicked with %v", v)
				}
			}
			if err := scope.Register(u); err != nil {
				t.Fatalf("Register = %v", err)
			}
			promtest.Expose(t, p.Reg, "u{} 1")
			if op == "unregister" {
				if v, _ := promtest.Panic(func() { _ = scope.Close() }).(error); !errors.Is(v, promtest.ErrInjected) {
					t.Fatalf("Close panicked with %v", v)
				}
			}
			if err := scope.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
			promtest.Expose(t, p.Reg)
		})
	}

	// A parent that panics after it registered a collector lets the panic
	// go on out of Register; the scope records the collector, which
	// stays exposed, and Close takes it back.
	t.Run("parent panics in Register", func(t *testing.T) {
		for _, view := range []bool{false, true} {
			p := promtest.NewParent(promtest.On("register", "cache_objects", 0, promtest.PanicAfter))
			var opts []registry.Option
			if view {
				opts = append(opts, registry.WithLabels(prometheus.Labels{"c": "1"}))
			}
			scope := registry.NewScope(p, opts...)
			wp, v := buildPanicking(scope)
			if !errors.Is(v, promtest.ErrInjected) {
				t.Fatalf("Register panicked with %v", v)
			}
			if got := scope.Len(); got != 1 {
				t.Errorf("view %v: Len() = %d, want 1", view, got)
			}
			if err := scope.Close(); err != nil {
				t.Errorf("view %v: Close = %v", view, err)
			}
			registrytest.VerifyNone(t, p.Reg)
			if !promtest.Collected(wp) {
				t.Errorf("view %v: the component is still reachable after Close", view)
			}
		}
	})

	// A parent that panics while the newest nested scope closes leaves the
	// older sibling recorded, refusing registrations, and a later Close of
	// the outer scope closes it.
	t.Run("parent panics in a nested scope", func(t *testing.T) {
		p := promtest.NewParent(promtest.On("unregister", "new", 0, promtest.Panicking))
		outer := registry.NewScope(p)
		older, newer := outer.Child(), outer.Child()
		older.MustRegister(promtest.Gauge("old", 1))
		newer.MustRegister(promtest.Gauge("new", 2))
		if v, _ := promtest.Panic(func() { outer.Close() }).(error); !errors.Is(v, promtest.ErrInjected) {
			t.Fatalf("Close panicked with %v", v)
		}
		if err := older.Register(promtest.Gauge("late", 1)); !errors.Is(err, registry.ErrClosed) {
			t.Errorf("Register on the older sibling = %v, want ErrClosed", err)
		}
		if got := outer.Len(); got != 2 {
			t.Errorf("Len() = %d, want 2", got)
		}
		if err := outer.Close(); err != nil {
			t.Errorf("second Close = %v", err)
		}
		registrytest.VerifyNone(t, p.Reg)
	})

	// A Close slow in the parent holds no lock that siblings, the scope
	// around it, or a scrape need; the outer scope's Close waits for it.
	t.Run("blocked in the parent", func(t *testing.T) {
		p := promtest.NewParent(promtest.On("unregister", "slow", 0, promtest.Block))
		outer := registry.NewScope(p)
		slow, sibling := outer.Child(), outer.Child()
		slow.MustRegister(promtest.Gauge("slow", 1))
		closed := make(chan error, 1)
		go func() { closed <- slow.Close() }()
		<-p.Entered
		sibling.MustRegister(promtest.Gauge("other", 1))
		if _, err := outer.Gather(); err != nil {
			t.Error(err)
		}
		if _, err := p.Reg.Gather(); err != nil {
			t.Error(err)
		}
		if err := sibling.Register(promtest.Gauge("slow", 2)); !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
			t.Errorf("Register of the identity in flight = %v", err)
		}
		outerClosed := make(chan error, 1)
		go func() { outerClosed <- outer.Close() }()
		select {
		case err := <-outerClosed:
			t.Fatalf("the outer Close returned %v before the nested Close finished", err)
		default:
		}
		p.Release()
		if err := errors.Join(<-closed, <-outerClosed); err != nil {
			t.Error(err)
		}
		registrytest.VerifyNone(t, p.Reg)
	})

	// A Register blocked in the parent completes before a racing Close,
	// which then takes it back.
	t.Run("racing a blocked Register", func(t *testing.T) {
		p := promtest.NewParent(promtest.On("register", "b", 0, promtest.Block))
		scope := registry.NewScope(p)
		registered := make(chan error, 1)
		go func() { registered <- scope.Register(promtest.Gauge("b", 1)) }()
		<-p.Entered
		closed := make(chan error, 1)
		go func() { closed <- scope.Close() }()
		p.Release()
		if err := errors.Join(<-registered, <-closed); err != nil {
			t.Error(err)
		}
		registrytest.VerifyNone(t, p.Reg)
	})

	// client_golang has no atomic "unregister if it is still mine": an
	// outsider who swaps in an equal collector after Close asked who holds
	// the identity loses it to Close's Unregister, as documented.
	t.Run("outsider between question and unregister", func(t *testing.T) {
		p := promtest.NewParent(promtest.On("unregister", "jobs", 0, promtest.Block))
		scope := registry.NewScope(p)
		scope.MustRegister(promtest.Gauge("jobs", 1))
		closed := make(chan error, 1)
		go func() { closed <- scope.Close() }()
		<-p.Entered
		if !p.Reg.Unregister(promtest.Gauge("jobs", 0)) {
			t.Fatal("the outsider's Unregister = false")
		}
		p.Reg.MustRegister(promtest.Gauge("jobs", 2))
		p.Release()
		if err := <-closed; err != nil {
			t.Errorf("Close = %v", err)
		}
		if got, _ := promtest.Series(p.Reg); len(got) != 0 {
			t.Errorf("the registry exposes %q: the window is closed now, update the documentation", got)
		}
	})

	// A constructor that fails 100 times in a row leaves nothing behind,
	// then comes up and reads its cache live.
	t.Run("failing constructor", func(t *testing.T) {
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

// deleteLogger is a vector whose DeletePartialMatch calls are logged in a
// parent's log, among its calls.
type deleteLogger struct {
	registry.Deleter
	log *promtest.Parent
}

func (d deleteLogger) DeletePartialMatch(labels prometheus.Labels) int {
	var pairs []string
	for k, v := range labels {
		pairs = append(pairs, k+"="+v)
	}
	slices.Sort(pairs)
	n := d.Deleter.DeletePartialMatch(labels)
	d.log.Record(fmt.Sprintf("delete %s: %d", strings.Join(pairs, ","), n))
	return n
}

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

// shifty is a collector whose Describe yields gauges of names, which the
// test changes after Register, and which collects nothing.
type shifty struct{ names []string }

func (s *shifty) Describe(ch chan<- *prometheus.Desc) {
	for _, n := range s.names {
		ch <- prometheus.NewDesc(n, promtest.Help(n), nil, nil)
	}
}

func (*shifty) Collect(chan<- prometheus.Metric) {}

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
