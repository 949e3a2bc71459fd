package registry

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Gather implements [prometheus.Gatherer]. It returns the metric families of
// everything s and the open scopes nested in it own, sorted by name, with the
// consistency checks of a prometheus.Registry. Metrics carry the prefix and
// labels of s and of the scopes it is nested in, as the parent sees them; not
// what a Registerer between the root scope and the registry (such as
// client_golang's WrapRegistererWith) adds. A closed scope gathers no
// families and no error. Gather lets a test look at one component alone, for
// example with testutil.GatherAndCompare, however many others share the
// registry.
func (s *Scope) Gather() ([]*dto.MetricFamily, error) {
	ms := s.members(nil)
	reg := prometheus.NewRegistry()
	if len(ms) > 0 {
		if err := reg.Register(collectAll(ms)); err != nil {
			return nil, err
		}
	}
	return reg.Gather()
}

// members appends the registrations of s and its open nested scopes to ms.
func (s *Scope) members(ms []*member) []*member {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ms
	}
	for m := s.head; m != nil; m = m.next {
		ms = append(ms, m)
	}
	children := s.childList()
	s.mu.Unlock()
	for _, c := range children {
		ms = c.members(ms)
	}
	return ms
}

// collectAll is an unchecked collector over a snapshot of registrations:
// registering it needs no Describe pass, and the registry still checks what
// it collects.
type collectAll []*member

func (collectAll) Describe(chan<- *prometheus.Desc) {}

func (ms collectAll) Collect(ch chan<- prometheus.Metric) {
	for _, m := range ms {
		m.Collect(ch)
	}
}
