package registry_test

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/registry"
	"github.com/promscope/promscope/registry/registrytest"
)

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
		// MustRegister names the scope refused, as a reconcile that races
		// a deletion needs to know which.
		tenant := scope.Child(registry.WithName("west"), registry.WithLabels(prometheus.Labels{"tenant": "west"}))
		want := `registry: scope west{tenant="west"}: scope is closed`
		if err, _ := promtest.Panic(func() { tenant.MustRegister(promtest.Gauge("late", 1)) }).(error); !errors.Is(err, registry.ErrClosed) || err.Error() != want {
			t.Errorf("MustRegister on a named scope panicked with %v, want %q", err, want)
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

	// An outsider's value put in place of a scope's value of the same
	// type is left alone unless it is the same collector (Words): a
	// function by its code, a NaN by its bits, a value holding itself by
	// what it holds.
	g := promtest.Gauge("jobs", 1)
	for _, tt := range []struct {
		name, register string
		give           func(ours odd) odd
		same           bool
	}{
		{name: "same function", register: "function", give: func(o odd) odd { return o }, same: true},
		{name: "other function", register: "function", give: func(o odd) odd { o.read = func() float64 { return 1 }; return o }},
		{name: "no function", register: "function", give: func(o odd) odd { o.read = nil; return o }},
		{name: "same NaN", register: "NaN", give: func(o odd) odd { return o }, same: true},
		{name: "other NaN", register: "NaN", give: func(o odd) odd { o.nan = math.Float64frombits(math.Float64bits(o.nan) ^ 1); return o }},
		{name: "a number", register: "NaN", give: func(o odd) odd { o.nan = 0; return o }},
		{name: "equal value holding itself", register: "itself", give: func(odd) odd { return odds(g)["itself"] }, same: true},
		{name: "value holding another", register: "itself", give: func(o odd) odd { o.self = []any{odd{Gauge: g}}; return o }},
		{name: "same value, itself in a map", register: "itself in a map", give: func(o odd) odd { return o }, same: true},
		{name: "equal value, itself in a new map", register: "itself in a map", give: func(odd) odd { return odds(g)["itself in a map"] }},
		{name: "value holding another in a map", register: "itself in a map", give: func(o odd) odd { o.index = map[string]any{"self": odd{Gauge: g}}; return o }},
		{name: "equal windows on another array", register: "windows", give: func(odd) odd { return odds(g)["windows"] }, same: true},
		{name: "other windows on another array", register: "windows", give: func(o odd) odd { u := []any{1, 999}; o.self, o.window = u[:1], u[:2]; return o }},
	} {
		t.Run("outsider's value: "+tt.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			scope := registry.NewScope(reg)
			ours := odds(g)[tt.register]
			scope.MustRegister(ours)
			reg.Unregister(g)
			reg.MustRegister(tt.give(ours))
			err := scope.Close()
			if tt.same {
				if err != nil {
					t.Errorf("Close = %v", err)
				}
				registrytest.VerifyNone(t, reg)
				return
			}
			if !errors.Is(err, registry.ErrNotRegistered) {
				t.Errorf("Close = %v, want ErrNotRegistered", err)
			}
			promtest.Expose(t, reg, "jobs{} 1")
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

	// On a Registerer of the user's own that accepts everything and keeps
	// nothing, Close cannot tell its registrations from ones somebody
	// else unregistered: it reports each, and each twin.
	t.Run("parent that keeps nothing", func(t *testing.T) {
		scope := registry.NewScope(keepNothing{}, registry.WithName("w"))
		g := promtest.Gauge("a", 1)
		scope.MustRegister(g, g, &promtest.Unchecked{Name: "u"})
		metrics, others := promtest.UnregisterErrors(scope.Close())
		if fmt.Sprint(metrics) != "[[a] [a]]" || len(others) != 0 {
			t.Errorf("Close reported %v and %v, want a twice", metrics, others)
		}
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
	// where it described nothing before or describes nothing now, or whose
	// Describe panics by now, is taken back, and its identity is free;
	// also through client_golang's wrappers, which Close sees through
	// without asking the collector.
	for _, tt := range []struct {
		name          string
		before, after []string
		panics        bool
	}{
		{name: "describe changes", before: []string{"jobs"}, after: []string{"other"}},
		{name: "describe appears", after: []string{"other"}},
		{name: "describe vanishes", before: []string{"jobs"}},
		{name: "describe panics", before: []string{"jobs"}, panics: true},
	} {
		for _, wrapped := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, wrapped %t", tt.name, wrapped), func(t *testing.T) {
				reg := prometheus.NewPedanticRegistry()
				scope := registry.NewScope(reg)
				s := &shifty{names: tt.before}
				r := prometheus.Registerer(scope)
				if wrapped {
					r = prometheus.WrapRegistererWith(prometheus.Labels{"w": "1"}, scope)
				}
				r.MustRegister(s)
				s.names, s.panics = tt.after, tt.panics
				if err := scope.Close(); err != nil {
					t.Errorf("Close = %v", err)
				}
				registrytest.VerifyNone(t, reg)
				free := prometheus.Registerer(reg)
				if wrapped {
					free = prometheus.WrapRegistererWith(prometheus.Labels{"w": "1"}, reg)
				}
				for _, name := range tt.before {
					free.MustRegister(promtest.Gauge(name, 1))
				}
			})
		}
	}

	// Close takes back a value collector holding a function, a NaN or
	// itself, with or without a view: the registration is the scope's own
	// (Words: the same collector).
	for name := range odds(nil) {
		for _, opts := range [][]registry.Option{nil, {registry.WithLabels(prometheus.Labels{"c": "1"})}} {
			t.Run(fmt.Sprintf("value holding %s, %d options", name, len(opts)), func(t *testing.T) {
				reg := prometheus.NewPedanticRegistry()
				scope := registry.NewScope(reg, opts...)
				scope.MustRegister(odds(promtest.Gauge("jobs", 1))[name])
				if err := scope.Close(); err != nil {
					t.Errorf("Close = %v", err)
				}
				registrytest.VerifyNone(t, reg)
			})
		}
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
	// collector of unchecked ones, before or after passing the call on,
	// lets the panic go on, and the scope goes on working: the next
	// registration and Close do not wait for ever, and the next unchecked
	// collector is exposed once, not once for each handle the parent took.
	for _, tt := range []struct {
		name, op string
		fault    promtest.Fault
	}{
		{"hub's register panics before", "register", promtest.Panicking},
		{"hub's register panics after", "register", promtest.PanicAfter},
		{"hub's unregister panics", "unregister", promtest.Panicking},
	} {
		t.Run(tt.name, func(t *testing.T) {
			op := tt.op
			p := promtest.NewParent(promtest.On(op, "", 0, tt.fault))
			scope := registry.NewScope(p)
			u := &promtest.Unchecked{Name: "u", Value: 1}
			if op == "register" {
				if v, _ := promtest.Panic(func() { _ = scope.Register(&promtest.Unchecked{Name: "first", Value: 1}) }).(error); !errors.Is(v, promtest.ErrInjected) {
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

	// A Deleter that panics: the panic goes on out of Close, and the next
	// Close carries on past it, taking back everything older.
	t.Run("a Deleter that panics", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg)
		scope.MustRegister(promtest.Gauge("jobs", 1))
		scope.Child().MustRegister(promtest.Gauge("nested", 1))
		scope.DeleteOnClose(prometheus.Labels{"link": "west"}, panicDeleter{})
		if v := promtest.Panic(func() { _ = scope.Close() }); v == nil {
			t.Fatal("Close did not panic")
		}
		if err := scope.Close(); err != nil {
			t.Errorf("the second Close = %v", err)
		}
		if n := scope.Len(); n != 0 {
			t.Errorf("Len() = %d, want 0", n)
		}
		registrytest.VerifyNone(t, reg)
	})

	// A parent that panics as Close takes back out the question it asked
	// about a registration somebody else removed leaves the question
	// registered: the next Close takes it out, reports the registration
	// as before, and the metric can be registered again.
	t.Run("parent panics on the question", func(t *testing.T) {
		p := promtest.NewParent(promtest.On("unregister", "jobs", 0, promtest.Panicking))
		scope := registry.NewScope(p, registry.WithName("s"))
		g := promtest.Gauge("jobs", 1)
		scope.MustRegister(g)
		p.Reg.Unregister(g) // somebody else
		if v, _ := promtest.Panic(func() { scope.Close() }).(error); !errors.Is(v, promtest.ErrInjected) {
			t.Fatalf("Close panicked with %v", v)
		}
		err := scope.Close()
		if metrics, others := promtest.UnregisterErrors(err); len(metrics) != 1 || len(others) != 0 || !strings.Contains(err.Error(), "somebody else unregistered it") {
			t.Errorf("second Close = %v, want jobs reported as unregistered by somebody else", err)
		}
		if err := p.Reg.Register(promtest.Gauge("jobs", 2)); err != nil {
			t.Errorf("jobs cannot be registered again: %v", err)
		}
	})

	// A parent built on MustRegister answers Close's question by
	// panicking with the AlreadyRegisteredError: Close takes that as
	// the answer, and everything back, labelled or not.
	t.Run("parent built on MustRegister", func(t *testing.T) {
		p := promtest.NewParent(func(promtest.Call) promtest.Fault { return promtest.Must })
		scope := registry.NewScope(p, registry.WithName("s"))
		scope.MustRegister(promtest.Gauge("jobs", 1), promtest.CounterVec("requests_total", "code"))
		scope.Child(registry.WithLabels(prometheus.Labels{"shard": "a"})).MustRegister(promtest.Gauge("workers", 2))
		if err := scope.Close(); err != nil {
			t.Fatalf("Close = %v", err)
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

// panicDeleter is a Deleter that panics with promtest.ErrInjected, as one
// holding a nil vector would.
type panicDeleter struct{}

func (panicDeleter) DeletePartialMatch(prometheus.Labels) int { panic(promtest.ErrInjected) }

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
