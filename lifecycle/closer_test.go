package lifecycle_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.uber.org/multierr"

	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/lifecycle"
	"github.com/promscope/promscope/registry"
)

var (
	errConnect = errors.New("connect: cluster unreachable")
	errClose   = errors.New("close: connection already reset")
)

// closerFunc is an io.Closer that runs itself: a component whose Close does
// something promtest.Component cannot, such as note when it runs or panic.
type closerFunc func() error

func (f closerFunc) Close() error { return f() }

func TestCloseOnError(t *testing.T) {
	tests := []struct {
		name    string
		give    io.Closer // a typed-nil *promtest.Component panics if closed
		giveErr error     // what the function that defers CloseOnError returns
		want    []error   // the errors it returns then, in order
	}{
		{
			name:    "function fails",
			give:    &promtest.Component{Err: errClose},
			giveErr: errConnect,
			want:    []error{errConnect, errClose},
		},
		{name: "Close succeeds", give: &promtest.Component{}, giveErr: errConnect, want: []error{errConnect}},
		{name: "function succeeds", give: &promtest.Component{Err: errClose}},
		{name: "does nothing for a nil closer", giveErr: errConnect, want: []error{errConnect}},
		{name: "does nothing for a typed-nil closer", give: (*promtest.Component)(nil), giveErr: errConnect, want: []error{errConnect}},
		{name: "does nothing for a typed-nil scope", give: (*registry.Scope)(nil), giveErr: errConnect, want: []error{errConnect}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := func() (err error) {
				defer lifecycle.CloseOnError(&err, tt.give)
				return tt.giveErr
			}()
			if got := multierr.Errors(err); !slices.Equal(got, tt.want) {
				t.Errorf("err = %v, want the errors %v", err, tt.want)
			}
			for _, want := range tt.want {
				if !errors.Is(err, want) {
					t.Errorf("errors.Is(%v, %v) = false, want true", err, want)
				}
			}
			if c, ok := tt.give.(*promtest.Component); ok && c != nil {
				want := 0
				if tt.giveErr != nil {
					want = 1
				}
				if c.Closes() != want {
					t.Errorf("Close called %d times, want %d", c.Closes(), want)
				}
			}
		})
	}

	// A function that panics has failed too, and its callers may recover (a
	// controller's reconcile loop does): c is closed, the close error goes to
	// *errp, and the panic goes on with its own value.
	t.Run("function panics", func(t *testing.T) {
		c := &promtest.Component{Err: errClose}
		var recovered any
		err := func() (err error) {
			defer func() {
				recovered = recover()
				if recovered != nil {
					err = multierr.Append(err, errConnect)
				}
			}()
			defer lifecycle.CloseOnError(&err, c)
			panic(errConnect)
		}()
		if recovered != errConnect { //nolint:errorlint // the very value panicked with
			t.Errorf("the panic went on as %v, want %v", recovered, errConnect)
		}
		if c.Closes() != 1 {
			t.Errorf("Close called %d times, want 1", c.Closes())
		}
		if want := []error{errClose, errConnect}; !slices.Equal(multierr.Errors(err), want) {
			t.Errorf("err = %v, want the errors %v", err, want)
		}
	})

	// panic(nil) is a *runtime.PanicNilError: c is closed and the panic
	// goes on. Under GODEBUG=panicnil=1 it looks like no panic at all:
	// CloseOnError ends it, as any recover would, and leaves c alone. The
	// test runs itself again with that setting to see it.
	t.Run("panic(nil)", func(t *testing.T) {
		child := os.Getenv("PROMSCOPE_PANICNIL") == "1"
		c := &promtest.Component{}
		var recovered any
		func() {
			defer func() { recovered = recover() }()
			var err error
			defer lifecycle.CloseOnError(&err, c)
			panic(nil)
		}()
		if _, ok := recovered.(*runtime.PanicNilError); child && (recovered != nil || c.Closes() != 0) || !child && (!ok || c.Closes() != 1) {
			t.Fatalf("panicnil=1 %t: the panic went on as %v, Close called %d times", child, recovered, c.Closes())
		}
		if child {
			return
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestCloseOnError$/^panic", "-test.v")
		cmd.Env = append(os.Environ(), "GODEBUG=panicnil=1", "PROMSCOPE_PANICNIL=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestCloseOnError/panic(nil)") {
			t.Errorf("with GODEBUG=panicnil=1: %v\n%s", err, out)
		}
	})

	closePanics := []struct {
		name  string
		value any
		is    error // what errors.Is must find in the error the panic becomes
	}{
		{name: "with a string", value: "close: boom"},
		{name: "with an error", value: errClose, is: errClose},
	}
	for _, tt := range closePanics {
		// A Close that panics as well does not replace the function's
		// panic: its panic becomes an error on *errp, which wraps the
		// value if that is an error.
		t.Run("Close panics during a panic, "+tt.name, func(t *testing.T) {
			var recovered any
			err := func() (err error) {
				defer func() {
					if recovered = recover(); recovered != nil {
						err = multierr.Append(err, errConnect)
					}
				}()
				defer lifecycle.CloseOnError(&err, closerFunc(func() error { panic(tt.value) }))
				panic(errConnect)
			}()
			if recovered != errConnect { //nolint:errorlint // the very value panicked with
				t.Errorf("the panic went on as %v, want %v", recovered, errConnect)
			}
			errs := multierr.Errors(err)
			if len(errs) != 2 || !strings.Contains(errs[0].Error(), fmt.Sprint(tt.value)) || errs[1] != errConnect { //nolint:errorlint // the very value
				t.Errorf("err = %v, want Close's panic as an error, then %v", err, errConnect)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(%v, %v) = false, want true", err, tt.is)
			}
		})
	}

	// Outside a panic, a Close that panics is a panic like any other:
	// it goes on as it is.
	t.Run("Close panics on an error", func(t *testing.T) {
		v := promtest.Panic(func() {
			_ = func() (err error) {
				defer lifecycle.CloseOnError(&err, closerFunc(func() error { panic(errClose) }))
				return errConnect
			}()
		})
		if v != errClose { //nolint:errorlint // the very value panicked with
			t.Errorf("panicked with %v, want Close's own panic %v", v, errClose)
		}
	})

	// A panic of somebody else's is not the function's failure: a
	// constructor that succeeds while a deferred call of its caller's runs
	// during a panic keeps c.
	t.Run("succeeds while another panics", func(t *testing.T) {
		c := &promtest.Component{}
		build := func() (err error) {
			defer lifecycle.CloseOnError(&err, c)
			return nil
		}
		var err error
		v := promtest.Panic(func() {
			defer func() { err = build() }()
			panic(errConnect)
		})
		if v != errConnect || err != nil { //nolint:errorlint // the very value panicked with
			t.Errorf("panic %v and build error %v, want %v and nil", v, err, errConnect)
		}
		if c.Closes() != 0 {
			t.Errorf("Close called %d times, want 0", c.Closes())
		}
	})

	// runtime.Goexit (t.FailNow) is neither an error nor a panic: c is
	// kept.
	t.Run("Goexit", func(t *testing.T) {
		c := &promtest.Component{}
		done := make(chan struct{})
		go func() {
			defer close(done)
			func() (err error) {
				defer lifecycle.CloseOnError(&err, c)
				runtime.Goexit()
				return nil
			}()
		}()
		<-done
		if c.Closes() != 0 {
			t.Errorf("Close called %d times, want 0", c.Closes())
		}
	})

	// CloseOnError panics with a lifecycle message when errp is nil, and
	// closes nothing.
	t.Run("nil error pointer", func(t *testing.T) {
		c := &promtest.Component{}
		msg, _ := promtest.Panic(func() { lifecycle.CloseOnError(nil, c) }).(string)
		if !strings.HasPrefix(msg, "lifecycle: ") {
			t.Errorf("panic message = %q, want one starting %q", msg, "lifecycle: ")
		}
		if c.Closes() != 0 {
			t.Errorf("Close called %d times, want 0", c.Closes())
		}
	})
}

