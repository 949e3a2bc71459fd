package lifecycle_test

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/lifecycle"
	"github.com/promscope/promscope/registry"
)

// The other owner's gauge, which a slot must never touch, as exposed.
const other = "other{} 42"

// register registers, through scope, what generation gen of the tests'
// component exposes: gen at gen, and jobs_total{kind="sync"} at 1.
func register(scope *registry.Scope, gen int) error {
	if err := scope.Register(promtest.Gauge("gen", float64(gen))); err != nil {
		return err
	}
	jobs := promtest.CounterVec("jobs_total", "kind")
	jobs.WithLabelValues("sync").Inc()
	return scope.Register(jobs)
}

// series is what register exposes for gen.
func series(gen int) []string {
	return []string{fmt.Sprintf("gen{} %d", gen), `jobs_total{kind="sync"} 1`}
}

// build returns a build function that registers gen and returns c, with the
// error of register.
func build(gen int, c *promtest.Component) func(*registry.Scope) (*promtest.Component, error) {
	return func(scope *registry.Scope) (*promtest.Component, error) { return c, register(scope, gen) }
}

// newSlot returns a parent run by script that holds the other owner's gauge,
// and a slot on it holding first, generation 1.
func newSlot(t *testing.T, script func(promtest.Call) promtest.Fault, opts ...registry.Option) (*promtest.Parent, *lifecycle.Slot[*promtest.Component], *promtest.Component) {
	t.Helper()
	p := promtest.NewParent(script)
	p.Reg.MustRegister(promtest.Gauge("other", 42))
	slot := lifecycle.NewSlot[*promtest.Component](p, opts...)
	first := &promtest.Component{Name: "first"}
	if _, err := slot.Replace(build(1, first)); err != nil {
		t.Fatalf("first Replace = %v", err)
	}
	return p, slot, first
}

// newPanickySlot returns a slot on p holding a value whose Close panics.
func newPanickySlot(t *testing.T, p *promtest.Parent) *lifecycle.Slot[io.Closer] {
	t.Helper()
	slot := lifecycle.NewSlot[io.Closer](p)
	if _, err := slot.Replace(func(scope *registry.Scope) (io.Closer, error) {
		return closerFunc(func() error { panic("close exploded") }), register(scope, 1)
	}); err != nil {
		t.Fatalf("first Replace = %v", err)
	}
	return slot
}

// checkEmpty fails t unless slot holds nothing.
func checkEmpty[T io.Closer](t *testing.T, slot *lifecycle.Slot[T]) {
	t.Helper()
	if v, ok := slot.Current(); ok {
		t.Errorf("Current() = %v, true; want an empty slot", v)
	}
}

