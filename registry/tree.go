package registry

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/internal/describe"
)

// A tree is what a root scope (one made on a Registerer that is not a Scope)
// shares with every scope nested in it: the Registerer they all register
// into, and the hub that exposes their unchecked collectors. Each scope of
// the tree registers straight into reg; nesting only composes views and
// decides who closes whom.
type tree struct {
	reg prometheus.Registerer // never nil
	hub hub
}

// add registers m, standing for the user's c, with the parent: a checked
// member directly, an unchecked one through the hub.
//
// When the parent names as the holder a member that its scope has released,
// that scope was taking its registration back as the parent answered (a
// scope releases a member only once the parent's Unregister has returned),
// so the identity is free by now and add asks again, a few times, rather
// than name a collector that is gone.
func (t *tree) add(m *member, c prometheus.Collector) error {
	if m.unchecked() {
		return t.hub.add(t.reg, m)
	}
	for range 4 {
		err := t.reg.Register(m)
		are, ok := asAlreadyRegistered(err)
		if !ok {
			return err
		}
		if existing, live := userOf(are.ExistingCollector, c); live {
			return prometheus.AlreadyRegisteredError{ExistingCollector: existing, NewCollector: c}
		}
	}
	return fmt.Errorf("registry: register %s: the parent still holds an equal collector for a closed scope that could not take it back",
		strings.Join(describe.Names(m.descs), ", "))
}

// userOf returns the collector that existing, the holder of an identity in
// the parent, stands for to the asker that registered c: a member's user
// and a client_golang wrapper's wrapped collector, as deep as they go. When
// c is itself a member (a scope nested through a wrapper is asking), it
// stops at the first member below the top one, since that is what the asker
// recognises as its own. live is false if a member on the way has been
// released.
func userOf(existing, c prometheus.Collector) (_ prometheus.Collector, live bool) {
	var askerIsScope, asked bool
	for top := true; ; top = false {
		switch {
		case isMember(existing):
			if !top {
				if !asked {
					askerIsScope, asked = isMember(unwrap(c)), true
				}
				if askerIsScope {
					return existing, true
				}
			}
			u := existing.(*member).user()
			if u == nil {
				return existing, false
			}
			existing = u
		case isWrapper(existing):
			u := unwrap(existing)
			if u == existing {
				return existing, true
			}
			existing = u
		default:
			return existing, true
		}
	}
}

// release takes m back from the parent and silences it; scope names the
// scope in the error. For a checked
// member it first asks the parent who holds m's identity, by registering m
// again, and unregisters only if the parent names m itself: client_golang
// unregisters by identity, and would otherwise remove an equal collector that
// somebody else registered in place of the scope's.
func (t *tree) release(m *member, scope string) (err error) {
	defer m.release()
	if m.unchecked() {
		t.hub.remove(m)
		return nil
	}
	defer func() {
		if err != nil {
			err = &UnregisterError{Scope: scope, Metrics: describe.Names(m.descs), Err: err}
		}
	}()
	probe := t.reg.Register(m)
	are, isARE := asAlreadyRegistered(probe)
	switch {
	case probe == nil:
		// Nobody held the identity: somebody else had unregistered the
		// scope's collector. The probe registered it again, so take it
		// back out. A parent that keeps nothing refuses, and then there
		// is nothing to report.
		if t.reg.Unregister(m) {
			return notRegistered{why: "somebody else unregistered it"}
		}
		return nil
	case isARE:
		if !m.forwardsTo(are.ExistingCollector) {
			return notRegistered{why: "an equal collector of somebody else's is registered in its place and was left alone"}
		}
		if t.reg.Unregister(m) {
			return nil
		}
		// A parent scope (behind a wrapper) that closed since the probe
		// took everything back, and says so when asked again.
		again := t.reg.Register(m)
		if isClosed(again) {
			return nil
		}
		if again == nil {
			t.reg.Unregister(m) // the question put it back
		}
		return notRegistered{why: "the parent refused to unregister it"}
	case isClosed(probe):
		// The parent is a closed scope (behind a wrapper), which took
		// everything back already.
		return nil
	default:
		return notRegistered{why: "the parent failed the ownership check", parent: probe}
	}
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
	members map[*member]struct{} // guarded by mu; the tree's unchecked registrations
}

// handle is what the parent holds of a hub.
type handle struct{ hub atomic.Pointer[hub] }

func (*handle) Describe(chan<- *prometheus.Desc) {}

func (x *handle) Collect(ch chan<- prometheus.Metric) {
	h := x.hub.Load()
	if h == nil {
		return
	}
	h.mu.Lock()
	ms := make([]*member, 0, len(h.members))
	for m := range h.members {
		ms = append(ms, m)
	}
	h.mu.Unlock()
	for _, m := range ms {
		m.Collect(ch)
	}
}

// add registers the hub's handle with reg if it is not yet, then adds m.
func (h *hub) add(reg prometheus.Registerer, m *member) error {
	h.regMu.Lock()
	if h.handle == nil {
		x := &handle{}
		x.hub.Store(h)
		if err := reg.Register(x); err != nil {
			h.regMu.Unlock()
			return err
		}
		h.handle = x
	}
	h.regMu.Unlock()
	h.mu.Lock()
	if h.members == nil {
		h.members = map[*member]struct{}{}
	}
	h.members[m] = struct{}{}
	h.mu.Unlock()
	return nil
}

func (h *hub) remove(m *member) {
	h.mu.Lock()
	delete(h.members, m)
	h.mu.Unlock()
}

// close unregisters the handle from reg, when the tree's root closes and the
// hub is empty, and cuts it loose: a prometheus.Registry refuses, and keeps
// the handle.
func (h *hub) close(reg prometheus.Registerer) {
	h.regMu.Lock()
	if x := h.handle; x != nil {
		reg.Unregister(x)
		x.hub.Store(nil)
		h.handle = nil
	}
	h.regMu.Unlock()
	h.mu.Lock()
	h.members = nil
	h.mu.Unlock()
}
