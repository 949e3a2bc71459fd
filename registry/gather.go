package registry

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Gather implements [prometheus.Gatherer]. It returns the metric families of
// everything s and its open children own, exactly as the parent would expose
// them (prefix and labels applied), sorted by name, with the consistency
// checks of a prometheus.Registry. A closed scope gathers no families and no
// error. Gather lets a test look at one component alone, for example with
// testutil.GatherAndCompare, however many others share the parent.
func (s *Scope) Gather() ([]*dto.MetricFamily, error) {
	cs := s.exposed(nil)
	reg := prometheus.NewRegistry()
	if len(cs) > 0 {
		if err := reg.Register(collectAll(cs)); err != nil {
			return nil, err
		}
	}
	return reg.Gather()
}

// exposed appends what s and its open children expose to cs.
func (s *Scope) exposed(cs []prometheus.Collector) []prometheus.Collector {
	s.mu.Lock()
	for e := s.head; e != nil; e = e.next {
		cs = append(cs, e.exposed)
	}
	children := s.childList()
	s.mu.Unlock()
	for _, c := range children {
		cs = c.exposed(cs)
	}
	return cs
}

// collectAll is an unchecked collector over a snapshot of a scope's
// collectors: registering it needs no Describe pass, and the registry still
// checks what it collects.
type collectAll []prometheus.Collector

func (collectAll) Describe(chan<- *prometheus.Desc) {}

func (cs collectAll) Collect(ch chan<- prometheus.Metric) {
	for _, c := range cs {
		c.Collect(ch)
	}
}