func TestSlotReplace(t *testing.T) {
	oldBuild := &lifecycle.BuildError{Err: errClose}
	tests := []struct {
		name   string
		script func(promtest.Call) promtest.Fault // the parent's; nil passes every call
		opts   []registry.Option                  // the slot's
		oldErr error                              // what the first instance's Close returns
		// give builds the second instance, which is c if it returns one;
		// nil stands for build(2, c).
		give func(scope *registry.Scope, c *promtest.Component) (*promtest.Component, error)
		// Replace's error: errors.Is finds each of wantErrs in it, or it
		// starts with wantText; with neither, it is nil. wantUnregister
		// is the metric of an UnregisterError in it.
		wantErrs       []error
		wantText       string
		wantUnregister string
		wantKept       bool
		want           []string // exposed besides the other owner's gauge
	}{
		{name: "build succeeds", wantKept: true, want: series(2)},
		{
			name:     "prefix and labels",
			opts:     []registry.Option{registry.WithPrefix("east_"), registry.WithLabels(prometheus.Labels{"cluster": "east"})},
			wantKept: true,
			want:     []string{`east_gen{cluster="east"} 2`, `east_jobs_total{cluster="east",kind="sync"} 1`},
		},
		{
			name:     "nil value, no error",
			give:     func(*registry.Scope, *promtest.Component) (*promtest.Component, error) { return nil, nil },
			wantKept: true,
		},
		{
			name: "build closes its scope",
			give: func(scope *registry.Scope, c *promtest.Component) (*promtest.Component, error) {
				return c, errors.Join(register(scope, 2), scope.Close())
			},
			wantKept: true,
		},
		{
			name: "build fails, no cleanup",
			give: func(scope *registry.Scope, _ *promtest.Component) (*promtest.Component, error) {
				return nil, errors.Join(register(scope, 2), errConnect)
			},
			wantErrs: []error{errConnect},
		},
		{
			name:     "value with an error",
			give:     func(_ *registry.Scope, c *promtest.Component) (*promtest.Component, error) { return c, errConnect },
			wantErrs: []error{errConnect},
		},
		{
			name: "invalid metric name",
			give: func(scope *registry.Scope, c *promtest.Component) (*promtest.Component, error) {
				return c, scope.Register(promtest.Gauge("bad\xffname", 0))
			},
			wantText: prometheus.NewRegistry().Register(promtest.Gauge("bad\xffname", 0)).Error(),
		},
		{
			name: "other owner's gauge",
			give: func(scope *registry.Scope, c *promtest.Component) (*promtest.Component, error) {
				return c, scope.Register(promtest.Gauge("other", 0))
			},
			wantText: "duplicate metrics collector registration attempted",
		},
		{
			name:     "build and old Close fail",
			oldErr:   errClose,
			give:     func(*registry.Scope, *promtest.Component) (*promtest.Component, error) { return nil, errConnect },
			wantErrs: []error{errConnect, errClose},
		},
		{
			name:     "old Close fails",
			oldErr:   errClose,
			wantErrs: []error{errClose},
			wantKept: true,
			want:     series(2),
		},
		{
			// Closing the first instance replaces in a slot of its
			// own, which fails: that BuildError is no sign of this
			// Replace's build failing, and errors.Is still finds it.
			name:     "old Close with a BuildError",
			oldErr:   oldBuild,
			wantErrs: []error{errClose, oldBuild},
			wantKept: true,
			want:     series(2),
		},
		{
			name:     "parent fails a register",
			script:   promtest.On("register", "jobs_total", 2, promtest.Fail), // 0: first build, 1: its release's probe
			wantErrs: []error{promtest.ErrInjected},
		},
		{
			name:           "parent lies it kept",
			script:         promtest.On("unregister", "gen", 0, promtest.LieRemoved),
			wantErrs:       []error{registry.ErrNotRegistered},
			wantUnregister: "gen",
			wantKept:       true,
			want:           series(2),
		},
		{
			// The parent keeps the old gen, silenced by the slot's label,
			// so the new instance cannot register gen either.
			name:           "parent refuses",
			script:         promtest.On("unregister", "gen", 0, promtest.Refuse),
			opts:           []registry.Option{registry.WithLabels(prometheus.Labels{"c": "1"})},
			wantErrs:       []error{registry.ErrNotRegistered},
			wantUnregister: "gen",
		},
		{
			name:           "parent fails the question",
			script:         promtest.On("register", "gen", 1, promtest.Fail),
			opts:           []registry.Option{registry.WithLabels(prometheus.Labels{"c": "1"})},
			wantErrs:       []error{registry.ErrNotRegistered, promtest.ErrInjected},
			wantUnregister: "gen",
		},
	}
	for _, tt := range tests {
		// Replace keeps only a successful build, and Close leaves only the
		// other owner's metrics.
		t.Run(tt.name, func(t *testing.T) {
			p, slot, first := newSlot(t, tt.script, tt.opts...)
			first.Err = tt.oldErr
			c := &promtest.Component{Name: "second"}
			give := build(2, c)
			if tt.give != nil {
				give = func(scope *registry.Scope) (*promtest.Component, error) { return tt.give(scope, c) }
			}
			v, err := slot.Replace(give)

			for _, want := range tt.wantErrs {
				if !errors.Is(err, want) {
					t.Errorf("Replace = %v, want it to wrap %q", err, want)
				}
			}
			if tt.wantText != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.wantText)) {
				t.Errorf("Replace = %v, want the parent's error %q", err, tt.wantText)
			}
			if len(tt.wantErrs) == 0 && tt.wantText == "" && err != nil {
				t.Errorf("Replace = %v, want nil", err)
			}
			var ue *registry.UnregisterError
			if got := errors.As(err, &ue); got != (tt.wantUnregister != "") || got && strings.Join(ue.Metrics, ",") != tt.wantUnregister {
				t.Errorf("Replace = %v, want an UnregisterError for %q", err, tt.wantUnregister)
			}
			if first.Closes() != 1 {
				t.Errorf("the first instance was closed %d times, want 1", first.Closes())
			}
			// A BuildError in the error says, and only it, that
			// nothing is installed.
			if got := errors.As(err, new(*lifecycle.BuildError)); got == tt.wantKept {
				t.Errorf("Replace = %v: BuildError %v, want %v", err, got, !tt.wantKept)
			}
			if cur, ok := slot.Current(); ok != tt.wantKept || cur != v || !tt.wantKept && v != nil {
				t.Errorf("Current() = %v, %v; Replace returned %v; want kept: %v", cur, ok, v, tt.wantKept)
			}
			promtest.Expose(t, p.Reg, append(tt.want, other)...)

			if err := slot.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
			want := 0 // a value returned with an error is the constructor's
			if v != nil {
				want = 1
			}
			if c.Closes() != want {
				t.Errorf("the second instance was closed %d times, want %d", c.Closes(), want)
			}
			called := false
			if _, err := slot.Replace(func(*registry.Scope) (*promtest.Component, error) { called = true; return nil, nil }); !errors.Is(err, lifecycle.ErrClosed) || called {
				t.Errorf("Replace after Close = %v (build called: %v), want ErrClosed", err, called)
			}
			promtest.Expose(t, p.Reg, other)
		})
	}

	// Replace closes the current value, then its scope, before it builds
	// the next.
	t.Run("order", func(t *testing.T) {
		var events []string
		p := promtest.NewParent(func(c promtest.Call) promtest.Fault {
			if c.Op == "unregister" {
				events = append(events, "unregister "+c.Names)
			}
			return promtest.Pass
		})
		slot := lifecycle.NewSlot[io.Closer](p)
		for _, name := range []string{"a", "b"} {
			if _, err := slot.Replace(func(scope *registry.Scope) (io.Closer, error) {
				events = append(events, "build "+name)
				return closerFunc(func() error { events = append(events, "close "+name); return nil }), scope.Register(promtest.Gauge("gen", 1))
			}); err != nil {
				t.Fatalf("Replace %s = %v", name, err)
			}
		}
		if want := []string{"build a", "close a", "unregister gen", "build b"}; !slices.Equal(events, want) {
			t.Errorf("events = %q, want %q", events, want)
		}
		if err := slot.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
	})

	// A nil value built without error is installed: Current returns it,
	// and replacing it closes its scope alone.
	t.Run("nil value", func(t *testing.T) {
		p, slot, _ := newSlot(t, nil)
		if v, err := slot.Replace(build(2, nil)); v != nil || err != nil {
			t.Fatalf("Replace = %v, %v; want nil, nil", v, err)
		}
		if cur, ok := slot.Current(); !ok || cur != nil {
			t.Errorf("Current() = %v, %v; want nil, true", cur, ok)
		}
		promtest.Expose(t, p.Reg, append(series(2), other)...)
		if _, err := slot.Replace(build(3, &promtest.Component{})); err != nil {
			t.Fatalf("Replace = %v", err)
		}
		promtest.Expose(t, p.Reg, append(series(3), other)...)
		if err := slot.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
	})

	// Replace panics on a nil build before it touches the current
	// instance.
	t.Run("nil build", func(t *testing.T) {
		p, slot, first := newSlot(t, nil)
		if msg, _ := promtest.Panic(func() { _, _ = slot.Replace(nil) }).(string); !strings.HasPrefix(msg, "lifecycle: ") {
			t.Errorf("Replace(nil) panicked with %q, want a message starting %q", msg, "lifecycle: ")
		}
		if cur, ok := slot.Current(); !ok || cur != first || first.Closes() != 0 {
			t.Errorf("Current() = %v, %v (first closed %d times), want the first instance untouched", cur, ok, first.Closes())
		}
		promtest.Expose(t, p.Reg, append(series(1), other)...)
		if err := slot.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
	})

	// When build panics, the slot is left empty and usable, and nothing of
	// the build registered.
	t.Run("build panics", func(t *testing.T) {
		p, slot, first := newSlot(t, nil)
		v := promtest.Panic(func() {
			_, _ = slot.Replace(func(scope *registry.Scope) (*promtest.Component, error) {
				if err := register(scope, 2); err != nil {
					t.Errorf("register = %v", err)
				}
				panic("build exploded")
			})
		})
		if v != "build exploded" || first.Closes() != 1 {
			t.Errorf("Replace panicked with %v, first closed %d times; want the build's panic, 1", v, first.Closes())
		}
		checkEmpty(t, slot)
		promtest.Expose(t, p.Reg, other)
		if _, err := slot.Replace(build(3, &promtest.Component{})); err != nil {
			t.Errorf("Replace after the panic = %v", err)
		}
		promtest.Expose(t, p.Reg, append(series(3), other)...)
		if err := slot.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
	})

	// When the old value's Close panics, Replace closes the old scope,
	// calls no build and stays usable.
	t.Run("old Close panics", func(t *testing.T) {
		// A controller that recovers panics in its reconcile loop goes on
		// using the slot.
		p := promtest.NewParent(nil)
		slot := newPanickySlot(t, p)
		called := false
		v := promtest.Panic(func() {
			_, _ = slot.Replace(func(*registry.Scope) (io.Closer, error) { called = true; return nil, nil })
		})
		if v != "close exploded" || called {
			t.Errorf("Replace panicked with %v (build called: %v), want the Close's panic and no build", v, called)
		}
		promtest.Expose(t, p.Reg)
		checkEmpty(t, slot) // if the panic left the slot locked, this would never return
		if _, err := slot.Replace(func(scope *registry.Scope) (io.Closer, error) { return build(2, &promtest.Component{})(scope) }); err != nil {
			t.Errorf("Replace after the panic = %v", err)
		}
		promtest.Expose(t, p.Reg, series(2)...)
		if err := slot.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
	})

	// A BuildError made by hand, with no error in it, still has a text.
	t.Run("zero BuildError", func(t *testing.T) {
		if got := (&lifecycle.BuildError{}).Error(); got != "lifecycle: build failed" {
			t.Errorf("Error() = %q", got)
		}
	})
}

