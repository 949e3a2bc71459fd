package lifecycle_test

import (
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/promscope/promscope/lifecycle"
	"github.com/promscope/promscope/registry"
	"github.com/promscope/promscope/registry/registrytest"
)

// badComp is a component that registers one gauge, named after it.
type badComp struct {
	name   string
	closes int
}

func (c *badComp) Close() error {
	c.closes++
	return nil
}

func badBuild(name string) func(*registry.Scope) (*badComp, error) {
	return func(scope *registry.Scope) (*badComp, error) {
		if err := scope.Register(prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: "Gauge " + name + "."})); err != nil {
			return nil, err
		}
		return &badComp{name: name}, nil
	}
}

// badEnv is a pedantic registry with another owner's gauge, and a slot on it
// holding a first instance, "first".
type badEnv struct {
	reg   *prometheus.Registry
	slot  *lifecycle.Slot[*badComp]
	first *badComp
}

func newBadEnv(t *testing.T) *badEnv {
	t.Helper()
	e := &badEnv{reg: prometheus.NewPedanticRegistry()}
	other := prometheus.NewGauge(prometheus.GaugeOpts{Name: "other", Help: "Another owner's gauge."})
	other.Set(42)
	e.reg.MustRegister(other)
	e.slot = lifecycle.NewSlot[*badComp](e.reg)
	first, err := e.slot.Replace(badBuild("first"))
	if err != nil {
		t.Fatalf("first Replace = %v", err)
	}
	e.first = first
	return e
}

const badOther = "# HELP other Another owner's gauge.\n# TYPE other gauge\nother 42\n"

// check fails t unless the registry exposes exactly the other owner's gauge
// and want, then closes the slot and checks that only the other's is left.
func (e *badEnv) check(t *testing.T, want string) {
	t.Helper()
	if err := testutil.GatherAndCompare(e.reg, strings.NewReader(badOther+want)); err != nil {
		t.Error(err)
	}
	if err := e.slot.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	if err := testutil.GatherAndCompare(e.reg, strings.NewReader(badOther)); err != nil {
		t.Error(err)
	}
	registrytest.VerifyNone(t, e.reg, "other")
}

func badPanic(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

const badFirst = "# HELP first Gauge first.\n# TYPE first gauge\nfirst 0\n"

func TestBadInputReplace(t *testing.T) {
	tests := []struct {
		name string
		give func(scope *registry.Scope) (*badComp, error)
		// wantErr is the error Replace must return, matched with
		// errors.Is, or nil; wantText, if set, is its exact text.
		wantErr  error
		wantText string
		// wantKept says the new value is kept; want is what the registry
		// must expose besides the other owner's gauge.
		wantKept bool
		want     string
	}{
		{
			name:     "a build returning a nil value and no error",
			give:     func(*registry.Scope) (*badComp, error) { return nil, nil },
			wantKept: true,
		},
		{
			name:    "a build returning a value together with an error",
			give:    func(*registry.Scope) (*badComp, error) { return &badComp{name: "half"}, io.ErrUnexpectedEOF },
			wantErr: io.ErrUnexpectedEOF,
		},
		{
			name: "a build that registers and fails without cleaning up",
			give: func(scope *registry.Scope) (*badComp, error) {
				scope.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "leaky", Help: "Leaky."}))
				return nil, io.ErrUnexpectedEOF
			},
			wantErr: io.ErrUnexpectedEOF,
		},
		{
			name:     "a build registering an invalid metric name",
			give:     badBuild("bad\xffname"),
			wantText: prometheus.NewRegistry().Register(prometheus.NewGauge(prometheus.GaugeOpts{Name: "bad\xffname", Help: "Gauge bad\xffname."})).Error(),
		},
		{
			name:     "a build registering the other owner's gauge",
			give:     badBuild("other"),
			wantText: "a previously registered descriptor", // other help string
		},
		{
			name: "a build that closes its own scope and succeeds",
			give: func(scope *registry.Scope) (*badComp, error) {
				c, err := badBuild("second")(scope)
				if err == nil {
					err = scope.Close()
				}
				return c, err
			},
			wantKept: true,
		},
		{
			name:     "a build that keeps its scope",
			give:     badBuild("second"),
			wantKept: true,
			want:     "# HELP second Gauge second.\n# TYPE second gauge\nsecond 0\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name+" closes the previous instance, keeps only what succeeded and loses nothing of others", func(t *testing.T) {
			e := newBadEnv(t)
			v, err := e.slot.Replace(tt.give)
			switch {
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("Replace = %v, want %v", err, tt.wantErr)
				}
			case tt.wantText != "":
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantText) {
					t.Errorf("Replace = %v, want the parent's error %q", err, tt.wantText)
				}
			case err != nil:
				t.Errorf("Replace = %v", err)
			}
			if e.first.closes != 1 {
				t.Errorf("the first instance was closed %d times, want 1", e.first.closes)
			}
			cur, ok := e.slot.Current()
			if ok != tt.wantKept || cur != v {
				t.Errorf("Current() = %v, %v; Replace returned %v; want kept: %v", cur, ok, v, tt.wantKept)
			}
			e.check(t, tt.want)
			if v != nil && v.closes != 1 {
				t.Errorf("the kept value was closed %d times by the slot's Close, want 1", v.closes)
			}
		})
	}
}

