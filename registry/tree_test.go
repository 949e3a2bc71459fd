package registry_test

import (
	"errors"
	"fmt"
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
	for _, shape := range []struct {
		name     string
		on       func(p *registry.Scope) prometheus.Registerer
		outsider prometheus.Collector // equal to the gauge as the registry holds it
	}{
		{"NewScope on the scope", func(p *registry.Scope) prometheus.Registerer { return p }, promtest.Gauge("jobs", 0)},
		{"NewScope on WrapRegistererWith of the scope", func(p *registry.Scope) prometheus.Registerer {
			return prometheus.WrapRegistererWith(prometheus.Labels{"cluster": "east"}, p)
		}, prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobs", Help: "jobs", ConstLabels: prometheus.Labels{"cluster": "east"}})},
		{"NewScope on WrapRegistererWithPrefix of the scope", func(p *registry.Scope) prometheus.Registerer {
			return prometheus.WrapRegistererWithPrefix("x_", p)
		}, promtest.Gauge("x_jobs", 0)},
		{"NewScope on WrapRegistererWith of a scope on WrapRegistererWithPrefix of the scope", func(p *registry.Scope) prometheus.Registerer {
			q := registry.NewScope(prometheus.WrapRegistererWithPrefix("q_", p))
			return prometheus.WrapRegistererWith(prometheus.Labels{"cluster": "east"}, q)
		}, prometheus.NewGauge(prometheus.GaugeOpts{Name: "q_jobs", Help: "jobs", ConstLabels: prometheus.Labels{"cluster": "east"}})},
	} {
		t.Run("a nested scope reports a gauge an outsider unregistered, and the outer scope keeps no record of it: "+shape.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			p := registry.NewScope(reg)
			p.MustRegister(promtest.Gauge("own", 1))
			s := registry.NewScope(shape.on(p))
			s.MustRegister(promtest.Gauge("jobs", 1))
			if !reg.Unregister(shape.outsider) {
				t.Fatal("the outsider's Unregister = false")
			}
			if err := s.Close(); !errors.Is(err, registry.ErrNotRegistered) {
				t.Errorf("Close = %v, want ErrNotRegistered", err)
			}
			if got := p.Len(); got != 1 {
				t.Errorf("the outer scope counts %d collectors, want 1, its own", got)
			}
			if got, _ := promtest.Series(reg); len(got) != 1 {
				t.Errorf("the registry exposes %q, want the outer scope's gauge only", got)
			}
			if err := p.Close(); err != nil {
				t.Errorf("the outer scope's Close = %v", err)
			}
			registrytest.VerifyNone(t, reg)
		})
		t.Run("a gauge registered again after an outsider removed it, then unregistered, leaves no record in the outer scope: "+shape.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			p := registry.NewScope(reg)
			p.MustRegister(promtest.Gauge("own", 1))
			s := registry.NewScope(shape.on(p))
			g := promtest.Gauge("jobs", 1)
			s.MustRegister(g)
			if !reg.Unregister(shape.outsider) {
				t.Fatal("the outsider's Unregister = false")
			}
			s.MustRegister(g)
			if !s.Unregister(g) {
				t.Error("Unregister = false")
			}
			if got := s.Len(); got != 0 {
				t.Errorf("the nested scope counts %d collectors, want 0", got)
			}
			if got := p.Len(); got != 1 {
				t.Errorf("the outer scope counts %d collectors, want 1, its own", got)
			}
			promtest.Expose(t, reg, "own{} 1")
			if err := p.Close(); err != nil {
				t.Errorf("the outer scope's Close = %v", err)
			}
			registrytest.VerifyNone(t, reg)
		})
	}

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

// shifty is a collector whose Describe changes: its n-th call (from 0)
// describes what describe(n) returns, nothing for nil. It collects one gauge.
type shifty struct {
	calls    atomic.Int32
	describe func(n int32) *prometheus.Desc
	desc     *prometheus.Desc
}

func (s *shifty) Describe(ch chan<- *prometheus.Desc) {
	if d := s.describe(s.calls.Add(1) - 1); d != nil {
		ch <- d
	}
}

func (s *shifty) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(s.desc, prometheus.GaugeValue, 1)
}

