package registry_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/registry"
	"github.com/promscope/promscope/registry/registrytest"
)

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
		{name: "other constant label names",
			register: prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobs", Help: "h", ConstLabels: prometheus.Labels{"q": "a"}}),
			give:     prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobs", Help: "h", ConstLabels: prometheus.Labels{`q=""`: "a"}}), want: true},
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
	// values field by field, maps by identity, functions by their code.
	base := valued{n: 1, arr: [2]string{"a", "b"}, m: map[string]int{"x": 1}, inner: 2, sl: []int{1, 2}}
	for _, tt := range []struct {
		name string
		give func(v valued) valued
		want bool
	}{
		{name: "the same map", give: func(v valued) valued { return v }, want: true},
		{name: "an equal map", give: func(v valued) valued { v.m = map[string]int{"x": 1}; return v }},
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

	// A value collector holding a function, a NaN or itself is taken back
	// as an equal value made anew (Words: the same collector), with or
	// without a view.
	for name := range odds(nil) {
		for _, opts := range [][]registry.Option{nil, {registry.WithLabels(prometheus.Labels{"c": "1"})}} {
			t.Run(fmt.Sprintf("value holding %s, %d options", name, len(opts)), func(t *testing.T) {
				reg := prometheus.NewPedanticRegistry()
				scope := registry.NewScope(reg, opts...)
				g := promtest.Gauge("jobs", 1)
				scope.MustRegister(odds(g)[name])
				if !scope.Unregister(odds(g)[name]) {
					t.Error("Unregister = false")
				}
				registrytest.VerifyNone(t, reg)
				if err := scope.Close(); err != nil {
					t.Errorf("Close = %v", err)
				}
			})
		}
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
	// the scope two records of one registration, counted once; Unregister
	// takes both, and Close has nothing stale to report.
	t.Run("stale record", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg)
		g := promtest.Gauge("jobs", 1)
		scope.MustRegister(g, promtest.Gauge("other", 2))
		reg.Unregister(g)
		scope.MustRegister(g)
		if got := scope.Len(); got != 2 {
			t.Fatalf("Len() = %d, want 2", got)
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

	// Through client_golang's wrappers too, whatever the collector
	// describes by now, even nothing: Unregister sees through them
	// without asking the collector.
	t.Run("wrapped, describes nothing now", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg)
		w := prometheus.WrapRegistererWith(prometheus.Labels{"w": "1"}, scope)
		x := &shifty{names: []string{"a"}}
		w.MustRegister(x)
		x.names = nil
		if !w.Unregister(x) {
			t.Error("Unregister = false")
		}
		if got := scope.Len(); got != 0 {
			t.Errorf("Len() = %d, want 0", got)
		}
		if err := prometheus.WrapRegistererWith(prometheus.Labels{"w": "1"}, reg).Register(promtest.Gauge("a", 1)); err != nil {
			t.Errorf("a is still held: %v", err)
		}
	})

	// Of two registrations of one collector whose Describe changed in
	// between, the one with what it describes now goes, as client_golang
	// would take it, though the other is newer.
	t.Run("same collector as it describes now", func(t *testing.T) {
		for _, change := range []string{"name", "label value"} {
			reg := prometheus.NewPedanticRegistry()
			scope := registry.NewScope(reg)
			x := &shifty{names: []string{"a"}, labels: prometheus.Labels{"k": "1"}}
			scope.MustRegister(x)
			if change == "name" {
				x.names = []string{"b"}
			} else {
				x.labels = prometheus.Labels{"k": "2"}
			}
			scope.MustRegister(x)
			then := &shifty{names: x.names, labels: x.labels}
			x.names, x.labels = []string{"a"}, prometheus.Labels{"k": "1"}
			if !scope.Unregister(x) {
				t.Errorf("%s changed: Unregister = false", change)
			}
			if err := reg.Register(&shifty{names: x.names, labels: x.labels}); err != nil {
				t.Errorf("%s changed: the first registration is still held: %v", change, err)
			}
			if err := reg.Register(then); err == nil {
				t.Errorf("%s changed: the newer registration was taken back", change)
			}
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
		scope.MustRegister(g, promtest.Gauge("up", 1))
		if v, _ := promtest.Panic(func() { scope.Unregister(g) }).(error); !errors.Is(v, promtest.ErrInjected) {
			t.Fatalf("Unregister panicked with %v", v)
		}
		if got := scope.Len(); got != 2 {
			t.Errorf("Len() = %d, want 2", got)
		}
		before := len(p.Log())
		if err := scope.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
		registrytest.VerifyNone(t, p.Reg)
		// The registration stays where it was: Close takes it back
		// after the newer one.
		var order []string
		for _, e := range p.Log()[before:] {
			if strings.HasPrefix(e, "unregister ") {
				order = append(order, e)
			}
		}
		if len(order) != 2 || !strings.Contains(order[0], "up") || !strings.Contains(order[1], "jobs") {
			t.Errorf("Close unregistered %q, want up, then jobs", order)
		}
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
