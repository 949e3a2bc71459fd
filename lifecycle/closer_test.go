package lifecycle_test

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/multierr"

	"github.com/promscope/promscope/lifecycle"
	"github.com/promscope/promscope/registry"
	"github.com/promscope/promscope/registry/registrytest"
)

var (
	errConnect = errors.New("connect: cluster unreachable")
	errClose   = errors.New("close: connection already reset")
)

// countingCloser counts its Close calls and returns err from each. Close
// dereferences the receiver, so calling it on a nil pointer panics: a test
// that passes a typed nil proves it was not called.
type countingCloser struct {
	calls atomic.Int32
	err   error
}

func (c *countingCloser) Close() error {
	c.calls.Add(1)
	return c.err
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

// namedCloser logs its name when closed, and returns err.
type namedCloser struct {
	name string
	log  *orderLog
	err  error
}

func (c namedCloser) Close() error {
	c.log.add(c.name)
	return c.err
}

func TestCloseOnError(t *testing.T) {
	t.Run("closes c and appends its error when the function fails", func(t *testing.T) {
		c := &countingCloser{err: errClose}
		err := func() (err error) {
			defer lifecycle.CloseOnError(&err, c)
			return errConnect
		}()
		if got := c.calls.Load(); got != 1 {
			t.Errorf("Close called %d times, want 1", got)
		}
		if !errors.Is(err, errConnect) {
			t.Errorf("errors.Is(%v, errConnect) = false, want true", err)
		}
		if !errors.Is(err, errClose) {
			t.Errorf("errors.Is(%v, errClose) = false, want true", err)
		}
		if got := len(multierr.Errors(err)); got != 2 {
			t.Errorf("err combines %d errors, want 2", got)
		}
	})

	t.Run("keeps the original error alone when Close succeeds", func(t *testing.T) {
		c := &countingCloser{}
		err := func() (err error) {
			defer lifecycle.CloseOnError(&err, c)
			return errConnect
		}()
		if got := c.calls.Load(); got != 1 {
			t.Errorf("Close called %d times, want 1", got)
		}
		if err != errConnect { //nolint:errorlint // The exact error must come back, not a wrapper of it.
			t.Errorf("err = %v, want errConnect itself", err)
		}
	})

	t.Run("leaves c alone when the function succeeds", func(t *testing.T) {
		c := &countingCloser{err: errClose}
		err := func() (err error) {
			defer lifecycle.CloseOnError(&err, c)
			return nil
		}()
		if err != nil {
			t.Errorf("err = %v, want nil", err)
		}
		if got := c.calls.Load(); got != 0 {
			t.Errorf("Close called %d times, want 0", got)
		}
	})

	t.Run("panics with a lifecycle message when errp is nil", func(t *testing.T) {
		c := &countingCloser{}
		msg := panicMessage(func() { lifecycle.CloseOnError(nil, c) })
		if !strings.HasPrefix(msg, "lifecycle:") {
			t.Errorf("panic message = %q, want one starting %q", msg, "lifecycle:")
		}
		if got := c.calls.Load(); got != 0 {
			t.Errorf("Close called %d times, want 0", got)
		}
	})

	tests := []struct {
		name string
		give io.Closer
	}{
		{name: "does nothing for a nil closer", give: nil},
		{name: "does nothing for a typed nil closer", give: (*countingCloser)(nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			msg := panicMessage(func() {
				err = func() (err error) {
					defer lifecycle.CloseOnError(&err, tt.give)
					return errConnect
				}()
			})
			if msg != "" {
				t.Fatalf("CloseOnError panicked: %s", msg)
			}
			if err != errConnect { //nolint:errorlint // The exact error must come back, not a wrapper of it.
				t.Errorf("err = %v, want errConnect itself", err)
			}
		})
	}

	t.Run("removes what a failed constructor registered", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		build := func(fail bool) (_ *registry.Scope, err error) {
			scope := registry.NewScope(reg)
			defer lifecycle.CloseOnError(&err, scope)
			if err := scope.Register(prometheus.NewGauge(prometheus.GaugeOpts{
				Name: "constructor_up", Help: "Whether the constructor came up.",
			})); err != nil {
				return nil, err
			}
			if fail {
				return nil, errConnect
			}
			return scope, nil
		}
		for range 3 {
			if _, err := build(true); !errors.Is(err, errConnect) {
				t.Fatalf("failing build returned %v, want errConnect", err)
			}
			registrytest.VerifyNone(t, reg)
		}
		scope, err := build(false)
		if err != nil {
			t.Fatalf("build after the failures: %v", err)
		}
		if err := scope.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		registrytest.VerifyNone(t, reg)
	})
}

