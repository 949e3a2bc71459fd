package lifecycle

import (
	"errors"
	"io"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/multierr"

	"github.com/promscope/promscope/internal/nilness"
	"github.com/promscope/promscope/registry"
)

// ErrClosed is returned by [Slot.Replace] once the slot is closed.
var ErrClosed = errors.New("lifecycle: slot is closed")

// A BuildError is what [Slot.Replace] returns, combined with any error of
// closing the previous instance, when its build function fails: nothing is
// installed, and the slot is empty. Its text is build's error's, and
// errors.Is and errors.As see through it to build's error.
type BuildError struct {
	Err error // what build returned
}

// Error returns the text of build's error, or "lifecycle: build failed"
// for a BuildError with none.
func (e *BuildError) Error() string {
	if e.Err == nil {
		return "lifecycle: build failed"
	}
	return e.Err.Error()
}

// Unwrap returns build's error.
func (e *BuildError) Unwrap() error { return e.Err }

// A Slot holds at most one live instance of a recycled component, together
// with the [registry.Scope] it was built with. [Slot.Replace] closes the
// current instance before it builds the next, so the new one registers the
// same metric names cleanly, and a failed build leaves nothing behind, even
// when the constructor forgot its own cleanup.
//
// Each instance's scope is nested in a scope of the slot's own, made on the
// slot's parent, so that however often the component is recycled, the slot
// leaves nothing in the parent once it is closed but, in a
// prometheus.Registry, the one empty collector that an outermost scope with
// unchecked collectors leaves there. Slots made and closed as a set of
// components changes (one per tenant, say) leave that collector each when
// they are made on the registry itself, and one in all when they are made on
// one scope of the program's. An instance's scope is named after the build
// that made it, 1 for the first, under the name of the slot's scope (see
// registry.WithName): "watcher/3" is the third build of a slot named watcher,
// "prog/3" of a slot with no name on a scope named prog, and "3" of a slot
// with no name on a parent with none, in errors, leak reports and the
// ownership page.
//
// Replace cannot keep the current instance when the next build fails: it
// closes it first, so that the next one can register the same names. Check a
// new configuration before Replace if a bad one must not take a running
// component down. A reload that builds the new instance before it stops the
// old cannot register the same metrics for both; for a set of components
// keyed by name (a queue per remote, a watcher per cluster), keep a Slot per
// key and Replace the one whose configuration changed. What must outlive the
// instances but go with the component (a DeleteOnClose of its series in
// shared vectors, a count of its builds) belongs in a scope of the
// component's own, made with Child, on which the slot is made; close the
// slot, then that scope.
//
// A scope owns registrations, not components. When parent is a scope, and
// it (or a scope it is nested in) is closed while the slot still holds an
// instance, the instance's metrics go, but the instance is neither closed nor
// forgotten: Current still returns it, and the next Replace closes it and
// calls build with a closed scope, whose Register returns
// registry.ErrClosed. So close a slot before the scope it was made on, as a
// [Stack] does when the slot is pushed after the scope.
//
// Create a Slot with [NewSlot]. The zero value, and a nil *Slot, are not
// usable: Replace panics on them, Current reports them empty, and Clear and
// Close return nil.
type Slot[T io.Closer] struct {
	own *registry.Scope // the slot's scope on its parent; the instances' scopes are nested in it

	build  sync.Mutex // held by Replace and Close for their whole run
	builds int        // guarded by build; builds so far

	mu     sync.Mutex
	cur    T               // guarded by mu
	scope  *registry.Scope // guarded by mu; nil when the slot is empty
	closed bool            // guarded by mu
}

// NewSlot returns an empty slot whose instances register into parent through
// a fresh scope each, with the prefix, labels and name that opts give: the
// slot makes a scope of its own on parent with opts, and nests each
// instance's scope in it.
func NewSlot[T io.Closer](parent prometheus.Registerer, opts ...registry.Option) *Slot[T] {
	return &Slot[T]{own: registry.NewScope(parent, opts...)}
}

