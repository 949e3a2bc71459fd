package registry

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/multierr"

	"github.com/promscope/promscope/internal/describe"
)

// Compile-time checks of the interfaces a Scope implements.
var (
	_ prometheus.Registerer = (*Scope)(nil)
	_ prometheus.Gatherer   = (*Scope)(nil)
	_ io.Closer             = (*Scope)(nil)
)

// A Scope is a [prometheus.Registerer] that owns what is registered through
// it and removes all of it on [Scope.Close]. Create one with [NewScope] or
// [Scope.Child]; the zero value is not usable.
type Scope struct {
	reg  prometheus.Registerer // the parent; nil registers nowhere
	opts options               // prefix and labels, composed with the ancestors'
	up   *Scope                // the scope Child was called on, else nil

	mu       sync.Mutex
	closed   bool                            // guarded by mu
	closing  sync.WaitGroup                  // one count while the first Close runs; Add under mu
	head     *entry                          // guarded by mu; oldest registration
	tail     *entry                          // guarded by mu; newest registration
	n        int                             // guarded by mu; entries in the list
	byUser   map[prometheus.Collector]*entry // guarded by mu; newest entry per collector, built on first lookup
	byKey    map[string]*entry               // guarded by mu; newest entry per key, built on first descriptor lookup
	children map[*Scope]uint64               // guarded by mu; value is creation order
	seq      uint64                          // guarded by mu; last creation order given
	deletes  []deletion                      // guarded by mu
}

// NewScope returns an open scope that registers into parent, applying opts to
// everything registered through it. A nil parent registers nowhere, like
// promauto.With(nil): the scope still tracks, gathers and deletes. The parent
// may itself be a Scope, or any other Registerer.
func NewScope(parent prometheus.Registerer, opts ...Option) *Scope {
	return newScope(parent, newOptions(opts), nil)
}

func newScope(parent prometheus.Registerer, o options, up *Scope) *Scope {
	if isNil(parent) {
		parent = nil
	}
	return &Scope{reg: parent, opts: o, up: up}
}

// Register registers c with the parent and, if the parent accepts it, records
// it as owned by s. The parent's error is returned unchanged, except that an
// [prometheus.AlreadyRegisteredError] names the user's collectors rather than
// the wrappers scopes register in their place, so ExistingCollector is the
// collector that is really registered. A failed registration is not recorded.
//
// Register returns an error wrapping [ErrNilCollector] for a nil c, and
// [ErrClosed] once s is closed; in both cases the parent is not touched.
func (s *Scope) Register(c prometheus.Collector) error {
	if isNil(c) {
		return fmt.Errorf("registry: register: %w", ErrNilCollector)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.waitClosed(c)
		return ErrClosed
	}
	defer s.mu.Unlock()
	e := &entry{user: c, exposed: s.opts.wrap(c), member: &member{}, unchecked: isUnchecked(c)}
	e.member.live.Store(e)
	if s.reg != nil {
		if err := s.registerMember(c, e.member); err != nil {
			e.member.live.Store(nil)
			return translate(err, c, e.member)
		}
	}
	s.track(e)
	return nil
}

// registerMember registers m, standing for c, with the parent. When the
// parent names as the holder a member that its scope has released, that
// scope was removing its registration as the parent answered: a scope
// silences a member only once the parent's Unregister has returned. So the
// identity is free by now (unless that parent refused to let go), and
// registerMember asks again, a few times, rather than report a holder that
// is gone and name an emptied wrapper as ExistingCollector.
func (s *Scope) registerMember(c prometheus.Collector, m *member) error {
	err := s.reg.Register(m)
	for range 3 {
		if err == nil || !heldByReleased(translate(err, c, m)) {
			break
		}
		err = s.reg.Register(m)
	}
	return err
}

// heldByReleased reports whether err is an AlreadyRegisteredError whose
// ExistingCollector is a released member.
func heldByReleased(err error) bool {
	are, ok := asAlreadyRegistered(err)
	if !ok {
		return false
	}
	m, ok := are.ExistingCollector.(*member)
	return ok && m.user() == nil
}

// MustRegister registers each collector in turn and panics with the first
// error [Scope.Register] returns. Collectors registered before the failing
// one stay registered and owned by s.
func (s *Scope) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := s.Register(c); err != nil {
			panic(err)
		}
	}
}

// Unregister removes c from the parent if s registered it, and reports
// whether it did. c is found as client_golang defines identity: the same
// collector object, or one describing the same descriptors. Unregister never
// removes a collector that s does not own: if somebody else has since
// replaced s's registration with an equal collector, that one stays and
// Unregister returns false. An unchecked collector, which a
// prometheus.Registry cannot unregister, is silenced instead and counts as
// removed.
func (s *Scope) Unregister(c prometheus.Collector) bool {
	if isNil(c) {
		return false
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.waitClosed(c)
		return false
	}
	defer s.mu.Unlock()
	e := s.lookup(c)
	if e == nil {
		return false
	}
	s.untrack(e)
	return s.release(e) == nil
}

