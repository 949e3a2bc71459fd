package registry

import (
	"fmt"
	"maps"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/multierr"

	"github.com/promscope/promscope/internal/describe"
	"github.com/promscope/promscope/internal/nilness"
)

// A Deleter deletes the series of a vector whose labels match. Every
// client_golang vector (*CounterVec, *GaugeVec, *HistogramVec, *SummaryVec,
// *MetricVec) is one.
type Deleter interface {
	DeletePartialMatch(labels prometheus.Labels) int
}

// deletion is one DeleteOnClose call, run by Close.
type deletion struct {
	item
	labels prometheus.Labels
	vecs   []Deleter
	key    string // the labels and the vectors' keys, to find a call made again
}

// deletionKey is the key of a DeleteOnClose call: its labels, sorted, and
// the keys of its vectors (see keyOf), sorted, each once. Of the calls
// pending with the same key, one with the same vectors is the call made
// again.
func deletionKey(labels prometheus.Labels, vecs []Deleter) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		fmt.Fprintf(&b, "%q=%q,", k, labels[k])
	}
	keys := make([]string, len(vecs))
	for i, v := range vecs {
		k := keyOf(v)
		keys[i] = fmt.Sprintf("%p@%x", k.t, k.p)
	}
	slices.Sort(keys)
	for _, k := range slices.Compact(keys) {
		b.WriteString(k + ";")
	}
	return b.String()
}

// sameVectors reports whether a and b hold the same vectors, in any order:
// the same values, as [sameCollector] compares collectors, except that a
// Deleter that is or holds a function is another each time, since package
// reflect cannot tell closures over different vectors apart.
func sameVectors(a, b []Deleter) bool {
	in := func(x Deleter, ys []Deleter) bool {
		return slices.ContainsFunc(ys, func(y Deleter) bool {
			w := walk{noFuncs: true}
			return w.same(reflect.ValueOf(x), reflect.ValueOf(y))
		})
	}
	for _, x := range a {
		if !in(x, b) {
			return false
		}
	}
	for _, y := range b {
		if !in(y, a) {
			return false
		}
	}
	return true
}

// run deletes d's series, and returns a *DeleteError, for the scope whose
// String is scope, for each vector that deleted none while it holds series
// that carry d's labels. Series found after a deletion of none may have
// been written since (by a worker still running), so the vector is asked
// to delete once more: only if it deletes none again do d's labels match
// none of its variable labels. A vector that matches all of them has
// nothing to find, and is not read.
func (d *deletion) run(scope string) error {
	var err error
	for _, v := range d.vecs {
		if v.DeletePartialMatch(d.labels) > 0 || matchesAll(v, d.labels) {
			continue
		}
		var left []string
		for _, m := range d.carrying(v) {
			left = append(left, m.String())
		}
		if len(left) > 0 && v.DeletePartialMatch(d.labels) == 0 {
			slices.Sort(left)
			err = multierr.Append(err, &DeleteError{Scope: scope, Labels: maps.Clone(d.labels), Series: left})
		}
	}
	return err
}

// matchesAll reports whether v is one of client_golang's vectors and each of
// labels is a variable label that v was not curried with: then
// DeletePartialMatch matches every series that carries labels, and one
// that deleted none left none. Currying v with labels, which fails for any
// other label, tells, without reading v's series.
func matchesAll(v Deleter, labels prometheus.Labels) bool {
	var err error
	switch x := v.(type) {
	case *prometheus.CounterVec:
		_, err = x.CurryWith(labels)
	case *prometheus.GaugeVec:
		_, err = x.CurryWith(labels)
	case *prometheus.HistogramVec:
		_, err = x.CurryWith(labels)
	case *prometheus.SummaryVec:
		_, err = x.CurryWith(labels)
	case *prometheus.MetricVec:
		_, err = x.CurryWith(labels)
	default:
		return false
	}
	return err == nil
}