func TestDescribeThatChangesAfterRegister(t *testing.T) {
	first := prometheus.NewDesc("shifty", "Changes its mind.", nil, prometheus.Labels{"v": "1"})
	second := prometheus.NewDesc("shifty", "Changes its mind.", nil, prometheus.Labels{"v": "2"})
	tests := []struct {
		name string
		give func(n int32) *prometheus.Desc
	}{
		{name: "other descriptors", give: func(n int32) *prometheus.Desc { return []*prometheus.Desc{first, second}[min(n, 1)] }},
		{name: "nothing", give: func(n int32) *prometheus.Desc { return []*prometheus.Desc{first, nil}[min(n, 1)] }},
		{name: "a descriptor, having described nothing at Register", give: func(n int32) *prometheus.Desc { return []*prometheus.Desc{nil, first}[min(n, 1)] }},
	}
	for _, tt := range tests {
		t.Run("a collector that describes "+tt.name+" after Register is taken back by Close, and its identity is free", func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			scope := registry.NewScope(reg)
			scope.MustRegister(&shifty{describe: tt.give, desc: first})
			promtest.Expose(t, reg, `shifty{v="1"} 1`)
			if err := scope.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
			registrytest.VerifyNone(t, reg)
			if err := reg.Register(&shifty{describe: func(int32) *prometheus.Desc { return first }, desc: first}); err != nil {
				t.Errorf("an equal Register after Close = %v", err)
			}
		})
	}
}

func TestUncheckedCollectors(t *testing.T) {
	for _, opts := range [][]registry.Option{nil, {registry.WithPrefix("app_"), registry.WithLabels(prometheus.Labels{"cluster": "east"})}} {
		t.Run(fmt.Sprintf("are exposed with the scope's options %d, nothing after Close, and again by the next scope", len(opts)), func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			want := "u{} 3"
			if opts != nil {
				want = `app_u{cluster="east"} 3`
			}
			for range 2 {
				scope := registry.NewScope(reg, opts...)
				scope.MustRegister(&promtest.Unchecked{Name: "u", Value: 3})
				promtest.Expose(t, reg, want)
				promtest.Expose(t, scope, want)
				if err := scope.Close(); err != nil {
					t.Errorf("Close = %v", err)
				}
				promtest.Expose(t, reg)
			}
		})
	}
}

func TestFaultyParent(t *testing.T) {
	// onB makes fault of the calls for metric b with op and, if n >= 0,
	// the call's number (0 is b's registration, 1 the ownership question
	// that Close or Unregister asks first).
	onB := func(op string, n int, fault promtest.Fault) func(promtest.Call) promtest.Fault {
		return promtest.On(op, "b", n, fault)
	}
	tests := []struct {
		name            string
		give            func(promtest.Call) promtest.Fault
		wantRegisterErr error // what Register(b) returns
		wantErr         bool  // removing b reports an UnregisterError
		wantInjected    bool  // which wraps the parent's own error
		wantHeld        bool  // the registry still holds b's identity (an empty record)
	}{
		{name: "Register of b fails", give: onB("register", 0, promtest.Fail), wantRegisterErr: promtest.ErrInjected},
		{name: "the ownership question about b fails", give: onB("register", 1, promtest.Fail), wantErr: true, wantInjected: true, wantHeld: true},
		{name: "the ownership question about b says a stranger holds it", give: onB("register", 1, promtest.Claim), wantErr: true, wantHeld: true},
		{name: "the ownership question about b names no holder", give: onB("register", 1, promtest.ClaimNobody), wantErr: true, wantHeld: true},
		{name: "Unregister of b refuses", give: onB("unregister", -1, promtest.Refuse), wantErr: true, wantHeld: true},
		{name: "Unregister of b says true and keeps it", give: onB("unregister", -1, promtest.LieKept), wantHeld: true},
		{name: "Unregister of b removes it and says false", give: onB("unregister", -1, promtest.LieRemoved), wantErr: true},
		{name: "nothing fails"},
	}
	for _, depth := range []int{0, 1, 2} {
		for _, tt := range tests {
			for _, how := range []string{"Close", "Unregister"} {
				if tt.wantRegisterErr != nil && how == "Unregister" {
					continue
				}
				t.Run(fmt.Sprintf("%s reports it when %s, %d levels deep, exposes nothing and keeps the bystander's", how, tt.name, depth), func(t *testing.T) {
					p := promtest.NewParent(tt.give)
					p.Stranger = promtest.Gauge("b", 13)
					bystander := promtest.NewBystander(p.Reg)
					root := registry.NewScope(p)
					s := root
					for range depth {
						s = s.Child()
					}
					root.MustRegister(promtest.Gauge("a", 1))
					b := promtest.Gauge("b", 2)
					if err := s.Register(b); err != tt.wantRegisterErr { //nolint:errorlint // the parent's own error, unchanged
						t.Fatalf("Register(b) = %v, want %v", err, tt.wantRegisterErr)
					}
					s.MustRegister(promtest.Gauge("c", 3))
					var err error
					if how == "Unregister" {
						if ok := s.Unregister(b); ok == tt.wantErr {
							t.Errorf("Unregister(b) = %v", ok)
						}
						if got := root.Len(); got != 2 {
							t.Errorf("Len() after Unregister(b) = %d, want 2: b is forgotten either way", got)
						}
						if err := root.Close(); err != nil {
							t.Errorf("Close = %v", err)
						}
					} else {
						err = root.Close()
						metrics, others := promtest.UnregisterErrors(err)
						if len(metrics) != map[bool]int{true: 1}[tt.wantErr] || len(others) > 0 || errors.Is(err, promtest.ErrInjected) != tt.wantInjected {
							t.Errorf("Close = %v", err)
						}
					}
					promtest.Expose(t, p.Reg, bystander.Series()...)
					if promtest.Holds(p.Reg, "a") || promtest.Holds(p.Reg, "c") || promtest.Holds(p.Reg, "b") != tt.wantHeld {
						t.Errorf("the registry holds a %v, b %v, c %v", promtest.Holds(p.Reg, "a"), promtest.Holds(p.Reg, "b"), promtest.Holds(p.Reg, "c"))
					}
				})
			}
		}
	}
}

