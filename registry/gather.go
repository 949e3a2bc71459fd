package registry

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Gather implements [prometheus.Gatherer]. It returns the metric families of
// everything s and the scopes nested in it own, sorted by name, with the
// consistency checks of a registry that prometheus.NewRegistry makes (not a
// pedantic one's); a collector that somebody else unregistered behind a
// scope's back and that was registered again is gathered once. Metrics carry
// the prefix and labels of s, of the scopes it is nested in and of the
// wrappers it was made through, as the parent sees them; not what a
// Registerer between the outermost scope and the registry (such as
// client_golang's WrapRegistererWith) adds. A closed scope gathers no
// families and no error. Gather lets a test look at one component alone, for
// example with testutil.GatherAndCompare, however many others share the
// registry.
func (s *Scope) Gather() ([]*dto.MetricFamily, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectAll(s.records())) // unchecked: a new registry accepts it
	return reg.Gather()
}

// Describe sends the descriptors of everything s and the scopes nested in
// it own, as the parent sees them, or nothing if they own an unchecked
// collector: a collector must describe all it collects or nothing. With
// Collect, it makes a Scope a [prometheus.Collector], as a
// prometheus.Registry is one: package registrytest uses it to find
// registrations that expose no series. Registering a scope with another
// registry exposes its metrics there too; as with a prometheus.Registry,
// what it describes changes with what it owns, so register it there once
// it owns all it will (a pedantic registry refuses to gather metrics it
// was not told of, and Unregister finds a collector by what it describes).
func (s *Scope) Describe(ch chan<- *prometheus.Desc) {
	rs := s.records()
	for _, r := range rs {
		if r.unchecked() {
			return
		}
	}
	for _, r := range rs {
		for _, d := range r.parentDescs() {
			ch <- d
		}
	}
}

// Collect collects everything s and the scopes nested in it own, as the
// parent sees it; see [Scope.Describe].
func (s *Scope) Collect(ch chan<- prometheus.Metric) {
	if s == nil || s.n == nil {
		return
	}
	h := &s.n.root.hub
	if !h.enter(ch) {
		return
	}
	defer h.leave()
	collectAll(s.records()).Collect(ch)
}

// records returns the registrations of s and the scopes nested in it that
// the parent can hold: each collector under each identity once. A tree holds
// two records of one collector under one identity only when somebody else
// unregistered it behind a scope's back and it was registered again; the
// parent holds at most one of them, and both collect the same.
func (s *Scope) records() []*record {
	if s == nil || s.n == nil {
		return nil
	}
	rs := s.n.appendRecords(nil)
	out := rs[:0]
	byIdentity := map[string][]*record{}
	for _, r := range rs {
		if r.unchecked() {
			out = append(out, r)
			continue
		}
		key := identityKey(r.parentDescs())
		if slices.ContainsFunc(byIdentity[key], r.twin) {
			continue
		}
		byIdentity[key] = append(byIdentity[key], r)
		out = append(out, r)
	}
	return out
}

// collectAll is an unchecked collector over a scope's records, collecting
// what the parent holds for each: registering it needs no Describe pass, and
// the registry still checks what it collects.
type collectAll []*record

func (collectAll) Describe(chan<- *prometheus.Desc) {}

func (rs collectAll) Collect(ch chan<- prometheus.Metric) {
	for _, r := range rs {
		r.held().Collect(ch)
	}
}
