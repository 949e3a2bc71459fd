package lifecycle_test

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/multierr"

	"github.com/promscope/promscope/internal/describe"
	"github.com/promscope/promscope/lifecycle"
	"github.com/promscope/promscope/registry"
	"github.com/promscope/promscope/registry/registrytest"
)

// A part is the recycled component of the Slot tests. Every build registers
// the same two metric names, so a leftover from an earlier build makes the
// next one fail on a pedantic registry. Close logs "close <name>".
type part struct {
	name     string
	log      *orderLog
	closeErr error // returned by Close; set before the part is replaced
	closes   atomic.Int32
}

func (p *part) Close() error {
	p.closes.Add(1)
	p.log.add("close " + p.name)
	return p.closeErr
}

// newPart registers a part's metrics through reg: part_generation set to gen,
// and part_events_total{kind="sync"} at 1.
func newPart(reg prometheus.Registerer, name string, gen int, log *orderLog) (*part, error) {
	generation := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "part_generation", Help: "Which build of the part is live.",
	})
	events := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "part_events_total", Help: "Events the part handled.",
	}, []string{"kind"})
	if err := reg.Register(generation); err != nil {
		return nil, err
	}
	if err := reg.Register(events); err != nil {
		return nil, err
	}
	generation.Set(float64(gen))
	events.WithLabelValues("sync").Inc()
	return &part{name: name, log: log}, nil
}

// buildPart returns a build function for Slot.Replace that logs
// "build <name>" and then builds a part.
func buildPart(log *orderLog, name string, gen int) func(*registry.Scope) (*part, error) {
	return func(scope *registry.Scope) (*part, error) {
		log.add("build " + name)
		return newPart(scope, name, gen, log)
	}
}

// partExposition is what a registry holding one part of generation gen
// exposes, in the text format.
func partExposition(gen int) string {
	return fmt.Sprintf(`
# HELP part_events_total Events the part handled.
# TYPE part_events_total counter
part_events_total{kind="sync"} 1
# HELP part_generation Which build of the part is live.
# TYPE part_generation gauge
part_generation %d
`, gen)
}

// unregisterLog passes everything to the Registerer it embeds, and logs each
// Unregister that removed something as "unregister <metric names>".
type unregisterLog struct {
	prometheus.Registerer
	log *orderLog
}

func (r unregisterLog) Unregister(c prometheus.Collector) bool {
	names := describe.Names(describe.Descs(c))
	ok := r.Registerer.Unregister(c)
	if ok {
		r.log.add("unregister " + strings.Join(names, ","))
	}
	return ok
}

// mustReplace calls slot.Replace and fails the test if it returns an error.
func mustReplace(t *testing.T, slot *lifecycle.Slot[*part], build func(*registry.Scope) (*part, error)) *part {
	t.Helper()
	v, err := slot.Replace(build)
	if err != nil {
		t.Fatalf("Replace: %v", err)
	}
	if v == nil {
		t.Fatal("Replace returned a nil value and no error")
	}
	return v
}

// checkEmpty fails the test unless slot reports no live value.
func checkEmpty(t *testing.T, slot *lifecycle.Slot[*part]) {
	t.Helper()
	if v, ok := slot.Current(); ok || v != nil {
		t.Errorf("Current() = %v, %v; want nil, false", v, ok)
	}
}

// checkCurrent fails the test unless slot holds want.
func checkCurrent(t *testing.T, slot *lifecycle.Slot[*part], want *part) {
	t.Helper()
	if v, ok := slot.Current(); !ok || v != want {
		t.Errorf("Current() = %v, %v; want %v, true", v, ok, want)
	}
}