func TestSlotCurrent(t *testing.T) {
	tests := []struct {
		name string
		give func(promtest.Call) promtest.Fault
	}{
		{name: "old close blocked", give: promtest.On("unregister", "gen", 0, promtest.Block)},
		{name: "build blocked", give: promtest.On("register", "gen", 2, promtest.Block)},
	}
	for _, tt := range tests {
		// Current reports the slot empty without waiting for a Replace.
		t.Run(tt.name, func(t *testing.T) {
			p, slot, first := newSlot(t, tt.give)
			done := make(chan error, 1)
			go func() {
				_, err := slot.Replace(build(2, &promtest.Component{}))
				done <- err
			}()
			<-p.Entered
			cur, ok := slot.Current() // if Current waited for Replace, this would never return
			p.Release()
			if ok || cur != nil || first.Closes() != 1 {
				t.Errorf("Current() during Replace = %v, %v (first closed %d times); want empty, the first closed", cur, ok, first.Closes())
			}
			if err := <-done; err != nil {
				t.Errorf("Replace = %v", err)
			}
			promtest.Expose(t, p.Reg, append(series(2), other)...)
			if err := slot.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
		})
	}

	// Current does not wait for a Close that waits for the parent, even
	// while it closes the slot's own scope.
	t.Run("slot close blocked", func(t *testing.T) {
		p := promtest.NewParent(promtest.On("unregister", "", 0, promtest.Block)) // the slot's collector of unchecked ones
		slot := lifecycle.NewSlot[*promtest.Component](p)
		if _, err := slot.Replace(func(s *registry.Scope) (*promtest.Component, error) {
			return &promtest.Component{}, s.Register(&promtest.Unchecked{Name: "u", Value: 1})
		}); err != nil {
			t.Fatal(err)
		}
		closed := make(chan error)
		go func() { closed <- slot.Close() }()
		<-p.Entered
		if _, ok := slot.Current(); ok {
			t.Error("Current reports an instance while the slot closes")
		}
		p.Release()
		if err := <-closed; err != nil {
			t.Error(err)
		}
	})
}