func TestStack(t *testing.T) {
	// Close runs every cleanup newest first, combines their errors, and
	// runs nothing on a second Close.
	t.Run("newest first", func(t *testing.T) {
		errA, errC := errors.New("a failed"), errors.New("c failed")
		var ran []string
		note := func(name string, err error) func() error {
			return func() error { ran = append(ran, name); return err }
		}
		var s lifecycle.Stack // the zero value is ready
		s.Push(closerFunc(note("a", errA)))
		s.PushFunc(note("b", nil))
		s.Push(closerFunc(note("c", errC)))
		s.PushFunc(note("d", nil))
		err := s.Close()
		if want := []string{"d", "c", "b", "a"}; !slices.Equal(ran, want) {
			t.Errorf("cleanups ran as %q, want %q", ran, want)
		}
		if got := len(multierr.Errors(err)); got != 2 || !errors.Is(err, errA) || !errors.Is(err, errC) {
			t.Errorf("Close = %v (%d errors), want errA and errC", err, got)
		}
		if err := s.Close(); err != nil || len(ran) != 4 {
			t.Errorf("second Close = %v and ran %q, want nil and nothing more", err, ran)
		}
	})

	// Close keeps unwinding past a cleanup that panics, and passes the
	// panic on; the next Close returns the errors of the others.
	t.Run("panicking cleanup", func(t *testing.T) {
		var ran []string
		errFirst, errLast := errors.New("first"), errors.New("last")
		var s lifecycle.Stack
		s.PushFunc(func() error { ran = append(ran, "first"); return errFirst })
		s.PushFunc(func() error { panic("boom") })
		s.PushFunc(func() error { ran = append(ran, "last"); return errLast })
		if v := promtest.Panic(func() { _ = s.Close() }); v != "boom" {
			t.Errorf("Close panicked with %v, want the cleanup's panic", v)
		}
		if want := []string{"last", "first"}; !slices.Equal(ran, want) {
			t.Errorf("ran %q, want %q", ran, want)
		}
		if err := s.Close(); !errors.Is(err, errFirst) || !errors.Is(err, errLast) {
			t.Errorf("second Close = %v, want the errors of the cleanups that failed", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("third Close = %v, want nil", err)
		}
	})

	tests := []struct {
		name string
		push func(s *lifecycle.Stack, c *promtest.Component)
	}{
		{name: "Push", push: func(s *lifecycle.Stack, c *promtest.Component) { s.Push(c) }},
		{name: "PushFunc", push: func(s *lifecycle.Stack, c *promtest.Component) { s.PushFunc(c.Close) }},
	}
	for _, tt := range tests {
		// A push after Close runs the cleanup at once, and the next Close
		// reports its error.
		t.Run(tt.name+" after Close", func(t *testing.T) {
			var s lifecycle.Stack
			if err := s.Close(); err != nil {
				t.Fatalf("Close of an empty stack = %v, want nil", err)
			}
			c := &promtest.Component{Err: errClose}
			tt.push(&s, c)
			if c.Closes() != 1 {
				t.Fatalf("the cleanup ran %d times at once, want 1", c.Closes())
			}
			if err := s.Close(); !errors.Is(err, errClose) {
				t.Errorf("next Close = %v, want the late cleanup's error", err)
			}
			if err := s.Close(); err != nil || c.Closes() != 1 {
				t.Errorf("Close after that = %v, cleanup ran %d times; want nil, 1", err, c.Closes())
			}
		})
	}

	// A cleanup that a running cleanup pushes runs at once, and the
	// Close running reports its error, with the others'.
	t.Run("Push during Close", func(t *testing.T) {
		var s lifecycle.Stack
		late := &promtest.Component{Err: errClose}
		first := &promtest.Component{Err: errConnect}
		s.Push(first)
		s.PushFunc(func() error { s.Push(late); return nil })
		if err := s.Close(); !errors.Is(err, errClose) || !errors.Is(err, errConnect) || late.Closes() != 1 {
			t.Fatalf("Close = %v, late cleanup ran %d times; want both errors, 1", err, late.Closes())
		}
		if err := s.Close(); err != nil {
			t.Errorf("next Close = %v, want nil", err)
		}
	})

	// A cleanup may close its own stack: that Close does not wait for
	// the one running it, runs nothing and returns nil.
	t.Run("Close from a cleanup", func(t *testing.T) {
		var s lifecycle.Stack
		first := &promtest.Component{}
		inner := errors.New("unset")
		s.Push(first)
		s.PushFunc(func() error { inner = s.Close(); return nil })
		if err := s.Close(); err != nil || inner != nil || first.Closes() != 1 {
			t.Errorf("Close = %v, the cleanup's Close = %v, first ran %d times; want nil, nil, 1", err, inner, first.Closes())
		}
	})

	// A Close made while another runs, by a cleanup or on another
	// goroutine, returns nil: the errors of cleanups pushed meanwhile are
	// the running Close's.
	t.Run("Close during Close", func(t *testing.T) {
		for _, where := range []string{"in a cleanup", "on another goroutine"} {
			var s lifecycle.Stack
			second := errors.New("unset")
			s.PushFunc(func() error {
				if where == "in a cleanup" {
					second = s.Close()
					return nil
				}
				done := make(chan struct{})
				go func() { second = s.Close(); close(done) }()
				<-done
				return nil
			})
			s.PushFunc(func() error { s.PushFunc(func() error { return errClose }); return nil })
			if err := s.Close(); !errors.Is(err, errClose) || second != nil {
				t.Errorf("%s: Close = %v, the second Close = %v; want the pushed cleanup's error, nil", where, err, second)
			}
			if err := s.Close(); err != nil {
				t.Errorf("%s: a later Close = %v, want nil", where, err)
			}
		}
	})

	// Nil cleanups are ignored, before Close and after.
	t.Run("nil cleanups", func(t *testing.T) {
		var s lifecycle.Stack
		for range 2 {
			s.Push(nil)
			s.Push((*promtest.Component)(nil)) // its Close would panic
			s.Push((*registry.Scope)(nil))
			s.PushFunc(nil)
			if err := s.Close(); err != nil {
				t.Errorf("Close = %v, want nil", err)
			}
		}
	})

	// A nil *Stack has nothing to close; a Push on it, which would lose
	// the cleanup, panics with a lifecycle: message, a nil cleanup too.
	t.Run("nil stack", func(t *testing.T) {
		var s *lifecycle.Stack
		if err := s.Close(); err != nil {
			t.Errorf("Close = %v, want nil", err)
		}
		for name, push := range map[string]func(){
			"Push":         func() { s.Push(&promtest.Component{}) },
			"PushFunc":     func() { s.PushFunc(func() error { return nil }) },
			"Push of nil":  func() { s.Push(nil) },
			"PushFunc nil": func() { s.PushFunc(nil) },
		} {
			if msg, _ := promtest.Panic(push).(string); !strings.HasPrefix(msg, "lifecycle: ") {
				t.Errorf("%s on a nil Stack panicked with %q", name, msg)
			}
		}
	})

	// Concurrent Push and Close lose no cleanup and no error.
	t.Run("concurrent", func(t *testing.T) {
		const pushers, perPusher = 4, 50
		var s lifecycle.Stack
		cs := make([]*promtest.Component, pushers*perPusher)
		for i := range cs {
			cs[i] = &promtest.Component{Err: fmt.Errorf("cleanup %d", i)}
		}
		var (
			mu   sync.Mutex
			errs []error // guarded by mu
		)
		collect := func(err error) {
			mu.Lock()
			defer mu.Unlock()
			errs = append(errs, multierr.Errors(err)...)
		}
		var wg sync.WaitGroup
		for p := range pushers {
			wg.Go(func() {
				for i, c := range cs[p*perPusher : (p+1)*perPusher] {
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
		if len(errs) != len(cs) {
			t.Errorf("Close calls returned %d errors in all, want %d", len(errs), len(cs))
		}
		for i, c := range cs {
			if c.Closes() != 1 || !slices.Contains(errs, c.Err) {
				t.Errorf("cleanup %d ran %d times, its error returned: %v; want once, returned", i, c.Closes(), slices.Contains(errs, c.Err))
			}
		}
	})
}