func TestFaultyParentEdges(t *testing.T) {
	t.Run("an equal registration after a parent refused to let go gets an error naming the metric, not a record", func(t *testing.T) {
		p := promtest.NewParent(promtest.On("unregister", "b", -1, promtest.Refuse))
		first := registry.NewScope(p)
		first.MustRegister(promtest.Gauge("b", 1))
		if err := first.Close(); !errors.Is(err, registry.ErrNotRegistered) {
			t.Fatalf("Close = %v", err)
		}
		err := registry.NewScope(p).Register(promtest.Gauge("b", 2))
		if err == nil || errors.As(err, &prometheus.AlreadyRegisteredError{}) || !strings.Contains(err.Error(), "b") {
			t.Errorf("Register = %v, want a plain error naming b", err)
		}
	})

	t.Run("a scope on a forwarder of a scope that closes between Close's question and its Unregister has nothing to report", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		outer := registry.NewScope(reg)
		forwarder := promtest.NewParent(func(c promtest.Call) promtest.Fault {
			if c.Op == "unregister" && c.Names == "b" {
				outer.Close()
			}
			return promtest.Pass
		})
		forwarder.Next = outer
		inner := registry.NewScope(forwarder)
		inner.MustRegister(promtest.Gauge("b", 1))
		if err := inner.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
		promtest.Expose(t, reg)
		if promtest.Holds(reg, "b") {
			t.Error("the registry still holds b")
		}
	})

	t.Run("a scope on a Registerer that keeps nothing registers and closes without errors", func(t *testing.T) {
		scope := registry.NewScope(prometheus.WrapRegistererWith(prometheus.Labels{"x": "y"}, nil))
		scope.MustRegister(promtest.Gauge("jobs", 1))
		if err := scope.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
	})
}

func TestCloseOwnership(t *testing.T) {
	tests := []struct {
		name  string
		fault promtest.Fault // what the parent makes of Close's ownership question
	}{
		{name: "the parent answers truthfully", fault: promtest.Pass},
		{name: "the parent's answer fails", fault: promtest.Fail},
		{name: "the parent claims a stranger holds it", fault: promtest.Claim},
	}
	for _, tt := range tests {
		t.Run("Close leaves an outsider's equal gauge, put in place of the scope's, when "+tt.name, func(t *testing.T) {
			p := promtest.NewParent(nil)
			p.Stranger = promtest.Gauge("b", 0)
			scope := registry.NewScope(p)
			scope.MustRegister(promtest.Gauge("b", 1))
			p.Reg.Unregister(promtest.Gauge("b", 0))
			p.Reg.MustRegister(promtest.Gauge("b", 7))
			p.Script = promtest.On("register", "b", 1, tt.fault)
			err := scope.Close()
			if metrics, _ := promtest.UnregisterErrors(err); !slices.EqualFunc(metrics, [][]string{{"b"}}, slices.Equal) || !errors.Is(err, registry.ErrNotRegistered) {
				t.Errorf("Close = %v, want an UnregisterError for b", err)
			}
			promtest.Expose(t, p.Reg, "b{} 7")
		})
	}

	t.Run("Close reports a gauge somebody else unregistered, and leaves nothing behind", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg, registry.WithLabels(prometheus.Labels{"cluster": "east"}))
		scope.MustRegister(promtest.Gauge("jobs", 1))
		prometheus.WrapRegistererWith(prometheus.Labels{"cluster": "east"}, reg).Unregister(promtest.Gauge("jobs", 0))
		if err := scope.Close(); !errors.Is(err, registry.ErrNotRegistered) {
			t.Errorf("Close = %v, want ErrNotRegistered", err)
		}
		registrytest.VerifyNone(t, reg)
	})

	t.Run("Close passes on the registry's error when its descriptor went into somebody else's collector", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg)
		scope.MustRegister(promtest.Gauge("jobs", 1))
		reg.Unregister(promtest.Gauge("jobs", 0))
		reg.MustRegister(promtest.Gauges{promtest.Gauge("jobs", 2), promtest.Gauge("extra", 3)})
		err := scope.Close()
		if !errors.Is(err, registry.ErrNotRegistered) || errors.As(err, &prometheus.AlreadyRegisteredError{}) || !strings.Contains(err.Error(), "already exists") {
			t.Errorf("Close = %v, want the registry's duplicate-descriptor error wrapped", err)
		}
		promtest.Expose(t, reg, "extra{} 3", "jobs{} 2")
	})
}

