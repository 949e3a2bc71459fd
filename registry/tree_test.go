package registry_test

import (
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/registry"
	"github.com/promscope/promscope/registry/registrytest"
)

func TestRecycledComponentsLeaveNothing(t *testing.T) {
	const cycles = 50
	shapes := []struct {
		name string
		give func(program *registry.Scope) *registry.Scope
	}{
		{name: "scopes nested in a program scope", give: func(p *registry.Scope) *registry.Scope {
			return registry.NewScope(p, registry.WithLabels(prometheus.Labels{"link": "west"}))
		}},
		{name: "scopes on client_golang's label wrapper of a program scope", give: func(p *registry.Scope) *registry.Scope {
			return registry.NewScope(prometheus.WrapRegistererWith(prometheus.Labels{"link": "west"}, p))
		}},
		{name: "scopes on client_golang's prefix wrapper of a program scope", give: func(p *registry.Scope) *registry.Scope {
			return registry.NewScope(prometheus.WrapRegistererWithPrefix("west_", p))
		}},
	}
	for _, sh := range shapes {
		t.Run(sh.name+", each with checked and unchecked collectors, leave no record and no registration", func(t *testing.T) {
			parent := promtest.NewParent(nil)
			program := registry.NewScope(parent)
			for range cycles {
				c := sh.give(program)
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
			// The program scope registered its hub for unchecked
			// collectors once; nothing else is left.
			hubs := slices.DeleteFunc(parent.Log(), func(l string) bool { return !strings.HasPrefix(l, "register : ") })
			if len(hubs) != 1 {
				t.Errorf("the registry got %d unchecked registrations, want 1: %q", len(hubs), hubs)
			}
			registrytest.VerifyNone(t, parent.Reg)
			if err := program.Close(); err != nil {
				t.Errorf("program Close = %v", err)
			}
		})
	}
}

func TestNestedScopes(t *testing.T) {
	t.Run("a nested scope reports a gauge an outsider unregistered, and the outer scope keeps no record of it", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		p := registry.NewScope(reg)
		s := registry.NewScope(p)
		s.MustRegister(promtest.Gauge("jobs", 1))
		if !reg.Unregister(promtest.Gauge("jobs", 0)) {
			t.Fatal("the outsider's Unregister = false")
		}
		if err := s.Close(); !errors.Is(err, registry.ErrNotRegistered) {
			t.Errorf("Close = %v, want ErrNotRegistered", err)
		}
		if got := p.Len(); got != 0 {
			t.Errorf("the outer scope still counts %d collectors", got)
		}
		if err := p.Close(); err != nil {
			t.Errorf("the outer scope's Close = %v", err)
		}
		registrytest.VerifyNone(t, reg)
	})

	t.Run("closing the outermost of three levels, then the innermost, leaves no record anywhere", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		a := registry.NewScope(reg)
		b := registry.NewScope(a, registry.WithLabels(prometheus.Labels{"b": "1"}))
		c := registry.NewScope(b, registry.WithPrefix("c_"))
		a.MustRegister(promtest.Gauge("a", 1))
		b.MustRegister(promtest.Gauge("b", 1))
		c.MustRegister(promtest.Gauge("c", 1), &promtest.Unchecked{Name: "u", Value: 1})
		if err := a.Close(); err != nil {
			t.Errorf("Close of a = %v", err)
		}
		if err := c.Close(); err != nil {
			t.Errorf("Close of c = %v", err)
		}
		for name, s := range map[string]*registry.Scope{"a": a, "b": b, "c": c} {
			if got := s.Len(); got != 0 {
				t.Errorf("%s still owns %d collectors", name, got)
			}
			if err := s.Register(promtest.Gauge("late", 1)); !errors.Is(err, registry.ErrClosed) {
				t.Errorf("Register on %s = %v, want ErrClosed", name, err)
			}
		}
		if got, _ := promtest.Series(reg); len(got) != 0 {
			t.Errorf("the registry exposes %q", got)
		}
		registrytest.VerifyNone(t, reg)
	})
}

// firstQuiet is a collector that describes nothing the first time it is
// asked, and its gauge every time after.
type firstQuiet struct {
	prometheus.Gauge
	asked atomic.Int32
}

func (f *firstQuiet) Describe(ch chan<- *prometheus.Desc) {
	if f.asked.Add(1) > 1 {
		f.Gauge.Describe(ch)
	}
}

func TestDescribeThatChangesAfterRegister(t *testing.T) {
	t.Run("a collector describing nothing at Register, and a gauge later, is taken back by Close, and the identity is free", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg)
		scope.MustRegister(&firstQuiet{Gauge: promtest.Gauge("jobs", 1)})
		if got, err := promtest.Series(reg); err != nil || !slices.Equal(got, []string{"jobs{} 1"}) {
			t.Errorf("the registry exposes %q, %v", got, err)
		}
		if err := scope.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
		if err := reg.Register(promtest.Gauge("jobs", 2)); err != nil {
			t.Errorf("an equal Register after Close = %v", err)
		}
	})
}

func TestCloseBetweenProbeAndUnregister(t *testing.T) {
	t.Run("an outsider who swaps in an equal collector after Close asked who holds it loses it, as documented", func(t *testing.T) {
		// The parent lets the test act between the two calls: Close's
		// ownership probe (a second Register of the scope's
		// registration) and its Unregister.
		parent := promtest.NewParent(promtest.On("unregister", "jobs", 0, promtest.Block))
		scope := registry.NewScope(parent)
		scope.MustRegister(promtest.Gauge("jobs", 1))
		closed := make(chan error, 1)
		go func() { closed <- scope.Close() }()
		<-parent.Entered
		if !parent.Reg.Unregister(promtest.Gauge("jobs", 0)) {
			t.Fatal("the outsider's Unregister = false")
		}
		theirs := promtest.Gauge("jobs", 2)
		parent.Reg.MustRegister(theirs)
		parent.Release()
		if err := <-closed; err != nil {
			t.Errorf("Close = %v", err)
		}
		// client_golang has no compare-and-unregister: the Unregister
		// that Close had decided on removed the outsider's gauge.
		if got, _ := promtest.Series(parent.Reg); len(got) != 0 {
			t.Errorf("the registry exposes %q: the window is closed now, update the documentation", got)
		}
	})
}
