package registry

import (
	"cmp"
	"io"
	"runtime"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/multierr"

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
// zero value is not usable: Register, Child and DeleteOnClose panic on it,
// and everything else treats it as an empty scope.
type Scope struct {
	tree    *tree      // shared with the root and every scope nested in it
	up      *state     // the state of the scope this one is nested in; nil for a root
	view    *view      // prefix and labels, composed with those above; nil for none
	name    string     // WithName's, composed with those above
	created string     // file:line of the call that made s, when leaks are reported
	report  func(Leak) // WithLeakReport's, or the one of the scope above

	// Register and Unregister hold gate shared while they work with the
	// parent; Close takes it exclusively to close s, and so waits for them.
	gate    sync.RWMutex
	closing sync.WaitGroup  // one count while the first Close runs; Add under st.mu
	st      *state          // everything that changes
	cleanup runtime.Cleanup // reports s if it is dropped without Close; set once
}

// state is what changes in a scope. It is an object of its own, which
// refers to nothing that refers back to its Scope, so that a leak report can
// read it once the Scope is unreachable.
type state struct {
	label string // the scope's String

	mu       sync.Mutex
	closed   bool                 // written under the Scope's gate and mu; read under either
	head     *member              // guarded by mu; oldest registration
	tail     *member              // guarded by mu; newest registration
	n        int                  // guarded by mu; registrations in the list
	index    map[string][]*member // guarded by mu; by identityKey, oldest first; built on the first lookup
	children map[*Scope]uint64    // guarded by mu; open nested scopes, by creation order
	seq      uint64               // guarded by mu; last creation order given
	deletes  []deletion           // guarded by mu
}

// NewScope returns an open scope that registers into parent, applying opts
// to everything registered through it.
//
// If parent is a *Scope, the new scope is nested in it: it registers into
// the same Registerer as parent, with the prefix and labels of both (see
// [WithPrefix] and [WithLabels]), parent counts and gathers what it owns, and
// closing parent closes it first. A scope nested in a closed scope is
// closed.
//
// Any other parent, such as a *prometheus.Registry or a Registerer that
// client_golang's WrapRegistererWith made (of a scope too), is registered
// into as it is. A nil parent registers into a private registry of the
// scope's own: nothing is exposed anywhere, but registrations are checked
// and refused as a registry would.
func NewScope(parent prometheus.Registerer, opts ...Option) *Scope {
	o := newOptions(opts)
	// A scope is made in one allocation with its state and, for a root,
	// its tree. With a leak report, both are objects of their own: the
	// report reads the state once the Scope is garbage, and the scopes
	// nested in a root refer to its tree, which must not hold it.
	made := &struct {
		Scope
		st state
		tr tree
	}{}
	s := &made.Scope
	s.name, s.report, s.st = o.name, o.report, &made.st
	up, nested := parent.(*Scope)
	if nested && up != nil {
		up.mustBeMade("NewScope")
		s.tree, s.up, s.view = up.tree, up.st, newView(up.view, o)
		s.name = joinNames(up.name, o.name)
		if s.report == nil {
			s.report = up.report
		}
	} else {
		if nilness.IsNil(parent) {
			parent = prometheus.NewRegistry()
		}
		s.tree, s.view = &made.tr, newView(nil, o)
		if s.report != nil {
			s.tree = &tree{}
		}
		s.tree.reg = parent
	}
	if s.report != nil {
		s.st = &state{}
	}
	s.st.label = label(s.name, s.view)
	if s.report != nil {
		s.created = madeAt()
		s.cleanup = runtime.AddCleanup(s, reportLeak, leakOf{report: s.report, created: s.created, st: s.st})
	}
	if s.up != nil {
		s.up.adopt(s)
	}
	return s
}

// Child returns a scope nested in s: it is NewScope(s, opts...).
func (s *Scope) Child(opts ...Option) *Scope {
	return NewScope(s, opts...)
}

// adopt records the new scope c as nested in the scope whose state st is, or
// closes c at once if that scope is closed.
func (st *state) adopt(c *Scope) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		c.st.closed = true
		return
	}
	if st.children == nil {
		st.children = map[*Scope]uint64{}
	}
	st.seq++
	st.children[c] = st.seq
}

// String returns what names s in logs and reports: its name (see
// [WithName]), then the constant labels its metrics carry, in braces, then
// its prefix, if it has one. For example:
//
//	mirror/west{cluster="west"} prefix="mirror_"
//
// It is "" for a scope with no name, labels or prefix.
func (s *Scope) String() string {
	if s.st == nil {
		return ""
	}
	return s.st.label
}

