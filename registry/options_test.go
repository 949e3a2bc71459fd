package registry_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/registry"
)

func TestOptions(t *testing.T) {
	labels := prometheus.Labels{"cluster": "east"}
	tests := []struct {
		name       string
		give       []registry.Option
		nested     []registry.Option // options of a scope nested in the first, if not nil
		wantString string
		wantSeries string // of a gauge "jobs" registered through the (nested) scope
	}{
		{name: "no options", wantString: "", wantSeries: "jobs{} 1"},
		{name: "nil options, empty labels", give: []registry.Option{nil, registry.WithLabels(nil), registry.WithLabels(prometheus.Labels{})},
			wantString: "", wantSeries: "jobs{} 1"},
		{name: "labels merged, later wins", give: []registry.Option{
			registry.WithLabels(prometheus.Labels{"b": "1", "a": "1"}), registry.WithLabels(prometheus.Labels{"b": "2"}),
		}, wantString: `{a="1",b="2"}`, wantSeries: `jobs{a="1",b="2"} 1`},
		{name: "last prefix and name win", give: []registry.Option{
			registry.WithPrefix("x_"), registry.WithPrefix("app_"), registry.WithName("x"), registry.WithName("mirror"),
		}, wantString: `mirror prefix="app_"`, wantSeries: "app_jobs{} 1"},
		{name: "nested after outer", give: []registry.Option{
			registry.WithName("mirror"), registry.WithPrefix("a_"), registry.WithLabels(labels),
		}, nested: []registry.Option{
			registry.WithName("west"), registry.WithPrefix("b_"), registry.WithLabels(prometheus.Labels{"tenant": "t"}),
		}, wantString: `mirror/west{cluster="east",tenant="t"} prefix="a_b_"`, wantSeries: `a_b_jobs{cluster="east",tenant="t"} 1`},
		{name: "unnamed nested", give: []registry.Option{registry.WithName("mirror")},
			nested: []registry.Option{}, wantString: "mirror", wantSeries: "jobs{} 1"},
	}
	// Options make what the scope exposes and its String.
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			scope := registry.NewScope(reg, tt.give...)
			defer scope.Close()
			if tt.nested != nil {
				scope = registry.NewScope(scope, tt.nested...)
			}
			scope.MustRegister(promtest.Gauge("jobs", 1))
			promtest.Expose(t, reg, tt.wantSeries)
			if got := scope.String(); got != tt.wantString {
				t.Errorf("String() = %q, want %q", got, tt.wantString)
			}
		})
	}

	// WithLabels copies the map it is given.
	t.Run("labels copied", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		given := prometheus.Labels{"cluster": "east"}
		scope := registry.NewScope(reg, registry.WithLabels(given))
		given["cluster"] = "west"
		scope.MustRegister(promtest.Gauge("jobs", 1))
		promtest.Expose(t, reg, `jobs{cluster="east"} 1`)
	})
}
