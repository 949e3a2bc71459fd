package registry

import (
	"reflect"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/internal/describe"
)

// A member is what a Scope registers with its parent in place of the user's
// collector. It forwards Describe and Collect to the collector, with the
// scope's prefix and labels applied, until the scope releases it; from then
// on it yields nothing and holds no reference to the user's collector.
//
// The indirection exists for two reasons. Unchecked collectors (those whose
// Describe yields nothing) cannot be unregistered from a prometheus.Registry
// at all, so silencing is the only way to take them back. And a member is a
// unique object, so when the parent reports who holds an identity, the scope
// can tell its own registration from an equal collector of someone else.
//
// Only the parent's scrapes and registrations go through a member; the
// metrics the user increments are the user's own objects.
type member struct {
	live      atomic.Pointer[entry] // nil once released
	describes atomic.Uint64         // Describe calls; see forwardsTo
}

func (m *member) Describe(ch chan<- *prometheus.Desc) {
	m.describes.Add(1)
	if e := m.live.Load(); e != nil {
		e.exposed.Describe(ch)
	}
}

func (m *member) Collect(ch chan<- prometheus.Metric) {
	if e := m.live.Load(); e != nil {
		e.exposed.Collect(ch)
	}
}

// user returns the user's collector, or nil once m is released.
func (m *member) user() prometheus.Collector {
	if e := m.live.Load(); e != nil {
		return e.user
	}
	return nil
}

// forwardsTo reports whether c is m, or a collector that reaches m when
// described, such as m wrapped by prometheus.WrapRegistererWith or by another
// scope. Nothing but a registration through the owning scope describes m, and
// the owning scope is not registering while it asks.
func (m *member) forwardsTo(c prometheus.Collector) bool {
	if c == nil {
		return false
	}
	if c == prometheus.Collector(m) {
		return true
	}
	before := m.describes.Load()
	describe.Descs(c)
	return m.describes.Load() != before
}

// unwrapMember returns the user's collector if c is a live member, else c.
// It unwraps one level only: when scopes nest, the inner scope's user is the
// outer scope's member, which the outer scope unwraps in turn (and needs to
// see, to recognise its own registration).
func unwrapMember(c prometheus.Collector) prometheus.Collector {
	if m, ok := c.(*member); ok {
		if u := m.user(); u != nil {
			return u
		}
	}
	return c
}

// An entry is a scope's record of one registration.
type entry struct {
	user      prometheus.Collector // what the user registered
	exposed   prometheus.Collector // user with the scope's prefix and labels
	member    *member              // what the parent holds
	unchecked bool                 // Describe yields nothing

	// Guarded by the owning Scope's mu.
	prev, next *entry
	sameUser   *entry // another live entry for the same user collector
	sameKey    *entry // an older live entry with the same key, once indexed
	key        string // describe.Key of exposed, computed on demand
}

const promPkg = "github.com/prometheus/client_golang/prometheus"

// isUnchecked reports whether c describes no descriptors. The standard
// client_golang types always describe theirs, so they skip the Describe pass
// that any other collector costs.
func isUnchecked(c prometheus.Collector) bool {
	switch c := c.(type) {
	case *prometheus.CounterVec, *prometheus.GaugeVec, *prometheus.HistogramVec,
		*prometheus.SummaryVec, *prometheus.MetricVec:
		return false
	case *member:
		if e := c.live.Load(); e != nil {
			return e.unchecked
		}
		return true
	case prometheus.Metric:
		// Counter, Gauge, Histogram, Summary and the Func variants are
		// self-collecting metrics: Describe yields their one Desc.
		if t := reflect.TypeOf(c); t.Kind() == reflect.Pointer && t.Elem().PkgPath() == promPkg {
			return false
		}
	}
	return len(describe.Descs(c)) == 0
}

// isNil reports whether c is nil or a nil pointer of a collector type.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// hashable reports whether c can be a map key.
func hashable(c prometheus.Collector) bool {
	return reflect.TypeOf(c).Comparable()
}