// mustBeMade panics if s is a zero Scope, which has no parent to register
// into.
func (s *Scope) mustBeMade(method string) {
	if s.tree == nil {
		panic("registry: " + method + " on a Scope that NewScope did not make")
	}
}

// Register registers c with the parent and, if the parent accepts it, records
// it as owned by s. The parent's error is returned as it is, except that an
// [prometheus.AlreadyRegisteredError] names collectors as the caller knows
// them, as a prometheus.Registry does: NewCollector is c, and
// ExistingCollector the collector that somebody registered, never an object
// of the scope's or a client_golang wrapper. A failed registration is not
// recorded.
//
// Register returns [ErrNilCollector] for a nil c and [ErrClosed] once s is
// closed; in both cases the parent is not touched. It returns an error, and
// touches nothing, if s sets a label that a scope it is nested in sets too.
// It panics on a zero Scope.
func (s *Scope) Register(c prometheus.Collector) error {
	if nilness.IsNil(c) {
		return ErrNilCollector
	}
	s.mustBeMade("Register")
	s.gate.RLock()
	defer s.gate.RUnlock()
	if s.st.closed {
		return ErrClosed
	}
	if s.view != nil && s.view.err != nil {
		return s.view.err
	}
	m := newMember(c, s.view, s.st)
	if err := s.tree.add(m, c); err != nil {
		m.release()
		return err
	}
	s.st.mu.Lock()
	s.st.track(m)
	s.st.mu.Unlock()
	return nil
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
// whether it did. c is found as client_golang finds it: the same collector,
// or one describing the same fully-qualified names with the same constant
// label values (help strings and variable labels do not matter). A
// client_golang wrapper of c, which is what WrapRegistererWith passes on,
// finds c too. When several of s's registrations match, the newest goes,
// with any older registration of the same collector under the same
// identity: the parent can hold only one of them, so the others are records
// of what somebody else unregistered behind s's back.
//
// Unregister never removes a collector that s does not own: if somebody
// else has since replaced s's registration with an equal collector, that one
// stays and Unregister returns false. An unchecked collector, which
// describes nothing, is found only as the same collector (or a wrapper of
// it), and always comes out.
func (s *Scope) Unregister(c prometheus.Collector) bool {
	if nilness.IsNil(c) || s.tree == nil {
		return false
	}
	ds := appendDescs(nil, c)
	s.gate.RLock()
	defer s.gate.RUnlock()
	if s.st.closed {
		return false
	}
	s.st.mu.Lock()
	var ms []*member
	if m := s.st.lookup(c, ds); m != nil {
		s.st.untrack(m)
		ms = append([]*member{m}, s.st.untrackTwins(m)...)
	}
	s.st.mu.Unlock()
	// The newest first: then the question Close asks about each older
	// one finds the identity free, and goes up through any scope behind a
	// client_golang wrapper in between, which takes its own stale records
	// of it the same way. Whichever the parent held was s's to remove.
	removed := false
	for _, m := range ms {
		if s.tree.release(m, "") == nil {
			removed = true
		}
	}
	return removed
}

// Len returns how many collectors s and the open scopes nested in it own.
func (s *Scope) Len() int {
	if s.st == nil {
		return 0
	}
	s.st.mu.Lock()
	if s.st.closed {
		s.st.mu.Unlock()
		return 0
	}
	n := s.st.n
	children := s.st.childList()
	s.st.mu.Unlock()
	for _, c := range children {
		n += c.Len()
	}
	return n
}

// Close removes everything s owns, in this order: the scopes nested in it,
// newest first; the series registered with [Scope.DeleteOnClose]; then its
// collectors, newest first. Close is best effort: it attempts every step and
// combines the failures with go.uber.org/multierr, one [UnregisterError] per
// collector that it could not remove as its own. A collector that somebody
// else replaced with an equal one of their own is left to them. Whatever
// happens, nothing s registered exposes anything afterwards or keeps the
// user's collectors reachable.
//
// Close waits for Register and Unregister calls under way on s, and removes
// what they registered; later ones return ErrClosed and false. A second
// Close waits for the first to finish and returns nil, and so does Close on
// a nil or zero Scope.
func (s *Scope) Close() error {
	if s == nil || s.tree == nil {
		return nil
	}
	st := s.st
	s.gate.Lock()
	st.mu.Lock()
	if st.closed {
		st.mu.Unlock()
		s.gate.Unlock()
		s.closing.Wait()
		return nil
	}
	st.closed = true
	s.closing.Add(1)
	defer s.closing.Done()
	children, deletes, tail := st.childList(), st.deletes, st.tail
	st.children, st.deletes, st.head, st.tail, st.n, st.index = nil, nil, nil, nil, 0, nil
	st.mu.Unlock()
	s.gate.Unlock()
	if s.report != nil {
		s.cleanup.Stop()
	}

	var err error
	for _, c := range slices.Backward(children) {
		err = multierr.Append(err, c.Close())
	}
	for _, d := range deletes {
		d.run()
	}
	for m := tail; m != nil; {
		prev := m.prev
		m.prev, m.next = nil, nil
		err = multierr.Append(err, s.tree.release(m, st.label))
		m = prev
	}
	if s.up != nil {
		s.up.detach(s)
	} else {
		s.tree.hub.close(s.tree.reg)
	}
	return err
}

// detach forgets the closed nested scope c.
func (st *state) detach(c *Scope) {
	st.mu.Lock()
	delete(st.children, c)
	st.mu.Unlock()
}

// childList returns the open nested scopes, oldest first. Callers hold
// st.mu.
func (st *state) childList() []*Scope {
	if len(st.children) == 0 {
		return nil
	}
	out := make([]*Scope, 0, len(st.children))
	for c := range st.children {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *Scope) int { return cmp.Compare(st.children[a], st.children[b]) })
	return out
}