func TestBadInputMisuse(t *testing.T) {
	t.Run("Replace with a nil build panics before it touches the current instance", func(t *testing.T) {
		e := newBadEnv(t)
		v := badPanic(func() { _, _ = e.slot.Replace(nil) })
		if msg, ok := v.(string); !ok || !strings.HasPrefix(msg, "lifecycle: ") {
			t.Errorf("Replace(nil) panicked with %#v, want a \"lifecycle: \" message", v)
		}
		if cur, ok := e.slot.Current(); !ok || cur != e.first || e.first.closes != 0 {
			t.Errorf("Current() = %v, %v (first closed %d times), want the first instance untouched", cur, ok, e.first.closes)
		}
		e.check(t, badFirst)
	})

	t.Run("a build that panics leaves the slot empty and usable, and its registrations gone", func(t *testing.T) {
		e := newBadEnv(t)
		v := badPanic(func() {
			_, _ = e.slot.Replace(func(scope *registry.Scope) (*badComp, error) {
				scope.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "doomed", Help: "Doomed."}))
				panic("boom")
			})
		})
		if v != "boom" {
			t.Errorf("Replace panicked with %#v, want the build's own panic", v)
		}
		if _, ok := e.slot.Current(); ok {
			t.Error("Current() reports an instance")
		}
		if _, err := e.slot.Replace(badBuild("again")); err != nil {
			t.Errorf("Replace after the panic = %v", err)
		}
		e.check(t, "# HELP again Gauge again.\n# TYPE again gauge\nagain 0\n")
	})
}

func TestBadInputSlotParents(t *testing.T) {
	tests := []struct {
		name string
		give prometheus.Registerer
	}{
		{name: "a nil parent", give: nil},
		{name: "a typed-nil *prometheus.Registry parent", give: (*prometheus.Registry)(nil)},
	}
	for _, tt := range tests {
		t.Run("a slot on "+tt.name+" builds into a scope that registers nowhere", func(t *testing.T) {
			slot := lifecycle.NewSlot[*badComp](tt.give)
			var scope *registry.Scope
			if _, err := slot.Replace(func(s *registry.Scope) (*badComp, error) {
				scope = s
				return badBuild("mine")(s)
			}); err != nil {
				t.Fatalf("Replace = %v", err)
			}
			if err := testutil.GatherAndCompare(scope, strings.NewReader("# HELP mine Gauge mine.\n# TYPE mine gauge\nmine 0\n")); err != nil {
				t.Error(err)
			}
			if err := slot.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
			if got := scope.Len(); got != 0 {
				t.Errorf("the scope still owns %d collectors after Close", got)
			}
		})
	}
}

func TestBadInputSlotUseAfterClose(t *testing.T) {
	t.Run("Replace after Close returns ErrClosed and calls nothing", func(t *testing.T) {
		e := newBadEnv(t)
		if err := e.slot.Close(); err != nil {
			t.Fatal(err)
		}
		called := false
		_, err := e.slot.Replace(func(*registry.Scope) (*badComp, error) { called = true; return &badComp{}, nil })
		if !errors.Is(err, lifecycle.ErrClosed) || called {
			t.Errorf("Replace = %v (build called: %v), want ErrClosed", err, called)
		}
		if cur, ok := e.slot.Current(); ok || cur != nil {
			t.Errorf("Current() = %v, %v, want empty", cur, ok)
		}
		if e.first.closes != 1 {
			t.Errorf("the first instance was closed %d times, want 1", e.first.closes)
		}
		e.check(t, "")
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

func TestBadInputSlotCloseDuringGather(t *testing.T) {
	t.Run("Close during a Gather returns without waiting for it, and the next Gather has nothing of the slot", func(t *testing.T) {
		e := newBadEnv(t)
		b := &badBlocking{
			Gauge:    prometheus.NewGauge(prometheus.GaugeOpts{Name: "slow", Help: "Slow."}),
			entered:  make(chan struct{}),
			proceeds: make(chan struct{}),
		}
		if _, err := e.slot.Replace(func(scope *registry.Scope) (*badComp, error) {
			return &badComp{name: "slow"}, scope.Register(b)
		}); err != nil {
			t.Fatal(err)
		}
		gathered := make(chan error, 1)
		go func() {
			_, err := e.reg.Gather()
			gathered <- err
		}()
		<-b.entered
		if err := e.slot.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
		close(b.proceeds)
		if err := <-gathered; err != nil {
			t.Errorf("the Gather in flight = %v", err)
		}
		e.check(t, "")
	})
}