func TestSlotClear(t *testing.T) {
	// Clear closes the instance and takes its metrics back, and leaves the
	// slot empty and open: the next Replace builds again, with the same
	// metric names. Its error is the instance's close error, in which, as
	// in Replace's, errors.As finds no BuildError.
	t.Run("then Replace", func(t *testing.T) {
		p, slot, first := newSlot(t, nil)
		first.Err = &lifecycle.BuildError{Err: errClose}
		if err := slot.Clear(); !errors.Is(err, errClose) || errors.As(err, new(*lifecycle.BuildError)) {
			t.Errorf("Clear = %v, want the instance's close error, and no BuildError", err)
		}
		if first.Closes() != 1 {
			t.Errorf("the instance was closed %d times, want 1", first.Closes())
		}
		checkEmpty(t, slot)
		promtest.Expose(t, p.Reg, other)
		if err := slot.Clear(); err != nil {
			t.Errorf("Clear of an empty slot = %v", err)
		}
		second := &promtest.Component{Name: "second"}
		if v, err := slot.Replace(build(2, second)); err != nil || v != second {
			t.Fatalf("Replace after Clear = %v, %v", v, err)
		}
		promtest.Expose(t, p.Reg, append(series(2), other)...)
		if err := slot.Close(); err != nil || first.Closes() != 1 || second.Closes() != 1 {
			t.Errorf("Close = %v; closed %d and %d times, want 1 and 1", err, first.Closes(), second.Closes())
		}
		promtest.Expose(t, p.Reg, other)
	})

	// Once the slot is closed, Clear returns ErrClosed; on a zero or nil
	// slot, nil.
	t.Run("closed, zero and nil", func(t *testing.T) {
		_, slot, _ := newSlot(t, nil)
		slot.Close()
		if err := slot.Clear(); !errors.Is(err, lifecycle.ErrClosed) {
			t.Errorf("Clear of a closed slot = %v, want ErrClosed", err)
		}
		var zero lifecycle.Slot[*promtest.Component]
		if err := zero.Clear(); err != nil {
			t.Errorf("Clear of a zero slot = %v", err)
		}
		if err := (*lifecycle.Slot[*promtest.Component])(nil).Clear(); err != nil {
			t.Errorf("Clear of a nil slot = %v", err)
		}
	})
}

