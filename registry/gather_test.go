package registry_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/internal/describe"
	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/registry"
)

func TestGather(t *testing.T) {
	// A collector of the user's own that collects the scope it is
	// registered in is opaque to Register, and accepted ("What is not
	// promised"): a scrape of the registry ends with an error rather than
	// the program.
	t.Run("a cycle through a collector of the user's", func(t *testing.T) {
		reg := prometheus.NewRegistry()
		s := registry.NewScope(reg)
		s.MustRegister(&promtest.Unchecked{Name: "u", Value: 1})
		if err := s.Register(holder{s}); err != nil {
			t.Skipf("refused, which is as good: %v", err)
		}
		if _, err := reg.Gather(); err == nil || !strings.Contains(err.Error(), "collections of a tree of scopes under way at once") {
			t.Errorf("Gather = %v, want the cut", err)
		}
	})

	// Scrapes under way at once, more of them than any cycle the tree
	// stops, each collect the tree's unchecked collectors whole.
	t.Run("concurrent scrapes", func(t *testing.T) {
		const scrapes = 100
		reg := prometheus.NewRegistry()
		s := registry.NewScope(reg)
		defer s.Close()
		b := &barrier{n: scrapes, all: make(chan struct{})}
		s.MustRegister(b)
		var wg sync.WaitGroup
		errs := make(chan error, scrapes)
		for range scrapes {
			wg.Go(func() {
				mfs, err := reg.Gather()
				if err == nil && len(mfs) != 1 {
					err = fmt.Errorf("gathered %d families", len(mfs))
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	})

	// Gather returns what a scope and the scopes nested in it own, as the
	// registry sees it, sorted; nothing once the scope is closed.
	t.Run("own and nested, sorted", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		registry.NewScope(reg).MustRegister(promtest.Gauge("other_component", 9))
		scope := registry.NewScope(reg, registry.WithPrefix("app_"), registry.WithLabels(prometheus.Labels{"cluster": "east"}))
		scope.MustRegister(promtest.Gauge("zeta", 1))
		scope.Child(registry.WithLabels(prometheus.Labels{"tenant": "acme"})).MustRegister(promtest.Gauge("mid", 2))
		scope.MustRegister(promtest.Gauge("alpha", 3))
		mfs, err := scope.Gather()
		var names []string
		for _, mf := range mfs {
			names = append(names, mf.GetName())
		}
		if want := []string{"app_alpha", "app_mid", "app_zeta"}; err != nil || !slices.Equal(names, want) {
			t.Errorf("Gather = %q, %v; want %q in this order", names, err, want)
		}
		promtest.Expose(t, scope, `app_alpha{cluster="east"} 3`, `app_mid{cluster="east",tenant="acme"} 2`, `app_zeta{cluster="east"} 1`)
		scope.Close()
		promtest.Expose(t, scope)
	})

	// Gather shows the labels of the scopes around, and of the wrappers a
	// scope was made through, not those of a Registerer above the
	// outermost scope.
	t.Run("labels around", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		program := registry.NewScope(prometheus.WrapRegistererWith(prometheus.Labels{"zone": "z1"}, reg),
			registry.WithPrefix("p_"), registry.WithLabels(prometheus.Labels{"cluster": "east"}))
		defer program.Close()
		tenant := registry.NewScope(prometheus.WrapRegistererWith(prometheus.Labels{"tenant": "t"}, program))
		tenant.MustRegister(promtest.Gauge("jobs", 2))
		promtest.Expose(t, tenant, `p_jobs{cluster="east",tenant="t"} 2`)
		promtest.Expose(t, program, `p_jobs{cluster="east",tenant="t"} 2`)
		promtest.Expose(t, reg, `p_jobs{cluster="east",tenant="t",zone="z1"} 2`)
	})

	// A scope is a Collector: it describes and collects what it and its
	// nested scopes own, and describes nothing when one of them owns an
	// unchecked collector, so that even a pedantic registry takes it.
	t.Run("collector", func(t *testing.T) {
		scope := registry.NewScope(nil, registry.WithPrefix("app_"))
		scope.MustRegister(promtest.Gauge("a", 1))
		nested := registry.NewScope(scope)
		nested.MustRegister(promtest.CounterVec("b_total", "code"))
		if got := describe.Names(describe.Descs(scope)); !slices.Equal(got, []string{"app_a", "app_b_total"}) {
			t.Errorf("Describe names %q", got)
		}
		u := &promtest.Unchecked{Name: "u", Value: 2}
		nested.MustRegister(u)
		if got := describe.Descs(scope); len(got) != 0 {
			t.Errorf("Describe of a scope with an unchecked collector sends %v", got)
		}
		elsewhere := prometheus.NewPedanticRegistry()
		elsewhere.MustRegister(scope)
		promtest.Expose(t, elsewhere, "app_a{} 1", "app_u{} 2")
	})

	// A metric whose descriptor client_golang's wrappers cannot wrap (one
	// NewInvalidDesc made, under a prefix) fails that scrape with its error,
	// as it would if registered raw, and the rest is gathered.
	t.Run("invalid metric under a prefix", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		bystander := promtest.NewBystander(reg)
		scope := registry.NewScope(reg, registry.WithPrefix("app_"), registry.WithLabels(prometheus.Labels{"zone": "a"}))
		bad := errors.New("bad")
		scope.MustRegister(&promtest.Unchecked{Err: bad})
		series, err := promtest.Series(reg)
		if !errors.Is(err, bad) {
			t.Errorf("Gather error = %v, want %v", err, bad)
		}
		if !slices.Equal(series, bystander.Series()) {
			t.Errorf("Gather exposes %q, want the bystander's %q", series, bystander.Series())
		}
	})

	// A collector registered again after an outsider removed it, through
	// the scope that had it or a scope nested in it, with or without a
	// view, is gathered and counted once, by the scope and as a Collector
	// registered elsewhere: the registry holds it once.
	for _, labels := range []prometheus.Labels{nil, {"c": "1"}} {
		for _, nested := range []bool{false, true} {
			t.Run(fmt.Sprintf("registered again, nested %t, %d labels", nested, len(labels)), func(t *testing.T) {
				reg := prometheus.NewPedanticRegistry()
				scope := registry.NewScope(reg, registry.WithLabels(labels))
				g := promtest.Gauge("jobs", 1)
				scope.MustRegister(g)
				if !prometheus.WrapRegistererWith(labels, reg).Unregister(g) { // an outsider
					t.Fatal("the outsider's Unregister = false")
				}
				again := scope
				if nested {
					again = scope.Child()
				}
				again.MustRegister(g)
				want := strings.Replace("jobs{} 1", "{}", map[bool]string{false: "{}", true: `{c="1"}`}[labels != nil], 1)
				promtest.Expose(t, reg, want)
				promtest.Expose(t, scope, want)
				elsewhere := prometheus.NewPedanticRegistry()
				elsewhere.MustRegister(scope)
				promtest.Expose(t, elsewhere, want)
				if n := scope.Len(); n != 1 {
					t.Errorf("Len() = %d, want 1", n)
				}
			})
		}
	}

	// The same across two trees, the second made on a Registerer of the
	// user's own that forwards to the first, as it is or through a
	// client_golang wrapper: the first tree holds the second's viewed
	// collector of one collector twice, counts it once, and forgets both
	// when the second tree takes it back.
	for _, wrapped := range []bool{false, true} {
		t.Run(fmt.Sprintf("registered again, on a forwarder, wrapped %t", wrapped), func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			a := registry.NewScope(reg, registry.WithName("a"))
			forwarder := promtest.NewParent(nil)
			name := "jobs"
			forwarder.Next = a
			if wrapped {
				forwarder.Next, name = prometheus.WrapRegistererWithPrefix("p_", a), "p_jobs"
			}
			b := registry.NewScope(forwarder, registry.WithLabels(prometheus.Labels{"b": "1"}))
			g := promtest.Gauge("jobs", 1)
			b.MustRegister(g)
			outsider := prometheus.WrapRegistererWith(prometheus.Labels{"b": "1"}, reg)
			if wrapped {
				outsider = prometheus.WrapRegistererWithPrefix("p_", outsider)
			}
			if !outsider.Unregister(g) {
				t.Fatal("the outsider's Unregister = false")
			}
			b.MustRegister(g)
			promtest.Expose(t, a, name+`{b="1"} 1`)
			if n := a.Len(); n != 1 {
				t.Errorf("a.Len() = %d, want 1", n)
			}
			if err := b.Close(); err != nil {
				t.Errorf("b.Close() = %v", err)
			}
			if n := a.Len(); n != 0 {
				t.Errorf("after b.Close, a.Len() = %d, want 0", n)
			}
			if err := a.Close(); err != nil {
				t.Errorf("a.Close() = %v", err)
			}
		})
	}

	gatherers := []struct {
		name string
		give func(reg *prometheus.Registry, s *registry.Scope) prometheus.Gatherer
	}{
		{name: "registry", give: func(reg *prometheus.Registry, _ *registry.Scope) prometheus.Gatherer { return reg }},
		{name: "scope", give: func(_ *prometheus.Registry, s *registry.Scope) prometheus.Gatherer { return s }},
	}
	// A Close during a Gather, the registry's or the scope's own, does not
	// wait for it, and the next Gather has nothing of the scope.
	for _, g := range gatherers {
		t.Run("Close during "+g.name+" Gather", func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			bystander := promtest.NewBystander(reg)
			scope := registry.NewScope(reg)
			slow := &stalling{Gauge: promtest.Gauge("slow", 1), entered: make(chan struct{}), proceed: make(chan struct{})}
			scope.MustRegister(slow, promtest.Gauge("fast", 2))
			gathered := make(chan error, 1)
			go func() {
				_, err := g.give(reg, scope).Gather()
				gathered <- err
			}()
			<-slow.entered
			if err := scope.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
			close(slow.proceed)
			if err := <-gathered; err != nil {
				t.Errorf("the Gather in flight = %v", err)
			}
			promtest.Expose(t, reg, bystander.Series()...)
		})
	}
}

// stalling is a gauge whose first Collect says it started, then waits.
type stalling struct {
	prometheus.Gauge
	once             sync.Once
	entered, proceed chan struct{}
}

func (s *stalling) Collect(ch chan<- prometheus.Metric) {
	s.once.Do(func() {
		close(s.entered)
		<-s.proceed
	})
	s.Gauge.Collect(ch)
}

// barrier is an unchecked collector whose Collect waits until n collections
// are under way, or a while, then collects one gauge.
type barrier struct {
	mu  sync.Mutex
	n   int
	all chan struct{}
}

func (*barrier) Describe(chan<- *prometheus.Desc) {}

func (b *barrier) Collect(ch chan<- prometheus.Metric) {
	b.mu.Lock()
	if b.n--; b.n == 0 {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
	case <-time.After(10 * time.Second):
	}
	ch <- promtest.Gauge("barrier", 1)
}
