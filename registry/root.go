package registry

import (
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// A root is what the outermost scope of a tree shares with every scope nested
// in it: the Registerer they all register into, and the hub that exposes
// their unchecked collectors. Each scope of the tree registers straight into
// reg; nesting only composes views and decides who closes whom.
type root struct {
	reg          prometheus.Registerer // never nil
	keepsNothing bool                  // reg took an invalid probe and did not keep it: it keeps nothing
	hub          hub
	index        *Index // WithIndex's; nil for none
	top          *node  // the outermost scope

	reporting sync.Mutex // held while a leak report of the tree is decided
	strays    strays     // questions a parent's panic left registered
}

// strays are the questions of a tree that a parent left registered,
// panicking as Close took them back out: nobody's collectors, which hold an
// identity until the next Close that meets one takes it out.
type strays struct {
	mu sync.Mutex
	qs map[*question]struct{} // guarded by mu
}

func (s *strays) put(q *question) {
	s.mu.Lock()
	if s.qs == nil {
		s.qs = map[*question]struct{}{}
	}
	s.qs[q] = struct{}{}
	s.mu.Unlock()
}

// take reports whether c is one of the strays, and forgets it.
func (s *strays) take(c prometheus.Collector) bool {
	q, ok := c.(*question)
	if !ok {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok = s.qs[q]
	delete(s.qs, q)
	return ok
}

// add registers r with the parent: a checked collector directly, an
// unchecked one through the hub (whose registration a faulty parent may
// refuse as registered already, too).
//
// When the parent names as the holder something that a scope is taking
// back (a question Close is asking, or a viewed collector already silenced),
// add asks once more: either that scope was taking its registration back as
// the parent answered, and the identity is free by now, or the parent
// refused to let go, and it will answer the same. Then the
// AlreadyRegisteredError names no existing collector: there is none to
// name.
//
// holder is what the parent named as the holder in its answer, as it named
// it (a viewed collector of a scope, say), for MustRegister to tell whose
// registration it is; nil when the parent named none.
func (rt *root) add(r *record) (holder prometheus.Collector, err error) {
	for range 2 {
		if r.unchecked() {
			err = rt.hub.add(rt.reg, r)
		} else {
			err = registerWith(rt.reg, r.held())
		}
		if err == nil {
			return nil, nil
		}
		are, ok := asAlreadyRegistered(err)
		if !ok {
			return nil, err
		}
		if isQuestion(r.c) {
			// A scope made on a Registerer that forwards to this tree
			// asks who holds its registration: the answer is what
			// this tree's user registered, which is that scope's own
			// collector.
			return are.ExistingCollector, renamed(err, rt.registered(are.ExistingCollector), r.c)
		}
		if existing, live := userOf(are.ExistingCollector); live {
			return are.ExistingCollector, renamed(err, existing, r.c)
		}
	}
	// What holds the identity is no collector of anybody's: a scope took
	// it back and the parent would not let go.
	return nil, renamed(err, nil, r.c)
}

// registerWith registers c with reg, a tree's parent, and returns its
// answer. A parent built on MustRegister (a Registerer whose Register calls
// a registry's MustRegister) answers that an identity is held by panicking
// with the AlreadyRegisteredError: that is taken as its answer, as if it
// had been returned, so that Close can ask such a parent who holds a
// registration. Any other panic goes on.
func registerWith(reg prometheus.Registerer, c prometheus.Collector) (answer error) {
	defer func() {
		if p := recover(); p != nil {
			err, _ := p.(error)
			if _, held := asAlreadyRegistered(err); !held {
				panic(p)
			}
			answer = err
		}
	}()
	return reg.Register(c)
}

// registered returns what the user of one of rt's scopes registered for
// existing, a holder of an identity in the parent, as a prometheus.Registry
// names what it holds: for a viewed collector of rt's tree, the collector
// registered through the scope, behind any client_golang wrappers it came
// through; anything else behind its client_golang wrappers.
func (rt *root) registered(existing prometheus.Collector) prometheus.Collector {
	if v, ok := existing.(*viewed); ok {
		if r := v.owner(); r != nil && r.n.root == rt {
			existing = r.c
		}
	}
	if isWrapper(existing) {
		return unwrap(existing)
	}
	return existing
}

// holds reports whether c, of kind k, is a Scope of rt's tree, or the
// Registerer that rt's tree registers into (its parent, or what
// client_golang's wrappers of it pass registrations on to), which collects
// what the tree registers: as it is, behind client_golang's wrappers, or
// behind the viewed collectors of scopes with views (a scope with a view on
// a Registerer that forwards to a scope registers, in place of that scope,
// a viewed collector of it).
func (rt *root) holds(c prometheus.Collector, k kind) bool {
	for range 64 {
		switch x := c.(type) {
		case *Scope:
			return x.n != nil && x.n.root == rt
		case *viewed:
			r := x.owner()
			if r == nil {
				return false
			}
			c, k = r.c, kindOf(r.c)
			continue
		}
		if k == ownWrapper {
			if u := unwrap(c); u != c {
				c, k = u, kindOf(u)
				continue
			}
		}
		return k == foreign && rt.registersInto(c) // client_golang's metrics and vectors are no Registerers
	}
	return false
}

// collects reports whether collecting c, of kind k, would collect a scope
// of rt's tree, or what its hub collects: a scope of another tree that
// holds one of rt's, say.
func (rt *root) collects(c prometheus.Collector, k kind) bool {
	rc := reachOf(c, k)
	return rc != nil && (rc.scopes[&rt.hub] || rc.handles[&rt.hub])
}

// registersInto reports whether c is the Registerer that rt's tree
// registers into, or one that client_golang's wrappers of it pass
// registrations on to.
func (rt *root) registersInto(c prometheus.Collector) bool {
	if _, ok := c.(prometheus.Registerer); !ok {
		return false
	}
	for r := rt.reg; r != nil; r = unwrapRegisterer(r) {
		if samePointer(r, c) {
			return true
		}
	}
	return false
}

// isQuestion reports whether c is a scope's question, as it is, behind
// client_golang's wrappers, or behind the viewed collectors of scopes with
// views: a scope made on a Registerer that forwards to a wrapper of a scope
// asks through that wrapper, and one made on a Registerer that forwards to a
// scope with a view, itself on such a Registerer, asks through that scope.
func isQuestion(c prometheus.Collector) bool {
	u, _ := userOf(c)
	_, ok := u.(*question)
	return ok
}

// userOf returns the collector that existing, the holder of an identity in
// the parent, stands for to somebody registering through a scope: the user's
// collector behind a viewed collector and behind client_golang's wrappers, as
// deep as they go. live is false if existing is on its way out: a question,
// or a viewed collector that its scope has taken back.
func userOf(existing prometheus.Collector) (_ prometheus.Collector, live bool) {
	for {
		switch e := existing.(type) {
		case *question:
			return existing, false
		case *viewed:
			r := e.owner()
			if r == nil {
				return existing, false
			}
			existing = r.c
		default:
			if !isWrapper(existing) {
				return existing, true
			}
			u := unwrap(existing)
			if u == existing {
				return existing, true
			}
			existing = u
		}
	}
}

// release takes r back from the parent and silences it. p is what the same
// Close or Unregister has taken back before. removed reports whether the
// parent held r's registration and let it go. If the parent panics, the
// panic goes on and r is left as it was: still exposed, to be taken back by
// the next Close.
func (rt *root) release(r *record, p *pass) (removed bool, err error) {
	removed, err = rt.takeBack(r, p)
	r.silence()
	return removed, err
}

// takeBack is release without the silencing. For a checked collector, it
// first asks the parent who holds r's identity, by registering r's question,
// and unregisters only if the parent names r's collector: client_golang
// unregisters by identity, and would otherwise remove an equal collector that
// somebody else registered in place of the scope's.
func (rt *root) takeBack(r *record, p *pass) (removed bool, err error) {
	if r.unchecked() {
		rt.hub.remove(r)
		return true, nil
	}
	defer func() {
		if err != nil {
			err = &UnregisterError{Scope: r.n.str, Metrics: r.names(), Err: err}
		}
	}()
	q := newQuestion(r)
	answer := registerWith(rt.reg, q)
	are, isARE := asAlreadyRegistered(answer)
	switch {
	case answer == nil, isARE && rt.strays.take(are.ExistingCollector):
		// Nobody held the identity, or a question of the tree's that a
		// parent's panic left registered held it. The question
		// registered the identity, or stands for the stray: take it
		// back out. A parent that keeps nothing refuses, and then there
		// is nothing to report; nor is there when the scope itself
		// freed the identity, through another record of the same
		// collector. If the parent panics, the question is a stray.
		stray := true
		defer func() {
			if stray {
				rt.strays.put(q)
			}
		}()
		out := rt.reg.Unregister(q)
		stray = false
		switch {
		case !out && !rt.keepsNothing:
			return false, notRegistered{why: "somebody else unregistered it, and the parent refused to unregister the question asked about it"}
		case rt.keepsNothing || p.freed(r):
			return false, nil
		}
		return false, notRegistered{why: "somebody else unregistered it"}
	case isARE:
		if !r.standsFor(are.ExistingCollector) {
			return false, notRegistered{why: "an equal collector of somebody else's is registered in its place and was left alone"}
		}
		if rt.reg.Unregister(q) {
			return true, nil
		}
		return false, notRegistered{why: "the parent refused to unregister it"}
	default:
		return false, notRegistered{why: "the parent failed the ownership check", parent: answer}
	}
}

// closed is called when the outermost scope has closed: the index forgets
// the tree, and the hub lets go of its handle, which collects nothing from
// then on, even if the parent panics as it is unregistered.
func (rt *root) closed() {
	if rt.index != nil {
		rt.index.remove(rt.top)
	}
	rt.hub.close(rt.reg)
}

// A hub collects all of a tree's unchecked collectors through one unchecked
// collector, its handle, which the tree registers with its parent the first
// time one of its scopes registers an unchecked collector. A
// prometheus.Registry cannot unregister an unchecked collector, so each one
// registered there directly would stay for the registry's lifetime; through
// the hub, a tree leaves at most its handle behind, eight bytes that refer to
// nothing once the tree's root is closed, whatever its scopes registered and
// however often they were recycled.
type hub struct {
	regMu  sync.Mutex // held while registering the handle with the parent
	handle *handle    // guarded by regMu; nil until needed

	mu      sync.Mutex
	records map[*record]struct{} // guarded by mu; the tree's unchecked registrations

	collecting atomic.Int32 // collections of the tree under way (see enter)
}

// maxCollecting bounds the collections of one tree under way at once: a
// cycle that the tree could not see (see twice) nests them without end,
// and concurrent scrapes of one registry come nowhere near it.
const maxCollecting = 1024

// enter counts a collection of the tree's collectors, through its handle or
// a scope of the tree, until leave. Past maxCollecting it sends instead a
// metric that fails the scrape with an error, and reports false: the
// collection is cut, so that a cycle ends the scrape rather than the
// program, and the scrape does not expose part of the tree as if it were
// all of it.
func (h *hub) enter(ch chan<- prometheus.Metric) bool {
	if h.collecting.Add(1) <= maxCollecting {
		return true
	}
	h.collecting.Add(-1)
	desc := prometheus.NewDesc("promscope_collection_cut", "A collection of a promscope tree that was cut.", nil, nil)
	ch <- prometheus.NewInvalidMetric(desc, fmt.Errorf("registry: more than %d collections of a tree of scopes under way at once: a collector that collects the tree itself, which the tree could not see, or as many concurrent scrapes", maxCollecting))
	return false
}

func (h *hub) leave() { h.collecting.Add(-1) }

// handle is what the parent holds of a hub.
type handle struct{ hub atomic.Pointer[hub] }

// A reach is what collecting some collectors leads to that a tree can tell:
// the hubs whose handles they collect, which collect all of a hub's
// collectors, and the hubs of the trees whose scopes they collect, which
// collect some of them. Collecting a scope, a viewed collector, a
// client_golang wrapper or a handle leads on to what it collects;
// collectors of other types are opaque.
type reach struct {
	handles map[*hub]bool
	scopes  map[*hub]bool
	seen    map[pointer]bool
}

// reachOf returns what collecting c, of kind k, leads to, or nil if c
// cannot lead to a hub: only a collector of promscope's, or one of
// client_golang's wrappers, can.
func reachOf(c prometheus.Collector, k kind) *reach {
	switch c.(type) {
	case *Scope, *viewed, *handle:
	default:
		if k != ownWrapper {
			return nil
		}
	}
	rc := &reach{handles: map[*hub]bool{}, scopes: map[*hub]bool{}, seen: map[pointer]bool{}}
	rc.add(c)
	return rc
}

// add adds what collecting c leads to.
func (rc *reach) add(c prometheus.Collector) {
	v := reflect.ValueOf(c)
	p, ok := pointerOf(v)
	if !ok || v.IsNil() || rc.seen[p] {
		return // no collector of promscope's, and no client_golang wrapper, is a value
	}
	rc.seen[p] = true
	var next []prometheus.Collector
	switch v := c.(type) {
	case *handle:
		if h := v.hub.Load(); h != nil {
			rc.handles[h] = true
			next = h.collectors()
		}
	case *Scope:
		// The whole tree: what the scope collects is some of it.
		if v.n != nil {
			rc.scopes[&v.n.root.hub] = true
			for _, r := range v.n.root.top.appendRecords(nil) {
				next = append(next, r.held())
			}
		}
	case *viewed:
		if r := v.owner(); r != nil {
			next = append(next, r.c)
		}
	default:
		if isWrapper(c) {
			next = append(next, unwrap(c))
		}
	}
	for _, n := range next {
		rc.add(n)
	}
}

// empty reports whether rc leads to no hub.
func (rc *reach) empty() bool { return len(rc.handles) == 0 && len(rc.scopes) == 0 }

// meets reports whether what rc and o lead to collect a collector twice: a
// hub whose handle one collects, and whose handle or a scope of whose tree
// the other collects.
func (rc *reach) meets(o *reach) bool {
	for h := range rc.handles {
		if o.handles[h] || o.scopes[h] {
			return true
		}
	}
	for h := range rc.scopes {
		if o.handles[h] {
			return true
		}
	}
	return false
}

func (*handle) Describe(chan<- *prometheus.Desc) {}

func (x *handle) Collect(ch chan<- prometheus.Metric) {
	h := x.hub.Load()
	if h == nil || !h.enter(ch) {
		return
	}
	defer h.leave()
	for _, c := range h.collectors() {
		c.Collect(ch)
	}
}

// collectors returns what the parent holds for the hub's records.
func (h *hub) collectors() []prometheus.Collector {
	h.mu.Lock()
	defer h.mu.Unlock()
	held := make([]prometheus.Collector, 0, len(h.records))
	for r := range h.records {
		held = append(held, r.held())
	}
	return held
}

// add registers the hub's handle with reg if it is not yet, then adds r.
// The handle counts as registered once reg has returned without an error;
// if reg panics, the next registration tries again. It refuses r if
// collecting r's collector would collect the handle: a scope, say, whose
// tree holds the handle, behind a Registerer of the user's own; every
// scrape would then collect without end. A handle registered for r alone
// is then taken back. One add runs at a time, so that no other
// registration finds the handle that a refusal is about to take back.
func (h *hub) add(reg prometheus.Registerer, r *record) error {
	h.regMu.Lock()
	defer h.regMu.Unlock()
	x, fresh, err := h.register(reg)
	if err != nil {
		return err
	}
	if twice(r.c, x) {
		if fresh {
			h.takeBack(reg) // registered for r alone: nothing is left
		}
		return errCollectsTree
	}
	h.mu.Lock()
	if h.records == nil {
		h.records = map[*record]struct{}{}
	}
	h.records[r] = struct{}{}
	h.mu.Unlock()
	return nil
}

// twice reports whether collecting c through x, a hub's handle, would
// collect a collector twice: c collects x, or a scope of x's tree; or x
// collects a handle that c collects too, or a scope of whose tree c
// collects; or c collects a handle that x collects, or a scope of whose
// tree x collects. Only what leads to some hub can, so what x collects is
// looked at only then.
func twice(c prometheus.Collector, x *handle) bool {
	theirs := reachOf(c, kindOf(c))
	if theirs == nil || theirs.empty() {
		return false
	}
	return theirs.meets(reachOf(x, foreign))
}

// register registers the hub's handle with reg if it is not yet, and
// returns it; fresh if this call registered it. A handle that reg refuses,
// or panics on, is cut loose: reg may have registered it before it
// panicked, and a handle that the next registration made again must not
// expose the hub's collectors twice. Callers hold regMu.
func (h *hub) register(reg prometheus.Registerer) (x *handle, fresh bool, err error) {
	if h.handle != nil {
		return h.handle, false, nil
	}
	made := &handle{}
	made.hub.Store(h)
	registered := false
	defer func() {
		if !registered {
			made.hub.Store(nil)
		}
	}()
	if err := registerWith(reg, made); err != nil {
		return nil, false, err
	}
	registered = true
	h.handle = made
	return made, true, nil
}

func (h *hub) remove(r *record) {
	h.mu.Lock()
	delete(h.records, r)
	h.mu.Unlock()
}

// close unregisters the handle from reg and cuts it loose: a
// prometheus.Registry refuses, and keeps the handle, which collects nothing
// from then on.
func (h *hub) close(reg prometheus.Registerer) {
	h.regMu.Lock()
	defer h.regMu.Unlock()
	h.takeBack(reg)
}

// takeBack is close for callers that hold regMu.
func (h *hub) takeBack(reg prometheus.Registerer) {
	if x := h.handle; x != nil {
		x.hub.Store(nil)
		h.handle = nil
		reg.Unregister(x)
	}
	h.mu.Lock()
	h.records = nil
	h.mu.Unlock()
}
