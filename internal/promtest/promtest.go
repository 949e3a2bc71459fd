// Package promtest is the test kit that the tests of every promscope package
// share: collectors to register, a scriptable parent Registerer, a panic
// catcher and one way to read what a Gatherer exposes. It is internal, and
// only tests import it.
package promtest

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
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

// Unchecked is a collector that describes nothing and collects one gauge,
// Name, set to Value.
type Unchecked struct {
	Name  string
	Value float64
}

// Describe describes nothing: that is what makes u unchecked.
func (*Unchecked) Describe(chan<- *prometheus.Desc) {}

// Collect collects the gauge.
func (u *Unchecked) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(u.Name, Help(u.Name), nil, nil), prometheus.GaugeValue, u.Value)
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
			out = append(out, fmt.Sprintf("%s{%s} %v", mf.GetName(), strings.Join(pairs, ","), v))
		}
	}
	slices.Sort(out)
	return out
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
