// Package promtest is the test kit that the tests of every promscope package
// share: collectors to register, a scriptable parent Registerer, a panic
// catcher and one way to read what a Gatherer exposes. It is internal, and
// only tests import it.
package promtest

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"weak"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/multierr"

	"github.com/promscope/promscope/registry"
)

// Panic runs f and returns what it panicked with, or nil.
func Panic(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// Help is the help string of the collectors the kit makes, for name.
func Help(name string) string { return "Test metric " + name + "." }

// Gauge returns a gauge named name, with the kit's help, set to v.
func Gauge(name string, v float64) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: Help(name)})
	g.Set(v)
	return g
}

// CounterVec returns a counter vector named name with the given variable
// labels, and the kit's help.
func CounterVec(name string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: Help(name)}, labels)
}

// ReadVec returns a vector named name with the given variable labels whose
// series are gauges of 1, and the number of times anything has read one of
// them (written it out, as a scrape does).
func ReadVec(name string, labels ...string) (*prometheus.MetricVec, *atomic.Int64) {
	reads := &atomic.Int64{}
	desc := prometheus.NewDesc(name, Help(name), labels, nil)
	vec := prometheus.NewMetricVec(desc, func(values ...string) prometheus.Metric {
		return readGauge{prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, 1, values...), reads}
	})
	return vec, reads
}

type readGauge struct {
	prometheus.Metric
	reads *atomic.Int64
}

func (g readGauge) Write(out *dto.Metric) error {
	g.reads.Add(1)
	return g.Metric.Write(out)
}

// Unchecked is a collector that describes nothing and collects one gauge,
// Name, set to Value, with the help string Help (the kit's if empty); or,
// if Err is set, a metric that NewInvalidMetric made of Err, whose
// descriptor NewInvalidDesc made.
type Unchecked struct {
	Name  string
	Help  string
	Value float64
	Err   error
}

// Describe describes nothing: that is what makes u unchecked.
func (*Unchecked) Describe(chan<- *prometheus.Desc) {}

// Collect collects the gauge, or the invalid metric, or nothing if u has
// neither Name nor Err.
func (u *Unchecked) Collect(ch chan<- prometheus.Metric) {
	if u.Err != nil {
		ch <- prometheus.NewInvalidMetric(prometheus.NewInvalidDesc(u.Err), u.Err)
		return
	}
	if u.Name == "" {
		return
	}
	help := u.Help
	if help == "" {
		help = Help(u.Name)
	}
	ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(u.Name, help, nil, nil), prometheus.GaugeValue, u.Value)
}

// Series returns what g exposes, one "name{label="value",...} value" line a
// series, sorted, and g's Gather error. Counters, gauges and untyped metrics
// show their value; histograms and summaries their sample count.
func Series(g prometheus.Gatherer) ([]string, error) {
	mfs, err := g.Gather()
	return Lines(mfs), err
}

// Lines flattens metric families as Series does.
func Lines(mfs []*dto.MetricFamily) []string {
	var out []string
	eachSeries(mfs, func(series string, v float64) { out = append(out, fmt.Sprintf("%s %v", series, v)) })
	slices.Sort(out)
	return out
}

// Values flattens metric families into the value of each series, keyed as
// Lines writes it.
func Values(mfs []*dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	eachSeries(mfs, func(series string, v float64) { out[series] = v })
	return out
}

// eachSeries calls f with each series of mfs, as `name{label="value",...}`,
// and its value: that of a counter, gauge or untyped metric, the sample
// count of a histogram or summary.
func eachSeries(mfs []*dto.MetricFamily, f func(series string, v float64)) {
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			pairs := make([]string, 0, len(m.GetLabel()))
			for _, lp := range m.GetLabel() {
				pairs = append(pairs, fmt.Sprintf("%s=%q", lp.GetName(), lp.GetValue()))
			}
			var v float64
			switch {
			case m.Counter != nil:
				v = m.GetCounter().GetValue()
			case m.Gauge != nil:
				v = m.GetGauge().GetValue()
			case m.Untyped != nil:
				v = m.GetUntyped().GetValue()
			case m.Histogram != nil:
				v = float64(m.GetHistogram().GetSampleCount())
			case m.Summary != nil:
				v = float64(m.GetSummary().GetSampleCount())
			}
			f(mf.GetName()+"{"+strings.Join(pairs, ",")+"}", v)
		}
	}
}

// Component is an io.Closer standing for a component of a test: it counts
// its Close calls and returns Err from each.
type Component struct {
	Name   string
	Err    error
	closes atomic.Int32
}

// Close counts the call and returns c.Err.
func (c *Component) Close() error {
	c.closes.Add(1)
	return c.Err
}

// Closes returns how many times Close was called.
func (c *Component) Closes() int { return int(c.closes.Load()) }

// Gauges is a checked collector of several gauges. It is of a slice type, so
// its values cannot be compared with ==.
type Gauges []prometheus.Gauge

// Describe describes every gauge.
func (gs Gauges) Describe(ch chan<- *prometheus.Desc) {
	for _, g := range gs {
		g.Describe(ch)
	}
}

// Collect collects every gauge.
func (gs Gauges) Collect(ch chan<- prometheus.Metric) {
	for _, g := range gs {
		g.Collect(ch)
	}
}