func TestCloseBlockedInTheParent(t *testing.T) {
	t.Run("holds no lock others need, and the outer scope's Close waits for it", func(t *testing.T) {
		var p *promtest.Parent
		p = promtest.NewParent(func(c promtest.Call) promtest.Fault {
			switch {
			case c.Op == "unregister" && c.Names == "b":
				return promtest.Block
			case c.Op == "unregister" && c.Names == "x":
				p.Release() // the root's Close is under way: let the nested scope's go on
			}
			return promtest.Pass
		})
		bystander := promtest.NewBystander(p.Reg)
		root := registry.NewScope(p)
		nested, sibling, last := root.Child(), root.Child(), root.Child()
		root.MustRegister(promtest.Gauge("a", 1))
		nested.MustRegister(promtest.Gauge("b", 2))
		sibling.MustRegister(promtest.Gauge("c", 3))
		last.MustRegister(promtest.Gauge("x", 9))

		nestedDone := make(chan error, 1)
		go func() { nestedDone <- nested.Close() }()
		<-p.Entered
		// While the nested scope's Close waits in the parent, it is
		// closed and empty, its sibling and the root work as usual, and
		// both the registry and the root gather.
		if err := nested.Register(promtest.Gauge("d", 4)); !errors.Is(err, registry.ErrClosed) {
			t.Errorf("Register on the closing scope = %v", err)
		}
		if err := sibling.Register(promtest.Gauge("e", 5)); err != nil {
			t.Errorf("the sibling's Register = %v", err)
		}
		if got := root.Len(); got != 4 {
			t.Errorf("root Len() = %d, want 4 (a, c, e and x)", got)
		}
		if _, err := p.Reg.Gather(); err != nil {
			t.Error(err)
		}
		if _, err := root.Gather(); err != nil {
			t.Error(err)
		}
		// The root closes its nested scopes first, the newest, last, at
		// once; then it waits for the Close of nested under way.
		if err := root.Close(); err != nil {
			t.Errorf("root Close = %v", err)
		}
		if promtest.Holds(p.Reg, "b") {
			t.Error("the root's Close returned while its nested scope's b was still registered")
		}
		promtest.Expose(t, p.Reg, bystander.Series()...)
		if err := <-nestedDone; err != nil {
			t.Errorf("nested Close = %v", err)
		}
	})

	t.Run("a scope on a forwarder of a scope closing in the parent has nothing left to do", func(t *testing.T) {
		p := promtest.NewParent(promtest.On("unregister", "b", 0, promtest.Block))
		outer := registry.NewScope(p)
		forwarder := promtest.NewParent(nil)
		forwarder.Next = outer
		inner := registry.NewScope(forwarder)
		inner.MustRegister(promtest.Gauge("b", 2))
		outerDone := make(chan error, 1)
		go func() { outerDone <- outer.Close() }()
		<-p.Entered // the outer Close is taking b back, in the parent
		if err := inner.Close(); err != nil {
			t.Errorf("inner Close = %v", err)
		}
		p.Release()
		if err := <-outerDone; err != nil {
			t.Errorf("outer Close = %v", err)
		}
		if promtest.Holds(p.Reg, "b") {
			t.Error("the registry still holds b")
		}
	})

	t.Run("a Register blocked in the parent completes before a racing Close, which removes it", func(t *testing.T) {
		p := promtest.NewParent(promtest.On("register", "b", 0, promtest.Block))
		scope := registry.NewScope(p)
		registered := make(chan error, 1)
		go func() { registered <- scope.Register(promtest.Gauge("b", 2)) }()
		<-p.Entered
		closed := make(chan error, 1)
		go func() { closed <- scope.Close() }()
		p.Release()
		if err := errors.Join(<-registered, <-closed); err != nil {
			t.Errorf("Register, Close = %v", err)
		}
		if promtest.Holds(p.Reg, "b") {
			t.Error("the registry still holds b")
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
