package registry

import (
	"errors"
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/internal/describe"
)

// errCollectsTree is Register's error for a collector that collects what
// the scope's tree collects already.
var errCollectsTree = errors.New("registry: a scope cannot register a collector that collects what the scope's tree collects already: every scrape would collect it twice, or without end")

// ErrClosed is returned by [Scope.Register] once the Close of the scope, or
// of a scope it is nested in, has begun. Nothing is passed to the parent
// then.
var ErrClosed = errors.New("registry: scope is closed")

// ErrNilCollector is returned by [Scope.Register] for a nil collector, or an
// interface holding a nil pointer.
var ErrNilCollector = errors.New("registry: nil collector")

// ErrNotRegistered is wrapped by the [UnregisterError] that [Scope.Close]
// reports for a collector that was no longer the scope's to remove:
// somebody else unregistered it, or replaced it in the parent with an equal
// collector of their own, which Close leaves alone, or the parent would not
// let it go.
var ErrNotRegistered = errors.New("registry: not registered by this scope")

// UnregisterError reports a collector that [Scope.Close] could not remove as
// its own. Close combines one per such collector with go.uber.org/multierr, so
// use [errors.As] on the combined error to get at them and [errors.Is] with
// [ErrNotRegistered] to test for the cause.
type UnregisterError struct {
	// Scope is the String of the scope that owned the registration: the
	// scope closed, or a scope nested in it.
	Scope string
	// Metrics are the names of the collector's metrics, sorted, with the
	// prefixes of the scopes it was registered through, as the outermost
	// scope's parent sees them: not with what a Registerer below it (a
	// WrapRegistererWithPrefix the outermost scope was made on) adds.
	// Error quotes those that are not plain, as Scope.String does.
	Metrics []string
	// Err is the cause. It wraps ErrNotRegistered, and the parent's error
	// where the parent returned one.
	Err error
}

// Error implements error.
func (e *UnregisterError) Error() string {
	scope := ""
	if e.Scope != "" {
		scope = "scope " + e.Scope + ": "
	}
	return fmt.Sprintf("registry: %sunregister %s: %v", scope, quoteAll(e.Metrics), e.Err)
}

// Unwrap returns the cause, so that errors.Is and errors.As see through.
func (e *UnregisterError) Unwrap() error { return e.Err }

// DeleteError reports a vector from which [Scope.Close] could not delete
// what a [Scope.DeleteOnClose] asked: DeletePartialMatch deleted no series,
// while the vector holds series that carry all the labels given, because a
// constant label, or one the vector was curried with, matches none. Close
// combines it with the others; use [errors.As] to get at it.
type DeleteError struct {
	// Scope is the String of the scope that owned the DeleteOnClose.
	Scope string
	// Labels are the labels given to DeleteOnClose.
	Labels prometheus.Labels
	// Series are the series left, each as its name and all its labels,
	// sorted, the name quoted as Scope.String quotes names that are not
	// plain.
	Series []string
}

// Error implements error.
func (e *DeleteError) Error() string {
	scope := ""
	if e.Scope != "" {
		scope = "scope " + e.Scope + ": "
	}
	shown := e.Series[:min(len(e.Series), 3)]
	more := ""
	if n := len(e.Series) - len(shown); n > 0 {
		more = fmt.Sprintf(" and %d more", n)
	}
	return fmt.Sprintf("registry: %sDeleteOnClose%s deleted none of %s%s: a constant label, or one the vector was curried with, matches no series (give DeleteOnClose the uncurried vector, and no constant label)",
		scope, selector(e.Labels), strings.Join(shown, ", "), more)
}

// quoteAll joins names with ", ", each quoted if it is not plain (see
// quote), so that no name reads as two.
func quoteAll(names []string) string {
	return strings.Join(appendQuoted(nil, names...), ", ")
}

// notRegistered is the cause inside an UnregisterError: why the collector was
// not the scope's to remove, and the parent's error if it returned one.
type notRegistered struct {
	why    string
	parent error
}

func (e notRegistered) Error() string {
	if e.parent != nil {
		return e.why + ": " + e.parent.Error()
	}
	return e.why
}

func (notRegistered) Is(target error) bool { return target == ErrNotRegistered }

func (e notRegistered) Unwrap() error { return e.parent }

// renamed returns the parent's error err, which is or wraps an
// AlreadyRegisteredError, with that error naming existing and c instead, as
// Register names collectors (see [Scope.Register]). What the parent wrapped
// it in stays: its text, and what errors.Is and errors.As find in it.
func renamed(err error, existing, c prometheus.Collector) error {
	are := prometheus.AlreadyRegisteredError{ExistingCollector: existing, NewCollector: c}
	if _, bare := err.(prometheus.AlreadyRegisteredError); bare { //nolint:errorlint // Only the bare value is replaced; a wrapped one keeps its wrapping.
		return are
	}
	return &renamedError{err: err, are: are}
}

// A renamedError is a parent's error that wraps an AlreadyRegisteredError,
// whose errors.As finds the AlreadyRegisteredError that Register names
// collectors in.
type renamedError struct {
	err error
	are prometheus.AlreadyRegisteredError
}

func (e *renamedError) Error() string { return e.err.Error() }

func (e *renamedError) Unwrap() error { return e.err }

func (e *renamedError) As(target any) bool {
	if p, ok := target.(*prometheus.AlreadyRegisteredError); ok {
		*p = e.are
		return true
	}
	return false
}

