package registry

import (
	"fmt"
	"net/url"
	"runtime"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/internal/describe"
)

// A Leak is what [WithLeakReport] reports of a scope that was dropped without
// Close while it, or a scope nested in it, still owned registrations, or
// had a [Scope.DeleteOnClose] pending whose vectors still hold series with
// its labels.
type Leak struct {
	Scope   string // the String of the leaked scope
	Created string // "import/path/of/package/file.go:123" of the call that made it ("main/file.go:123" in a command)
	// Metrics is what the scope still exposes, except what the nested
	// scopes that were reported before it expose: metric names, as the
	// outermost scope's parent sees them (not with what a Registerer below
	// it, such as a WrapRegistererWithPrefix, adds), and
	// name{label="value",...} with the labels given to DeleteOnClose for
	// the series of its vectors that carry them (the name as the vector
	// describes it, without the prefix of a scope it was registered
	// through), sorted, each name quoted as Scope.String quotes names
	// that are not plain, then "1 unchecked collector" or "N unchecked
	// collectors" for unchecked collectors that exposed nothing when
	// asked, if there are any. Close deletes the series with
	// DeletePartialMatch, which matches only the variable labels that a
	// vector was not curried with: a constant or curried label names
	// series that Close reports in a DeleteError instead.
	Metrics []string

	n *node
}

// String describes l for a log line.
func (l Leak) String() string {
	who := "scope " + l.Scope
	if l.Scope == "" {
		who = "a scope with no name, labels or prefix"
	}
	return fmt.Sprintf("registry: %s made at %s was dropped without Close; it still exposes %s",
		who, l.Created, strings.Join(l.Metrics, ", "))
}

// Close closes the leaked scope, as [Scope.Close] would have, and returns its
// error: the one way to take back what a scope registered once nobody holds
// it. It takes back all of it, also metrics that code still writes through a
// scope whose handle was dropped (a Child kept only as a labelled view; see
// WithLeakReport). A report may call it when what wrote them is gone; a
// leaked scope nested in an open one is also closed when that one is. Close
// on a Leak that no report gave returns nil.
func (l Leak) Close() error {
	if l.n == nil {
		return nil
	}
	err := l.n.close()
	closeDropped(l.n.up, false)
	return err
}

// dropped is the cleanup of a watched scope (see NewScope): its handle is
// garbage. It hands the scope to reportLeak on a goroutine of its own, since
// deciding a leak collects the scope's unchecked collectors and vectors,
// closing an idle scope calls the parent, and the report is the user's: any
// of them may block, and a blocked cleanup would hold up the cleanups of the
// whole program.
func dropped(n *node) { go reportLeak(n) }

// reportLeak decides what to do with a watched scope whose handle is
// garbage. A scope whose Close, or that of a scope it is nested in, has
// begun is not reported, nor is one nested in a scope reported already,
// whose Leak takes it back too, nor one that holds nothing that no report
// named. A scope that is not reported is closed if it holds nothing at all
// (see closeDropped).
//
// The runtime may run cleanups at the same time, so the reports of one tree
// are decided one at a time.
func reportLeak(n *node) {
	n.dropped.Store(true)
	looked := false
	if n.report != nil {
		var metrics []string
		if metrics, looked = n.leaked(); len(metrics) > 0 {
			n.report(Leak{Scope: n.str, Created: n.created, Metrics: metrics, n: n})
			return
		}
	}
	closeDropped(n, looked)
}

// closeDropped closes n if its handle is gone and it is idle (see settle),
// then, likewise, the scope it is nested in, and so on out: nobody can
// register through such a scope or nest one in it any more, and closing it
// lets the scope it is nested in, or the Index, forget it. A scope dropped
// while a nested scope was still in it is closed once that one has left, by
// its own cleanup, Close or Leak.Close.
//
// Closing an outermost scope unregisters its collector of unchecked ones
// from the parent, if it has one, last. A parent that panics there would
// end the program from a goroutine of reportLeak's, or come out of the Close
// of a scope nested in it, with nobody to hand the panic to: it is dropped.
//
// looked says that n's pending DeleteOnClose calls were just found to have
// no series to delete, so that their vectors need not be read again.
func closeDropped(n *node, looked bool) {
	defer func() { _ = recover() }()
	for ; n != nil && n.dropped.Load() && !n.stopped(); n, looked = n.up, false {
		if !n.settle(looked) {
			return
		}
		_ = n.close() // it holds nothing to report
	}
}

// settle reports whether n holds no registration and no nested scope, and
// its pending DeleteOnClose calls have no series to delete (each vector is
// a Collector, so that this can be told); if so, it forgets those calls, so
// that closing n changes nothing that can be seen: series with their labels
// that arrive after the check are somebody else's. Where looked, the calls
// were checked already (see closeDropped).
func (n *node) settle(looked bool) bool {
	var ds []*deletion
	n.mu.Lock()
	for it := n.items.head; it != nil; it = it.next {
		d, ok := it.of.(*deletion)
		if !ok {
			n.mu.Unlock()
			return false
		}
		ds = append(ds, d)
	}
	n.mu.Unlock()
	for _, d := range ds {
		for _, v := range d.vecs {
			if _, ok := v.(prometheus.Collector); !looked && (!ok || len(d.carrying(v)) > 0) {
				return false // a Deleter that cannot be asked may hold series
			}
		}
	}
	n.mu.Lock()
	for _, d := range ds {
		n.unlink(&d.item)
	}
	n.mu.Unlock()
	return true
}