func checkExposes(t *testing.T, g prometheus.Gatherer, want string) {
	t.Helper()
	if err := testutil.GatherAndCompare(g, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

func checkLog(t *testing.T, log *orderLog, want []string) {
	t.Helper()
	got := log.get()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("log =\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

func TestSlotReplace(t *testing.T) {
	t.Run("closes the current value and then its scope before build runs", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		var log orderLog
		slot := lifecycle.NewSlot[*part](unregisterLog{Registerer: reg, log: &log})
		a := mustReplace(t, slot, buildPart(&log, "a", 1))
		b := mustReplace(t, slot, func(scope *registry.Scope) (*part, error) {
			log.add("build b")
			// a's metrics must be gone from the parent already, so
			// that b registers the same names cleanly.
			registrytest.VerifyNone(t, reg)
			return newPart(scope, "b", 2, &log)
		})
		checkLog(t, &log, []string{
			"build a",
			"close a",
			"unregister part_events_total",
			"unregister part_generation",
			"build b",
		})
		if got := a.closes.Load(); got != 1 {
			t.Errorf("a closed %d times, want 1", got)
		}
		checkCurrent(t, slot, b)
		checkExposes(t, reg, partExposition(2))
		if err := slot.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		registrytest.VerifyNone(t, reg)
	})

	t.Run("builds each value in a fresh scope with the slot's options", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		var log orderLog
		slot := lifecycle.NewSlot[*part](reg,
			registry.WithPrefix("east_"),
			registry.WithLabels(prometheus.Labels{"cluster": "east"}))
		mustReplace(t, slot, buildPart(&log, "a", 1))
		mustReplace(t, slot, buildPart(&log, "b", 2))
		checkExposes(t, reg, `
# HELP east_part_events_total Events the part handled.
# TYPE east_part_events_total counter
east_part_events_total{cluster="east",kind="sync"} 1
# HELP east_part_generation Which build of the part is live.
# TYPE east_part_generation gauge
east_part_generation{cluster="east"} 2
`)
		if err := slot.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		registrytest.VerifyNone(t, reg)
	})

	t.Run("closes the fresh scope when build fails even if the constructor forgot to", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		var log orderLog
		slot := lifecycle.NewSlot[*part](reg)
		a := mustReplace(t, slot, buildPart(&log, "a", 1))
		v, err := slot.Replace(func(scope *registry.Scope) (*part, error) {
			log.add("build b")
			// Registers through the scope, then fails without
			// cleaning up: the seed bug.
			if _, err := newPart(scope, "b", 2, &log); err != nil {
				return nil, err
			}
			return nil, errConnect
		})
		if !errors.Is(err, errConnect) {
			t.Errorf("Replace error = %v, want errConnect", err)
		}
		if v != nil {
			t.Errorf("Replace returned %v with its error, want nil", v)
		}
		checkEmpty(t, slot)
		registrytest.VerifyNone(t, reg)
		if got := a.closes.Load(); got != 1 {
			t.Errorf("a closed %d times, want 1", got)
		}

		// The same names register cleanly afterwards.
		c := mustReplace(t, slot, buildPart(&log, "c", 3))
		checkCurrent(t, slot, c)
		checkExposes(t, reg, partExposition(3))
		checkLog(t, &log, []string{"build a", "close a", "build b", "build c"})
		if err := slot.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		registrytest.VerifyNone(t, reg)
	})

	t.Run("neither keeps nor closes a value returned together with an error", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		var log orderLog
		slot := lifecycle.NewSlot[*part](reg)
		var b *part
		v, err := slot.Replace(func(scope *registry.Scope) (*part, error) {
			var err error
			if b, err = newPart(scope, "b", 1, &log); err != nil {
				return nil, err
			}
			return b, errConnect
		})
		if !errors.Is(err, errConnect) {
			t.Errorf("Replace error = %v, want errConnect", err)
		}
		if v != nil {
			t.Errorf("Replace returned %v with its error, want nil", v)
		}
		checkEmpty(t, slot)
		registrytest.VerifyNone(t, reg)
		if err := slot.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if got := b.closes.Load(); got != 0 {
			t.Errorf("the value returned with an error was closed %d times, want 0: the constructor owns it", got)
		}
	})

	t.Run("combines build's error with the close error of the old value", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		var log orderLog
		slot := lifecycle.NewSlot[*part](reg)
		a := mustReplace(t, slot, buildPart(&log, "a", 1))
		a.closeErr = errClose
		_, err := slot.Replace(func(*registry.Scope) (*part, error) { return nil, errConnect })
		if !errors.Is(err, errConnect) {
			t.Errorf("errors.Is(%v, errConnect) = false, want true", err)
		}
		if !errors.Is(err, errClose) {
			t.Errorf("errors.Is(%v, errClose) = false, want true", err)
		}
		if got := len(multierr.Errors(err)); got != 2 {
			t.Errorf("Replace combined %d errors (%v), want 2", got, err)
		}
		checkEmpty(t, slot)
		registrytest.VerifyNone(t, reg)
	})

	t.Run("keeps and returns the new value when only the old value fails to close", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		var log orderLog
		slot := lifecycle.NewSlot[*part](reg)
		a := mustReplace(t, slot, buildPart(&log, "a", 1))
		a.closeErr = errClose
		var built *part
		v, err := slot.Replace(func(scope *registry.Scope) (*part, error) {
			var err error
			built, err = newPart(scope, "b", 2, &log)
			return built, err
		})
		if !errors.Is(err, errClose) {
			t.Errorf("Replace error = %v, want errClose", err)
		}
		if v == nil || v != built {
			t.Errorf("Replace returned %v, want the new value %v", v, built)
		}
		checkCurrent(t, slot, built)
		checkExposes(t, reg, partExposition(2))
		if err := slot.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		registrytest.VerifyNone(t, reg)
	})

	t.Run("closes the fresh scope and leaves the slot empty when build panics", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		var log orderLog
		slot := lifecycle.NewSlot[*part](reg)
		a := mustReplace(t, slot, buildPart(&log, "a", 1))
		msg := panicMessage(func() {
			_, _ = slot.Replace(func(scope *registry.Scope) (*part, error) {
				if _, err := newPart(scope, "b", 2, &log); err != nil {
					t.Errorf("newPart: %v", err)
				}
				panic("build exploded")
			})
		})
		if msg != "build exploded" {
			t.Errorf("Replace panicked with %q, want the panic of build", msg)
		}
		if got := a.closes.Load(); got != 1 {
			t.Errorf("a closed %d times, want 1", got)
		}
		checkEmpty(t, slot)
		registrytest.VerifyNone(t, reg)

		// The slot is still usable: the panic released it.
		c := mustReplace(t, slot, buildPart(&log, "c", 3))
		checkCurrent(t, slot, c)
		if err := slot.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		registrytest.VerifyNone(t, reg)
	})

	t.Run("closes the old scope and stays usable when the old value's Close panics", func(t *testing.T) {
		// A controller that recovers panics in its reconcile loop keeps
		// using the slot afterwards.
		reg := prometheus.NewPedanticRegistry()
		var log orderLog
		slot := lifecycle.NewSlot[*part](reg)
		a := mustReplace(t, slot, buildPart(&log, "a", 1))
		a.log = nil // a's Close now panics
		called := false
		msg := panicMessage(func() {
			_, _ = slot.Replace(func(*registry.Scope) (*part, error) {
				called = true
				return nil, nil
			})
		})
		if msg == "" {
			t.Fatal("Replace did not pass on the panic of the old value's Close")
		}
		if called {
			t.Error("Replace called build after the old value's Close panicked")
		}
		registrytest.VerifyNone(t, reg)
		// If the panic left the slot locked, Current would never return.
		checkEmpty(t, slot)
		c := mustReplace(t, slot, buildPart(&log, "c", 3))
		checkCurrent(t, slot, c)
		checkExposes(t, reg, partExposition(3))
		if err := slot.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		registrytest.VerifyNone(t, reg)
	})

	t.Run("does not make Current wait for a build in progress", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		var log orderLog
		slot := lifecycle.NewSlot[*part](reg)
		a := mustReplace(t, slot, buildPart(&log, "a", 1))

		entered := make(chan struct{})
		release := make(chan struct{})
		type result struct {
			v   *part
			err error
		}
		done := make(chan result)
		go func() {
			v, err := slot.Replace(func(scope *registry.Scope) (*part, error) {
				close(entered)
				<-release
				return newPart(scope, "b", 2, &log)
			})
			done <- result{v, err}
		}()

		<-entered
		// build is blocked until release is closed, which happens only
		// after Current returns: if Current waited for the build, the
		// test would never get past this line.
		v, ok := slot.Current()
		close(release)
		if ok || v != nil {
			t.Errorf("Current() during the build = %v, %v; want nil, false", v, ok)
		}
		if got := a.closes.Load(); got != 1 {
			t.Errorf("during the build, the old value was closed %d times, want 1", got)
		}

		r := <-done
		if r.err != nil {
			t.Fatalf("Replace: %v", r.err)
		}
		checkCurrent(t, slot, r.v)
		if err := slot.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		registrytest.VerifyNone(t, reg)
	})

	t.Run("runs concurrent calls one at a time", func(t *testing.T) {
		const workers, rounds = 4, 10
		reg := prometheus.NewPedanticRegistry()
		var log orderLog
		slot := lifecycle.NewSlot[*part](reg)

		var active, overlaps atomic.Int32
		var (
			builtMu sync.Mutex
			built   []*part // guarded by builtMu
		)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := range rounds {
					_, err := slot.Replace(func(scope *registry.Scope) (*part, error) {
						if active.Add(1) != 1 {
							overlaps.Add(1)
						}
						defer active.Add(-1)
						runtime.Gosched()
						p, err := newPart(scope, fmt.Sprintf("w%d-%d", w, i), i, &log)
						runtime.Gosched()
						if err == nil {
							builtMu.Lock()
							built = append(built, p)
							builtMu.Unlock()
						}
						return p, err
					})
					if err != nil {
						t.Errorf("Replace: %v", err)
					}
				}
			})
		}
		wg.Wait()

		if got := overlaps.Load(); got != 0 {
			t.Errorf("build ran concurrently with another build %d times", got)
		}
		if len(built) != workers*rounds {
			t.Fatalf("%d builds succeeded, want %d", len(built), workers*rounds)
		}
		cur, ok := slot.Current()
		if !ok {
			t.Fatal("the slot is empty after the Replace calls")
		}
		for _, p := range built {
			want := int32(1)
			if p == cur {
				want = 0
			}
			if got := p.closes.Load(); got != want {
				t.Errorf("part %s closed %d times before the slot's Close, want %d", p.name, got, want)
			}
		}
		if err := slot.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if got := cur.closes.Load(); got != 1 {
			t.Errorf("the last part closed %d times, want 1", got)
		}
		registrytest.VerifyNone(t, reg)
	})
}