func TestSlotClose(t *testing.T) {
	// Close returns the value's close error, and nil the second time, as
	// on an empty slot.
	t.Run("twice", func(t *testing.T) {
		p, slot, first := newSlot(t, nil)
		first.Err = errClose
		if err := slot.Close(); !errors.Is(err, errClose) {
			t.Errorf("Close = %v, want errClose", err)
		}
		if err := slot.Close(); err != nil || first.Closes() != 1 {
			t.Errorf("second Close = %v, first closed %d times; want nil, 1", err, first.Closes())
		}
		checkEmpty(t, slot)
		promtest.Expose(t, p.Reg, other)
		if err := lifecycle.NewSlot[*promtest.Component](p).Close(); err != nil {
			t.Errorf("Close of an empty slot = %v", err)
		}
	})

	// Close reports a parent that refuses to unregister; a slot without
	// labels registered the user's collector itself, which the parent
	// keeps exposing.
	t.Run("parent refuses", func(t *testing.T) {
		p, slot, _ := newSlot(t, promtest.On("unregister", "jobs_total", -1, promtest.Refuse))
		err := slot.Close()
		var ue *registry.UnregisterError
		if !errors.As(err, &ue) || !errors.Is(err, registry.ErrNotRegistered) || strings.Join(ue.Metrics, ",") != "jobs_total" {
			t.Errorf("Close = %v, want an UnregisterError for jobs_total", err)
		}
		checkEmpty(t, slot)
		promtest.Expose(t, p.Reg, other, `jobs_total{kind="sync"} 1`)
		if err := p.Reg.Register(promtest.CounterVec("jobs_total", "kind")); err == nil {
			t.Error("the parent took an equal jobs_total, so it did let go of the identity")
		}
	})

	// When the value's Close panics, Close closes the scope and leaves the
	// slot closed.
	t.Run("value's Close panics", func(t *testing.T) {
		p := promtest.NewParent(nil)
		slot := newPanickySlot(t, p)
		if v := promtest.Panic(func() { _ = slot.Close() }); v != "close exploded" {
			t.Fatalf("Close panicked with %v, want the value's panic", v)
		}
		promtest.Expose(t, p.Reg)
		checkEmpty(t, slot)
		if _, err := slot.Replace(func(*registry.Scope) (io.Closer, error) { return nil, nil }); !errors.Is(err, lifecycle.ErrClosed) {
			t.Errorf("Replace after Close = %v, want ErrClosed", err)
		}
		if err := slot.Close(); err != nil {
			t.Errorf("second Close = %v, want nil", err)
		}
	})

	// Close waits for a Replace in progress, and closes what it built.
	t.Run("Replace in progress", func(t *testing.T) {
		p, slot, _ := newSlot(t, promtest.On("register", "gen", 2, promtest.Block))
		c := &promtest.Component{}
		replaced := make(chan error, 1)
		go func() {
			_, err := slot.Replace(build(2, c))
			replaced <- err
		}()
		<-p.Entered
		closed := make(chan error, 1)
		go func() { closed <- slot.Close() }()
		time.Sleep(20 * time.Millisecond) // for a Close that does not wait, time to return
		if len(closed) != 0 {
			t.Error("Close returned before the Replace in progress did")
		}
		p.Release()
		if err := <-replaced; err != nil {
			t.Errorf("Replace = %v", err)
		}
		if err := <-closed; err != nil || c.Closes() != 1 {
			t.Errorf("Close = %v, the value built meanwhile closed %d times; want nil, 1", err, c.Closes())
		}
		checkEmpty(t, slot)
		promtest.Expose(t, p.Reg, other)
	})

	// Close does not wait for a Gather in flight, and the next Gather has
	// nothing of the slot.
	t.Run("Gather in flight", func(t *testing.T) {
		p, slot, _ := newSlot(t, nil)
		entered, proceed := make(chan struct{}), make(chan struct{})
		var once sync.Once
		slow := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "slow", Help: promtest.Help("slow")}, func() float64 {
			once.Do(func() { close(entered); <-proceed })
			return 1
		})
		if _, err := slot.Replace(func(scope *registry.Scope) (*promtest.Component, error) {
			return &promtest.Component{}, scope.Register(slow)
		}); err != nil {
			t.Fatal(err)
		}
		gathered := make(chan error, 1)
		go func() {
			_, err := p.Reg.Gather()
			gathered <- err
		}()
		<-entered
		if err := slot.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
		close(proceed)
		if err := <-gathered; err != nil {
			t.Errorf("the Gather in flight = %v", err)
		}
		promtest.Expose(t, p.Reg, other)
	})
}

