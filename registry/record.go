package registry

import (
	"slices"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/internal/describe"
)

// A record is a scope's note of one registration: the collector as it was
// given to Register, what it described then, and, for a scope with a view,
// the collector that the parent holds in its place.
//
// A scope with no prefix and no labels registers the user's collector
// itself, so that code outside the scopes meets the user's own collector in
// an AlreadyRegisteredError. A scope with a view registers a [viewed]
// collector, which renames and labels at scrape time without
// client_golang's per-scrape wrapping.
//
// The descriptors are fixed at Register, so the parent can always find the
// registration again, even if the collector's Describe has changed since:
// Close asks and unregisters with a [question] that describes them.
type record struct {
	item
	c     prometheus.Collector // as given to Register
	n     *node                // the scope that owns the record
	descs []*prometheus.Desc   // what c described at Register; none: unchecked
	v     *viewed              // nil: the parent holds c itself
	one   [1]*prometheus.Desc  // holds descs when there is only one, sparing an allocation
}

func (r *record) unchecked() bool { return len(r.descs) == 0 }

// held returns what the parent holds for r.
func (r *record) held() prometheus.Collector {
	if r.v != nil {
		return r.v
	}
	return r.c
}

// parentDescs returns the descriptors that the parent knows r by.
func (r *record) parentDescs() []*prometheus.Desc {
	if r.v != nil {
		return r.v.descs
	}
	return r.descs
}

// names returns the metric names r's collector describes as the parent
// sees them.
func (r *record) names() []string { return describe.Names(r.parentDescs()) }

// twin reports whether t is a registration of r's collector with r's
// identity as the parent sees it: the parent holds one of them at most. A
// registration whose descriptors the parent sees as invalid (a label set
// twice), which only a parent that accepts what a registry refuses can hold,
// has no identity, and no twin.
func (r *record) twin(t *record) bool {
	return sameCollector(t.c, r.c) && sameIdentity(t.parentDescs(), r.parentDescs())
}

// silence makes r expose nothing through what the parent holds, and forget
// the user's collector there. A parent that holds the user's collector
// itself keeps exposing it; nothing can be done about that.
func (r *record) silence() {
	if r.v != nil {
		r.v.live.Store(nil)
	}
}

// standsFor reports whether the parent, naming existing as the holder of r's
// identity, means a registration of r's scope of r's collector: r's own, or
// a record of the same collector that the scope made again after somebody
// removed this one behind its back.
func (r *record) standsFor(existing prometheus.Collector) bool {
	if r.v == nil {
		// The parent holds the user's collector itself.
		return existing != nil && (sameCollector(existing, r.c) || isWrapper(r.c) && sameCollector(existing, unwrap(r.c)))
	}
	v, ok := existing.(*viewed)
	if !ok {
		return false
	}
	h := v.owner()
	return v == r.v || h != nil && h.n == r.n && sameCollector(h.c, r.c)
}

// A question is how a scope asks the parent about a record, and takes it
// back: a collector that describes the record's descriptors as the parent
// knows them, and collects nothing. Registering it tells who holds the
// identity; unregistering it removes the holder, whatever its Describe says
// by now. It refers to nothing but the descriptors, so a parent that keeps
// it keeps nothing of the component.
type question struct {
	descs []*prometheus.Desc
	one   [1]*prometheus.Desc // holds descs when there is only one
}

// newQuestion returns the question about r, with a copy of its descriptors:
// a record keeps one descriptor in itself, which the question must not
// keep alive.
func newQuestion(r *record) *question {
	q := &question{}
	q.descs = append(q.one[:0], r.parentDescs()...)
	return q
}

func (q *question) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range q.descs {
		ch <- d
	}
}

func (*question) Collect(chan<- prometheus.Metric) {}

// A viewed collector is what a scope with a view registers with the parent
// in place of the user's collector. It describes the descriptors that the
// view made of the user's at Register, and collects the user's collector
// through the view until the scope takes it back; from then on it collects
// nothing and holds no reference to the collector, so that a parent still
// holding it keeps nothing of the component alive.
type viewed struct {
	descs []*prometheus.Desc    // the user's descriptors as the parent sees them; fixed at Register
	one   [1]*prometheus.Desc   // holds descs when there is only one
	view  *view                 // the scope's
	live  atomic.Pointer[bound] // nil once the scope has taken it back
}

// bound is what ties a viewed collector to the user's until the scope takes
// it back.
type bound struct {
	r    *record
	self scopedMetric             // the user's collector as the parent sees it, if it is one of client_golang's own metrics
	at   map[*prometheus.Desc]int // where each of r.descs is first, if they are many (see manyDescs)
}

// manyDescs is how many descriptors a collector must describe for a scrape
// through a view to find each metric's descriptor in a map rather than by
// searching the list: more than a collector of one component's metrics,
// few enough that no scrape searches far.
const manyDescs = 32

// newViewed returns the viewed collector for r in a scope with view v.
func newViewed(r *record, v *view) *viewed {
	w := &viewed{view: v}
	w.descs = v.wrapDescs(w.one[:0], r.descs)
	b := &bound{r: r}
	if m, ok := r.c.(prometheus.Metric); ok && kindOf(r.c) == ownMetric {
		// It collects itself, and only itself, so it is wrapped once
		// for every scrape to come.
		b.self = scopedMetric{Metric: m, desc: w.descs[0], view: v}
	}
	if len(r.descs) > manyDescs {
		b.at = make(map[*prometheus.Desc]int, len(r.descs))
		for i, d := range r.descs {
			if _, ok := b.at[d]; !ok {
				b.at[d] = i
			}
		}
	}
	w.live.Store(b)
	return w
}

// owner returns the record whose collector w stands for, or nil once its
// scope has taken it back.
func (w *viewed) owner() *record {
	if b := w.live.Load(); b != nil {
		return b.r
	}
	return nil
}

func (w *viewed) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range w.descs {
		ch <- d
	}
}

func (w *viewed) Collect(ch chan<- prometheus.Metric) {
	b := w.live.Load()
	switch {
	case b == nil:
	case b.self.Metric != nil:
		ch <- &b.self
	default:
		w.view.collect(b, w.descs, ch)
	}
}

// String names w for code that registers straight on the parent and meets w
// as the ExistingCollector of an AlreadyRegisteredError: the metrics, and
// the scope that registered them.
func (w *viewed) String() string {
	s := "registry: " + quoteAll(describe.Names(w.descs)) + ", registered through "
	if r := w.owner(); r != nil && r.n.str != "" {
		return s + "promscope scope " + r.n.str
	}
	return s + "a promscope scope"
}

// Unwrap returns the collector registered through the scope, as its user
// made it (past any client_golang wrappers it came through), or nil once the
// scope has taken it back; for code that meets w as String says.
func (w *viewed) Unwrap() prometheus.Collector {
	if r := w.owner(); r != nil {
		c, _ := userOf(r.c)
		return c
	}
	return nil
}

// index returns where d is first among the descriptors b's collector
// described at Register, or -1.
func (b *bound) index(d *prometheus.Desc) int {
	if b.at == nil {
		return slices.Index(b.r.descs, d)
	}
	if i, ok := b.at[d]; ok {
		return i
	}
	return -1
}
