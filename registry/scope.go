package registry

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/internal/nilness"
)

// Compile-time checks of the interfaces a Scope implements.
var (
	_ prometheus.Registerer = (*Scope)(nil)
	_ prometheus.Gatherer   = (*Scope)(nil)
	_ prometheus.Collector  = (*Scope)(nil)
	_ io.Closer             = (*Scope)(nil)
)

// A Scope is a [prometheus.Registerer] that owns what is registered through
// it and removes all of it on [Scope.Close]. Create one with [NewScope]. The
// zero value, and a nil *Scope, are not usable: Register, MustRegister,
// Child and DeleteOnClose panic on them (and [Handler] on a nil one), and
// the other methods treat them as an empty scope.
type Scope struct {
	n     *node
	watch *watch // for a watched scope (see NewScope); shared by every copy of the Scope
}

// A watch is what the cleanup of a watched scope waits on (see
// reportLeak): an object of its own that every copy of a Scope refers to,
// and nothing else does, so that the cleanup runs when the last copy is
// dropped, and not when the Scope NewScope returned is copied into a struct
// and dropped.
type watch struct {
	cleanup runtime.Cleanup // runs reportLeak; set once
}

// NewScope returns an open scope that registers into parent, applying opts
// to everything registered through it.
//
// If parent is a *Scope, or a Registerer that client_golang's
// WrapRegistererWith or WrapRegistererWithPrefix made of a scope (any number
// of them, in any order), the new scope is nested in that scope: it
// registers into the same Registerer, with the prefix and labels of the
// scope, of the wrappers and of its own (see [WithPrefix] and [WithLabels]),
// the scope counts and gathers what it owns, and closing the scope closes
// it, in its turn among what the scope owns, newest first. A scope nested
// in a closed scope is closed.
//
// Any other parent, such as a *prometheus.Registry, is registered into as it
// is. A nil parent, or a nil *Scope, registers into a private registry of
// the scope's own: nothing is exposed anywhere, but registrations are
// checked and refused as a registry would. Behind client_golang's wrappers,
// a nil *Scope does the same, and the wrappers' prefix and labels join the
// scope's. NewScope panics on a zero Scope, which NewScope did not make, as
// it is or behind client_golang's wrappers.
func NewScope(parent prometheus.Registerer, opts ...Option) *Scope {
	o := newOptions(opts)
	var up *node
	var via options
	var keepsNothing bool
	if p, ok := parent.(*Scope); ok && p != nil {
		up = p.node("NewScope")
	} else if f, keeps := findScope(parent); f != nil {
		if f.unmade {
			// Behind the wrappers is a nil Scope, whose scopes
			// register into a private registry, or a zero one.
			if f.zero {
				panic("registry: NewScope on a Scope that NewScope did not make")
			}
			parent = nil
		}
		up, via = f.n, f.over
	} else {
		keepsNothing = keeps
	}
	report := o.report
	if report == nil && up != nil {
		report = up.report
	}
	// A scope is watched, so that reportLeak runs once its handle is
	// garbage, if it has a leak report or is in a tree listed in an
	// Index. It is made in one allocation with its node and, for a root,
	// its root; a watched scope's Scope is an object of its own: the
	// cleanup keeps the node, which must not keep the watch.
	watched := report != nil || up == nil && o.index != nil || up != nil && up.root.index != nil
	var s *Scope
	var n *node
	var rt *root
	switch {
	case watched:
		s, n = &Scope{}, &node{}
		if up == nil {
			rt = &root{}
		}
	case up != nil:
		made := &struct {
			Scope
			n node
		}{}
		s, n = &made.Scope, &made.n
	default:
		made := &struct {
			Scope
			n  node
			rt root
		}{}
		s, n, rt = &made.Scope, &made.n, &made.rt
	}
	s.n = n
	n.name, n.report = quote(o.name), report
	var above *view
	if up != nil {
		n.root, n.up = up.root, up
		above = up.view
		n.name = joinNames(up.name, n.name)
	} else {
		if nilness.IsNil(parent) {
			parent = prometheus.NewRegistry()
		}
		n.root = rt
		rt.reg, rt.keepsNothing, rt.index, rt.top = parent, keepsNothing, o.index, n
	}
	n.view = newView(newView(above, via), o)
	n.str = scopeString(n.name, n.view)
	if watched {
		n.created = madeAt()
		s.watch = &watch{}
		s.watch.cleanup = runtime.AddCleanup(s.watch, dropped, n)
	}
	if up != nil {
		up.adopt(n)
	} else if n.root.index != nil {
		n.root.index.add(n)
	}
	runtime.KeepAlive(parent) // a parent scope is not closed as idle before it adopts n
	return s
}

