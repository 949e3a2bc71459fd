package registry_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/registry"
	"github.com/promscope/promscope/registry/registrytest"
)

// holder is a collector of a comparable struct type whose values hold
// something that cannot be compared: == on two of them panics.
type holder struct{ inner prometheus.Collector }

func (h holder) Describe(ch chan<- *prometheus.Desc) { h.inner.Describe(ch) }
func (h holder) Collect(ch chan<- prometheus.Metric) { h.inner.Collect(ch) }

// sharing is a collector of one descriptor that others may share, as
// exporters share one descriptor between the collectors of many targets.
type sharing struct{ d *prometheus.Desc }

func (s sharing) Describe(ch chan<- *prometheus.Desc) { ch <- s.d }
func (s sharing) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(s.d, prometheus.GaugeValue, 1)
}

// shared is the descriptor the sharing collectors of the tests share.
var shared = prometheus.NewDesc("shared_desc", "h", nil, nil)

// valued is an unchecked collector whose values are compared field by field.
type valued struct {
	n     int
	arr   [2]string
	m     map[string]int
	f     func()
	inner any
}

func (valued) Describe(chan<- *prometheus.Desc) {}
func (valued) Collect(chan<- prometheus.Metric) {}

func TestUnregisterFindsUncheckedValuesByEquality(t *testing.T) {
	base := valued{n: 1, arr: [2]string{"a", "b"}, m: map[string]int{"x": 1}, inner: 2}
	tests := []struct {
		name string
		give func(v valued) valued
		want bool
	}{
		{name: "an equal value with an equal map", give: func(v valued) valued { v.m = map[string]int{"x": 1}; return v }, want: true},
		{name: "another number", give: func(v valued) valued { v.n = 2; return v }},
		{name: "another array element", give: func(v valued) valued { v.arr[1] = "c"; return v }},
		{name: "a map with another value", give: func(v valued) valued { v.m = map[string]int{"x": 2}; return v }},
		{name: "a map with another key", give: func(v valued) valued { v.m = map[string]int{"y": 1}; return v }},
		{name: "a longer map", give: func(v valued) valued { v.m = map[string]int{"x": 1, "y": 2}; return v }},
		{name: "a nil interface field", give: func(v valued) valued { v.inner = nil; return v }},
		{name: "a function, which never equals", give: func(v valued) valued { v.f = func() {}; return v }},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("Unregister of %s: %v", tt.name, tt.want), func(t *testing.T) {
			scope := registry.NewScope(nil)
			scope.MustRegister(base)
			if got := scope.Unregister(tt.give(base)); got != tt.want {
				t.Errorf("Unregister = %v", got)
			}
			if got := scope.Len(); got != map[bool]int{false: 1}[tt.want] {
				t.Errorf("Len() = %d", got)
			}
		})
	}
}

func TestUnregisterFindsWhatClientGolangFinds(t *testing.T) {
	tests := []struct {
		name     string
		register prometheus.Collector
		give     prometheus.Collector // what Unregister is given
		want     bool
	}{
		{
			name:     "the same gauge",
			register: promtest.Gauge("jobs", 1),
			give:     nil, // the registered one
			want:     true,
		},
		{
			name:     "an equal gauge with another help string",
			register: promtest.Gauge("jobs", 1),
			give:     prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobs", Help: "Something else."}),
			want:     true,
		},
		{
			name:     "an equal vector with other variable labels",
			register: promtest.CounterVec("requests_total", "code"),
			give:     promtest.CounterVec("requests_total", "path", "method"),
			want:     true,
		},
		{
			name:     "a gauge with other constant label values",
			register: prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobs", Help: "h", ConstLabels: prometheus.Labels{"q": "a"}}),
			give:     prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobs", Help: "h", ConstLabels: prometheus.Labels{"q": "b"}}),
			want:     false,
		},
		{
			name:     "a gauge of another name",
			register: promtest.Gauge("jobs", 1),
			give:     promtest.Gauge("jobs_total", 1),
			want:     false,
		},
		{
			name:     "a value whose type is comparable but whose content is not",
			register: holder{inner: promtest.Gauges{promtest.Gauge("a", 1), promtest.Gauge("b", 2)}},
			give:     nil,
			want:     true,
		},
		{
			name:     "another collector describing the same descriptor objects",
			register: sharing{shared},
			give:     sharing{shared},
			want:     true,
		},
		{
			name:     "a collector of another type with the same name",
			register: promtest.Gauge("jobs", 1),
			give:     prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "jobs", Help: "h"}, func() float64 { return 1 }),
			want:     true,
		},
		{
			name:     "a value of a type that cannot be compared",
			register: promtest.Gauges{promtest.Gauge("a", 1)},
			give:     nil,
			want:     true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name+": a scope answers as a registry does", func(t *testing.T) {
			give := tt.give
			if give == nil {
				give = tt.register
			}
			plain := prometheus.NewRegistry()
			plain.MustRegister(tt.register)
			if got := plain.Unregister(give); got != tt.want {
				t.Fatalf("the test is wrong: a registry's Unregister = %v, want %v", got, tt.want)
			}

			reg := prometheus.NewPedanticRegistry()
			scope := registry.NewScope(reg)
			scope.MustRegister(tt.register)
			if got := scope.Unregister(give); got != tt.want {
				t.Errorf("Unregister = %v, want %v", got, tt.want)
			}
			if tt.want {
				registrytest.VerifyNone(t, reg)
			}
			// Registering again after a lookup has built the scope's
			// index neither panics nor fails.
			if tt.want {
				if err := scope.Register(tt.register); err != nil {
					t.Errorf("Register again = %v", err)
				}
			}
			if err := scope.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
			registrytest.VerifyNone(t, reg)
		})
	}

	t.Run("an unchecked value that cannot be compared is found as an equal value, and no other", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg)
		u := holder{inner: &promtest.Unchecked{Name: "odd", Value: 7}}
		scope.MustRegister(u)
		if scope.Unregister(holder{inner: &promtest.Unchecked{Name: "odd", Value: 7}}) {
			t.Error("Unregister of another unchecked collector exposing the same = true")
		}
		if !scope.Unregister(u) {
			t.Error("Unregister = false")
		}
		if got, _ := promtest.Series(reg); len(got) != 0 {
			t.Errorf("the registry exposes %q", got)
		}
	})
}

