package lifecycle

import (
	"fmt"
	"io"
	"sync"

	"go.uber.org/multierr"

	"github.com/promscope/promscope/internal/nilness"
)

// CloseOnError closes c if the function that defers it fails: if *errp is
// non-nil when it runs, or if the function is panicking. It appends the
// error of Close to *errp, so that errors.Is finds both, and then lets a
// panic go on with its own value. Defer it in a constructor with a named
// error result, right after c is created:
//
//	scope := registry.NewScope(reg)
//	defer lifecycle.CloseOnError(&err, scope)
//
// A panic counts because callers recover: controller-runtime recovers a
// reconciler's panics by default, and a constructor that panicked halfway (a
// colliding MustRegister, promauto) would otherwise leave its metrics for
// the next attempt to collide with. CloseOnError sees the panic only when it
// is itself the deferred call, as above, not when a deferred function calls
// it. If Close panics too, its panic is appended to *errp as an error
// (wrapping the value if it is an error), and the first panic goes on;
// outside a panic, a panic of Close's goes on like any other. (A program
// run with GODEBUG=panicnil=1 makes a panic(nil) look like no panic at all:
// CloseOnError then ends it, as any recover would, and leaves c alone.)
//
// Otherwise c is left alone, also when the function ends by runtime.Goexit
// (t.FailNow in a test), which is neither an error nor a panic. A nil c (or
// a nil pointer in c) does nothing. CloseOnError panics if errp is nil: that
// is a programming error that would otherwise lose the cleanup silently.
func CloseOnError(errp *error, c io.Closer) {
	if errp == nil {
		panic("lifecycle: CloseOnError needs a non-nil error pointer")
	}
	p := recover() // non-nil while the deferring function panics
	switch {
	case nilness.IsNil(c):
	case p != nil:
		*errp = multierr.Append(*errp, closeDuringPanic(c))
	case *errp != nil:
		*errp = multierr.Append(*errp, c.Close())
	}
	if p != nil {
		panic(p)
	}
}

// closeDuringPanic closes c for CloseOnError while a panic is under way: a
// panic of Close's becomes an error, so that the first panic goes on.
func closeDuringPanic(c io.Closer) (err error) {
	defer func() {
		switch v := recover().(type) {
		case nil:
		case error:
			err = fmt.Errorf("lifecycle: Close panicked: %w", v)
		default:
			err = fmt.Errorf("lifecycle: Close panicked: %v", v)
		}
	}()
	return c.Close()
}

// A Stack runs cleanups in the reverse order of their Push, like defer, but
// under the caller's control: a constructor pushes as it builds, and whoever
// owns the result closes the stack. The zero value is an empty, open stack.
// A nil *Stack is empty and closed: Close returns nil, and Push and PushFunc
// panic, since the cleanup would be lost.
type Stack struct {
	mu      sync.Mutex
	fns     []func() error // guarded by mu
	closed  bool           // guarded by mu
	closing bool           // guarded by mu; set while a Close runs the cleanups
	late    error          // guarded by mu; errors of cleanups run after Close began
}

// Push adds c.Close to the stack. A nil c is ignored. A stack is closed from
// the moment Close begins: a cleanup pushed then, even by a cleanup that
// Close is running, runs at once rather than being lost. Its error is
// returned by the Close running, if the cleanup ends before that Close
// has run the rest, and otherwise by the next Close.
func (s *Stack) Push(c io.Closer) {
	var f func() error
	if !nilness.IsNil(c) {
		f = c.Close
	}
	s.PushFunc(f)
}

// PushFunc adds f to the stack, with the same rules as [Stack.Push]. A nil f
// is ignored.
func (s *Stack) PushFunc(f func() error) {
	if s == nil {
		panic("lifecycle: Push on a nil *Stack, which would lose the cleanup")
	}
	if f == nil {
		return
	}
	s.mu.Lock()
	if !s.closed {
		s.fns = append(s.fns, f)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	err := f()
	s.mu.Lock()
	s.late = multierr.Append(s.late, err)
	s.mu.Unlock()
}

// Close runs every cleanup, newest first, even when some fail, and returns
// their errors combined, with those of the cleanups pushed, and so run at
// once, while it ran. Like deferred calls, the remaining cleanups still run
// when one panics, and the panic goes on once they have; the next Close
// returns the errors of those that failed. A Close made while another runs
// (by a cleanup, or on another goroutine) runs nothing and returns nil; it
// does not wait for the first, so that a cleanup can close its own stack:
// Close returning on one goroutine does not tell that a Close on another has
// finished. A later Close returns the errors of cleanups pushed after the
// last one returned.
func (s *Stack) Close() (err error) {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil
	}
	fns, late := s.fns, s.late
	s.fns, s.late, s.closed, s.closing = nil, nil, true, true
	s.mu.Unlock()
	var ran error
	done := false
	defer func() {
		s.mu.Lock()
		if done {
			err, s.late = multierr.Append(err, s.late), nil
		} else {
			s.late = multierr.Combine(late, ran, s.late) // a cleanup panicked
		}
		s.closing = false
		s.mu.Unlock()
	}()
	unwind(fns, &ran)
	err = multierr.Append(late, ran)
	done = true
	return err
}

// unwind runs fns newest first by deferring them in push order, so that Go's
// own unwinding keeps going past a cleanup that panics, and appends their
// errors to *errs as they return, so that none is lost to a panic.
func unwind(fns []func() error, errs *error) {
	for _, f := range fns {
		defer func() { *errs = multierr.Append(*errs, f()) }()
	}
}
