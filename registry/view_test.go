package registry_test

import (
	"errors"
	"slices"
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

func TestLabelledScopeExposesAsClientGolangWrappers(t *testing.T) {
	labels := prometheus.Labels{"cluster": "east", "b": "x"}
	tests := []struct {
		name string
		give func() prometheus.Collector
	}{
		{name: "a gauge", give: func() prometheus.Collector { return promtest.Gauge("g", 1) }},
		{name: "a counter vector with children", give: func() prometheus.Collector {
			v := promtest.CounterVec("requests_total", "code", "a")
			v.WithLabelValues("200", "x").Add(3)
			v.WithLabelValues("500", "y").Inc()
			return v
		}},
		{name: "a GaugeFunc", give: func() prometheus.Collector {
			return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "f", Help: "h"}, func() float64 { return 2 })
		}},
		{name: "a histogram", give: func() prometheus.Collector {
			h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "h_seconds", Help: "h"})
			h.Observe(1)
			return h
		}},
		{name: "a metric writing its labels out of order", give: func() prometheus.Collector { return newUnsorted(nil) }},
		{name: "a metric that fails to write", give: func() prometheus.Collector { return newUnsorted(errors.New("broken")) }},
		{name: "a collector making its descriptors anew in Collect", give: func() prometheus.Collector { return fresh{} }},
		{name: "an unchecked collector", give: func() prometheus.Collector { return &promtest.Unchecked{Name: "u", Value: 5} }},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is exposed through a prefixed, labelled scope as through WrapRegistererWith and WithPrefix", func(t *testing.T) {
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
}