func TestNewSlot(t *testing.T) {
	tests := []struct {
		name string
		give prometheus.Registerer
	}{
		{name: "a nil parent", give: nil},
		{name: "a typed-nil *prometheus.Registry", give: (*prometheus.Registry)(nil)},
	}
	for _, tt := range tests {
		// A slot on a nil parent builds into scopes that register
		// nowhere.
		t.Run(tt.name, func(t *testing.T) {
			slot := lifecycle.NewSlot[*promtest.Component](tt.give)
			var scope *registry.Scope
			c := &promtest.Component{}
			if _, err := slot.Replace(func(s *registry.Scope) (*promtest.Component, error) {
				scope = s
				return build(1, c)(s)
			}); err != nil {
				t.Fatalf("Replace = %v", err)
			}
			promtest.Expose(t, scope, series(1)...)
			if err := slot.Close(); err != nil || c.Closes() != 1 || scope.Len() != 0 {
				t.Errorf("Close = %v, the value closed %d times, the scope owns %d; want nil, 1, 0", err, c.Closes(), scope.Len())
			}
		})
	}
	slots := []struct {
		name string
		slot *lifecycle.Slot[*promtest.Component]
	}{
		{name: "a zero Slot", slot: &lifecycle.Slot[*promtest.Component]{}},
		{name: "a nil *Slot", slot: nil},
	}
	for _, tt := range slots {
		// A slot that NewSlot did not make is empty, closes to nil, and
		// Replace panics on it with a lifecycle message, calling nothing.
		t.Run(tt.name, func(t *testing.T) {
			if cur, ok := tt.slot.Current(); ok || cur != nil {
				t.Errorf("Current() = %v, %v, want nil, false", cur, ok)
			}
			v := promtest.Panic(func() {
				_, _ = tt.slot.Replace(func(*registry.Scope) (*promtest.Component, error) {
					t.Error("build ran")
					return nil, nil
				})
			})
			if msg, _ := v.(string); !strings.HasPrefix(msg, "lifecycle: Replace on a Slot") {
				t.Errorf("Replace panicked with %#v, want a lifecycle message", v)
			}
			if err := tt.slot.Close(); err != nil {
				t.Errorf("Close = %v, want nil", err)
			}
		})
	}
}

