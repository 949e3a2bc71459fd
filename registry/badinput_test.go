package registry_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/promscope/promscope/registry"
	"github.com/promscope/promscope/registry/registrytest"
)

// badEnv is a pedantic registry on which another owner has registered a
// gauge and a shared vector, and a scope on it.
type badEnv struct {
	reg    *prometheus.Registry
	shared *prometheus.GaugeVec
	scope  *registry.Scope
}

func newBadEnv(opts ...registry.Option) *badEnv {
	e := &badEnv{reg: prometheus.NewPedanticRegistry()}
	other := prometheus.NewGauge(prometheus.GaugeOpts{Name: "other", Help: "Another owner's gauge."})
	other.Set(42)
	e.shared = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "shared", Help: "Another owner's vector."}, []string{"tenant"})
	e.shared.WithLabelValues("a").Set(1)
	e.shared.WithLabelValues("b").Set(2)
	e.reg.MustRegister(other, e.shared)
	e.scope = registry.NewScope(e.reg, opts...)
	return e
}

// badOthers is what the other owner exposes, untouched.
const badOthers = `
# HELP other Another owner's gauge.
# TYPE other gauge
other 42
# HELP shared Another owner's vector.
# TYPE shared gauge
shared{tenant="a"} 1
shared{tenant="b"} 2
`

// check fails t unless the other owner's metrics are all still there, and
// closing the scope leaves nothing else.
func (e *badEnv) check(t *testing.T) {
	t.Helper()
	if err := testutil.GatherAndCompare(e.reg, strings.NewReader(badOthers), "other", "shared"); err != nil {
		t.Errorf("the other owner's metrics changed: %v", err)
	}
	if err := e.scope.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	registrytest.VerifyNone(t, e.reg, "other", "shared")
}

func badGauge(name string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: "Bad input gauge " + name + "."})
}

