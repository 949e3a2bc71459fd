package registry

import (
	"fmt"
	"maps"
	"slices"
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
}

// run deletes d's series, and returns a *DeleteError, for the scope whose
// String is scope, for each vector that deleted none while it holds series
// that carry d's labels.
func (d *deletion) run(scope string) error {
	var err error
	for _, v := range d.vecs {
		if v.DeletePartialMatch(d.labels) > 0 {
			continue
		}
		var left []string
		for _, m := range d.carrying(v) {
			left = append(left, seriesString(m))
		}
		if len(left) > 0 {
			slices.Sort(left)
			err = multierr.Append(err, &DeleteError{Scope: scope, Labels: maps.Clone(d.labels), Series: left})
		}
	}
	return err
}

// carrying returns the series of v that carry all of d's labels; none for
// a vector that is not a Collector, and so cannot be asked.
func (d *deletion) carrying(v Deleter) []prometheus.Metric {
	c, ok := v.(prometheus.Collector)
	if !ok {
		return nil
	}
	var out []prometheus.Metric
	for _, m := range describe.Collected(c) {
		if has(m, d.labels) {
			out = append(out, m)
		}
	}
	return out
}

// has reports whether m's labels include all of labels.
func has(m prometheus.Metric, labels prometheus.Labels) bool {
	var out dto.Metric
	if m.Write(&out) != nil {
		return false
	}
	found := 0
	for _, lp := range out.GetLabel() {
		if v, ok := labels[lp.GetName()]; ok && v == lp.GetValue() {
			found++
		}
	}
	return found == len(labels)
}

// seriesString writes m as a series: its name and all its labels.
func seriesString(m prometheus.Metric) string {
	var out dto.Metric
	_ = m.Write(&out) // carrying wrote it already
	pairs := make([]labelPair, 0, len(out.GetLabel()))
	for _, lp := range out.GetLabel() {
		pairs = append(pairs, labelPair{lp.GetName(), lp.GetValue()})
	}
	slices.SortFunc(pairs, func(a, b labelPair) int { return strings.Compare(a.name, b.name) })
	var b strings.Builder
	b.WriteString(describe.Name(m.Desc()))
	writeLabels(&b, pairs)
	return b.String()
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
// series with those labels left, reports a [DeleteError].
//
// Close deletes them in its turn, newest first among everything the scope
// owns. On a scope whose Close, or that of a scope it is nested in, has
// begun, DeleteOnClose deletes at once, and reports nothing. The labels and
// vecs are copied.
//
// DeleteOnClose panics if labels is empty, which would delete every series of
// the vectors, if no vector is given, or if a vector is nil: all three are
// programmer errors. It panics on a zero Scope.
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
	}
	d := &deletion{labels: maps.Clone(labels), vecs: slices.Clone(vecs)}
	n := s.n
	n.mu.Lock()
	if !n.stopped() {
		d.of = d
		n.items.push(&d.item)
		n.mu.Unlock()
		return
	}
	n.mu.Unlock()
	_ = d.run(n.str) // nothing to report to: the scope's Close has begun
}