// track appends m to the registration list. Callers hold st.mu.
func (st *state) track(m *member) {
	m.prev = st.tail
	if st.tail != nil {
		st.tail.next = m
	} else {
		st.head = m
	}
	st.tail = m
	st.n++
	if st.index != nil {
		st.indexAdd(m)
	}
}

// untrack removes m from the list and the index. Callers hold st.mu.
func (st *state) untrack(m *member) {
	if m.prev != nil {
		m.prev.next = m.next
	} else {
		st.head = m.next
	}
	if m.next != nil {
		m.next.prev = m.prev
	} else {
		st.tail = m.prev
	}
	m.prev, m.next = nil, nil
	st.n--
	if st.index != nil && !m.unchecked() {
		key := identityKey(m.userDescs())
		ms := slices.DeleteFunc(st.index[key], func(x *member) bool { return x == m })
		if len(ms) == 0 {
			delete(st.index, key)
		} else {
			st.index[key] = ms
		}
	}
}

// untrackTwins removes and returns the older registrations of m's collector
// with m's identity, oldest first. They stand for the collector being
// unregistered, and the parent holds at most one of them and m, since it
// cannot hold two collectors of one identity: the others are records of
// what somebody else unregistered behind the scope's back. A scope gets
// them when a collector is registered again after an outsider removed it,
// either by its user or by the question Close asks of a scope nested
// through a client_golang wrapper of it. Callers hold st.mu and have just
// untracked m.
func (st *state) untrackTwins(m *member) []*member {
	if m.unchecked() {
		return nil
	}
	var twins []*member
	for _, t := range st.index[identityKey(m.userDescs())] {
		if sameCollector(t.user(), m.user()) && sameIdentity(t.userDescs(), m.userDescs()) {
			twins = append(twins, t)
		}
	}
	for _, t := range twins {
		st.untrack(t)
	}
	return twins
}

// indexAdd adds m to the index. Callers hold st.mu.
func (st *state) indexAdd(m *member) {
	if m.unchecked() {
		return
	}
	key := identityKey(m.userDescs())
	st.index[key] = append(st.index[key], m)
}

// lookup finds the newest registration of c, which describes ds: the same
// collector first, then an equal one. Callers hold st.mu.
func (st *state) lookup(c prometheus.Collector, ds []*prometheus.Desc) *member {
	if len(ds) > 0 {
		if st.index == nil {
			// Built by the first lookup, not by Register, which spares
			// every registration the work: most scopes are closed,
			// never asked.
			st.index = map[string][]*member{}
			for m := st.head; m != nil; m = m.next {
				st.indexAdd(m)
			}
		}
		ms := st.index[identityKey(ds)]
		for _, m := range slices.Backward(ms) {
			if sameCollector(m.user(), c) {
				return m
			}
		}
		for _, m := range slices.Backward(ms) {
			if sameIdentity(m.userDescs(), ds) {
				return m
			}
		}
	}
	// An unchecked collector, or one whose Describe has changed since it
	// was registered.
	for m := st.tail; m != nil; m = m.prev {
		if sameCollector(m.user(), c) {
			return m
		}
	}
	return nil
}