func TestSlotClose(t *testing.T) {
	t.Run("closes the current value and its scope", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		var log orderLog
		slot := lifecycle.NewSlot[*part](unregisterLog{Registerer: reg, log: &log})
		mustReplace(t, slot, buildPart(&log, "a", 1))
		if err := slot.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		checkLog(t, &log, []string{
			"build a",
			"close a",
			"unregister part_events_total",
			"unregister part_generation",
		})
		checkEmpty(t, slot)
		registrytest.VerifyNone(t, reg)
	})

	t.Run("returns the close error of the current value", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		var log orderLog
		slot := lifecycle.NewSlot[*part](reg)
		a := mustReplace(t, slot, buildPart(&log, "a", 1))
		a.closeErr = errClose
		if err := slot.Close(); !errors.Is(err, errClose) {
			t.Errorf("Close = %v, want errClose", err)
		}
		checkEmpty(t, slot)
		registrytest.VerifyNone(t, reg)
	})

	t.Run("does nothing the second time", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		var log orderLog
		slot := lifecycle.NewSlot[*part](reg)
		a := mustReplace(t, slot, buildPart(&log, "a", 1))
		a.closeErr = errClose
		if err := slot.Close(); !errors.Is(err, errClose) {
			t.Errorf("first Close = %v, want errClose", err)
		}
		if err := slot.Close(); err != nil {
			t.Errorf("second Close = %v, want nil", err)
		}
		if got := a.closes.Load(); got != 1 {
			t.Errorf("a closed %d times, want 1", got)
		}
	})

	t.Run("closes the scope and leaves the slot closed when the value's Close panics", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		var log orderLog
		slot := lifecycle.NewSlot[*part](reg)
		a := mustReplace(t, slot, buildPart(&log, "a", 1))
		a.log = nil // a's Close now panics
		if msg := panicMessage(func() { _ = slot.Close() }); msg == "" {
			t.Fatal("Close did not pass on the panic of the value's Close")
		}
		registrytest.VerifyNone(t, reg)
		checkEmpty(t, slot)
		if _, err := slot.Replace(buildPart(&log, "b", 2)); !errors.Is(err, lifecycle.ErrClosed) {
			t.Errorf("Replace after Close = %v, want ErrClosed", err)
		}
		if err := slot.Close(); err != nil {
			t.Errorf("second Close = %v, want nil", err)
		}
	})

	t.Run("returns nil on an empty slot", func(t *testing.T) {
		slot := lifecycle.NewSlot[*part](prometheus.NewPedanticRegistry())
		if err := slot.Close(); err != nil {
			t.Errorf("Close = %v, want nil", err)
		}
	})

	t.Run("makes Replace return ErrClosed without calling build", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		var log orderLog
		slot := lifecycle.NewSlot[*part](reg)
		mustReplace(t, slot, buildPart(&log, "a", 1))
		if err := slot.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		called := false
		v, err := slot.Replace(func(*registry.Scope) (*part, error) {
			called = true
			return nil, nil
		})
		if !errors.Is(err, lifecycle.ErrClosed) {
			t.Errorf("Replace after Close = %v, want ErrClosed", err)
		}
		if v != nil {
			t.Errorf("Replace after Close returned %v, want nil", v)
		}
		if called {
			t.Error("Replace after Close called build")
		}
		checkEmpty(t, slot)
		registrytest.VerifyNone(t, reg)
	})

	t.Run("waits for a Replace in progress and leaves nothing registered", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		var log orderLog
		slot := lifecycle.NewSlot[*part](reg)

		entered := make(chan struct{})
		release := make(chan struct{})
		var built *part // written by build, read after replaced
		type result struct {
			v   *part
			err error
		}
		replaced := make(chan result)
		go func() {
			v, err := slot.Replace(func(scope *registry.Scope) (*part, error) {
				close(entered)
				<-release
				var err error
				built, err = newPart(scope, "b", 1, &log)
				return built, err
			})
			replaced <- result{v, err}
		}()
		<-entered
		closed := make(chan error)
		go func() { closed <- slot.Close() }()
		close(release)
		r := <-replaced
		cerr := <-closed

		if cerr != nil {
			t.Errorf("Close: %v", cerr)
		}
		switch {
		case r.err == nil:
			// Replace finished first; Close closed its value.
			if r.v != built {
				t.Errorf("Replace returned %v, want the built value %v", r.v, built)
			}
		case errors.Is(r.err, lifecycle.ErrClosed):
			// Close won, and Replace closed what it had built.
		default:
			t.Errorf("Replace: %v", r.err)
		}
		if built == nil {
			t.Fatal("build did not build")
		}
		if got := built.closes.Load(); got != 1 {
			t.Errorf("the value built during Close was closed %d times, want 1", got)
		}
		checkEmpty(t, slot)
		registrytest.VerifyNone(t, reg)
		if _, err := slot.Replace(buildPart(&log, "c", 2)); !errors.Is(err, lifecycle.ErrClosed) {
			t.Errorf("Replace after Close = %v, want ErrClosed", err)
		}
	})
}