// Many is a checked collector of many metrics: it describes m0 to m<n-1>,
// m0 twice, and collects them last first, each a constant gauge of its
// number, m0 with a descriptor made anew, equal to the one it described.
type Many []*prometheus.Desc

// NewMany returns a Many of n metrics.
func NewMany(n int) Many {
	m := make(Many, n)
	for i := range m {
		m[i] = prometheus.NewDesc(fmt.Sprintf("m%d", i), Help("m"), nil, nil)
	}
	return m
}

// Describe describes every metric, the first twice.
func (m Many) Describe(ch chan<- *prometheus.Desc) {
	ch <- m[0]
	for _, d := range m {
		ch <- d
	}
}

// Collect collects every metric, last first.
func (m Many) Collect(ch chan<- prometheus.Metric) {
	for i, d := range slices.Backward(m) {
		if i == 0 {
			d = prometheus.NewDesc("m0", Help("m"), nil, nil)
		}
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(i))
	}
}

// UnregisterErrors returns the Metrics of each *registry.UnregisterError
// combined in err, in order, and the errors that are not one.
func UnregisterErrors(err error) (metrics [][]string, others []error) {
	for _, e := range multierr.Errors(err) {
		var ue *registry.UnregisterError
		if errors.As(e, &ue) {
			metrics = append(metrics, ue.Metrics)
		} else {
			others = append(others, e)
		}
	}
	return metrics, others
}

// Collected runs the garbage collector until wp's object is gone, at most
// 20 times, and reports whether it went.
func Collected[T any](wp weak.Pointer[T]) bool {
	for range 20 {
		runtime.GC()
		if wp.Value() == nil {
			return true
		}
	}
	return false
}

// Bystander is another owner's metrics on a registry, which a test checks
// are left exactly as they were: a gauge "other" set to 42 and a vector
// "shared" with the series tenant="a" and tenant="b".
type Bystander struct {
	Gauge  prometheus.Gauge
	Shared *prometheus.GaugeVec
}

// NewBystander registers a bystander's metrics on reg.
func NewBystander(reg prometheus.Registerer) *Bystander {
	b := &Bystander{
		Gauge:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "other", Help: "Another owner's gauge."}),
		Shared: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "shared", Help: "Another owner's vector."}, []string{"tenant"}),
	}
	b.Gauge.Set(42)
	b.Shared.WithLabelValues("a").Set(1)
	b.Shared.WithLabelValues("b").Set(2)
	reg.MustRegister(b.Gauge, b.Shared)
	return b
}

// Series returns the bystander's series, as the package's Series writes them,
// unchanged since NewBystander.
func (*Bystander) Series() []string {
	return []string{`other{} 42`, `shared{tenant="a"} 1`, `shared{tenant="b"} 2`}
}

// Expose fails t unless g gathers without an error and exposes exactly the
// series want, as Series writes them, in any order.
func Expose(t testing.TB, g prometheus.Gatherer, want ...string) {
	t.Helper()
	got, err := Series(g)
	want = slices.Sorted(slices.Values(want))
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("exposed %q (gather error %v), want %q", got, err, want)
	}
}

// Recorder stands in for the *testing.T that a helper is given: it records
// what the helper reports.
type Recorder struct {
	Helpers int      // Helper calls
	Errors  []string // Errorf calls, formatted
}

// Helper counts the call.
func (r *Recorder) Helper() { r.Helpers++ }

// Errorf records the error.
func (r *Recorder) Errorf(format string, args ...any) {
	r.Errors = append(r.Errors, fmt.Sprintf(format, args...))
}

// Check fails t unless r recorded exactly one error, containing every one of
// want, or, when want is empty, none.
func (r *Recorder) Check(t testing.TB, want ...string) {
	t.Helper()
	if len(want) == 0 {
		if len(r.Errors) != 0 {
			t.Errorf("reported %q, want nothing", r.Errors)
		}
		return
	}
	if len(r.Errors) != 1 {
		t.Fatalf("reported %q, want one error", r.Errors)
	}
	for _, w := range want {
		if !strings.Contains(r.Errors[0], w) {
			t.Errorf("reported %q, want it to contain %q", r.Errors[0], w)
		}
	}
}

// Wrapped returns c as client_golang's WrapRegistererWith(labels,
// WrapRegistererWithPrefix(prefix, r)) hands it to r: wrapped in the
// wrappers' own collector type, which no older client_golang lets one make
// directly.
func Wrapped(labels prometheus.Labels, prefix string, c prometheus.Collector) prometheus.Collector {
	return Passed(c, func(r prometheus.Registerer) prometheus.Registerer {
		return prometheus.WrapRegistererWith(labels, prometheus.WrapRegistererWithPrefix(prefix, r))
	})
}

// Passed returns c as the Registerer that wrap makes of a Registerer r
// passes it on to r, when c is registered through it.
func Passed(c prometheus.Collector, wrap func(r prometheus.Registerer) prometheus.Registerer) prometheus.Collector {
	var got grab
	_ = wrap(&got).Register(c)
	return got.c
}

// grab is a Registerer that keeps the last collector it is given.
type grab struct{ c prometheus.Collector }

func (g *grab) Register(c prometheus.Collector) error { g.c = c; return nil }
func (g *grab) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		g.c = c
	}
}
func (*grab) Unregister(prometheus.Collector) bool { return false }
