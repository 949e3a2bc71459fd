package registry

import (
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/internal/describe"
)

// A member is a scope's record of one registration, and what the scope
// registers with its parent in place of the user's collector.
//
// It describes the descriptors the user's collector described at Register,
// as the parent saw them then, and keeps describing exactly those: the
// parent can always find the registration again, even if the collector's
// Describe has changed since. It collects the user's collector until the
// scope releases it; from then on it collects nothing and holds no reference
// to the collector, so that a parent still holding the member (one that
// refused to let go, or a prometheus.Registry holding an unchecked
// collector) keeps nothing of the component alive. And it is a unique
// object, so when the parent names the holder of an identity, the scope can
// tell its own registration from an equal collector of somebody else's.
//
// Only registration and scrapes go through a member; the metrics the user
// increments are the user's own objects.
type member struct {
	descs     []*prometheus.Desc      // what the parent is told; fixed at Register
	one       [1]*prometheus.Desc     // holds descs when there is only one, sparing an allocation
	live      atomic.Pointer[binding] // nil once released
	describes atomic.Uint32           // Describe calls; see forwardsTo

	prev, next *member // guarded by the owning Scope's mu
}

// A binding ties a member to the user's collector until the member is
// released. It is small, since every registration allocates one.
type binding struct {
	user   prometheus.Collector
	scoped *scoped // nil: the collector reaches the parent as it is
	owner  *state  // the owning scope's state, to name it
}

// scoped is what a binding of a scope with a view needs besides the user's
// collector.
type scoped struct {
	view *view
	orig []*prometheus.Desc // what user described, aligned with the member's descs
	self scopedMetric       // user as the parent sees it, if it is one of client_golang's own metrics
}

// newMember describes c and returns its member for the scope with view v and
// state owner. An unchecked collector, which describes nothing, gets a member
// that describes nothing either.
func newMember(c prometheus.Collector, v *view, owner *state) *member {
	m := &member{}
	b := &binding{user: c, owner: owner}
	ds := appendDescs(m.one[:0], c)
	if v != nil {
		b.scoped = &scoped{view: v}
	}
	if v != nil && len(ds) > 0 {
		b.scoped.orig = ds
		ds = v.wrapDescs(ds)
		if self, ok := c.(prometheus.Metric); ok && ownType(c) {
			// It collects itself, and only itself, so it is wrapped
			// once for every scrape to come.
			b.scoped.self = scopedMetric{Metric: self, desc: ds[0], pairs: v.pairs}
		}
	}
	m.descs = ds
	m.live.Store(b)
	return m
}

func (m *member) Describe(ch chan<- *prometheus.Desc) {
	m.describes.Add(1)
	for _, d := range m.descs {
		ch <- d
	}
}

func (m *member) Collect(ch chan<- prometheus.Metric) {
	b := m.live.Load()
	switch {
	case b == nil:
	case b.scoped == nil:
		b.user.Collect(ch)
	case b.scoped.self.Metric != nil:
		ch <- &b.scoped.self
	default:
		b.scoped.view.collect(b.user, b.scoped.orig, m.descs, ch)
	}
}

// user returns the user's collector, or nil once m is released.
func (m *member) user() prometheus.Collector {
	if b := m.live.Load(); b != nil {
		return b.user
	}
	return nil
}

// userDescs returns what the user's collector described at Register. m must
// not be released: only a scope's list, which holds no released member,
// asks.
func (m *member) userDescs() []*prometheus.Desc {
	if b := m.live.Load(); b.scoped != nil && b.scoped.orig != nil {
		return b.scoped.orig
	}
	return m.descs
}

func (m *member) unchecked() bool { return len(m.descs) == 0 }

// release silences m: from now on it collects nothing and forgets the user's
// collector.
func (m *member) release() { m.live.Store(nil) }

// forwardsTo reports whether the parent, naming c as the holder of m's
// identity, means m: c is m, a client_golang wrapper of m, or a wrapper of
// some other Registerer in between that reaches m when described. Nothing
// else describes m while its scope asks.
func (m *member) forwardsTo(c prometheus.Collector) bool {
	if c == nil {
		return false
	}
	if c == prometheus.Collector(m) || unwrap(c) == prometheus.Collector(m) {
		return true
	}
	before := m.describes.Load()
	appendDescs(nil, c)
	return m.describes.Load() != before
}

// String names m for a caller that registers straight on the parent and meets
// m as the ExistingCollector of an AlreadyRegisteredError: the metrics, and
// the scope that registered them.
func (m *member) String() string {
	s := "registry: " + strings.Join(describe.Names(m.descs), ", ") + ", registered through "
	if b := m.live.Load(); b != nil && b.owner.label != "" {
		return s + "promscope scope " + b.owner.label
	}
	return s + "a promscope scope"
}

// Unwrap returns the collector registered through the scope, or nil once the
// scope has taken it back; for a caller that meets m as String says.
func (m *member) Unwrap() prometheus.Collector { return m.user() }

// isMember reports whether c is a member (of any scope).
func isMember(c prometheus.Collector) bool {
	_, ok := c.(*member)
	return ok
}