func TestSlotRecycleLoop(t *testing.T) {
	t.Run("leaves nothing behind after 50 replacements of which every other one fails", func(t *testing.T) {
		const n = 50
		reg := prometheus.NewPedanticRegistry()
		var log orderLog
		slot := lifecycle.NewSlot[*part](reg)

		var want []string
		var last *part
		for i := range n {
			name := fmt.Sprintf("#%d", i)
			fail := i%2 == 0
			v, err := slot.Replace(func(scope *registry.Scope) (*part, error) {
				log.add("build " + name)
				// Whatever the previous round left must be gone.
				registrytest.VerifyNone(t, reg)
				p, err := newPart(scope, name, i, &log)
				if err != nil {
					return nil, err
				}
				if fail {
					// The constructor fails after registering,
					// and forgets its cleanup.
					return nil, fmt.Errorf("build %s: %w", name, errConnect)
				}
				return p, nil
			})

			// What the slot must have done: close the value the previous
			// round kept, then build.
			if i%2 == 0 && i > 0 {
				want = append(want, fmt.Sprintf("close #%d", i-1))
			}
			want = append(want, "build "+name)

			if fail {
				if !errors.Is(err, errConnect) {
					t.Fatalf("round %d: Replace = %v, want errConnect", i, err)
				}
				checkEmpty(t, slot)
				registrytest.VerifyNone(t, reg)
				continue
			}
			if err != nil {
				t.Fatalf("round %d: Replace: %v", i, err)
			}
			checkCurrent(t, slot, v)
			checkExposes(t, reg, partExposition(i))
			last = v
		}

		if err := slot.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		want = append(want, fmt.Sprintf("close #%d", n-1))
		if last == nil || last.name != fmt.Sprintf("#%d", n-1) {
			t.Errorf("the last value kept is %v, want #%d", last, n-1)
		}
		checkLog(t, &log, want)
		registrytest.VerifyNone(t, reg)
	})
}