func badPanic(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// badPair is a checked collector of two descriptors.
type badPair [2]*prometheus.Desc

func (p badPair) Describe(ch chan<- *prometheus.Desc) { ch <- p[0]; ch <- p[1] }
func (badPair) Collect(chan<- prometheus.Metric)      {}

func TestBadInputErrors(t *testing.T) {
	tests := []struct {
		name string
		opts []registry.Option
		// give does the bad thing through e.scope.
		give func(e *badEnv) error
		// want is what errors.Is must find, or nil.
		want error
		// wantAlreadyRegistered says errors.As must find a
		// prometheus.AlreadyRegisteredError.
		wantAlreadyRegistered bool
		// wantParent, if set, gives the error the parent itself returns
		// for the same input, which the scope must return unchanged.
		wantParent func() error
	}{
		{
			name: "Register of a nil collector",
			give: func(e *badEnv) error { return e.scope.Register(nil) },
			want: registry.ErrNilCollector,
		},
		{
			name: "Register of a typed-nil vector",
			give: func(e *badEnv) error { return e.scope.Register((*prometheus.GaugeVec)(nil)) },
			want: registry.ErrNilCollector,
		},
		{
			name: "Register of a nil Gauge interface",
			give: func(e *badEnv) error { var g prometheus.Gauge; return e.scope.Register(g) },
			want: registry.ErrNilCollector,
		},
		{
			name: "an invalid metric name (not UTF-8)",
			give: func(e *badEnv) error { return e.scope.Register(badGauge("bad\xffname")) },
			wantParent: func() error {
				return prometheus.NewPedanticRegistry().Register(badGauge("bad\xffname"))
			},
		},
		{
			name: "a prefix that makes the name invalid",
			opts: []registry.Option{registry.WithPrefix("\xff_")},
			give: func(e *badEnv) error { return e.scope.Register(badGauge("jobs")) },
			wantParent: func() error {
				return prometheus.WrapRegistererWithPrefix("\xff_", prometheus.NewPedanticRegistry()).Register(badGauge("jobs"))
			},
		},
		{
			name: "an empty label name",
			opts: []registry.Option{registry.WithLabels(prometheus.Labels{"": "x"})},
			give: func(e *badEnv) error { return e.scope.Register(badGauge("jobs")) },
			wantParent: func() error {
				return prometheus.WrapRegistererWith(prometheus.Labels{"": "x"}, prometheus.NewPedanticRegistry()).Register(badGauge("jobs"))
			},
		},
		{
			name: "a scope label the collector already has",
			opts: []registry.Option{registry.WithLabels(prometheus.Labels{"zone": "a"})},
			give: func(e *badEnv) error {
				return e.scope.Register(prometheus.NewGauge(prometheus.GaugeOpts{
					Name: "jobs", Help: "Jobs.", ConstLabels: prometheus.Labels{"zone": "b"},
				}))
			},
			wantParent: func() error {
				return prometheus.WrapRegistererWith(prometheus.Labels{"zone": "a"}, prometheus.NewPedanticRegistry()).Register(
					prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobs", Help: "Jobs.", ConstLabels: prometheus.Labels{"zone": "b"}}))
			},
		},
		{
			name: "a help string other than the one the other owner registered the name with",
			give: func(e *badEnv) error {
				return e.scope.Register(prometheus.NewGauge(prometheus.GaugeOpts{Name: "other", Help: "Different help.", ConstLabels: prometheus.Labels{"k": "v"}}))
			},
			wantParent: func() error {
				reg := prometheus.NewPedanticRegistry()
				reg.MustRegister(badGauge("other"))
				return reg.Register(prometheus.NewGauge(prometheus.GaugeOpts{Name: "other", Help: "Different help.", ConstLabels: prometheus.Labels{"k": "v"}}))
			},
		},
		{
			name: "label names other than the other owner registered the name with",
			give: func(e *badEnv) error {
				v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "shared", Help: "Another owner's vector."}, []string{"region"})
				return e.scope.Register(v)
			},
			wantParent: func() error {
				reg := prometheus.NewPedanticRegistry()
				reg.MustRegister(prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "shared", Help: "Another owner's vector."}, []string{"tenant"}))
				return reg.Register(prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "shared", Help: "Another owner's vector."}, []string{"region"}))
			},
		},
		{
			name: "a collector describing one name with two help strings",
			give: func(e *badEnv) error {
				return e.scope.Register(badPair{
					prometheus.NewDesc("pair", "One help.", nil, prometheus.Labels{"n": "1"}),
					prometheus.NewDesc("pair", "Another help.", nil, prometheus.Labels{"n": "2"}),
				})
			},
			wantParent: func() error {
				return prometheus.NewPedanticRegistry().Register(badPair{
					prometheus.NewDesc("pair", "One help.", nil, prometheus.Labels{"n": "1"}),
					prometheus.NewDesc("pair", "Another help.", nil, prometheus.Labels{"n": "2"}),
				})
			},
		},
		{
			name: "the other owner's own gauge registered again through the scope",
			give: func(e *badEnv) error {
				return e.scope.Register(prometheus.NewGauge(prometheus.GaugeOpts{Name: "other", Help: "Another owner's gauge."}))
			},
			wantAlreadyRegistered: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name+" gets a clear error, tracks nothing and loses nothing of others", func(t *testing.T) {
			e := newBadEnv(tt.opts...)
			err := tt.give(e)
			if err == nil {
				t.Fatal("got no error")
			}
			var are prometheus.AlreadyRegisteredError
			if tt.wantAlreadyRegistered && !errors.As(err, &are) {
				t.Errorf("error %q is not an AlreadyRegisteredError", err)
			}
			if tt.want != nil && (!errors.Is(err, tt.want) || !strings.HasPrefix(err.Error(), "registry: ")) {
				t.Errorf("error %q does not wrap %q with a \"registry: \" message", err, tt.want)
			}
			if tt.wantParent != nil {
				want := tt.wantParent()
				if want == nil || err.Error() != want.Error() {
					t.Errorf("error = %q, want the parent's own %q unchanged", err, want)
				}
			}
			if got := e.scope.Len(); got != 0 {
				t.Errorf("Len() = %d, want 0: a failed registration is not tracked", got)
			}
			e.check(t)
		})
	}
}

