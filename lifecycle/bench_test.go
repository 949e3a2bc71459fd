package lifecycle_test

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/lifecycle"
	"github.com/promscope/promscope/registry"
)

// benchBuild returns a constructor of a component of 10 gauges, which it
// registers through the scope it is given. Every build returns the same
// component, so that a build allocates nothing of its own.
func benchBuild(gauges []prometheus.Collector) func(*registry.Scope) (*promtest.Component, error) {
	w := &promtest.Component{Name: "watcher"}
	return func(scope *registry.Scope) (*promtest.Component, error) {
		for _, g := range gauges {
			if err := scope.Register(g); err != nil {
				return nil, err
			}
		}
		return w, nil
	}
}

// benchSetup returns 10 gauges and a registry that holds 1,000 others. The
// gauges are made once and registered again on every build, so that the
// benchmark times registration and Slot.Replace, not NewGauge.
func benchSetup(b *testing.B) ([]prometheus.Collector, *prometheus.Registry) {
	b.Helper()
	mk := func(prefix string, n int) []prometheus.Collector {
		cs := make([]prometheus.Collector, n)
		for i := range cs {
			cs[i] = prometheus.NewGauge(prometheus.GaugeOpts{Name: fmt.Sprintf("%s_%d", prefix, i), Help: "h"})
		}
		return cs
	}
	reg := prometheus.NewRegistry()
	for _, g := range mk("other", 1000) {
		if err := reg.Register(g); err != nil {
			b.Fatal(err)
		}
	}
	return mk("watcher", 10), reg
}

// BenchmarkSlotReplace times one recycle of a 10-gauge component: close the
// live instance and build the next. impl=hand does by hand what Slot.Replace
// does: close the instance and its scope, make a new scope, build, and close
// the scope if the build fails. impl=slot is Slot.Replace. impl=raw, for
// reference, is the same recycle in raw client_golang: Unregister the 10
// gauges, Register them again.
func BenchmarkSlotReplace(b *testing.B) {
	b.Run("impl=hand", func(b *testing.B) {
		gauges, reg := benchSetup(b)
		build := benchBuild(gauges)
		var (
			cur   *promtest.Component
			scope *registry.Scope
		)
		for b.Loop() {
			if scope != nil {
				if err := cur.Close(); err != nil {
					b.Fatal(err)
				}
				if err := scope.Close(); err != nil {
					b.Fatal(err)
				}
				cur, scope = nil, nil
			}
			next := registry.NewScope(reg)
			w, err := build(next)
			if err != nil {
				if cerr := next.Close(); cerr != nil {
					b.Fatal(cerr)
				}
				b.Fatal(err)
			}
			cur, scope = w, next
		}
		if err := scope.Close(); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("impl=slot", func(b *testing.B) {
		gauges, reg := benchSetup(b)
		build := benchBuild(gauges)
		slot := lifecycle.NewSlot[*promtest.Component](reg)
		for b.Loop() {
			if _, err := slot.Replace(build); err != nil {
				b.Fatal(err)
			}
		}
		if err := slot.Close(); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("impl=raw", func(b *testing.B) {
		gauges, reg := benchSetup(b)
		registered := false
		for b.Loop() {
			if registered {
				for _, g := range gauges {
					if !reg.Unregister(g) {
						b.Fatal("Unregister found nothing")
					}
				}
			}
			for _, g := range gauges {
				if err := reg.Register(g); err != nil {
					b.Fatal(err)
				}
			}
			registered = true
		}
	})
}