// joinNames composes an outer scope's name with a nested scope's own.
func joinNames(outer, own string) string {
	switch {
	case outer == "":
		return own
	case own == "":
		return outer
	}
	return outer + "/" + own
}

// Child returns a scope nested in s: it is NewScope(s, opts...). It panics on
// a nil or zero Scope.
func (s *Scope) Child(opts ...Option) *Scope {
	s.node("NewScope")
	return NewScope(s, opts...)
}

// String returns what names s in logs and reports: its name (see
// [WithName]), then the constant labels that s adds to its metrics (its own
// and those of the scopes and wrappers it is nested in, not those of a
// parent it registers into as it is), in braces, then its prefix, if it has
// one. For example:
//
//	mirror/west{cluster="west"} prefix="mirror_"
//
// A name that holds a space, anything unprintable or not UTF-8, or one of
// " \ { } , = / is quoted as strconv.Quote quotes it, so that no name
// passes for another, for a nested one, or for labels: a scope named
// "us east" nested in mirror is mirror/"us east".
//
// It is "" for a scope with no name, labels or prefix.
func (s *Scope) String() string {
	if s == nil || s.n == nil {
		return ""
	}
	return s.n.str
}

// node returns s's node, and panics if s is nil or a zero Scope, which has
// no parent to register into.
func (s *Scope) node(method string) *node {
	if s == nil || s.n == nil {
		panic("registry: " + method + " on a Scope that NewScope did not make")
	}
	return s.n
}

// Register registers c with the parent and, if the parent accepts it, records
// it as owned by s. The parent's error is returned as it is, except that a
// [prometheus.AlreadyRegisteredError] in it names collectors as the caller
// knows them, as a prometheus.Registry does: NewCollector is c, and
// ExistingCollector the collector that somebody registered, never an object
// of the scope's or a client_golang wrapper. A failed registration is not
// recorded. If the parent panics, the panic goes on, and c is recorded all
// the same, for Close to take back: the parent may have registered it. If c's
// Describe panics, Register panics with the same value in its caller's
// goroutine, before the parent sees c. An unchecked collector whose
// registration panicked is not exposed.
//
// A collector registered through client_golang's wrappers of s is s's like
// any other, with the wrappers' prefix and labels; Unregister through the
// same wrappers finds it.
//
// Register returns [ErrNilCollector] for a nil c, as it is or behind
// client_golang's wrappers, and [ErrClosed] once s, or a scope it is nested
// in, has begun to close, an error for c whose Describe sends a nil
// descriptor or that is a zero vector of client_golang's (one no New function
// made, whose Describe would dereference nil), and an error for c that is a
// scope of s's tree (s itself, one it is nested in, or any other nested in
// the same outermost scope) or the Registerer the tree registers into (the
// outermost scope's parent, or what client_golang's wrappers of it wrap), as
// it is or behind client_golang's wrappers: the tree would collect it twice,
// or, collecting itself, without end. In these cases the parent is not
// touched. It returns an error, and touches nothing, if a label is set twice
// on the way from the outermost scope, or if collecting c would collect what
// s's tree collects already: a scope of another tree that holds a scope of
// s's, say. Behind a Registerer of the user's own, which s cannot see
// through, it does so for a c that describes nothing (a scope behind a
// Registerer of the user's own that forwards to s, or a scope of a tree made
// on one); one that describes something, the parent refuses itself, unless
// client_golang's WrapRegistererWithPrefix between c and s renames what c
// describes (see "What is not promised" in [GUARANTEES]). It panics on a zero
// Scope.
//
// [GUARANTEES]: https://github.com/promscope/promscope/blob/main/docs/GUARANTEES.md#what-is-not-promised
func (s *Scope) Register(c prometheus.Collector) error {
	_, err := s.register(c)
	return err
}

