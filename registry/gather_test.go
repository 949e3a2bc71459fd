package registry_test

import (
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/registry"
)

func TestGatherShowsWhatTheParentSees(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	wrapped := prometheus.WrapRegistererWith(prometheus.Labels{"zone": "z1"}, reg)
	program := registry.NewScope(wrapped, registry.WithPrefix("p_"), registry.WithLabels(prometheus.Labels{"cluster": "east"}))
	tenant := registry.NewScope(program, registry.WithLabels(prometheus.Labels{"tenant": "t"}))
	tenant.MustRegister(promtest.Gauge("jobs", 2))

	t.Run("a nested scope gathers its metrics with the prefix and labels of every scope above it", func(t *testing.T) {
		got, err := promtest.Series(tenant)
		if want := []string{`p_jobs{cluster="east",tenant="t"} 2`}; err != nil || !slices.Equal(got, want) {
			t.Errorf("Gather = %q, %v; want %q", got, err, want)
		}
	})
	t.Run("but not the labels that a Registerer above the root scope adds", func(t *testing.T) {
		got, err := promtest.Series(reg)
		if want := []string{`p_jobs{cluster="east",tenant="t",zone="z1"} 2`}; err != nil || !slices.Equal(got, want) {
			t.Errorf("the registry exposes %q, %v; want %q", got, err, want)
		}
	})
	t.Run("the outer scope gathers what the nested one owns", func(t *testing.T) {
		a, _ := promtest.Series(program)
		b, _ := promtest.Series(tenant)
		if !slices.Equal(a, b) {
			t.Errorf("the outer scope gathers %q, the nested one %q", a, b)
		}
	})
	if err := program.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
}