// Child returns a scope that registers into the same parent as s, with the
// prefix and labels of s composed with opts (see [WithPrefix]), and that s
// owns: closing s closes the child first. Closing the child detaches it from
// s. A child of a closed scope is closed.
//
// Child panics if opts set a label name that s (or an ancestor) already sets.
func (s *Scope) Child(opts ...Option) *Scope {
	o := newOptions(opts).under(s.opts)
	c := newScope(s.reg, o, s)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		c.closed = true
		c.up = nil
		return c
	}
	if s.children == nil {
		s.children = map[*Scope]uint64{}
	}
	s.seq++
	s.children[c] = s.seq
	return c
}

// Len returns how many collectors s and its open children own.
func (s *Scope) Len() int {
	s.mu.Lock()
	n := s.n
	children := s.childList()
	s.mu.Unlock()
	for _, c := range children {
		n += c.Len()
	}
	return n
}

// Close removes everything s owns, in this order: its children, newest
// first; the series registered with [Scope.DeleteOnClose]; then its
// collectors, newest first. Close is best effort: it attempts every step and
// combines the failures with go.uber.org/multierr, one [UnregisterError] per
// collector that it could not remove as its own. A collector that somebody
// else replaced with an equal one of their own is left to them. Whatever
// happens, nothing s registered exposes anything afterwards or keeps the
// user's collectors reachable.
//
// A second Close returns nil once the first has finished (it waits for a
// Close in progress, such as a child's own Close that is slow in the parent),
// and so does Close on a nil *Scope. Register calls racing with Close either
// complete before it, and are removed, or return ErrClosed.
func (s *Scope) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.closing.Wait()
		return nil
	}
	s.closed = true
	s.closing.Add(1)
	defer s.closing.Done()
	children := s.childList()
	deletes := s.deletes
	tail := s.tail
	up := s.up
	s.children, s.deletes, s.head, s.tail, s.n, s.byUser, s.byKey, s.up = nil, nil, nil, nil, 0, nil, nil, nil
	s.mu.Unlock()

	if up != nil {
		// Detach last: until then a Close of up closes s too, and so
		// waits for this one to finish.
		defer up.detach(s)
	}
	var err error
	for _, c := range slices.Backward(children) {
		err = multierr.Append(err, c.Close())
	}
	for _, d := range deletes {
		d.run()
	}
	for e := tail; e != nil; {
		prev := e.prev
		e.prev, e.next, e.sameUser, e.sameKey = nil, nil, nil, nil
		err = multierr.Append(err, s.release(e))
		e = prev
	}
	return err
}

// release takes e back from the parent and silences its member. It first asks
// the parent who holds e's identity, by registering the member again: only
// if the member itself (or a wrapper of it) is registered does it unregister.
func (s *Scope) release(e *entry) (err error) {
	if s.reg == nil || e.unchecked {
		e.member.live.Store(nil)
		if s.reg != nil {
			// A prometheus.Registry cannot unregister an unchecked
			// collector and says so; a parent Scope can, and must, or
			// it would keep an entry for every recycled child.
			s.reg.Unregister(e.member)
		}
		return nil
	}
	defer func() {
		if err != nil {
			err = &UnregisterError{Metrics: describe.Names(describe.Descs(e.exposed)), Err: err}
		}
		e.member.live.Store(nil)
	}()
	probe := s.reg.Register(e.member)
	are, isARE := asAlreadyRegistered(probe)
	switch {
	case probe == nil:
		// Nobody held the identity: someone else had unregistered ours.
		// The probe just registered it again, so take it back out. A
		// parent that keeps nothing (a no-op Registerer) refuses, and
		// then there was nothing to report.
		if s.reg.Unregister(e.member) {
			return fmt.Errorf("%w: somebody else unregistered it", ErrNotRegistered)
		}
		if len(describe.Descs(e.exposed)) == 0 {
			// The collector's Describe yields nothing any more, so the
			// probe went in as an unchecked collector, and the parent
			// cannot find the registration to remove it: say so.
			return fmt.Errorf("%w: its Describe yields nothing now, so the parent cannot find it to unregister it", ErrNotRegistered)
		}
		return nil
	case isARE:
		if !e.member.forwardsTo(are.ExistingCollector) {
			return fmt.Errorf("%w: an equal collector of somebody else's is registered in its place and was left alone", ErrNotRegistered)
		}
		if !s.reg.Unregister(e.member) {
			if p, ok := s.reg.(*Scope); ok && p.isClosed() {
				// The parent scope was closed since the probe;
				// its Close took the member back.
				return nil
			}
			return fmt.Errorf("%w: the parent refused to unregister it", ErrNotRegistered)
		}
		return nil
	case errors.Is(probe, ErrClosed):
		// The parent is a closed scope, which removed everything already.
		return nil
	default:
		return fmt.Errorf("%w: %w", ErrNotRegistered, probe)
	}
}