// register is Register, and also says, if the parent refused c as
// registered already, what it named as the holder of c's identity (see
// root.add).
func (s *Scope) register(c prometheus.Collector) (holder prometheus.Collector, err error) {
	if (s == nil || s.n == nil) && isWrapper(c) {
		// NewScope asks through client_golang's wrappers for the scope
		// behind them: this is none that NewScope made.
		ds, _ := appendDescs(nil, c)
		if f := probed(c, ds, true); f != nil {
			f.unmade, f.zero = true, s != nil
			return nil, f
		}
	}
	n := s.node("Register")
	if nilness.IsNil(c) {
		return nil, ErrNilCollector
	}
	r := &record{c: c, n: n}
	var k kind
	r.descs, k = appendDescs(r.one[:0], c)
	if slices.Contains(r.descs, nil) {
		switch u := unwrap(c); {
		case nilness.IsNil(u):
			return nil, ErrNilCollector // behind client_golang's wrappers
		case zeroVector(u):
			return nil, fmt.Errorf("registry: %T is a zero vector: make it with its New function", u)
		}
		return nil, fmt.Errorf("registry: %T describes a nil descriptor", c)
	}
	if n.root.holds(c, k) {
		return nil, errors.New("registry: a scope cannot register a scope of its own tree, nor the Registerer the tree registers into: its registrations are collected already, and every scrape would collect them again, or without end")
	}
	if n.root.collects(c, k) {
		return nil, errCollectsTree
	}
	if f := probed(c, r.descs, k == ownWrapper); f != nil {
		f.n = n
		return nil, f
	}
	n.gate.RLock()
	defer n.gate.RUnlock()
	if n.stopped() {
		return nil, ErrClosed
	}
	if n.view != nil {
		if n.view.err != nil {
			return nil, n.view.err
		}
		r.v = newViewed(r, n.view)
	}
	if holder, err = n.add(r); err != nil {
		r.silence()
	}
	// s is not used after its node, so, dropped by its user during a
	// slow parent's Register, it could be found unreachable, and n
	// closed as idle, before n.add tracks the registration.
	runtime.KeepAlive(s)
	return holder, err
}

// MustRegister registers each collector in turn and panics with the first
// error [Scope.Register] returns. Collectors registered before the failing
// one stay registered and owned by s. The error is wrapped with s's String,
// if it is not empty: "registry: scope NAME: ...".
//
// When the error is an AlreadyRegisteredError, the panic value is an error
// that names s, if its String is not empty, and the scope holding the metric
// ("this scope" if it is s; "scope NAME", or "a scope with no name, labels or
// prefix", if its String differs from s's; "another scope NAME" if its String
// is s's, "another scope with no name, labels or prefix" if both are empty,
// an older generation of a component still open, say, and where it was made
// if a leak report or an Index recorded it; and whether it is nested in s, or
// s in it), or says that it is held outside s's tree, and wraps the
// AlreadyRegisteredError, so that errors.As(v.(error),
// &prometheus.AlreadyRegisteredError{}) still finds it. A scope of another
// tree is named if it has a prefix or labels, or if both trees are listed in
// one [Index] and register into the same parent, as generations of a
// component made on the registry itself are.
func (s *Scope) MustRegister(cs ...prometheus.Collector) {
	s.node("MustRegister")
	for _, c := range cs {
		if holder, err := s.register(c); err != nil {
			panic(s.n.collision(err, c, holder))
		}
	}
}

