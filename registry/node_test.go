package registry_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"weak"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/registry"
	"github.com/promscope/promscope/registry/registrytest"
)

func TestNesting(t *testing.T) {
	// A nested scope registers into the same parent with prefixes and
	// labels composed, is counted by the outer scope, and closed with it.
	t.Run("composes", func(t *testing.T) {
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

	// A scope made on client_golang's wrappers of a scope, any number in
	// any order, is a Child with the wrappers' prefix and labels in every
	// respect: one story, told through each, reads the same.
	for _, tt := range []struct {
		name  string
		wrap  func(s *registry.Scope) prometheus.Registerer
		child []registry.Option // what the wrappers and the scope's own options make, as a Child's options
	}{
		{name: "labels", wrap: func(s *registry.Scope) prometheus.Registerer {
			return prometheus.WrapRegistererWith(prometheus.Labels{"w": "1"}, s)
		}, child: []registry.Option{registry.WithLabels(prometheus.Labels{"w": "1"})}},
		{name: "prefix", wrap: func(s *registry.Scope) prometheus.Registerer {
			return prometheus.WrapRegistererWithPrefix("x_", s)
		}, child: []registry.Option{registry.WithPrefix("x_")}},
		{name: "labels over prefix", wrap: func(s *registry.Scope) prometheus.Registerer {
			return prometheus.WrapRegistererWith(prometheus.Labels{"w": "1"}, prometheus.WrapRegistererWithPrefix("x_", s))
		}, child: []registry.Option{registry.WithPrefix("x_"), registry.WithLabels(prometheus.Labels{"w": "1"})}},
		{name: "three, two prefixes", wrap: func(s *registry.Scope) prometheus.Registerer {
			return prometheus.WrapRegistererWithPrefix("b_", prometheus.WrapRegistererWith(prometheus.Labels{"y": "2"},
				prometheus.WrapRegistererWithPrefix("a_", s)))
		}, child: []registry.Option{registry.WithPrefix("a_b_"), registry.WithLabels(prometheus.Labels{"y": "2"})}},
	} {
		t.Run("wrappers make a Child: "+tt.name, func(t *testing.T) {
			own := []registry.Option{registry.WithName("link"), registry.WithLabels(prometheus.Labels{"own": "1"})}
			viaWrappers := nestingStory(t, func(p *registry.Scope) *registry.Scope { return registry.NewScope(tt.wrap(p), own...) })
			viaChild := nestingStory(t, func(p *registry.Scope) *registry.Scope { return p.Child(append(slices.Clone(own), tt.child...)...) })
			if !slices.Equal(viaWrappers, viaChild) {
				t.Errorf("through the wrappers:\n%s\nas a Child:\n%s", strings.Join(viaWrappers, "\n"), strings.Join(viaChild, "\n"))
			}
		})
	}

	// Components recycled in a long-lived program scope, nested in it or
	// on client_golang's wrappers of it (one or two), leave no record and
	// no registration; the program's hub for unchecked collectors is
	// registered once.
	for _, tt := range []struct {
		name string
		give func(program *registry.Scope) *registry.Scope
	}{
		{name: "nested", give: func(p *registry.Scope) *registry.Scope {
			return registry.NewScope(p, registry.WithLabels(prometheus.Labels{"link": "west"}))
		}},
		{name: "on a wrapper", give: func(p *registry.Scope) *registry.Scope {
			return registry.NewScope(prometheus.WrapRegistererWith(prometheus.Labels{"link": "west"}, p))
		}},
		{name: "on two wrappers", give: func(p *registry.Scope) *registry.Scope {
			return registry.NewScope(prometheus.WrapRegistererWithPrefix("west_", prometheus.WrapRegistererWith(prometheus.Labels{"link": "west"}, p)))
		}},
	} {
		t.Run("recycled "+tt.name, func(t *testing.T) {
			parent := promtest.NewParent(nil)
			program := registry.NewScope(parent)
			for range 50 {
				c := tt.give(program)
				c.MustRegister(promtest.Gauge("jobs", 1), &promtest.Unchecked{Name: "cache_objects", Value: 3})
				if got, _ := promtest.Series(parent.Reg); len(got) != 2 {
					t.Fatalf("the registry exposes %q, want the component's two series", got)
				}
				if err := c.Close(); err != nil {
					t.Fatalf("Close = %v", err)
				}
				if got := program.Len(); got != 0 {
					t.Fatalf("the program scope still owns %d collectors", got)
				}
			}
			hubs := slices.DeleteFunc(parent.Log(), func(l string) bool { return !strings.HasPrefix(l, "register : ") })
			if len(hubs) != 1 {
				t.Errorf("the registry got %d unchecked registrations, want 1: %q", len(hubs), hubs)
			}
			registrytest.VerifyNone(t, parent.Reg)
		})
	}

	// A closed nested scope leaves the outer scope, which does not keep
	// it reachable.
	t.Run("closed scope let go", func(t *testing.T) {
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

	// A scope that sets a label a scope or wrapper around it sets fails
	// every registration, as nested client_golang wrappers do, and so do
	// the scopes nested in it; nothing is registered. So does a scope made
	// through two wrappers that set one label.
	for _, tt := range []struct {
		name string
		give func() *registry.Scope
	}{
		{name: "scope around", give: func() *registry.Scope {
			return registry.NewScope(nil, registry.WithLabels(prometheus.Labels{"cluster": "east"})).
				Child(registry.WithLabels(prometheus.Labels{"cluster": "west"}))
		}},
		{name: "two levels up", give: func() *registry.Scope {
			return registry.NewScope(nil, registry.WithLabels(prometheus.Labels{"cluster": "east"})).
				Child(registry.WithLabels(prometheus.Labels{"tenant": "acme"})).
				Child(registry.WithLabels(prometheus.Labels{"cluster": "west"}))
		}},
		{name: "wrapper around", give: func() *registry.Scope {
			w := prometheus.WrapRegistererWith(prometheus.Labels{"cluster": "east"}, registry.NewScope(nil))
			return registry.NewScope(w, registry.WithLabels(prometheus.Labels{"cluster": "west"}))
		}},
		{name: "scope around a wrapper", give: func() *registry.Scope {
			s := registry.NewScope(nil, registry.WithLabels(prometheus.Labels{"cluster": "east"}))
			return registry.NewScope(prometheus.WrapRegistererWith(prometheus.Labels{"cluster": "west"}, s))
		}},
		{name: "two wrappers", give: func() *registry.Scope {
			w := prometheus.WrapRegistererWith(prometheus.Labels{"cluster": "east"},
				prometheus.WrapRegistererWith(prometheus.Labels{"cluster": "west"}, registry.NewScope(nil)))
			return registry.NewScope(w)
		}},
	} {
		t.Run("label set twice: "+tt.name, func(t *testing.T) {
			s := tt.give()
			for _, r := range []*registry.Scope{s, s.Child(registry.WithPrefix("sub_"))} {
				if err := r.Register(promtest.Gauge("jobs", 1)); err == nil || !strings.HasPrefix(err.Error(), `registry: label "cluster"`) {
					t.Errorf("Register = %v, want an error naming the label", err)
				}
			}
			if got := s.Len(); got != 0 {
				t.Errorf("Len() = %d", got)
			}
		})
	}

	// Scopes nested three deep, through scopes and wrappers, close
	// cleanly in any order, and leave no record anywhere.
	for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}, {0, 2, 1}, {1, 0, 2}} {
		t.Run(fmt.Sprintf("close order %v", order), func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			a := registry.NewScope(reg)
			b := registry.NewScope(prometheus.WrapRegistererWith(prometheus.Labels{"b": "1"}, a))
			c := registry.NewScope(prometheus.WrapRegistererWithPrefix("c_", b))
			scopes := []*registry.Scope{a, b, c}
			for i, s := range scopes {
				s.MustRegister(promtest.Gauge(fmt.Sprint("g", i), 1), &promtest.Unchecked{Name: fmt.Sprint("u", i), Value: 1})
			}
			for _, i := range order {
				if err := scopes[i].Close(); err != nil {
					t.Errorf("Close of %d = %v", i, err)
				}
			}
			for i, s := range scopes {
				if got := s.Len(); got != 0 {
					t.Errorf("scope %d still owns %d collectors", i, got)
				}
			}
			registrytest.VerifyNone(t, reg)
		})
	}
}

// nestingStory makes a program scope on a fresh registry and a component
// scope in it with make, tells one story through the component, and returns
// what it observed, a line a step.
func nestingStory(t *testing.T, make func(program *registry.Scope) *registry.Scope) []string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	shared := promtest.CounterVec("shared_total", "tenant")
	shared.WithLabelValues("a").Inc()
	shared.WithLabelValues("b").Inc()
	reg.MustRegister(shared)
	program := registry.NewScope(reg, registry.WithName("program"), registry.WithLabels(prometheus.Labels{"p": "1"}))
	var out []string
	note := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	expose := func(step string) {
		series, err := promtest.Series(reg)
		own, ownErr := promtest.Series(program)
		note("%s: registry %q %v; program %q %v; Len %d", step, series, err, own, ownErr, program.Len())
	}

	s := make(program)
	note("String %s", s)
	g, u, pair := promtest.Gauge("jobs", 1), &promtest.Unchecked{Name: "u", Value: 2}, promtest.Gauges{promtest.Gauge("pair", 3)}
	note("Register %v", errors.Join(s.Register(g), s.Register(u), s.Register(pair)))
	s.DeleteOnClose(prometheus.Labels{"tenant": "a"}, shared)
	nested := s.Child(registry.WithName("deep"))
	note("nested Register %v, String %s", nested.Register(promtest.Gauge("deep", 4)), nested)
	note("duplicate %v", s.Register(promtest.Gauge("jobs", 5)))
	expose("registered")
	mfs, err := s.Gather()
	note("Gather %q %v, Len %d", promtest.Lines(mfs), err, s.Len())
	rec := httptest.NewRecorder()
	registry.Handler(program).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	note("page %q", rec.Body.String())
	note("Unregister %v %v", s.Unregister(promtest.Gauge("jobs", 0)), s.Unregister(u))
	expose("unregistered")
	reg.Unregister(promtest.Gauges{prometheus.NewGauge(prometheus.GaugeOpts{Name: "x", Help: "x"})}) // touches nothing
	note("Close %v", s.Close())
	expose("closed")
	note("after %v", errors.Join(s.Register(g), nested.Register(g)))
	return out
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
