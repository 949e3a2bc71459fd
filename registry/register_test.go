package registry_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/registry"
	"github.com/promscope/promscope/registry/registrytest"
)

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
		{name: "labelled in a prefixed scope", give: func(reg *prometheus.Registry) (_, _ prometheus.Registerer) {
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
		{name: "outsider, unlabelled scope", give: func(reg *prometheus.Registry) (_, _ prometheus.Registerer) {
			return registry.NewScope(reg), reg
		}},
		{name: "outsider, scope on a wrapper", give: func(reg *prometheus.Registry) (_, _ prometheus.Registerer) {
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
			{give: "jobs", want: "registry: scope mirror/east: jobs is already registered by scope mirror/west: duplicate metrics collector registration attempted"},
			{give: "jobs", opts: []registry.Option{registry.WithPrefix("p_")},
				want: "registry: scope mirror/east prefix=\"p_\": p_jobs is already registered by scope mirror/pre prefix=\"p_\": duplicate metrics collector registration attempted"},
			{give: "jobs", opts: []registry.Option{registry.WithPrefix("w_")},
				want: "registry: scope mirror/east prefix=\"w_\": w_jobs is already registered by scope mirror/wrapped: duplicate metrics collector registration attempted"},
			{give: "anon", want: "registry: scope mirror/east: anon is already registered by scope mirror: duplicate metrics collector registration attempted"},
			{give: "direct", want: "registry: scope mirror/east: direct is already registered outside the scope's tree: duplicate metrics collector registration attempted"},
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
		want := "registry: plain is already registered by another scope with no name, labels or prefix, which this one is nested in: duplicate metrics collector registration attempted"
		if err, _ := promtest.Panic(func() { unnamed.Child().MustRegister(promtest.Gauge("plain", 2)) }).(error); err == nil || err.Error() != want {
			t.Errorf("MustRegister panicked with %v, want %q", err, want)
		}
		want = "registry: direct is already registered outside the scope's tree: duplicate metrics collector registration attempted"
		if err, _ := promtest.Panic(func() { unnamed.MustRegister(promtest.Gauge("direct", 2)) }).(error); err == nil || err.Error() != want {
			t.Errorf("MustRegister panicked with %v, want %q", err, want)
		}
	})

	// A holder whose String is the refused scope's is another scope, with
	// where it was made if that is recorded; a scope refused for its own
	// registration is this scope.
	t.Run("MustRegister names a namesake", func(t *testing.T) {
		for _, watched := range []bool{false, true} {
			opts := []registry.Option{registry.WithName("program")}
			if watched {
				opts = append(opts, registry.WithIndex(&registry.Index{}))
			}
			program := registry.NewScope(prometheus.NewPedanticRegistry(), opts...)
			at := line()
			older := program.Child(registry.WithName("watcher"))
			older.MustRegister(promtest.Gauge("jobs", 1))
			want := "registry: scope program/watcher: jobs is already registered by another scope program/watcher"
			if watched {
				want += " made at " + at
			}
			want += ": duplicate metrics collector registration attempted"
			if err, _ := promtest.Panic(func() { program.Child(registry.WithName("watcher")).MustRegister(promtest.Gauge("jobs", 2)) }).(error); err == nil || err.Error() != want {
				t.Errorf("MustRegister panicked with %v, want %q", err, want)
			}
			want = "registry: scope program/watcher: jobs is already registered by this scope: duplicate metrics collector registration attempted"
			if err, _ := promtest.Panic(func() { older.MustRegister(promtest.Gauge("jobs", 2)) }).(error); err == nil || err.Error() != want {
				t.Errorf("MustRegister panicked with %v, want %q", err, want)
			}
			// A namesake nested in the refused scope, or the other way
			// round, is said to be.
			madeAt := func(at string) string {
				if watched {
					return " made at " + at
				}
				return ""
			}
			olderAt, innerAt := at, line()
			inner := older.Child()
			inner.MustRegister(promtest.Gauge("queue", 1))
			for _, tt := range []struct {
				s      *registry.Scope
				metric string // held by the other of the two
				want   string
			}{
				{older, "queue", "registry: scope program/watcher: queue is already registered by another scope program/watcher" + madeAt(innerAt) + ", nested in this one"},
				{inner, "jobs", "registry: scope program/watcher: jobs is already registered by another scope program/watcher" + madeAt(olderAt) + ", which this one is nested in"},
			} {
				if err, _ := promtest.Panic(func() { tt.s.MustRegister(promtest.Gauge(tt.metric, 2)) }).(error); err == nil || !strings.HasPrefix(err.Error(), tt.want+": ") {
					t.Errorf("MustRegister panicked with %v, want it to begin %q", err, tt.want)
				}
			}
			program.Close()
		}
	})

	// An older generation made on the registry itself, never closed,
	// is found in the Index that both trees are listed in; a tree of the
	// Index on another registry holding the same gauge is not it, and
	// without an Index nothing tells.
	t.Run("MustRegister names a holder in its Index", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		var x registry.Index
		jobs := promtest.Gauge("jobs", 1)
		registry.NewScope(prometheus.NewRegistry(), registry.WithName("watcher"), registry.WithIndex(&x)).MustRegister(jobs)
		at := line()
		registry.NewScope(reg, registry.WithName("watcher"), registry.WithIndex(&x)).MustRegister(jobs)
		for _, tt := range []struct {
			opts []registry.Option
			want string
		}{
			{[]registry.Option{registry.WithIndex(&x)}, "by another scope watcher made at " + at},
			{nil, "outside the scope's tree"},
		} {
			newer := registry.NewScope(reg, append(tt.opts, registry.WithName("watcher"))...)
			want := "registry: scope watcher: jobs is already registered " + tt.want + ": duplicate metrics collector registration attempted"
			if err, _ := promtest.Panic(func() { newer.MustRegister(promtest.Gauge("jobs", 2)) }).(error); err == nil || err.Error() != want {
				t.Errorf("MustRegister panicked with %v, want %q", err, want)
			}
		}
		// Generations with no name are namesakes too.
		unnamed := prometheus.NewPedanticRegistry()
		at = line()
		registry.NewScope(unnamed, registry.WithIndex(&x)).MustRegister(promtest.Gauge("jobs", 1))
		want := "registry: jobs is already registered by another scope with no name, labels or prefix made at " + at + ": duplicate metrics collector registration attempted"
		if err, _ := promtest.Panic(func() { registry.NewScope(unnamed, registry.WithIndex(&x)).MustRegister(promtest.Gauge("jobs", 2)) }).(error); err == nil || err.Error() != want {
			t.Errorf("MustRegister panicked with %v, want %q", err, want)
		}
	})

	// The holder named is the scope whose registration the registry
	// holds, not one with a stale record of the same metric that an
	// outsider unregistered behind its back.
	t.Run("MustRegister skips stale records", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		program := registry.NewScope(reg, registry.WithName("program"))
		program.MustRegister(promtest.Gauge("jobs", 1))
		reg.Unregister(promtest.Gauge("jobs", 0)) // an outsider
		program.Child(registry.WithName("child")).MustRegister(promtest.Gauge("jobs", 2))
		want := "registry: scope program: jobs is already registered by scope program/child, nested in this one: duplicate metrics collector registration attempted"
		if err, _ := promtest.Panic(func() { program.MustRegister(promtest.Gauge("jobs", 3)) }).(error); err == nil || err.Error() != want {
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
		// client_golang's wrappers dereference nil on a descriptor with
		// an error: the scope passes it on for the registry to refuse.
		{name: "invalid descriptor, prefixed", opts: []registry.Option{registry.WithPrefix("p_")},
			give: func() prometheus.Collector { return promtest.Many{prometheus.NewInvalidDesc(errors.New("bad"))} }},
		{name: "invalid descriptor, labelled", opts: []registry.Option{registry.WithLabels(prometheus.Labels{"zone": "a"})},
			give: func() prometheus.Collector { return promtest.Many{prometheus.NewInvalidDesc(errors.New("bad"))} }},
		{name: "invalid descriptor, prefixed and labelled", opts: []registry.Option{registry.WithPrefix("p_"), registry.WithLabels(prometheus.Labels{"zone": "a"})},
			give: func() prometheus.Collector { return promtest.Many{prometheus.NewInvalidDesc(errors.New("bad"))} }},
		{name: "other help than a bystander's", give: func() prometheus.Collector {
			return prometheus.NewGauge(prometheus.GaugeOpts{Name: "other", Help: "Different.", ConstLabels: prometheus.Labels{"k": "v"}})
		}},
		{name: "label names unlike a bystander's", give: func() prometheus.Collector {
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
			// MustRegister of a named scope says which scope was refused.
			named := registry.NewScope(reg, append(tt.opts, registry.WithName("west"))...)
			err, _ := promtest.Panic(func() { named.MustRegister(tt.give()) }).(error)
			if err == nil || want == nil || !strings.HasPrefix(err.Error(), "registry: scope west") || !strings.HasSuffix(err.Error(), ": "+want.Error()) {
				t.Errorf("MustRegister panicked with %v, want the registry's own %v after the scope's name", err, want)
			}
			if got := scope.Len(); got != 0 {
				t.Errorf("Len() = %d, want 0", got)
			}
			promtest.Expose(t, reg, bystander.Series()...)
		})
	}

	// A scope of the scope's own tree, registered through it directly or
	// through client_golang's wrappers, would be collected twice, or
	// collect itself on every scrape: Register refuses it and touches
	// nothing. A scope of another tree is a collector like any other.
	t.Run("a scope of its own tree", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		program := registry.NewScope(reg, registry.WithName("program"))
		program.MustRegister(promtest.Gauge("jobs", 1))
		mirror := program.Child(registry.WithPrefix("mirror_"))
		sibling := program.Child()
		prefixed := func(r prometheus.Registerer) prometheus.Registerer {
			return prometheus.WrapRegistererWithPrefix("p_", r)
		}
		for i, tt := range []struct {
			on prometheus.Registerer
			c  *registry.Scope
		}{
			{program, program}, {mirror, mirror}, {mirror, program}, {program, mirror}, {sibling, mirror},
			{prefixed(program), program}, {prefixed(mirror), program},
			{prometheus.WrapRegistererWith(prometheus.Labels{"k": "v"}, sibling), sibling},
		} {
			if err := tt.on.Register(tt.c); err == nil || !strings.HasPrefix(err.Error(), "registry: a scope cannot register a scope of its own tree") {
				t.Errorf("case %d: Register = %v, want the scope refused", i, err)
			}
		}
		// MustRegister panics with that error, naming the scope refused.
		if err, _ := promtest.Panic(func() { program.MustRegister(mirror) }).(error); err == nil || !strings.HasPrefix(err.Error(), "registry: scope program: a scope cannot register a scope of its own tree") {
			t.Errorf("MustRegister panicked with %v, want the error naming the scope", err)
		}
		// Through a Registerer of the user's own that forwards to the
		// program scope, a scope with a view registers the program
		// scope in a viewed collector of its own: the program scope
		// refuses it all the same (rule 2: its error is returned).
		for _, wrap := range []bool{false, true} {
			forwarder := promtest.NewParent(nil)
			forwarder.Next = program
			if wrap {
				forwarder.Next = prometheus.WrapRegistererWith(prometheus.Labels{"w": "1"}, program)
			}
			fed := registry.NewScope(forwarder, registry.WithPrefix("federated_"))
			if err := fed.Register(program); err == nil || !strings.Contains(err.Error(), "registry: a scope cannot register a scope of its own tree") {
				t.Errorf("through a forwarder (wrapper %t): Register = %v, want the program scope's refusal", wrap, err)
			}
			// An empty scope describes nothing: registered as an unchecked
			// collector, through the tree's one collector of those, which
			// the scope behind holds, it is refused too.
			empty := registry.NewScope(prometheus.NewRegistry(), registry.WithLabels(prometheus.Labels{"e": "1"}))
			forwarder.Next = empty
			if wrap {
				forwarder.Next = prometheus.WrapRegistererWith(prometheus.Labels{"w": "1"}, empty)
			}
			for _, on := range []*registry.Scope{registry.NewScope(forwarder), registry.NewScope(forwarder, registry.WithLabels(prometheus.Labels{"f": "1"}))} {
				if err := on.Register(empty); err == nil || !strings.Contains(err.Error(), "collects what the scope's tree collects already") {
					t.Errorf("an empty scope through a forwarder (wrapper %t): Register = %v, want it refused", wrap, err)
				}
			}
			empty.MustRegister(promtest.Gauge("late", 1))
			promtest.Expose(t, empty, `late{e="1"} 1`)
		}
		other := registry.NewScope(nil)
		other.MustRegister(promtest.Gauge("tasks", 2))
		mirror.MustRegister(other)
		promtest.Expose(t, reg, "jobs{} 1", "mirror_tasks{} 2")
		promtest.Expose(t, program, "jobs{} 1", "mirror_tasks{} 2")
		if n := program.Len(); n != 2 {
			t.Errorf("Len() = %d, want 2: jobs and the other tree", n)
		}
	})

	// A scope of another tree that holds a scope of this one, registered
	// with it as a collector, would collect this tree again on every
	// scrape, and so on without end: Register refuses it, whatever it
	// describes, with a view or without.
	t.Run("a scope that collects the scope", func(t *testing.T) {
		for _, prefix := range []string{"", "a_"} {
			r1, r2 := prometheus.NewPedanticRegistry(), prometheus.NewPedanticRegistry()
			a := registry.NewScope(r1, registry.WithPrefix(prefix))
			a.MustRegister(promtest.Gauge("x", 1))
			b := registry.NewScope(r2, registry.WithPrefix("b_"))
			b.MustRegister(a)
			if err := a.Register(b); err == nil || !strings.Contains(err.Error(), "collects what the scope's tree collects already") {
				t.Errorf("prefix %q: Register = %v, want it refused", prefix, err)
			}
			promtest.Expose(t, r1, prefix+"x{} 1")
			promtest.Expose(t, r2, "b_"+prefix+"x{} 1")
		}
	})

	// A scope made on a Registerer of the user's own that forwards to a
	// scope registers its tree's unchecked collectors there through one
	// collector: the scope behind collects them already, so it refuses
	// the scope as an unchecked collector, or, had it taken the scope
	// empty, the tree's first unchecked collector; the registry still
	// gathers.
	t.Run("a scope on a forwarder to the scope", func(t *testing.T) {
		for _, late := range []bool{false, true} {
			reg := prometheus.NewPedanticRegistry()
			program := registry.NewScope(reg)
			forwarder := promtest.NewParent(nil)
			forwarder.Next = program
			fed := registry.NewScope(forwarder, registry.WithLabels(prometheus.Labels{"f": "1"}))
			u := &promtest.Unchecked{Name: "u", Value: 1}
			var err error
			if late {
				if err := program.Register(fed); err != nil {
					t.Fatalf("an empty scope: Register = %v", err)
				}
				err = fed.Register(u)
			} else {
				fed.MustRegister(u)
				err = program.Register(fed)
			}
			if err == nil || !strings.Contains(err.Error(), "collects what the scope's tree collects already") {
				t.Errorf("late %t: Register = %v, want it refused", late, err)
			}
			if _, err := reg.Gather(); err != nil {
				t.Errorf("late %t: Gather = %v", late, err)
			}
		}
		// One that owns a gauge describes what the program scope holds
		// already: the registry refuses it as registered, and, through
		// a label wrapper, for its new label names. Through a prefix
		// wrapper the registry sees new names and accepts it: the gauge
		// is exposed twice ("What is not promised").
		for _, tt := range []struct {
			through func(prometheus.Registerer) prometheus.Registerer
			want    string // the refusal; "" for accepted
			series  []string
		}{
			{func(r prometheus.Registerer) prometheus.Registerer { return r }, "duplicate metrics collector registration attempted", []string{`g{f="1"} 1`}},
			{func(r prometheus.Registerer) prometheus.Registerer {
				return prometheus.WrapRegistererWith(prometheus.Labels{"w": "1"}, r)
			}, "has different label names", []string{`g{f="1"} 1`}},
			{func(r prometheus.Registerer) prometheus.Registerer {
				return prometheus.WrapRegistererWithPrefix("w_", r)
			}, "", []string{`g{f="1"} 1`, `w_g{f="1"} 1`}},
		} {
			reg := prometheus.NewPedanticRegistry()
			program := registry.NewScope(reg)
			forwarder := promtest.NewParent(nil)
			forwarder.Next = program
			fed := registry.NewScope(forwarder, registry.WithLabels(prometheus.Labels{"f": "1"}))
			fed.MustRegister(promtest.Gauge("g", 1))
			err := tt.through(program).Register(fed)
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("a scope of checked collectors: Register = %v, want %q", err, tt.want)
			}
			promtest.Expose(t, reg, tt.series...)
		}
	})

	// The registry a tree registers into, or a Registerer that
	// client_golang's wrappers of it pass registrations on to, collects
	// what the tree registers: a scope refuses it, whether it describes
	// something or, holding only unchecked collectors, nothing, and
	// touches nothing. Another registry is a collector like any other.
	for _, tt := range []struct {
		name    string
		checked bool                                             // the registry holds a gauge, not only an unchecked collector
		parent  func(*prometheus.Registry) prometheus.Registerer // the scope's parent; the registry when nil
		through func(*registry.Scope) prometheus.Registerer      // what registers the registry; the scope when nil
		opts    []registry.Option
	}{
		{name: "unchecked only"},
		{name: "unchecked only, labelled", opts: []registry.Option{registry.WithLabels(prometheus.Labels{"s": "1"})}},
		{name: "prefixed", checked: true, opts: []registry.Option{registry.WithPrefix("p_")}},
		{name: "wrapped parent", checked: true, parent: func(r *prometheus.Registry) prometheus.Registerer {
			return prometheus.WrapRegistererWithPrefix("w_", r)
		}},
		{name: "through a wrapper", through: func(s *registry.Scope) prometheus.Registerer {
			return prometheus.WrapRegistererWith(prometheus.Labels{"w": "1"}, s)
		}},
	} {
		t.Run("its own registry: "+tt.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			var parent prometheus.Registerer = reg
			if tt.parent != nil {
				parent = tt.parent(reg)
			}
			scope := registry.NewScope(parent, tt.opts...)
			if tt.checked {
				reg.MustRegister(promtest.Gauge("outside", 1))
			}
			scope.MustRegister(&promtest.Unchecked{Name: "u", Value: 1})
			var through prometheus.Registerer = scope
			if tt.through != nil {
				through = tt.through(scope)
			}
			if err := through.Register(reg); err == nil || !strings.Contains(err.Error(), "nor the Registerer the tree registers into") {
				t.Errorf("Register = %v, want it refused", err)
			}
			if n := scope.Len(); n != 1 {
				t.Errorf("Len() = %d, want 1", n)
			}
			if _, err := reg.Gather(); err != nil {
				t.Errorf("Gather = %v", err)
			}
			other := prometheus.NewRegistry()
			other.MustRegister(promtest.Gauge("other", 2))
			if err := through.Register(other); err != nil {
				t.Errorf("Register(another registry) = %v", err)
			}
		})
	}

	// A nil collector, or an interface holding a nil, gives
	// ErrNilCollector without touching the parent, also through
	// client_golang's wrappers, whose Describe of a nil would panic;
	// MustRegister panics with it, and Unregister finds nothing.
	for _, tt := range []struct {
		name string
		give prometheus.Collector
	}{
		{name: "nil"},
		{name: "typed-nil vector", give: (*prometheus.GaugeVec)(nil)},
		{name: "typed-nil custom collector", give: (*promtest.Unchecked)(nil)},
		{name: "nil slice collector", give: promtest.Gauges(nil)},
	} {
		for _, wrapped := range []bool{false, true} {
			name := "ErrNil: " + tt.name
			if wrapped {
				name += ", wrapped"
			}
			t.Run(name, func(t *testing.T) {
				parent := promtest.NewParent(nil)
				scope := registry.NewScope(parent)
				var r prometheus.Registerer = scope
				if wrapped {
					r = prometheus.WrapRegistererWith(prometheus.Labels{"w": "1"}, prometheus.WrapRegistererWithPrefix("w_", scope))
				}
				if err := r.Register(tt.give); err != registry.ErrNilCollector { //nolint:errorlint // the sentinel itself, not wrapped
					t.Errorf("Register = %v, want ErrNilCollector itself", err)
				}
				if err, _ := promtest.Panic(func() { r.MustRegister(tt.give) }).(error); !errors.Is(err, registry.ErrNilCollector) {
					t.Errorf("MustRegister panicked with %v", err)
				}
				if r.Unregister(tt.give) {
					t.Error("Unregister = true")
				}
				if log := parent.Log(); len(log) != 0 || scope.Len() != 0 {
					t.Errorf("the parent saw %q, Len() = %d", log, scope.Len())
				}
			})
		}
	}

	// A collector whose Describe panics, as a type of the user's that
	// embeds a zero vector does, panics out of Register and Unregister in
	// the caller's goroutine with the same value, where a registry's own
	// Describe goroutine would end the program; nothing is registered.
	// (client_golang's wrappers run the Describe they wrap in a goroutine
	// of their own, which no scope can reach.)
	t.Run("Describe panics", func(t *testing.T) {
		parent := promtest.NewParent(nil)
		scope := registry.NewScope(parent)
		broken := struct{ *prometheus.GaugeVec }{&prometheus.GaugeVec{}}
		for name, f := range map[string]func(){
			"Register":     func() { _ = scope.Register(broken) },
			"MustRegister": func() { scope.MustRegister(broken) },
			"Unregister":   func() { scope.Unregister(broken) },
		} {
			if err, _ := promtest.Panic(f).(runtime.Error); err == nil {
				t.Errorf("%s did not panic with Describe's runtime error", name)
			}
		}
		if log := parent.Log(); len(log) != 0 || scope.Len() != 0 {
			t.Errorf("the parent saw %q, Len() = %d", log, scope.Len())
		}
	})

	// A collector that describes a nil descriptor, or a zero vector of
	// client_golang's, whose Describe dereferences nil, is refused with an
	// error that says so, before the parent sees it, in every shape; the
	// scope's earlier registrations stay as they were, and Close takes
	// them back. Unregister of it finds nothing.
	refused := []struct {
		give prometheus.Collector
		want string
	}{
		{nilDescriber{}, "registry: registry_test.nilDescriber describes a nil descriptor"},
		{&prometheus.GaugeVec{}, "registry: *prometheus.GaugeVec is a zero vector: make it with its New function"},
		{&prometheus.CounterVec{MetricVec: &prometheus.MetricVec{}}, "registry: *prometheus.CounterVec is a zero vector"},
		{&prometheus.HistogramVec{}, "registry: *prometheus.HistogramVec is a zero vector"},
		{&prometheus.SummaryVec{}, "registry: *prometheus.SummaryVec is a zero vector"},
		{&prometheus.MetricVec{}, "registry: *prometheus.MetricVec is a zero vector"},
	}
	for _, opts := range [][]registry.Option{nil, {registry.WithPrefix("p_")}} {
		for i, tt := range refused {
			t.Run(fmt.Sprintf("%T, %d options", tt.give, len(opts)), func(t *testing.T) {
				parent := promtest.NewParent(nil)
				scope := registry.NewScope(parent, opts...)
				scope.MustRegister(promtest.Gauge("jobs", 1))
				// A zero vector through client_golang's wrappers, whose
				// Describe would panic in a goroutine of theirs, too.
				var r prometheus.Registerer = scope
				if i > 0 && len(opts) > 0 {
					r = prometheus.WrapRegistererWith(prometheus.Labels{"w": "1"}, prometheus.WrapRegistererWithPrefix("w_", scope))
				}
				if err := r.Register(tt.give); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
					t.Errorf("Register = %v, want %q", err, tt.want)
				}
				if v := promtest.Panic(func() { r.MustRegister(tt.give) }); v == nil {
					t.Error("MustRegister did not panic")
				}
				if r.Unregister(tt.give) {
					t.Error("Unregister = true")
				}
				if got := scope.Len(); got != 1 {
					t.Errorf("Len() = %d, want 1", got)
				}
				if log := parent.Log(); len(log) != 1 {
					t.Errorf("the parent saw %q, want only jobs", log)
				}
				if err := scope.Close(); err != nil {
					t.Errorf("Close = %v", err)
				}
				registrytest.VerifyNone(t, parent.Reg)
			})
		}
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
	// unchecked collectors has Register return its error, or, if it says
	// the hub is registered already, an AlreadyRegisteredError naming the
	// collector registered (rule 3).
	t.Run("parent names a wrapper", func(t *testing.T) {
		theirs := promtest.Gauge("jobs", 1)
		p := promtest.NewParent(promtest.On("register", "jobs", -1, promtest.Claim))
		p.Stranger = promtest.Wrapped(prometheus.Labels{"w": "1"}, "x_", theirs)
		var are prometheus.AlreadyRegisteredError
		if err := registry.NewScope(p).Register(promtest.Gauge("jobs", 2)); !errors.As(err, &are) || are.ExistingCollector != prometheus.Collector(theirs) {
			t.Errorf("Register = %v, naming %v", err, are.ExistingCollector)
		}
		// So is a wrapper of an unchecked collector.
		u := &promtest.Unchecked{Name: "u"}
		p.Stranger = promtest.Wrapped(nil, "x_", u)
		if err := registry.NewScope(p).Register(promtest.Gauge("jobs", 2)); !errors.As(err, &are) || are.ExistingCollector != prometheus.Collector(u) {
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
		// A parent that refuses the tree's collector of unchecked ones as
		// registered already is answered like any other: the error names
		// the collector registered, and the holder the parent named.
		p = promtest.NewParent(promtest.On("register", "", -1, promtest.Claim))
		p.Stranger = theirs
		scope = registry.NewScope(p, registry.WithName("u"))
		u = &promtest.Unchecked{Name: "u", Value: 1}
		if err := scope.Register(u); !errors.As(err, &are) || are.NewCollector != prometheus.Collector(u) || are.ExistingCollector != prometheus.Collector(theirs) {
			t.Errorf("Register = %v, naming %v and %v", err, are.NewCollector, are.ExistingCollector)
		}
		want := "registry: scope u: an unchecked collector is already registered outside the scope's tree: "
		if v, _ := promtest.Panic(func() { scope.MustRegister(u) }).(error); v == nil || !strings.HasPrefix(v.Error(), want) {
			t.Errorf("MustRegister panicked with %v, want %q...", v, want)
		}
	})

	// A parent whose error wraps an AlreadyRegisteredError has it
	// returned as it is, but for the collectors the AlreadyRegisteredError
	// names (rule 3): its text, and what errors.Is finds in it, stay.
	t.Run("parent wraps the error", func(t *testing.T) {
		reg := prometheus.NewRegistry()
		theirs := promtest.Gauge("jobs", 1)
		reg.MustRegister(theirs)
		scope := registry.NewScope(annotating{reg})
		mine := promtest.Gauge("jobs", 2)
		err := scope.Register(mine)
		var are prometheus.AlreadyRegisteredError
		if err == nil || err.Error() != "tenant acme: "+(prometheus.AlreadyRegisteredError{}).Error() || !errors.Is(err, errAcme) ||
			!errors.As(err, &are) || are.NewCollector != prometheus.Collector(mine) || are.ExistingCollector != prometheus.Collector(theirs) {
			t.Errorf("Register = %v, naming %v and %v", err, are.NewCollector, are.ExistingCollector)
		}
		if ue := (*registry.UnregisterError)(nil); errors.As(err, &ue) {
			t.Errorf("errors.As found an UnregisterError in %v", err)
		}
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

// errAcme is what annotating adds to the errors of its registry.
var errAcme = errors.New("tenant acme")

// annotating is a Registerer of the user's own that adds errAcme to its
// registry's errors.
type annotating struct{ next prometheus.Registerer }

func (a annotating) Register(c prometheus.Collector) error {
	if err := a.next.Register(c); err != nil {
		return fmt.Errorf("%w: %w", errAcme, err)
	}
	return nil
}

func (a annotating) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := a.Register(c); err != nil {
			panic(err)
		}
	}
}

func (a annotating) Unregister(c prometheus.Collector) bool { return a.next.Unregister(c) }
