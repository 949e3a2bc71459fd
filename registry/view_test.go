package registry_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/registry"
)

// unsorted is a collector whose one metric writes its labels out of order,
// or fails to write when err is set.
type unsorted struct {
	desc *prometheus.Desc
	err  error
}

func newUnsorted(err error) *unsorted {
	return &unsorted{desc: prometheus.NewDesc("unsorted", "h", []string{"z", "a"}, nil), err: err}
}

func (u *unsorted) Describe(ch chan<- *prometheus.Desc) { ch <- u.desc }
func (u *unsorted) Collect(ch chan<- prometheus.Metric) { ch <- u }
func (u *unsorted) Desc() *prometheus.Desc              { return u.desc }

func (u *unsorted) Write(m *dto.Metric) error {
	z, a, v := "z", "a", 1.0
	m.Label = []*dto.LabelPair{{Name: &z, Value: &z}, {Name: &a, Value: &a}}
	m.Gauge = &dto.Gauge{Value: &v}
	return u.err
}

// fresh describes one descriptor, and collects with a descriptor made anew
// each time, equal to it.
type fresh struct{}

func (fresh) Describe(ch chan<- *prometheus.Desc) { ch <- prometheus.NewDesc("fresh", "h", nil, nil) }
func (fresh) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(prometheus.NewDesc("fresh", "h", nil, nil), prometheus.GaugeValue, 4)
}

func TestView(t *testing.T) {
	// A prefixed, labelled scope exposes every kind of collector exactly
	// as client_golang's WrapRegistererWithPrefix over WrapRegistererWith
	// does: its own labels in or out of order, descriptors made anew in
	// Collect, unchecked collectors, metrics that fail to write, a
	// collector of more descriptors than a scrape searches for each
	// metric's, one described twice.
	labels := prometheus.Labels{"cluster": "east", "b": "x"}
	for _, tt := range []struct {
		name string
		give func() prometheus.Collector
	}{
		{name: "gauge", give: func() prometheus.Collector { return promtest.Gauge("g", 1) }},
		{name: "counter vector", give: func() prometheus.Collector {
			v := promtest.CounterVec("requests_total", "code", "a")
			v.WithLabelValues("200", "x").Add(3)
			v.WithLabelValues("500", "y").Inc()
			return v
		}},
		{name: "GaugeFunc", give: func() prometheus.Collector {
			return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "f", Help: "h"}, func() float64 { return 2 })
		}},
		{name: "histogram", give: func() prometheus.Collector {
			h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "h_seconds", Help: "h"})
			h.Observe(1)
			return h
		}},
		{name: "labels out of order", give: func() prometheus.Collector { return newUnsorted(nil) }},
		{name: "failing write", give: func() prometheus.Collector { return newUnsorted(errors.New("broken")) }},
		{name: "descriptors made in Collect", give: func() prometheus.Collector { return fresh{} }},
		{name: "unchecked", give: func() prometheus.Collector { return &promtest.Unchecked{Name: "u", Value: 5} }},
		{name: "many descriptors", give: func() prometheus.Collector { return promtest.NewMany(100) }},
	} {
		t.Run("as client_golang: "+tt.name, func(t *testing.T) {
			raw := prometheus.NewPedanticRegistry()
			if err := prometheus.WrapRegistererWithPrefix("app_", prometheus.WrapRegistererWith(labels, raw)).Register(tt.give()); err != nil {
				t.Fatal(err)
			}
			want, wantErr := promtest.Series(raw)

			reg := prometheus.NewPedanticRegistry()
			scope := registry.NewScope(reg, registry.WithPrefix("app_"), registry.WithLabels(labels))
			scope.MustRegister(tt.give())
			for _, g := range []prometheus.Gatherer{reg, scope} {
				got, err := promtest.Series(g)
				if !slices.Equal(got, want) || (err == nil) != (wantErr == nil) {
					t.Errorf("exposed %q (error %v), want %q (error %v)", got, err, want, wantErr)
				}
			}
			if err := scope.Close(); err != nil {
				t.Error(err)
			}
			promtest.Expose(t, reg)
		})
	}

	// A metric written through a scope with 1 to 8 labels, under 0 to 3
	// client_golang wrappers above the outermost scope and below the
	// scope, never shares its label list or pairs with another metric or
	// scrape: a reader that appends to the lists, sorts them and changes
	// the pairs it got changes nothing for the next scrape.
	for n := 1; n <= 8; n++ {
		for wrappers := 0; wrappers <= 3; wrappers++ {
			t.Run(fmt.Sprintf("labels are the writer's: %d, %d wrappers", n, wrappers), func(t *testing.T) {
				reg, scope, want := labelledScope(n, wrappers)
				defer scope.Close()
				for round := range 3 {
					mfs, err := reg.Gather()
					if got := promtest.Lines(mfs); err != nil || !slices.Equal(got, want) {
						t.Fatalf("round %d: exposed %q (%v), want %q", round, got, err, want)
					}
					for _, mf := range mfs {
						for _, m := range mf.GetMetric() {
							for _, lp := range m.Label {
								if strings.HasPrefix(lp.GetName(), "l") {
									vandal := "vandal"
									lp.Value = &vandal
								}
							}
							zz, x := "zz", "x"
							m.Label = append(m.Label, &dto.LabelPair{Name: &zz, Value: &x})
							slices.Reverse(m.Label)
						}
					}
				}
			})
		}
	}
}

// labelledScope makes a registry with a scope of n labels on it, made
// through the given number of client_golang wrappers of the registry, and
// registers through as many wrappers of the scope a gauge, vectors with one
// and four labels of their own, and an unchecked collector. It returns what
// the registry must expose, as Lines writes it.
func labelledScope(n, wrappers int) (*prometheus.Registry, *registry.Scope, []string) {
	reg := prometheus.NewPedanticRegistry()
	var parent prometheus.Registerer = reg
	labels := prometheus.Labels{}
	for i := range n {
		labels[fmt.Sprint("l", i)] = fmt.Sprint("v", i)
	}
	var pairs []string
	for i := range wrappers {
		parent = prometheus.WrapRegistererWith(prometheus.Labels{fmt.Sprint("up", i): "u"}, parent)
		pairs = append(pairs, fmt.Sprintf("up%d=%q", i, "u"))
	}
	scope := registry.NewScope(parent, registry.WithLabels(labels))
	var through prometheus.Registerer = scope
	for i := range wrappers {
		through = prometheus.WrapRegistererWith(prometheus.Labels{fmt.Sprint("down", i): "d"}, through)
		pairs = append(pairs, fmt.Sprintf("down%d=%q", i, "d"))
	}
	for k, v := range labels {
		pairs = append(pairs, fmt.Sprintf("%s=%q", k, v))
	}
	vec := promtest.CounterVec("requests_total", "code")
	vec.WithLabelValues("200").Inc()
	wide := promtest.CounterVec("wide_total", "a", "b", "c", "d")
	wide.WithLabelValues("1", "2", "3", "4").Inc()
	through.MustRegister(promtest.Gauge("jobs", 1), vec, wide, &promtest.Unchecked{Name: "u", Value: 2})
	series := func(name, own string, v int) string {
		all := slices.Clone(pairs)
		if own != "" {
			all = append(all, own)
		}
		slices.Sort(all)
		return fmt.Sprintf("%s{%s} %d", name, strings.Join(all, ","), v)
	}
	want := []string{
		series("jobs", "", 1), series("requests_total", `code="200"`, 1),
		series("wide_total", `a="1",b="2",c="3",d="4"`, 1), series("u", "", 2),
	}
	slices.Sort(want)
	return reg, scope, want
}