func TestBadInputPanics(t *testing.T) {
	var nilVec *prometheus.CounterVec
	tests := []struct {
		name string
		give func(e *badEnv)
		want string // the start of the panic message
	}{
		{
			name: "DeleteOnClose with a nil vector",
			give: func(e *badEnv) { e.scope.DeleteOnClose(prometheus.Labels{"tenant": "a"}, e.shared, nil) },
			want: "registry: DeleteOnClose: vector 1 is nil",
		},
		{
			name: "DeleteOnClose with a typed-nil vector",
			give: func(e *badEnv) { e.scope.DeleteOnClose(prometheus.Labels{"tenant": "a"}, nilVec) },
			want: "registry: DeleteOnClose: vector 0 is nil",
		},
		{
			name: "DeleteOnClose with empty labels",
			give: func(e *badEnv) { e.scope.DeleteOnClose(prometheus.Labels{}, e.shared) },
			want: "registry: DeleteOnClose with no labels",
		},
		{
			name: "DeleteOnClose with nil labels",
			give: func(e *badEnv) { e.scope.DeleteOnClose(nil, e.shared) },
			want: "registry: DeleteOnClose with no labels",
		},
		{
			name: "DeleteOnClose with empty labels on a closed scope",
			give: func(e *badEnv) {
				if err := e.scope.Close(); err != nil {
					panic(err)
				}
				e.scope.DeleteOnClose(nil, e.shared)
			},
			want: "registry: DeleteOnClose with no labels",
		},
		{
			name: "DeleteOnClose with no vectors",
			give: func(e *badEnv) { e.scope.DeleteOnClose(prometheus.Labels{"tenant": "a"}) },
			want: "registry: DeleteOnClose needs at least one vector",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name+" panics as documented and loses nothing of others", func(t *testing.T) {
			e := newBadEnv()
			e.scope.MustRegister(badGauge("mine"))
			v := badPanic(func() { tt.give(e) })
			msg, ok := v.(string)
			if !ok || !strings.HasPrefix(msg, tt.want) {
				t.Errorf("panicked with %#v, want a message starting %q", v, tt.want)
			}
			e.check(t)
		})
	}
}