func TestAlreadyRegisteredErrorNamesTheCallersCollectors(t *testing.T) {
	labels := prometheus.Labels{"lib": "cache"}
	// reuse is the idiom from client_golang's documentation: on an
	// AlreadyRegisteredError, use the vector that is already there.
	reuse := func(reg prometheus.Registerer, cv *prometheus.CounterVec) (*prometheus.CounterVec, error) {
		if err := reg.Register(cv); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, err
			}
			existing, ok := are.ExistingCollector.(*prometheus.CounterVec)
			if !ok {
				return nil, fmt.Errorf("ExistingCollector is a %T", are.ExistingCollector)
			}
			return existing, nil
		}
		return cv, nil
	}
	shapes := []struct {
		name string
		give func(reg *prometheus.Registry) prometheus.Registerer
	}{
		{name: "a plain registry, for reference", give: func(reg *prometheus.Registry) prometheus.Registerer { return reg }},
		{name: "a scope", give: func(reg *prometheus.Registry) prometheus.Registerer { return registry.NewScope(reg) }},
		{name: "a labelled scope nested in a prefixed one", give: func(reg *prometheus.Registry) prometheus.Registerer {
			return registry.NewScope(registry.NewScope(reg, registry.WithPrefix("p_")), registry.WithLabels(labels))
		}},
		{name: "client_golang's label wrapper of a scope", give: func(reg *prometheus.Registry) prometheus.Registerer {
			return prometheus.WrapRegistererWith(labels, registry.NewScope(reg))
		}},
		{name: "client_golang's prefix wrapper of a labelled scope", give: func(reg *prometheus.Registry) prometheus.Registerer {
			return prometheus.WrapRegistererWithPrefix("lib_", registry.NewScope(reg, registry.WithLabels(labels)))
		}},
		{name: "a scope on client_golang's wrapper of a scope", give: func(reg *prometheus.Registry) prometheus.Registerer {
			return registry.NewScope(prometheus.WrapRegistererWith(labels, registry.NewScope(reg)))
		}},
		{name: "a wrapper of a scope on a wrapper of a scope", give: func(reg *prometheus.Registry) prometheus.Registerer {
			inner := registry.NewScope(prometheus.WrapRegistererWithPrefix("a_", registry.NewScope(reg)))
			return prometheus.WrapRegistererWith(labels, inner)
		}},
	}
	for _, sh := range shapes {
		t.Run("through "+sh.name+", the reuse idiom gets the first vector back", func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			r := sh.give(reg)
			first := promtest.CounterVec("hits_total", "code")
			if got, err := reuse(r, first); err != nil || got != first {
				t.Fatalf("first registration = %p, %v", got, err)
			}
			got, err := reuse(r, promtest.CounterVec("hits_total", "code"))
			if err != nil || got != first {
				t.Errorf("second registration = %p, %v; want the first vector %p", got, err, first)
			}
			got.WithLabelValues("200").Inc()
			series, err := promtest.Series(reg)
			if err != nil || len(series) != 1 || !slices.ContainsFunc(series, func(s string) bool { return s[len(s)-2:] == " 1" }) {
				t.Errorf("the registry exposes %q, %v; want the one series, once", series, err)
			}
		})
	}

	t.Run("a caller straight on the registry meets the scope's registration, which names and unwraps to the collector", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg, registry.WithName("watcher"))
		mine := promtest.Gauge("jobs", 1)
		scope.MustRegister(mine)
		var are prometheus.AlreadyRegisteredError
		if !errors.As(reg.Register(promtest.Gauge("jobs", 2)), &are) {
			t.Fatal("the registry accepted an equal gauge")
		}
		if got := fmt.Sprint(are.ExistingCollector); got != "registry: jobs, registered through promscope scope watcher" {
			t.Errorf("ExistingCollector prints as %q", got)
		}
		u, ok := are.ExistingCollector.(interface{ Unwrap() prometheus.Collector })
		if !ok || u.Unwrap() != prometheus.Collector(mine) {
			t.Errorf("ExistingCollector (%T) does not unwrap to the scope's gauge", are.ExistingCollector)
		}
		scope.Close()
		if u.Unwrap() != nil {
			t.Error("after Close, the registration still unwraps to the gauge")
		}
		registry.NewScope(reg).MustRegister(promtest.Gauge("jobs", 1))
		if err := reg.Register(promtest.Gauge("jobs", 2)); !errors.As(err, &are) || fmt.Sprint(are.ExistingCollector) != "registry: jobs, registered through a promscope scope" {
			t.Errorf("an unnamed scope's registration prints as %v", are.ExistingCollector)
		}
	})

	t.Run("one of client_golang's own collectors, registered straight on the registry, is named as it is", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		theirs := collectors.NewBuildInfoCollector()
		reg.MustRegister(theirs)
		var are prometheus.AlreadyRegisteredError
		if err := registry.NewScope(reg).Register(collectors.NewBuildInfoCollector()); !errors.As(err, &are) || are.ExistingCollector != theirs {
			t.Errorf("Register = %v, want an AlreadyRegisteredError naming their collector", err)
		}
	})
}
