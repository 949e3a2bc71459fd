package registry

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/multierr"
)

// A node is a scope: everything a Scope is, except the handle its user
// holds. A scope nested in another is held by the outer scope's node, not by
// its user's handle, so that a handle dropped without Close can be reported
// while the outer scope still knows how to close what it left.
type node struct {
	item               // the node's place in its outer scope's list, or, for an outermost scope, in its Index
	root    *root      // shared by every scope of the tree
	up      *node      // the scope this one is nested in; nil for a root
	view    *view      // prefix and labels, composed with those above; nil for none
	name    string     // WithName's, composed with those above
	str     string     // what Scope.String returns
	created string     // where the scope was made, when leaks are reported
	report  func(Leak) // WithLeakReport's, or that of the scope above

	// Register holds gate shared while it works with the parent;
	// Unregister holds it alone, and Close takes it alone to set closing,
	// and so waits for them.
	gate     sync.RWMutex
	closeMu  sync.Mutex  // held by Close for the whole of its run
	closing  atomic.Bool // set when Close begins, under gate and mu; never cleared
	closed   atomic.Bool // set when a Close has undone everything
	reported bool        // guarded by root.reporting; set when a leak report has named n
	dropped  atomic.Bool // set when n's handle was found garbage

	mu      sync.Mutex
	items   list                       // guarded by mu; what Close undoes, oldest first
	index   map[string][]*record       // guarded by mu; records by identityKey, oldest first; built on the first lookup
	byKey   map[collectorKey][]*record // guarded by mu; records by keyOf their collector, oldest first; built with index
	pending map[string][]*deletion     // guarded by mu; the DeleteOnClose calls in items, by deletionKey
}

// stopped reports whether n or a scope it is nested in has begun to close.
// Nothing new may be registered through n then.
func (n *node) stopped() bool {
	for p := n; p != nil; p = p.up {
		if p.closing.Load() {
			return true
		}
	}
	return false
}

// within reports whether n is nested in o, however deeply.
func (n *node) within(o *node) bool {
	for p := n.up; p != nil; p = p.up {
		if p == o {
			return true
		}
	}
	return false
}

// adopt adds the new scope c to n's list, or marks it closed if n has begun
// to close: a scope made in a closing scope is closed.
func (n *node) adopt(c *node) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopped() {
		c.closing.Store(true)
		c.closed.Store(true)
		return
	}
	c.of = c
	n.items.push(&c.item)
}

// close takes back everything n owns, newest first: each registration, each
// nested scope, each DeleteOnClose. An entry leaves the list only once it is
// undone, so that when undoing one panics, the panic goes on with the rest
// still listed, and the next Close carries on from there.
func (n *node) close() error {
	n.closeMu.Lock()
	defer n.closeMu.Unlock()
	n.gate.Lock()
	n.mu.Lock()
	n.closing.Store(true)
	n.mu.Unlock()
	n.gate.Unlock()

	var err error
	var first [16]*record // most scopes hold fewer: done grows on the stack
	done := pass{rs: first[:0]}
	for {
		n.mu.Lock()
		it := n.items.tail
		n.mu.Unlock()
		if it == nil {
			break
		}
		switch x := it.of.(type) {
		case *record:
			_, e := n.root.release(x, &done)
			err = multierr.Append(err, e)
			done.rs = append(done.rs, x)
		case *node:
			err = multierr.Append(err, x.close())
		case *deletion:
			// Forgotten first: a Deleter that panics is not asked
			// again, and the next Close carries on past it.
			n.mu.Lock()
			n.unlink(it)
			n.mu.Unlock()
			err = multierr.Append(err, x.run(n.str))
			continue
		}
		n.mu.Lock()
		n.unlink(it)
		n.mu.Unlock()
	}
	n.closed.Store(true)
	if n.up != nil {
		n.up.mu.Lock()
		n.up.unlink(&n.item)
		n.up.mu.Unlock()
	} else {
		n.root.closed()
	}
	return err
}

// add registers r with the parent and, if the parent accepts it, tracks it.
// If the parent panics, r is tracked all the same, since the parent may have
// registered it: Close will ask the parent about it. holder is root.add's.
func (n *node) add(r *record) (holder prometheus.Collector, err error) {
	returned := false
	defer func() {
		if !returned || err == nil {
			n.mu.Lock()
			n.track(r)
			n.mu.Unlock()
		}
	}()
	holder, err = n.root.add(r)
	returned = true
	return holder, err
}

// track adds r to n's list. Callers hold n.mu.
func (n *node) track(r *record) {
	r.of = r
	n.items.push(&r.item)
	if n.index != nil {
		n.indexAdd(r)
	}
}

// unlink removes it from n's list, and a record from the index or a
// DeleteOnClose call from pending, if they still hold it. Callers hold n.mu.
func (n *node) unlink(it *item) {
	if !n.items.remove(it) {
		return
	}
	if d, ok := it.of.(*deletion); ok {
		dropFrom(n.pending, d.key, d)
	}
	if r := it.record(); r != nil && n.index != nil {
		if !r.unchecked() {
			dropFrom(n.index, identityKey(r.descs), r)
		}
		dropFrom(n.byKey, keyOf(r.c), r)
	}
}

// dropFrom removes v from the list m holds under key, and the key once its
// list is empty.
func dropFrom[K, V comparable](m map[K][]V, key K, v V) {
	if vs := slices.DeleteFunc(m[key], func(x V) bool { return x == v }); len(vs) > 0 {
		m[key] = vs
	} else {
		delete(m, key)
	}
}