// lacks returns those of labels that v, one of client_golang's vectors,
// has neither as a variable nor as a constant label, sorted, and v's metric
// name: no series of v can carry them. Any other Deleter is not asked, since
// its Describe is its user's code, which may block on what DeleteOnClose's
// caller holds.
func lacks(v Deleter, labels prometheus.Labels) (names, missing []string) {
	c, ok := v.(prometheus.Collector)
	if !ok || kindOf(c) != ownVector {
		return nil, nil
	}
	var one [1]*prometheus.Desc
	ds, _ := appendDescs(one[:0], c)
	for l := range labels {
		if has, ok := describe.HasLabel(ds[0], l); ok && !has {
			missing = append(missing, l)
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	slices.Sort(missing)
	return describe.Names(ds), missing
}

// A series is a metric of a vector as carrying reads it: its name and its
// labels, sorted by name.
type series struct {
	name   string
	labels []labelPair
}

// String writes s as a series selector has it.
func (s series) String() string {
	var b strings.Builder
	b.WriteString(quote(s.name))
	writeLabels(&b, s.labels)
	return b.String()
}

// carrying returns the series of v whose labels include all of d's; none
// for a vector that is not a Collector, and so cannot be asked.
func (d *deletion) carrying(v Deleter) []series {
	c, ok := v.(prometheus.Collector)
	if !ok {
		return nil
	}
	var out []series
	for _, m := range describe.Collected(c) {
		var w dto.Metric
		if m.Write(&w) != nil {
			continue
		}
		s := series{name: describe.Name(m.Desc())}
		found := 0
		for _, lp := range w.GetLabel() {
			s.labels = append(s.labels, labelPair{lp.GetName(), lp.GetValue()})
			if v, ok := d.labels[lp.GetName()]; ok && v == lp.GetValue() {
				found++
			}
		}
		if found == len(d.labels) {
			slices.SortFunc(s.labels, func(a, b labelPair) int { return strings.Compare(a.name, b.name) })
			out = append(out, s)
		}
	}
	return out
}

// DeleteOnClose makes [Scope.Close] delete, from each of vecs, every series
// whose labels include all of labels, with
// [prometheus.MetricVec.DeletePartialMatch]. This is how a component cleans
// up its series in vectors it shares with others, such as one labelled per
// link or per tenant, which it does not own and which must stay registered.
// The labels are matched as given: the scope's own prefix and labels do not
// apply to vectors it did not register. DeletePartialMatch matches only the
// variable labels a vector was not curried with: a constant label, or one
// the vector was curried with, matches no series, and then Close, finding
// series with those labels left, reports a [DeleteError]. It looks for them
// in a vector that is also a [prometheus.Collector], as client_golang's
// are; a Deleter of the user's own that is not cannot be asked. It does not
// look in one of client_golang's vectors in which each of labels is a
// variable label it was not curried with: a deletion of none there left
// none, so a component that deleted its series itself, or wrote none, costs
// its Close a DeletePartialMatch, not a read of every series of the vector.
//
// Close deletes them in its turn, newest first among everything the scope
// owns, once: a series written after Close (by a deferred Inc of the
// component, say) is made again, and nothing deletes it. A call with the same
// labels and the same vectors as one pending on the scope adds nothing, so a
// loop that calls DeleteOnClose on every pass does not grow the scope; the
// same vector means the same value, and MustCurryWith makes a new one on
// every call: curry once, outside the loop. A Deleter that is or holds a
// function (an adapter of the user's own, say) is another vector on every
// call: closures of the same code over other vectors cannot be told apart. On
// a scope whose Close, or that of a scope it is nested in, has begun,
// DeleteOnClose deletes at once, and reports nothing. The labels and vecs are
// copied. If a vector panics in Close, the panic goes on, and the next Close
// carries on past the call.
//
// DeleteOnClose panics if labels is empty, which would delete every series of
// the vectors, if no vector is given, if a vector is nil or one of
// client_golang's made without its New function (a zero value), or if one of
// client_golang's vectors has one of labels neither as a variable nor as a
// constant label, so that none of its series can match (a misspelt label
// name, or one that a scope adds at scrape, which the message then says): all
// are programmer errors. It asks no other Deleter for its labels. It
// panics on a zero Scope.
func (s *Scope) DeleteOnClose(labels prometheus.Labels, vecs ...Deleter) {
	s.node("DeleteOnClose")
	if len(labels) == 0 {
		panic("registry: DeleteOnClose with no labels would delete every series of the vectors")
	}
	if len(vecs) == 0 {
		panic("registry: DeleteOnClose needs at least one vector to delete from")
	}
	for i, v := range vecs {
		if nilness.IsNil(v) {
			panic(fmt.Sprintf("registry: DeleteOnClose: vector %d is nil", i))
		}
		if zeroVector(v) {
			panic(fmt.Sprintf("registry: DeleteOnClose: vector %d is a zero %T: make it with its New function", i, v))
		}
		if names, missing := lacks(v, labels); len(missing) > 0 {
			var scopes []string // those the scope adds at scrape, which the user sees on the vector's series
			for j, m := range missing {
				missing[j] = strconv.Quote(m)
				if v := s.n.view; v != nil {
					if _, ok := v.labels[m]; ok {
						scopes = append(scopes, missing[j])
					}
				}
			}
			msg := fmt.Sprintf("registry: DeleteOnClose: vector %d, %s, has no label %s: no series of it can match",
				i, quoteAll(names), strings.Join(missing, " and no label "))
			switch len(scopes) {
			case 0:
			case 1:
				msg += "; " + scopes[0] + " is a label that this scope adds to what is registered through it, not one of the vector's own"
			default:
				msg += "; " + strings.Join(scopes, " and ") + " are labels that this scope adds to what is registered through it, not the vector's own"
			}
			panic(msg)
		}
	}
	d := &deletion{labels: maps.Clone(labels), vecs: slices.Clone(vecs), key: deletionKey(labels, vecs)}
	n := s.n
	defer runtime.KeepAlive(s) // as in register
	n.mu.Lock()
	if !n.stopped() {
		if slices.ContainsFunc(n.pending[d.key], func(p *deletion) bool { return sameVectors(p.vecs, d.vecs) }) {
			n.mu.Unlock()
			return // the same call is pending
		}
		d.of = d
		n.items.push(&d.item)
		if n.pending == nil {
			n.pending = map[string][]*deletion{}
		}
		n.pending[d.key] = append(n.pending[d.key], d)
		n.mu.Unlock()
		return
	}
	n.mu.Unlock()
	_ = d.run(n.str) // nothing to report to: the scope's Close has begun
}