// Unregister removes c from the parent if s registered it, and reports
// whether it did: a registration of a scope nested in s is that scope's to
// remove, and Unregister on s returns false for it (Close of s takes it back
// with the nested scope). c is found as client_golang finds it: the same
// collector, or one describing the same fully-qualified names with the same
// constant label values (help strings and variable labels do not matter). A
// client_golang wrapper of c, which is what WrapRegistererWith passes on,
// finds c registered through wrappers that add the same. Of s's
// registrations, the newest of c with what c describes now goes; failing
// that, the newest of c, whatever its Describe said then; failing that, the
// newest of another collector with what c describes now. With it go any other
// records s has of the same checked collector under the same identity: the
// parent can hold only one of them, so the others are records of what
// somebody else unregistered behind s's back.
//
// Unregister never removes a collector that s does not own: if somebody
// else has since replaced s's registration with an equal collector, that one
// stays and Unregister returns false. An unchecked collector, which
// describes nothing, is found only as the same collector (or a wrapper of
// it), and always comes out.
func (s *Scope) Unregister(c prometheus.Collector) bool {
	if nilness.IsNil(c) || s == nil || s.n == nil {
		return false
	}
	n := s.n
	defer runtime.KeepAlive(s) // as in register
	ds, _ := appendDescs(nil, c)
	ds = slices.DeleteFunc(ds, func(d *prometheus.Desc) bool { return d == nil }) // Register refused any; Describe has changed
	// Unregister holds the gate alone, so that no Register or Unregister
	// on s runs while it takes a registration back and forgets its stale
	// records: which of them the parent holds cannot change under it.
	n.gate.Lock()
	defer n.gate.Unlock()
	if n.stopped() {
		return false
	}
	n.mu.Lock()
	r := n.lookup(c, ds)
	n.mu.Unlock()
	if r == nil {
		return false
	}
	// If the parent panics, the panic goes on, and r and its stale
	// records stay where they are in the list, for Close.
	removed, _ := n.root.release(r, nil)
	n.mu.Lock()
	n.unlink(&r.item)
	for _, t := range n.stale(r) {
		n.unlink(&t.item)
		t.silence()
	}
	n.mu.Unlock()
	return removed
}

// Len returns how many collectors s and the scopes nested in it own, as
// [Scope.Gather] collects them: once s is closed, none.
func (s *Scope) Len() int { return len(s.records()) }

// Close removes everything s owns, newest first, as deferred calls run: its
// collectors, the scopes nested in it, and the series registered with
// [Scope.DeleteOnClose]. Close is best effort: it attempts every step and
// combines the failures with go.uber.org/multierr, one [UnregisterError] per
// collector that it could not remove as its own, and one [DeleteError] per
// vector that kept the series a DeleteOnClose named. A collector that somebody
// else replaced with an equal one of their own is left to them. Nothing s
// registered through a prefix or labels exposes anything afterwards, or
// keeps the user's collectors reachable, whatever the parent does; a
// collector that s registered as it is stays with a parent that refuses to
// let it go, and Close reports it.
//
// From the moment Close begins, Register returns [ErrClosed] and Unregister
// false, on s and on every scope nested in it. Close waits for Register and
// Unregister calls already under way on s, and removes what they registered.
// If the parent panics, the panic goes on, and everything not yet removed
// stays recorded: the next Close carries on from there. Otherwise a second
// Close waits for the first to finish and returns nil, and so does Close on
// a nil or zero Scope.
func (s *Scope) Close() error {
	if s == nil || s.n == nil {
		return nil
	}
	if s.watch != nil {
		s.watch.cleanup.Stop()
	}
	err := s.n.close()
	closeDropped(s.n.up, false)
	runtime.KeepAlive(s.watch)
	return err
}