// indexAdd adds r to the index. Callers hold n.mu.
func (n *node) indexAdd(r *record) {
	if !r.unchecked() {
		key := identityKey(r.descs)
		n.index[key] = append(n.index[key], r)
	}
	k := keyOf(r.c)
	n.byKey[k] = append(n.byKey[k], r)
}

// lookup finds the registration of c, which describes ds, that Unregister
// takes: the newest of the same collector with the identity ds make, as
// client_golang would find it; failing that, the newest of the same
// collector, whatever it described (its Describe has changed since);
// failing that, the newest of another collector with that identity.
// Callers hold n.mu.
func (n *node) lookup(c prometheus.Collector, ds []*prometheus.Desc) *record {
	var same []*record // the records with ds's identity key, oldest first
	if len(ds) > 0 {
		same = n.indexed(identityKey(ds))
		for _, r := range slices.Backward(same) {
			if sameCollector(r.c, c) && sameIdentity(r.descs, ds) {
				return r
			}
		}
	}
	// The same collector with another identity key: one whose Describe
	// has changed since it was registered, or an unchecked one.
	for _, r := range slices.Backward(n.ofCollector(keyOf(c))) {
		if sameCollector(r.c, c) {
			return r
		}
	}
	for _, r := range slices.Backward(same) {
		if sameIdentity(r.descs, ds) {
			return r
		}
	}
	return nil
}

// indexed returns the records whose identity has key, oldest first.
// Callers hold n.mu.
func (n *node) indexed(key string) []*record {
	n.buildIndex()
	return n.index[key]
}

// ofCollector returns the records whose collector has key, oldest first.
// Callers hold n.mu.
func (n *node) ofCollector(key collectorKey) []*record {
	n.buildIndex()
	return n.byKey[key]
}

// buildIndex builds the index, if it is not yet: on the first lookup, not
// on Register, which spares every registration the work, since most scopes
// are closed, never asked. Callers hold n.mu.
func (n *node) buildIndex() {
	if n.index != nil {
		return
	}
	n.index, n.byKey = map[string][]*record{}, map[collectorKey][]*record{}
	for it := n.items.head; it != nil; it = it.next {
		if r := it.record(); r != nil {
			n.indexAdd(r)
		}
	}
}

// stale returns the records of r's collector with r's identity, r being
// out of the list. The parent can hold only one registration of an
// identity, so these are records of what somebody else unregistered behind
// the scope's back, after which the collector was registered again.
// Callers hold n.mu.
func (n *node) stale(r *record) []*record {
	if r.unchecked() {
		return nil
	}
	var out []*record
	for _, t := range n.indexed(identityKey(r.descs)) {
		if t.twin(r) {
			out = append(out, t)
		}
	}
	return out
}

// entries returns n's registrations, the scopes nested in n and its
// pending DeleteOnClose calls, each oldest first, as they are now.
func (n *node) entries() (rs []*record, nested []*node, ds []*deletion) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for it := n.items.head; it != nil; it = it.next {
		switch x := it.of.(type) {
		case *record:
			rs = append(rs, x)
		case *node:
			nested = append(nested, x)
		case *deletion:
			ds = append(ds, x)
		}
	}
	return rs, nested, ds
}

// appendRecords appends the records of n and of the scopes nested in it to
// out, each scope's oldest first.
func (n *node) appendRecords(out []*record) []*record {
	rs, nested, _ := n.entries()
	out = append(out, rs...)
	for _, c := range nested {
		out = c.appendRecords(out)
	}
	return out
}

// A pass is the records that one Close has taken back so far.
type pass struct {
	rs    []*record
	index map[string][]*record // the checked ones of rs[:keyed], by identityKey, for freed
	keyed int
}

// freed reports whether p took back a registration of r's collector with r's
// identity: then the identity is free because of the scope itself, not
// because somebody else unregistered it. A nil pass took back nothing.
func (p *pass) freed(r *record) bool {
	if p == nil || r.unchecked() {
		return false
	}
	if p.index == nil {
		p.index = map[string][]*record{}
	}
	for _, d := range p.rs[p.keyed:] {
		if !d.unchecked() {
			key := identityKey(d.parentDescs())
			p.index[key] = append(p.index[key], d)
		}
	}
	p.keyed = len(p.rs)
	for _, d := range p.index[identityKey(r.parentDescs())] {
		if d.n == r.n && d.twin(r) {
			return true
		}
	}
	return false
}

// An item is one entry of a scope's list of what to undo on Close: of is a
// *record (a registration), a *node (a nested scope) or a *deletion (a
// DeleteOnClose), the object the item is embedded in.
type item struct {
	prev, next *item
	of         any
}

// record returns the registration it is, or nil.
func (it *item) record() *record {
	r, _ := it.of.(*record)
	return r
}

// nested returns the nested scope it is, or nil.
func (it *item) nested() *node {
	n, _ := it.of.(*node)
	return n
}

// A list is a doubly linked list of items, oldest first.
type list struct{ head, tail *item }

func (l *list) push(it *item) {
	it.prev, it.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = it
	} else {
		l.head = it
	}
	l.tail = it
}

// remove removes it, and reports whether l held it.
func (l *list) remove(it *item) bool {
	if it.prev == nil && it.next == nil && l.head != it {
		return false
	}
	if it.prev != nil {
		it.prev.next = it.next
	} else {
		l.head = it.next
	}
	if it.next != nil {
		it.next.prev = it.prev
	} else {
		l.tail = it.prev
	}
	it.prev, it.next = nil, nil
	return true
}