// asAlreadyRegistered is errors.As for a prometheus.AlreadyRegisteredError,
// with a fast path for the unwrapped value that a prometheus.Registry
// returns: the target of errors.As escapes to the heap, an allocation that
// Close would otherwise make for every collector it removes.
func asAlreadyRegistered(err error) (prometheus.AlreadyRegisteredError, bool) {
	if are, ok := err.(prometheus.AlreadyRegisteredError); ok || err == nil { //nolint:errorlint // The fast path; errors.As below sees through wrapping.
		return are, ok
	}
	var are prometheus.AlreadyRegisteredError
	ok := errors.As(err, &are)
	return are, ok
}

// collisionError is what MustRegister panics with for an
// AlreadyRegisteredError: it says which scope was refused, who holds the
// metric, and wraps the error.
type collisionError struct {
	scope   *node // the scope MustRegister was called on
	metrics []string
	holder  *node // the scope of the tree holding it; nil if none does
	err     error
}

func (e *collisionError) Error() string {
	var b strings.Builder
	b.WriteString("registry: ")
	if e.scope.str != "" {
		fmt.Fprintf(&b, "scope %s: ", e.scope.str)
	}
	what := quoteAll(e.metrics)
	if what == "" {
		what = "an unchecked collector"
	}
	fmt.Fprintf(&b, "%s is already registered ", what)
	switch h := e.holder; h {
	case nil:
		b.WriteString("outside the scope's tree")
	case e.scope:
		b.WriteString("by this scope")
	default:
		switch h.str {
		case e.scope.str:
			// Two scopes of one name: an older generation of the
			// component, say, still open, or a scope nested in the
			// other that adds nothing to its String.
			if h.str == "" {
				b.WriteString("by another scope with no name, labels or prefix")
			} else {
				b.WriteString("by another scope " + h.str)
			}
			if h.created != "" {
				b.WriteString(" made at " + h.created)
			}
		case "":
			b.WriteString("by a scope with no name, labels or prefix")
		default:
			b.WriteString("by scope " + h.str)
		}
		switch {
		case h.within(e.scope):
			b.WriteString(", nested in this one")
		case e.scope.within(h):
			b.WriteString(", which this one is nested in")
		}
	}
	fmt.Fprintf(&b, ": %v", e.err)
	return b.String()
}

func (e *collisionError) Unwrap() error { return e.err }

// A scopeError is any other error of MustRegister's: the error, wrapped
// with the String of the scope MustRegister was called on.
type scopeError struct {
	scope string
	err   error
}

func (e *scopeError) Error() string {
	return "registry: scope " + e.scope + ": " + strings.TrimPrefix(e.err.Error(), "registry: ")
}

func (e *scopeError) Unwrap() error { return e.err }

// collision returns what MustRegister panics with when Register refused c,
// registered through n, with err: for an AlreadyRegisteredError, a
// collisionError naming the scope whose registration holds c's identity as
// the parent sees it. holder is what the parent named as the holder: a
// viewed collector is its scope's registration, whichever tree that scope is
// in. Any other holder is a collector as somebody gave it to the parent,
// which is a registration of a scope of n's tree with no view if one holds
// that collector with that identity. When several do (only somebody else's
// Unregister can have freed the identity for the others), the registry
// holds the collector for all of them, and the last in the tree's order is
// named.
//
// Any other error is wrapped with the String of the scope refused, if it
// has one.
func (n *node) collision(err error, c prometheus.Collector, holder prometheus.Collector) error {
	are, ok := asAlreadyRegistered(err)
	switch {
	case ok:
	case n.str == "":
		return err
	default:
		return &scopeError{scope: n.str, err: err}
	}
	ds, _ := appendDescs(nil, c)
	if n.view != nil {
		ds = n.view.wrapDescs(nil, ds)
	}
	e := &collisionError{scope: n, metrics: describe.Names(ds), err: err}
	if v, ok := holder.(*viewed); ok {
		if r := v.owner(); r != nil {
			e.holder = r.n
		}
		return e
	}
	if are.ExistingCollector == nil {
		return e // a holder that is nobody's collector any more
	}
	e.holder = holderIn(n.root.top, ds, are.ExistingCollector)
	if e.holder == nil && n.root.index != nil {
		// Another tree of the Index on the same parent: an older
		// generation of the component, say, made on the registry
		// itself and never closed.
		for _, top := range n.root.index.scopes() {
			if top.root == n.root || !samePointer(top.root.reg, n.root.reg) {
				continue
			}
			if e.holder = holderIn(top, ds, are.ExistingCollector); e.holder != nil {
				break
			}
		}
	}
	return e
}

// holderIn returns the scope of top's tree, with no view, that registered
// existing, the collector the parent named as holding the identity of ds;
// nil if none did.
func holderIn(top *node, ds []*prometheus.Desc, existing prometheus.Collector) (holder *node) {
	key := identityKey(ds)
	for _, r := range top.appendRecords(nil) {
		if r.v != nil || r.unchecked() || identityKey(r.descs) != key || !sameIdentity(r.descs, ds) {
			continue
		}
		// The error names the user's collector behind any wrappers, as
		// userOf finds it.
		if u, _ := userOf(r.c); sameCollector(u, existing) {
			holder = r.n
		}
	}
	return holder
}
