package registry

import (
	"fmt"
	"maps"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

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

func (d *deletion) run() {
	for _, v := range d.vecs {
		v.DeletePartialMatch(d.labels)
	}
}

// DeleteOnClose makes [Scope.Close] delete, from each of vecs, every series
// whose labels include all of labels (see [prometheus.MetricVec.DeletePartialMatch]).
// This is how a component cleans up its series in vectors it shares with
// others, such as one labelled per link or per tenant, which it does not own
// and which must stay registered. The labels are matched as given: the
// scope's own prefix and labels do not apply to vectors it did not register.
// Close deletes them in its turn, newest first among everything the scope
// owns. On a scope whose Close, or that of a scope it is nested in, has
// begun, DeleteOnClose deletes at once. The labels and vecs are copied.
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
	d.run()
}
