package registrytest_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	dto "github.com/prometheus/client_model/go"

	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/registry"
	"github.com/promscope/promscope/registry/registrytest"
)

func TestVerifyNone(t *testing.T) {
	// names are the metrics registered on the registry of most rows.
	names := []string{"go_goroutines", "go_threads", "gopher_count", "jobs", "jobs_total"}
	vec := func(reg prometheus.Registerer, name string) {
		promauto.With(reg).NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: "h"}, []string{"x"})
	}
	tests := []struct {
		name   string
		give   func() prometheus.Gatherer
		ignore []string
		want   []string // what the one failure names; none: no failure
		omit   []string // what it must not name
	}{
		{name: "an empty registry", give: func() prometheus.Gatherer { return prometheus.NewPedanticRegistry() }},
		{name: "a registry after its scope closed", give: func() prometheus.Gatherer {
			reg := prometheus.NewPedanticRegistry()
			s := registry.NewScope(reg)
			s.MustRegister(promtest.Gauge("jobs", 1))
			vec(s, "empty")
			s.Close()
			return reg
		}},
		{name: "registry", give: func() prometheus.Gatherer {
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(promtest.Gauge("jobs", 1))
			v := promtest.CounterVec("requests_total", "path")
			v.WithLabelValues("/a").Inc()
			v.WithLabelValues("/b").Inc()
			reg.MustRegister(v)
			return reg
		}, want: []string{"registrytest: 2 metric families still exposed", "jobs (1 series)", "requests_total (2 series)"}},
		{name: "a registry with a vector without series", give: func() prometheus.Gatherer {
			reg := prometheus.NewPedanticRegistry()
			vec(reg, "per_tenant")
			return reg
		}, want: []string{"1 metric still registered with no series: per_tenant"}},
		{name: "not a collector", give: func() prometheus.Gatherer {
			reg := prometheus.NewPedanticRegistry()
			vec(reg, "per_tenant")
			return prometheus.GathererFunc(reg.Gather)
		}},
		{name: "a zero scope", give: func() prometheus.Gatherer { return &registry.Scope{} }},
		{name: "a closed scope", give: func() prometheus.Gatherer {
			s := registry.NewScope(nil)
			s.MustRegister(promtest.Gauge("jobs", 1))
			s.Close()
			return s
		}},
		{name: "scope", give: func() prometheus.Gatherer {
			program := registry.NewScope(prometheus.NewPedanticRegistry(), registry.WithName("program"))
			vec(registry.NewScope(program, registry.WithName("west")), "link_errors")
			return program
		}, want: []string{"registrytest: scope program: 1 metric still registered with no series: link_errors",
			"owned by:\nprogram: 0 collectors\n  program/west: 1 collector: link_errors"}},
		{name: "a scope with a silent unchecked collector", give: func() prometheus.Gatherer {
			program := registry.NewScope(nil, registry.WithName("program"))
			registry.NewScope(program, registry.WithName("west")).MustRegister(&promtest.Unchecked{}) // collects nothing
			return program
		}, ignore: []string{"*"}, want: []string{"registrytest: scope program: 1 unchecked collector still registered, exposing nothing",
			"owned by:\nprogram: 0 collectors\n  program/west: 1 collector: 1 unchecked"}},
		{name: "a silent unchecked one beside an ignored gauge", give: func() prometheus.Gatherer {
			program := registry.NewScope(nil, registry.WithName("program"))
			program.MustRegister(promtest.Gauge("go_up", 1))
			registry.NewScope(program, registry.WithName("west")).MustRegister(&promtest.Unchecked{}) // collects nothing
			return program
		}, ignore: []string{"go_*"}, want: []string{"registrytest: scope program: 1 unchecked collector still registered, exposing nothing",
			"owned by:\nprogram: 1 collector: go_up\n  program/west: 1 collector: 1 unchecked"}},
		{name: "an ignored vector with no series in a scope", give: func() prometheus.Gatherer {
			program := registry.NewScope(nil, registry.WithName("program"))
			vec(program, "shared_total")
			return program
		}, ignore: []string{"shared_total"}},
		{name: "a scope with unchecked ones and a vector", give: func() prometheus.Gatherer {
			s := registry.NewScope(nil)
			s.MustRegister(&promtest.Unchecked{Name: "dyn_up", Value: 1})
			vec(s, "leaked")
			return s
		}, ignore: []string{"dyn_*"}, want: []string{"registrytest: scope (unnamed scope): 1 metric still registered with no series: leaked"}},
		{name: "a gatherer that fails", give: func() prometheus.Gatherer {
			return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return nil, errors.New("scrape refused") })
		}, want: []string{"registrytest: gather failed: scrape refused"}},
		{name: "nothing ignored", give: gauges(names), want: names},
		{name: "an exact name ignored", give: gauges(names), ignore: []string{"jobs"}, want: []string{"go_goroutines", "jobs_total"}, omit: []string{"jobs ("}},
		{name: "an empty pattern, which ignores nothing", give: gauges(names), ignore: []string{""}, want: names},
		{name: "a prefix ignored", give: gauges(names), ignore: []string{"go_*"}, want: []string{"gopher_count", "jobs_total"}, omit: []string{"go_goroutines", "go_threads"}},
		{name: "a star in the middle, taken literally", give: gauges(names), ignore: []string{"go_*s"}, want: []string{"go_goroutines"}},
		{name: "a lone star", give: gauges(names), ignore: []string{"*"}},
		{name: "everything left ignored", give: func() prometheus.Gatherer {
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(promtest.Gauge("go_goroutines", 1))
			vec(reg, "go_empty")
			return reg
		}, ignore: []string{"go_*"}},
	}
	for _, tt := range tests {
		// VerifyNone reports exactly what is there.
		t.Run(tt.name, func(t *testing.T) {
			var r promtest.Recorder
			registrytest.VerifyNone(&r, tt.give(), tt.ignore...)
			r.Check(t, tt.want...)
			for _, o := range tt.omit {
				if len(r.Errors) == 1 && strings.Contains(r.Errors[0], o) {
					t.Errorf("reported %q, which names ignored %q", r.Errors[0], o)
				}
			}
			if r.Helpers == 0 {
				t.Error("VerifyNone did not mark itself a helper")
			}
		})
	}

	nils := []struct {
		name string
		give prometheus.Gatherer
	}{
		{name: "nil", give: nil},
		{name: "a nil *prometheus.Registry", give: (*prometheus.Registry)(nil)},
		{name: "a nil *registry.Scope", give: (*registry.Scope)(nil)},
	}
	for _, tt := range nils {
		// It panics with the package prefix on a nil gatherer, which
		// would prove nothing.
		t.Run(tt.name, func(t *testing.T) {
			v := promtest.Panic(func() { registrytest.VerifyNone(&promtest.Recorder{}, tt.give) })
			if msg, ok := v.(string); !ok || !strings.HasPrefix(msg, "registrytest: VerifyNone needs a Gatherer") {
				t.Errorf("VerifyNone(%#v) panicked with %#v", tt.give, v)
			}
		})
	}
}

// gauges returns a maker of a registry holding a gauge for each name.
func gauges(names []string) func() prometheus.Gatherer {
	return func() prometheus.Gatherer {
		reg := prometheus.NewPedanticRegistry()
		for _, name := range names {
			reg.MustRegister(promtest.Gauge(name, 1))
		}
		return reg
	}
}