func TestSlotConcurrentUse(t *testing.T) {
	t.Run("closes every value it kept exactly once under concurrent Replace, Current and Close", func(t *testing.T) {
		const workers, rounds = 4, 30
		reg := prometheus.NewPedanticRegistry()
		var log orderLog
		slot := lifecycle.NewSlot[*part](reg)

		var (
			builtMu sync.Mutex
			built   []*part // guarded by builtMu
		)
		stop := make(chan struct{})
		var readers sync.WaitGroup
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if v, ok := slot.Current(); ok && v == nil {
					t.Error("Current reported a live nil value")
				}
				runtime.Gosched()
			}
		})

		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := range rounds {
					if w == 0 && i == rounds/2 {
						if err := slot.Close(); err != nil {
							t.Errorf("Close: %v", err)
						}
					}
					fail := (w+i)%3 == 0
					v, err := slot.Replace(func(scope *registry.Scope) (*part, error) {
						p, err := newPart(scope, fmt.Sprintf("w%d-%d", w, i), i, &log)
						if err != nil {
							return nil, err
						}
						if fail {
							return nil, errConnect
						}
						builtMu.Lock()
						built = append(built, p)
						builtMu.Unlock()
						return p, nil
					})
					switch {
					case err == nil:
						if v == nil {
							t.Error("Replace returned a nil value and no error")
						}
					case errors.Is(err, lifecycle.ErrClosed):
					case fail && errors.Is(err, errConnect) && len(multierr.Errors(err)) == 1:
					default:
						t.Errorf("Replace: %v", err)
					}
					if v, ok := slot.Current(); ok && v == nil {
						t.Error("Current reported a live nil value")
					}
				}
			})
		}
		wg.Wait()
		close(stop)
		readers.Wait()

		if err := slot.Close(); err != nil {
			t.Errorf("final Close: %v", err)
		}
		if len(built) == 0 {
			t.Fatal("no build succeeded")
		}
		for _, p := range built {
			if got := p.closes.Load(); got != 1 {
				t.Errorf("part %s closed %d times, want 1", p.name, got)
			}
		}
		checkEmpty(t, slot)
		registrytest.VerifyNone(t, reg)
	})
}

// orderLog records the order in which cleanups ran. It is safe for
// concurrent use.
type orderLog struct {
	mu      sync.Mutex
	entries []string // guarded by mu
}

func (l *orderLog) add(entry string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, entry)
}

func (l *orderLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.entries)
}

// panicMessage runs f and returns what it panicked with, formatted, or "" if
// it returned normally.
func panicMessage(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
			if msg == "" {
				msg = "(empty panic value)"
			}
		}
	}()
	f()
	return ""
}