func TestSlotScopes(t *testing.T) {
	names := []struct {
		name   string
		parent func(reg *prometheus.Registry) prometheus.Registerer
		opts   []registry.Option
		want   string // the third build's scope, by String
	}{
		{
			name:   "a named slot",
			parent: func(reg *prometheus.Registry) prometheus.Registerer { return reg },
			opts:   []registry.Option{registry.WithName("watcher")},
			want:   `watcher/3{c="1"}`,
		},
		{
			name: "an unnamed slot on a named scope",
			parent: func(reg *prometheus.Registry) prometheus.Registerer {
				return registry.NewScope(reg, registry.WithName("prog"))
			},
			want: `prog/3{c="1"}`,
		},
		{
			name:   "an unnamed slot on a registry",
			parent: func(reg *prometheus.Registry) prometheus.Registerer { return reg },
			want:   `3{c="1"}`,
		},
	}
	for _, tt := range names {
		// Each build gets a scope nested in the slot's own, named after
		// the build under the name of the slot's scope, with the slot's
		// options.
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			slot := lifecycle.NewSlot[*promtest.Component](tt.parent(reg), append(tt.opts, registry.WithLabels(prometheus.Labels{"c": "1"}))...)
			var got []string
			for gen := 1; gen <= 3; gen++ {
				if _, err := slot.Replace(func(s *registry.Scope) (*promtest.Component, error) {
					got = append(got, s.String())
					return build(gen, &promtest.Component{})(s)
				}); err != nil {
					t.Fatal(err)
				}
			}
			want := []string{strings.Replace(tt.want, "3", "1", 1), strings.Replace(tt.want, "3", "2", 1), tt.want}
			if !slices.Equal(got, want) {
				t.Errorf("the builds' scopes are %q, want %q", got, want)
			}
			promtest.Expose(t, reg, `gen{c="1"} 3`, `jobs_total{c="1",kind="sync"} 1`)
			if err := slot.Close(); err != nil {
				t.Error(err)
			}
			promtest.Expose(t, reg)
		})
	}

	// Closing the scope a slot was made on takes back the instance's
	// metrics but leaves the instance to the slot: it is still current,
	// and the next Replace closes it, then builds with a closed scope.
	t.Run("its parent scope closed", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		tenant := registry.NewScope(reg, registry.WithName("tenant"))
		slot := lifecycle.NewSlot[*promtest.Component](tenant)
		first := &promtest.Component{Name: "first"}
		if _, err := slot.Replace(build(1, first)); err != nil {
			t.Fatal(err)
		}
		if err := tenant.Close(); err != nil {
			t.Fatal(err)
		}
		promtest.Expose(t, reg)
		if v, ok := slot.Current(); !ok || v != first || first.Closes() != 0 {
			t.Errorf("Current() = %v, %t and %d closes; want first, unclosed", v, ok, first.Closes())
		}
		_, err := slot.Replace(build(2, &promtest.Component{}))
		var be *lifecycle.BuildError
		if !errors.As(err, &be) || !errors.Is(err, registry.ErrClosed) || first.Closes() != 1 {
			t.Errorf("Replace = %v after %d closes of first; want a BuildError of registry.ErrClosed after one", err, first.Closes())
		}
		checkEmpty(t, slot)
		if err := slot.Close(); err != nil {
			t.Error(err)
		}
	})

	// A slot on a registry, recycled 50 times with an unchecked collector,
	// registers one collector of its own for them all, not one a build.
	t.Run("recycled unchecked", func(t *testing.T) {
		p := promtest.NewParent(nil)
		slot := lifecycle.NewSlot[*promtest.Component](p)
		for range 50 {
			if _, err := slot.Replace(func(s *registry.Scope) (*promtest.Component, error) {
				return &promtest.Component{}, s.Register(&promtest.Unchecked{Name: "u", Value: 1})
			}); err != nil {
				t.Fatal(err)
			}
			promtest.Expose(t, p.Reg, "u{} 1")
		}
		if err := slot.Close(); err != nil {
			t.Error(err)
		}
		unchecked := slices.DeleteFunc(p.Log(), func(l string) bool { return !strings.HasPrefix(l, "register : ") })
		if len(unchecked) != 1 {
			t.Errorf("the registry got %d unchecked registrations, want 1: %q", len(unchecked), unchecked)
		}
		promtest.Expose(t, p.Reg)
	})
}