// Replace closes the current instance, then its scope, and then calls build
// with a fresh scope nested in the slot's own. If build succeeds, its value
// is kept and returned: a nil value too, which Current then returns, and
// whose closing closes only its scope. If build fails, the slot closes the
// fresh scope itself, holds nothing, and returns build's error inside a
// [*BuildError]; a value returned together with an error is not kept, nor
// closed: the constructor owns it. If build panics, the slot closes the fresh
// scope, holds nothing, and the panic goes on.
//
// The error Replace returns combines any error of closing the previous
// instance with the BuildError. So errors.As(err, &buildErr) tells whether
// anything is installed: if it finds a BuildError, the slot is empty;
// otherwise a non-nil error means that the new value is installed, and only
// closing the previous one failed. errors.As into a *BuildError does not look
// in the closing error, which may hold one of a slot that the previous
// instance's Close replaced in, so that a BuildError keeps that meaning;
// whatever else errors.Is and errors.As look for, they find there. Once the
// slot is closed, Replace returns [ErrClosed] and calls nothing.
//
// Concurrent Replace calls run one after another. So neither build nor the
// instances' Close may call Replace, Clear or Close on the same slot: the
// call would wait, forever, for the Replace, Clear or Close that is running
// it. Replace panics if build is nil, before it touches the current instance:
// that is a programming error.
func (s *Slot[T]) Replace(build func(reg *registry.Scope) (T, error)) (_ T, err error) {
	if s == nil || s.own == nil {
		panic("lifecycle: Replace on a Slot that NewSlot did not make")
	}
	if build == nil {
		panic("lifecycle: Replace needs a build function")
	}
	var zero T
	s.build.Lock()
	defer s.build.Unlock()

	var closed bool
	closed, err = s.take()
	if closed {
		return zero, ErrClosed
	}

	s.builds++
	scope := s.own.Child(registry.WithName(strconv.Itoa(s.builds)))
	ok := false
	defer func() {
		if !ok {
			err = multierr.Append(err, scope.Close())
		}
	}()
	v, berr := build(scope)
	if berr != nil {
		return zero, multierr.Append(err, &BuildError{Err: berr})
	}
	ok = true
	s.mu.Lock()
	s.cur, s.scope = v, scope
	s.mu.Unlock()
	return v, err
}

// take is takeLocked for Replace and Clear: it reports a closed slot, and
// otherwise closes the current instance, and returns the error of closing it
// as a closeError. Callers hold s.build. The deferred Unlock matters when the
// value's Close panics: a caller that recovers (a controller's reconcile loop
// does) must find the slot usable, not locked.
func (s *Slot[T]) take() (closed bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return true, nil
	}
	if err := s.takeLocked(); err != nil {
		return false, &closeError{err}
	}
	return false, nil
}

// A closeError is the error of closing the previous instance, as Replace
// and Clear return it. errors.Is and errors.As see into it, except
// errors.As into a *BuildError (of a slot that the instance's Close replaced
// in, say), which would say that a build of this slot failed.
type closeError struct{ err error }

func (e *closeError) Error() string { return e.err.Error() }

func (e *closeError) Is(target error) bool { return errors.Is(e.err, target) }

func (e *closeError) As(target any) bool {
	if _, ok := target.(**BuildError); ok {
		return false
	}
	return errors.As(e.err, target)
}

// takeLocked closes and forgets the current instance: the value first, then
// its scope, even if the value's Close panics. Callers hold s.build and s.mu,
// and hold s.mu again when it returns or panics; the closes run without s.mu
// so that Current does not wait for them.
func (s *Slot[T]) takeLocked() (err error) {
	var zero T
	cur, scope := s.cur, s.scope
	s.cur, s.scope = zero, nil
	if scope == nil {
		return nil
	}
	s.mu.Unlock()
	defer s.mu.Lock()
	defer func() { err = multierr.Append(err, scope.Close()) }()
	return closeValue(cur)
}

// Current returns the live instance, if there is one. It never waits for a
// Replace in progress; during one it reports the slot empty, since the old
// instance is closed first.
func (s *Slot[T]) Current() (T, bool) {
	if s == nil {
		var zero T
		return zero, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur, s.scope != nil
}

// Clear closes the current instance, then its scope, as Replace does first,
// and leaves the slot empty and open: Current reports it empty until the
// next Replace. It is for a component that stops for a while, such as a
// controller that lost leadership, whose slot must outlive it. It returns
// the error of closing the instance, in which, as in Replace's, errors.As
// into a *BuildError finds none. It waits for a Replace in progress, and
// so may not be called by a build function or an instance's Close (see
// Replace). Once the slot is closed, it returns [ErrClosed] and closes
// nothing. On the zero Slot, and a nil *Slot, it returns nil.
func (s *Slot[T]) Clear() error {
	if s == nil || s.own == nil {
		return nil
	}
	s.build.Lock()
	defer s.build.Unlock()
	closed, err := s.take()
	if closed {
		return ErrClosed
	}
	return err
}

// Close closes the current instance and its scope, then the slot's own scope,
// and makes every later Replace and Clear return [ErrClosed]. It waits for a
// Replace in progress. A second Close returns nil.
func (s *Slot[T]) Close() (err error) {
	if s == nil {
		return nil
	}
	s.build.Lock()
	defer s.build.Unlock()
	// The slot's scope is closed last, without s.mu, so that Current
	// does not wait for it; a second Close of it returns nil.
	defer func() { err = multierr.Append(err, s.own.Close()) }()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return s.takeLocked()
}

func closeValue(c io.Closer) error {
	if nilness.IsNil(c) {
		return nil
	}
	return c.Close()
}