func TestStack(t *testing.T) {
	t.Run("runs cleanups in the reverse order of Push and PushFunc", func(t *testing.T) {
		var log orderLog
		var s lifecycle.Stack
		s.Push(namedCloser{name: "first", log: &log})
		s.PushFunc(func() error { log.add("second"); return nil })
		s.Push(namedCloser{name: "third", log: &log})
		s.PushFunc(func() error { log.add("fourth"); return nil })
		if err := s.Close(); err != nil {
			t.Errorf("Close = %v, want nil", err)
		}
		want := []string{"fourth", "third", "second", "first"}
		if got := log.get(); !slices.Equal(got, want) {
			t.Errorf("cleanups ran as %q, want %q", got, want)
		}
	})

	t.Run("runs every cleanup and combines the errors when some fail", func(t *testing.T) {
		errA := errors.New("a failed")
		errC := errors.New("c failed")
		var log orderLog
		var s lifecycle.Stack
		s.Push(namedCloser{name: "a", log: &log, err: errA})
		s.Push(namedCloser{name: "b", log: &log})
		s.Push(namedCloser{name: "c", log: &log, err: errC})
		s.Push(namedCloser{name: "d", log: &log})
		err := s.Close()
		want := []string{"d", "c", "b", "a"}
		if got := log.get(); !slices.Equal(got, want) {
			t.Errorf("cleanups ran as %q, want %q", got, want)
		}
		if got := len(multierr.Errors(err)); got != 2 {
			t.Errorf("Close combined %d errors (%v), want 2", got, err)
		}
		for _, target := range []error{errA, errC} {
			if !errors.Is(err, target) {
				t.Errorf("errors.Is(%v, %v) = false, want true", err, target)
			}
		}
	})

	t.Run("runs nothing and returns nil on a second Close", func(t *testing.T) {
		c := &countingCloser{err: errClose}
		var s lifecycle.Stack
		s.Push(c)
		if err := s.Close(); !errors.Is(err, errClose) {
			t.Errorf("first Close = %v, want errClose", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close = %v, want nil", err)
		}
		if got := c.calls.Load(); got != 1 {
			t.Errorf("Close called %d times, want 1", got)
		}
	})

	t.Run("runs a cleanup pushed after Close at once and reports it on the next Close", func(t *testing.T) {
		errLate := errors.New("late cleanup failed")
		tests := []struct {
			name string
			push func(s *lifecycle.Stack, c *countingCloser)
		}{
			{name: "Push", push: func(s *lifecycle.Stack, c *countingCloser) { s.Push(c) }},
			{name: "PushFunc", push: func(s *lifecycle.Stack, c *countingCloser) { s.PushFunc(c.Close) }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var s lifecycle.Stack
				if err := s.Close(); err != nil {
					t.Fatalf("Close of an empty stack = %v, want nil", err)
				}
				c := &countingCloser{err: errLate}
				tt.push(&s, c)
				if got := c.calls.Load(); got != 1 {
					t.Fatalf("after %s on a closed stack, Close called %d times, want 1", tt.name, got)
				}
				if err := s.Close(); !errors.Is(err, errLate) {
					t.Errorf("next Close = %v, want the late cleanup's error", err)
				}
				if err := s.Close(); err != nil {
					t.Errorf("Close after that = %v, want nil", err)
				}
				if got := c.calls.Load(); got != 1 {
					t.Errorf("Close called %d times in all, want 1", got)
				}
			})
		}
	})

	t.Run("ignores nil cleanups", func(t *testing.T) {
		var s lifecycle.Stack
		msg := panicMessage(func() {
			s.Push(nil)
			s.Push((*countingCloser)(nil))
			s.PushFunc(nil)
			if err := s.Close(); err != nil {
				t.Errorf("Close = %v, want nil", err)
			}
			// Nil cleanups are ignored after Close too, rather than run.
			s.Push(nil)
			s.Push((*countingCloser)(nil))
			s.PushFunc(nil)
			if err := s.Close(); err != nil {
				t.Errorf("second Close = %v, want nil", err)
			}
		})
		if msg != "" {
			t.Errorf("a nil cleanup made the stack panic: %s", msg)
		}
	})

	t.Run("works as a zero value", func(t *testing.T) {
		var s lifecycle.Stack
		if err := s.Close(); err != nil {
			t.Errorf("Close of a zero Stack = %v, want nil", err)
		}
		s2 := new(lifecycle.Stack)
		c := &countingCloser{}
		s2.Push(c)
		if err := s2.Close(); err != nil {
			t.Errorf("Close = %v, want nil", err)
		}
		if got := c.calls.Load(); got != 1 {
			t.Errorf("Close called %d times, want 1", got)
		}
	})

	t.Run("loses no cleanup and no error under concurrent Push and Close", func(t *testing.T) {
		const pushers, perPusher = 4, 50
		var s lifecycle.Stack
		closers := make([]*countingCloser, pushers*perPusher)
		for i := range closers {
			closers[i] = &countingCloser{err: fmt.Errorf("cleanup %d", i)}
		}

		var (
			errsMu sync.Mutex
			errs   []error // guarded by errsMu
		)
		collect := func(err error) {
			errsMu.Lock()
			defer errsMu.Unlock()
			errs = append(errs, multierr.Errors(err)...)
		}

		var wg sync.WaitGroup
		for p := range pushers {
			wg.Go(func() {
				for i := range perPusher {
					c := closers[p*perPusher+i]
					if i%2 == 0 {
						s.Push(c)
					} else {
						s.PushFunc(c.Close)
					}
				}
			})
		}
		for range 2 {
			wg.Go(func() {
				for range 20 {
					collect(s.Close())
				}
			})
		}
		wg.Wait()
		// Cleanups pushed after the last of those Closes have run already;
		// their errors wait for this one.
		collect(s.Close())

		for i, c := range closers {
			if got := c.calls.Load(); got != 1 {
				t.Errorf("cleanup %d ran %d times, want 1", i, got)
			}
		}
		if len(errs) != len(closers) {
			t.Errorf("Close calls returned %d errors in all, want %d", len(errs), len(closers))
		}
		for i, c := range closers {
			if !slices.Contains(errs, c.err) {
				t.Errorf("the error of cleanup %d was lost", i)
			}
		}
	})
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

func TestStackKeepsUnwindingPastAPanic(t *testing.T) {
	var s lifecycle.Stack
	var ran []string
	s.PushFunc(func() error { ran = append(ran, "first"); return nil })
	s.PushFunc(func() error { panic("boom") })
	s.PushFunc(func() error { ran = append(ran, "last"); return nil })

	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want the cleanup's panic", r)
			}
		}()
		_ = s.Close()
	}()
	if want := []string{"last", "first"}; !slices.Equal(ran, want) {
		t.Errorf("ran %v, want %v: every cleanup runs, newest first, even past a panic", ran, want)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
}