func TestBadInputParents(t *testing.T) {
	tests := []struct {
		name string
		give prometheus.Registerer
	}{
		{name: "a nil parent", give: nil},
		{name: "a typed-nil *prometheus.Registry parent", give: (*prometheus.Registry)(nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name+" registers nowhere, and the scope still tracks, gathers and closes", func(t *testing.T) {
			scope := registry.NewScope(tt.give, nil, registry.WithLabels(nil), registry.WithLabels(prometheus.Labels{}))
			g := badGauge("mine")
			g.Set(3)
			if err := scope.Register(g); err != nil {
				t.Fatalf("Register = %v", err)
			}
			want := "# HELP mine Bad input gauge mine.\n# TYPE mine gauge\nmine 3\n"
			if err := testutil.GatherAndCompare(scope, strings.NewReader(want)); err != nil {
				t.Error(err)
			}
			if !scope.Unregister(g) {
				t.Error("Unregister = false")
			}
			if err := scope.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
		})
	}
}

func TestBadInputUseAfterClose(t *testing.T) {
	tests := []struct {
		name string
		give func(e *badEnv) error
		want error
	}{
		{name: "Register", give: func(e *badEnv) error { return e.scope.Register(badGauge("late")) }, want: registry.ErrClosed},
		{name: "MustRegister", give: func(e *badEnv) error {
			v := badPanic(func() { e.scope.MustRegister(badGauge("late")) })
			err, _ := v.(error)
			return err
		}, want: registry.ErrClosed},
		{name: "Register through a Child", give: func(e *badEnv) error { return e.scope.Child().Register(badGauge("late")) }, want: registry.ErrClosed},
		{name: "Register through a scope on the scope", give: func(e *badEnv) error {
			return registry.NewScope(e.scope).Register(badGauge("late"))
		}, want: registry.ErrClosed},
		{name: "Unregister", give: func(e *badEnv) error {
			if e.scope.Unregister(badGauge("mine")) {
				return errors.New("Unregister = true")
			}
			return nil
		}},
		{name: "Gather", give: func(e *badEnv) error {
			mfs, err := e.scope.Gather()
			if len(mfs) > 0 {
				return fmt.Errorf("Gather returned %d families", len(mfs))
			}
			return err
		}},
		{name: "Len", give: func(e *badEnv) error {
			if n := e.scope.Len(); n != 0 {
				return fmt.Errorf("Len() = %d", n)
			}
			return nil
		}},
		{name: "a second Close", give: func(e *badEnv) error { return e.scope.Close() }},
	}
	for _, tt := range tests {
		t.Run(tt.name+" after Close answers as documented and touches nothing", func(t *testing.T) {
			e := newBadEnv()
			e.scope.MustRegister(badGauge("mine"))
			if err := e.scope.Close(); err != nil {
				t.Fatalf("Close = %v", err)
			}
			err := tt.give(e)
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
			e.check(t)
		})
	}

	t.Run("DeleteOnClose after Close deletes at once, only the matching series", func(t *testing.T) {
		e := newBadEnv()
		if err := e.scope.Close(); err != nil {
			t.Fatal(err)
		}
		e.scope.DeleteOnClose(prometheus.Labels{"tenant": "a"}, e.shared)
		want := "# HELP shared Another owner's vector.\n# TYPE shared gauge\nshared{tenant=\"b\"} 2\n"
		if err := testutil.GatherAndCompare(e.reg, strings.NewReader(want), "shared"); err != nil {
			t.Error(err)
		}
	})
}

// badBlocking is a gauge whose Collect tells when it starts, then waits.
type badBlocking struct {
	prometheus.Gauge
	once     sync.Once
	entered  chan struct{}
	proceeds chan struct{}
}

func (b *badBlocking) Collect(ch chan<- prometheus.Metric) {
	b.once.Do(func() {
		close(b.entered)
		<-b.proceeds
	})
	b.Gauge.Collect(ch)
}

func TestBadInputCloseDuringGather(t *testing.T) {
	gatherers := []struct {
		name string
		give func(e *badEnv) prometheus.Gatherer
	}{
		{name: "the registry's", give: func(e *badEnv) prometheus.Gatherer { return e.reg }},
		{name: "the scope's own", give: func(e *badEnv) prometheus.Gatherer { return e.scope }},
	}
	for _, g := range gatherers {
		t.Run("Close during "+g.name+" Gather returns without waiting for it, and the next Gather has nothing of the scope", func(t *testing.T) {
			e := newBadEnv()
			b := &badBlocking{Gauge: badGauge("slow"), entered: make(chan struct{}), proceeds: make(chan struct{})}
			e.scope.MustRegister(b, badGauge("fast"))
			gathered := make(chan error, 1)
			go func() {
				_, err := g.give(e).Gather()
				gathered <- err
			}()
			<-b.entered
			if err := e.scope.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
			close(b.proceeds)
			if err := <-gathered; err != nil {
				t.Errorf("the Gather in flight = %v", err)
			}
			registrytest.VerifyNone(t, e.reg, "other", "shared")
			e.check(t)
		})
	}
}

// badShifty is a collector whose Describe changes: it describes first for
// the first `steady` calls, then second (nothing, if second is nil).
type badShifty struct {
	calls         atomic.Int32
	steady        int32
	first, second *prometheus.Desc
}

func (s *badShifty) Describe(ch chan<- *prometheus.Desc) {
	d := s.first
	if s.calls.Add(1) > s.steady {
		d = s.second
	}
	if d != nil {
		ch <- d
	}
}

func (s *badShifty) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(s.first, prometheus.GaugeValue, 1)
}