// asAlreadyRegistered is errors.As for a prometheus.AlreadyRegisteredError,
// with a fast path for the unwrapped value that a prometheus.Registry
// returns: the target of errors.As escapes to the heap, an allocation that
// release would otherwise make for every collector Close removes.
func asAlreadyRegistered(err error) (prometheus.AlreadyRegisteredError, bool) {
	if are, ok := err.(prometheus.AlreadyRegisteredError); ok { //nolint:errorlint // The fast path; errors.As below sees through wrapping.
		return are, true
	}
	var are prometheus.AlreadyRegisteredError
	ok := errors.As(err, &are)
	return are, ok
}

// track appends e to the registration list. Callers hold s.mu.
func (s *Scope) track(e *entry) {
	e.prev = s.tail
	if s.tail != nil {
		s.tail.next = e
	} else {
		s.head = e
	}
	s.tail = e
	s.n++
	if s.byUser != nil {
		s.indexUser(e)
	}
	if s.byKey != nil {
		s.indexKey(e)
	}
}

// untrack removes e from the list and the indexes. Callers hold s.mu.
func (s *Scope) untrack(e *entry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		s.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		s.tail = e.prev
	}
	e.prev, e.next = nil, nil
	s.n--
	if s.byUser != nil && hashable(e.user) {
		unchain(s.byUser, e.user, e, func(e *entry) **entry { return &e.sameUser })
	}
	if s.byKey != nil && e.key != "" {
		unchain(s.byKey, e.key, e, func(e *entry) **entry { return &e.sameKey })
	}
}

// unchain removes e from the chain of entries that index[k] starts, linked
// through the field that link points to, and clears e's link. Callers hold
// s.mu.
func unchain[K comparable](index map[K]*entry, k K, e *entry, link func(*entry) **entry) {
	if index[k] == e {
		if next := *link(e); next != nil {
			index[k] = next
		} else {
			delete(index, k)
		}
	} else {
		for p := index[k]; p != nil; p = *link(p) {
			if *link(p) == e {
				*link(p) = *link(e)
				break
			}
		}
	}
	*link(e) = nil
}

// lookup finds the newest entry for c: by object first, then by descriptors.
// Only the newest entry with given descriptors can still be registered in the
// parent: an equal registration succeeds only once the older one is gone. Both
// indexes are built the first time they are needed, and kept from then on.
// Callers hold s.mu.
func (s *Scope) lookup(c prometheus.Collector) *entry {
	if hashable(c) {
		if s.byUser == nil {
			// Register leaves this index to the first lookup, which spares
			// every registration a map insert: most scopes are closed,
			// never asked.
			s.byUser = map[prometheus.Collector]*entry{}
			for e := s.head; e != nil; e = e.next {
				s.indexUser(e)
			}
		}
		if e := s.byUser[c]; e != nil {
			return e
		}
	}
	key := describe.Key(describe.Descs(s.opts.wrap(c)))
	if key == "" {
		return nil
	}
	if s.byKey == nil {
		s.byKey = map[string]*entry{}
		for e := s.head; e != nil; e = e.next {
			s.indexKey(e)
		}
	}
	return s.byKey[key]
}

// indexUser adds e to s.byUser, as the newest entry of its collector.
// Callers hold s.mu.
func (s *Scope) indexUser(e *entry) {
	if hashable(e.user) {
		e.sameUser = s.byUser[e.user]
		s.byUser[e.user] = e
	}
}

// indexKey adds e to s.byKey. Callers hold s.mu.
func (s *Scope) indexKey(e *entry) {
	if e.unchecked {
		return
	}
	if e.key == "" {
		e.key = describe.Key(describe.Descs(e.exposed))
	}
	if e.key != "" {
		e.sameKey = s.byKey[e.key]
		s.byKey[e.key] = e
	}
}

// childList returns the open children, oldest first. Callers hold s.mu.
func (s *Scope) childList() []*Scope {
	if len(s.children) == 0 {
		return nil
	}
	out := make([]*Scope, 0, len(s.children))
	for c := range s.children {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *Scope) int { return cmp.Compare(s.children[a], s.children[b]) })
	return out
}

// waitClosed waits for a Close of s in progress if c is the member of a
// scope nested on s. Register and Unregister call it before they answer
// ErrClosed or false, so that the nested scope does not silence its member
// while s's Close is still taking back the registration that wraps it: the
// parent cannot unregister a member that has stopped describing its
// descriptors. Users' calls get their answer at once.
func (s *Scope) waitClosed(c prometheus.Collector) {
	if _, nested := c.(*member); nested {
		s.closing.Wait()
	}
}

// isClosed reports whether s is closed, its Close finished.
func (s *Scope) isClosed() bool {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		s.closing.Wait()
	}
	return closed
}

// detach forgets the closed child c.
func (s *Scope) detach(c *Scope) {
	s.mu.Lock()
	delete(s.children, c)
	s.mu.Unlock()
}