// leaked returns what a report of n names, marking n reported, or nothing
// if n is not to be reported; looked, if it found that n exposes nothing,
// its pending DeleteOnClose calls included.
func (n *node) leaked() (metrics []string, looked bool) {
	n.root.reporting.Lock()
	defer n.root.reporting.Unlock()
	for p := n; p != nil; p = p.up {
		if p.reported {
			return nil, false
		}
	}
	if n.stopped() {
		return nil, false
	}
	metrics = n.exposed()
	if len(metrics) == 0 || n.stopped() {
		return nil, len(metrics) == 0
	}
	n.reported = true
	return metrics, false
}

// exposed returns what n and the scopes nested in it, except those that a
// leak report named, expose (callers hold n.root.reporting): sorted, the
// names of checked collectors' metrics as the parent sees them, the names
// of what unchecked collectors collect now, and the series that
// DeleteOnClose has yet to delete; then how many unchecked collectors
// collect nothing.
func (n *node) exposed() []string {
	rs, ds := n.unreported(nil, nil)
	var names []string
	quiet := 0
	for _, r := range rs {
		got := r.names()
		if r.unchecked() {
			got = collectedNames(r.held())
			if len(got) == 0 {
				quiet++
			}
		}
		names = appendQuoted(names, got...)
	}
	for _, d := range ds {
		names = append(names, d.undeleted()...)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	if quiet > 0 {
		names = append(names, describe.Count(quiet, "unchecked collector", "unchecked collectors"))
	}
	return names
}

// unreported appends to rs and ds the registrations and pending
// DeleteOnClose calls of n and of the scopes nested in it that no leak
// report named. Callers hold n.root.reporting.
func (n *node) unreported(rs []*record, ds []*deletion) ([]*record, []*deletion) {
	own, nested, dels := n.entries()
	rs, ds = append(rs, own...), append(ds, dels...)
	for _, c := range nested {
		if !c.reported {
			rs, ds = c.unreported(rs, ds)
		}
	}
	return rs, ds
}

// undeleted returns the series of d's vectors that carry its labels, as
// name{labels} with the labels given to DeleteOnClose. A vector that is not
// a Collector, and so cannot be asked, counts as holding such series.
func (d *deletion) undeleted() []string {
	var out []string
	sel := selector(d.labels)
	for _, v := range d.vecs {
		if _, ok := v.(prometheus.Collector); !ok {
			out = append(out, sel)
			continue
		}
		for _, m := range d.carrying(v) {
			out = append(out, quote(m.name)+sel)
		}
	}
	return out
}

// selector formats labels as the braces of a series selector, sorted by
// name.
func selector(labels prometheus.Labels) string {
	var b strings.Builder
	writeLabels(&b, sortedPairs(labels))
	return b.String()
}

// collectedNames collects c and returns the names of its metrics.
func collectedNames(c prometheus.Collector) []string {
	var descs []*prometheus.Desc
	for _, m := range describe.Collected(c) {
		descs = append(descs, m.Desc())
	}
	return describe.Names(descs)
}

// madeAt returns "import/path/file.go:line" of the call that made a scope:
// the first caller outside packages registry and lifecycle, so that a scope
// a Slot makes is said to be made where Replace was called.
func madeAt() string {
	pc := make([]uintptr, 16)
	frames := runtime.CallersFrames(pc[:runtime.Callers(2, pc)])
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, "github.com/promscope/promscope/registry.") &&
			!strings.HasPrefix(f.Function, "github.com/promscope/promscope/lifecycle.") || !more {
			file := f.File[strings.LastIndexByte(f.File, '/')+1:]
			return fmt.Sprintf("%s/%s:%d", packageOf(f.Function), file, f.Line)
		}
	}
}

// packageOf returns the import path of the package of a function that the
// runtime names fn, such as "example.com/a/b.(*T).M": everything up to the
// first dot after the last slash. The runtime writes a dot of the path's
// last element, and a few other bytes, as %xx ("gopkg.in/yaml%2ev3"), which
// packageOf decodes. An external test package ("b_test") is said to be the
// package it tests, whose directory it shares.
func packageOf(fn string) string {
	slash := strings.LastIndexByte(fn, '/')
	if dot := strings.IndexByte(fn[slash+1:], '.'); dot >= 0 {
		fn = fn[:slash+1+dot]
	}
	if p, err := url.PathUnescape(fn); err == nil {
		fn = p
	}
	return strings.TrimSuffix(fn, "_test")
}
