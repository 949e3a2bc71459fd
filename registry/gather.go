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
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectAll(s.members(nil))) // unchecked: a new registry accepts it
	return reg.Gather()
}

// Describe sends the descriptors of everything s and the open scopes nested
// in it own, as the parent sees them. With Collect, it makes a Scope a
// [prometheus.Collector], as a prometheus.Registry is one: package
// registrytest uses it to find registrations that expose no series.
// Registering a scope with another registry exposes its metrics there too.
func (s *Scope) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range s.members(nil) {
		for _, d := range m.descs {
			ch <- d
		}
	}
}

// Collect collects everything s and the open scopes nested in it own, as
// the parent sees it; see [Scope.Describe].
func (s *Scope) Collect(ch chan<- prometheus.Metric) {
	for _, m := range s.members(nil) {
		m.Collect(ch)
	}
}

// members appends the registrations of s and its open nested scopes to ms.
func (s *Scope) members(ms []*member) []*member {
	if s.st == nil {
		return ms
	}
	s.st.mu.Lock()
	if s.st.closed {
		s.st.mu.Unlock()
		return ms
	}
	for m := s.st.head; m != nil; m = m.next {
		ms = append(ms, m)
	}
	children := s.st.childList()
	s.st.mu.Unlock()
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