func TestBadInputDescribeChanges(t *testing.T) {
	first := prometheus.NewDesc("shifty", "A collector that changes its mind.", nil, prometheus.Labels{"v": "1"})
	second := prometheus.NewDesc("shifty", "A collector that changes its mind.", nil, prometheus.Labels{"v": "2"})
	tests := []struct {
		name string
		// give makes the collector; the scope describes it once, at
		// Register, and tells the parent what it said then.
		give func() *badShifty
	}{
		{name: "to other descriptors after registering", give: func() *badShifty {
			return &badShifty{steady: 1, first: first, second: second}
		}},
		{name: "to nothing after registering", give: func() *badShifty {
			return &badShifty{steady: 1, first: first}
		}},
		{name: "to other descriptors every call", give: func() *badShifty {
			return &badShifty{steady: 0, first: first, second: second}
		}},
	}
	for _, tt := range tests {
		t.Run("a collector whose Describe changes "+tt.name+" is taken back by Close, and others lose nothing", func(t *testing.T) {
			e := newBadEnv()
			c := tt.give()
			if err := e.scope.Register(c); err != nil {
				t.Fatalf("Register = %v", err)
			}
			if err := e.scope.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
			registrytest.VerifyNone(t, e.reg, "other", "shared")
			if err := testutil.GatherAndCompare(e.reg, strings.NewReader(badOthers)); err != nil {
				t.Errorf("after Close: %v", err)
			}
		})
	}
}

// badUnhashable is a checked collector whose type cannot be a map key.
type badUnhashable struct {
	gauges []prometheus.Gauge
}

func (u badUnhashable) Describe(ch chan<- *prometheus.Desc) {
	for _, g := range u.gauges {
		g.Describe(ch)
	}
}

func (u badUnhashable) Collect(ch chan<- prometheus.Metric) {
	for _, g := range u.gauges {
		g.Collect(ch)
	}
}

func TestBadInputUnhashableCollector(t *testing.T) {
	t.Run("a collector that cannot be a map key is found by its descriptors", func(t *testing.T) {
		e := newBadEnv()
		c := badUnhashable{gauges: []prometheus.Gauge{badGauge("u1"), badGauge("u2")}}
		if err := e.scope.Register(c); err != nil {
			t.Fatalf("Register = %v", err)
		}
		if !e.scope.Unregister(c) {
			t.Error("Unregister = false")
		}
		registrytest.VerifyNone(t, e.reg, "other", "shared")
		e.check(t)
	})

	t.Run("an unchecked collector that cannot be a map key is found by Unregister as an equal value", func(t *testing.T) {
		e := newBadEnv()
		u := badUnhashableUnchecked{values: []float64{7}}
		if err := e.scope.Register(u); err != nil {
			t.Fatalf("Register = %v", err)
		}
		want := badOthers + "# HELP odd An unhashable unchecked gauge.\n# TYPE odd gauge\nodd 7\n"
		if err := testutil.GatherAndCompare(e.reg, strings.NewReader(want)); err != nil {
			t.Error(err)
		}
		if !e.scope.Unregister(u) {
			t.Error("Unregister = false")
		}
		e.check(t)
	})
}

// badUnhashableUnchecked is an unchecked collector whose type cannot be a
// map key.
type badUnhashableUnchecked struct {
	values []float64
}

func (badUnhashableUnchecked) Describe(chan<- *prometheus.Desc) {}

func (u badUnhashableUnchecked) Collect(ch chan<- prometheus.Metric) {
	d := prometheus.NewDesc("odd", "An unhashable unchecked gauge.", nil, nil)
	for _, v := range u.values {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
}
