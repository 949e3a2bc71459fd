package registry_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/registry"
)

// The benchmarks below measure what a Scope costs over raw client_golang.
// Each runs its raw baseline and its scope variant as sub-benchmarks of one
// function, named impl=raw and impl=scope, so that one run measures both and
// benchstat can put them side by side (benchstat -col /impl). BENCHMARKS.md
// at the repository root gives the commands, the bars and the results.

const (
	benchOthers    = 1000 // collectors of other components in the parent
	benchComponent = 10   // gauges of the component under test
)

// benchGauges returns n new gauges named prefix_0 to prefix_<n-1>, with the
// constant labels given, if any.
func benchGauges(prefix string, n int, constLabels ...prometheus.Labels) []prometheus.Collector {
	cs := make([]prometheus.Collector, n)
	for i := range cs {
		opts := prometheus.GaugeOpts{
			Name: fmt.Sprintf("%s_%d", prefix, i),
			Help: "A gauge of the benchmarks.",
		}
		for _, l := range constLabels {
			opts.ConstLabels = l
		}
		cs[i] = prometheus.NewGauge(opts)
	}
	return cs
}

// benchParent returns a registry that already holds benchOthers gauges of
// other components, as a controller's shared registry does.
func benchParent(tb testing.TB) *prometheus.Registry {
	tb.Helper()
	reg := prometheus.NewRegistry()
	for _, g := range benchGauges("other", benchOthers) {
		if err := reg.Register(g); err != nil {
			tb.Fatal(err)
		}
	}
	return reg
}

// benchReportPerCollector adds an ns/collector metric: the measured time spread
// over the n collectors that each iteration handles.
func benchReportPerCollector(b *testing.B, n int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/collector")
}

// benchRaw is one component's life in raw client_golang, through r:
// register the gauges, then unregister each; with probe, ask r first who
// holds it, by registering it again, as Scope.Close does.
func benchRaw(b *testing.B, r prometheus.Registerer, gauges []prometheus.Collector, probe bool) {
	for _, g := range gauges {
		if err := r.Register(g); err != nil {
			b.Fatal(err)
		}
	}
	if probe {
		benchRawRelease(b, r, gauges)
		return
	}
	for _, g := range gauges {
		if !r.Unregister(g) {
			b.Fatal("Unregister found nothing")
		}
	}
}

// benchRawRelease makes, in raw client_golang, the calls with which
// Scope.Close takes back each of gauges from r: Register again, to learn
// from the AlreadyRegisteredError who holds the identity, then Unregister.
func benchRawRelease(b *testing.B, r prometheus.Registerer, gauges []prometheus.Collector) {
	for _, g := range gauges {
		if _, ok := r.Register(g).(prometheus.AlreadyRegisteredError); !ok { //nolint:errorlint // a registry returns it as it is
			b.Fatal("the probe got no AlreadyRegisteredError")
		}
		if !r.Unregister(g) {
			b.Fatal("Unregister found nothing")
		}
	}
}

// benchScoped is one component's life through a scope: make it, register the
// gauges, close it.
func benchScoped(b *testing.B, gauges []prometheus.Collector, newScope func() *registry.Scope) {
	s := newScope()
	for _, g := range gauges {
		if err := s.Register(g); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkRegisterClose is one component's whole life on a busy registry:
// register 10 gauges, then remove them. impl=raw is what client_golang
// needs for that (Register, then Unregister). impl=floor is raw
// client_golang making exactly the calls the ownership guarantee of
// Scope.Close needs: Register; Register again, to learn from the
// AlreadyRegisteredError who holds the identity; Unregister. impl=scope is
// NewScope, Scope.Register and Scope.Close.
func BenchmarkRegisterClose(b *testing.B) {
	gauges := benchGauges("component", benchComponent)
	for _, impl := range []string{"raw", "floor", "scope"} {
		b.Run("impl="+impl, func(b *testing.B) {
			reg := benchParent(b)
			for b.Loop() {
				if impl == "scope" {
					benchScoped(b, gauges, func() *registry.Scope { return registry.NewScope(reg) })
				} else {
					benchRaw(b, reg, gauges, impl == "floor")
				}
			}
			benchReportPerCollector(b, benchComponent)
		})
	}
}

// BenchmarkDuplicateRegister times the probe of Scope.Close alone, in raw
// client_golang: Register of 10 gauges that are registered already, on a
// registry holding 1,000 others. It is the part of impl=floor above that
// impl=raw does not pay.
func BenchmarkDuplicateRegister(b *testing.B) {
	gauges := benchGauges("component", benchComponent)
	b.Run("impl=raw", func(b *testing.B) {
		reg := benchParent(b)
		for _, g := range gauges {
			if err := reg.Register(g); err != nil {
				b.Fatal(err)
			}
		}
		for b.Loop() {
			for _, g := range gauges {
				if _, ok := reg.Register(g).(prometheus.AlreadyRegisteredError); !ok { //nolint:errorlint // a registry returns it as it is
					b.Fatal("got no AlreadyRegisteredError")
				}
			}
		}
		benchReportPerCollector(b, benchComponent)
	})
}

// BenchmarkRegisterCloseLabelled is BenchmarkRegisterClose for a component
// whose metrics carry a constant label, the common case of one component per
// cluster or tenant: impl=raw and impl=floor register through
// prometheus.WrapRegistererWith, impl=scope through a scope made with
// WithLabels.
func BenchmarkRegisterCloseLabelled(b *testing.B) {
	gauges := benchGauges("component", benchComponent)
	labels := prometheus.Labels{"cluster": "east"}
	for _, impl := range []string{"raw", "floor", "scope"} {
		b.Run("impl="+impl, func(b *testing.B) {
			reg := benchParent(b)
			for b.Loop() {
				if impl == "scope" {
					benchScoped(b, gauges, func() *registry.Scope { return registry.NewScope(reg, registry.WithLabels(labels)) })
				} else {
					benchRaw(b, prometheus.WrapRegistererWith(labels, reg), gauges, impl == "floor")
				}
			}
			benchReportPerCollector(b, benchComponent)
		})
	}
}

// BenchmarkRegisterCloseNested is one component's life in a long-lived
// program scope: impl=direct makes the component's labelled scope on the
// registry, impl=nested makes it with NewScope(program, WithLabels(...)).
func BenchmarkRegisterCloseNested(b *testing.B) {
	gauges := benchGauges("component", benchComponent)
	labels := registry.WithLabels(prometheus.Labels{"cluster": "east"})
	for _, impl := range []string{"direct", "nested"} {
		b.Run("impl="+impl, func(b *testing.B) {
			var parent prometheus.Registerer = benchParent(b)
			if impl == "nested" {
				parent = registry.NewScope(parent)
			}
			for b.Loop() {
				benchScoped(b, gauges, func() *registry.Scope { return registry.NewScope(parent, labels) })
			}
			benchReportPerCollector(b, benchComponent)
		})
	}
}

// BenchmarkRegisterCloseWrapped is one labelled component's life in a
// long-lived program scope: impl=child makes its scope with
// program.Child(WithLabels(...)), impl=wrapped with NewScope on
// client_golang's WrapRegistererWith(labels, program), which is the same
// scope, found through the wrapper.
func BenchmarkRegisterCloseWrapped(b *testing.B) {
	gauges := benchGauges("component", benchComponent)
	labels := prometheus.Labels{"cluster": "east"}
	for _, impl := range []string{"child", "wrapped"} {
		b.Run("impl="+impl, func(b *testing.B) {
			program := registry.NewScope(benchParent(b))
			newScope := func() *registry.Scope { return program.Child(registry.WithLabels(labels)) }
			if impl == "wrapped" {
				newScope = func() *registry.Scope { return registry.NewScope(prometheus.WrapRegistererWith(labels, program)) }
			}
			for b.Loop() {
				benchScoped(b, gauges, newScope)
			}
			benchReportPerCollector(b, benchComponent)
		})
	}
}

// BenchmarkGatherScopes times a scrape of a registry holding 10,000
// components of 10 gauges each, 100,000 series: registered straight on the
// registry (impl=raw), or each component through a scope of its own nested
// in a program scope (impl=scope). With shape=plain the components' gauges
// carry their component label themselves; with shape=labelled the label is
// added by client_golang's WrapRegistererWith (raw) or the component
// scope's WithLabels (scope).
func BenchmarkGatherScopes(b *testing.B) {
	const components = 10_000
	for _, shape := range []string{"plain", "labelled"} {
		for _, impl := range []string{"raw", "scope"} {
			b.Run("shape="+shape+"/impl="+impl, func(b *testing.B) {
				reg := prometheus.NewRegistry()
				program := registry.NewScope(reg)
				for c := range components {
					id := prometheus.Labels{"component": fmt.Sprint(c)}
					var r prometheus.Registerer
					switch {
					case impl == "raw" && shape == "plain":
						r = reg
					case impl == "raw":
						r = prometheus.WrapRegistererWith(id, reg)
					case shape == "plain":
						r = program.Child()
					default:
						r = program.Child(registry.WithLabels(id))
					}
					for i := range benchComponent {
						opts := prometheus.GaugeOpts{Name: fmt.Sprintf("gathered_%d", i), Help: "A gauge of the benchmarks."}
						if shape == "plain" {
							opts.ConstLabels = id
						}
						if err := r.Register(prometheus.NewGauge(opts)); err != nil {
							b.Fatal(err)
						}
					}
				}
				for b.Loop() {
					mfs, err := reg.Gather()
					if err != nil || len(mfs) != benchComponent {
						b.Fatalf("Gather returned %d families and error %v", len(mfs), err)
					}
				}
			})
		}
	}
}

// BenchmarkRegisterCloseLeakReport is BenchmarkRegisterClose's scope
// variant without (impl=plain) and with (impl=leakreport) WithLeakReport,
// which records where each scope is made and adds a runtime cleanup.
func BenchmarkRegisterCloseLeakReport(b *testing.B) {
	gauges := benchGauges("component", benchComponent)
	for _, impl := range []string{"plain", "leakreport"} {
		b.Run("impl="+impl, func(b *testing.B) {
			var opts []registry.Option
			if impl == "leakreport" {
				opts = append(opts, registry.WithLeakReport(func(registry.Leak) {}))
			}
			reg := benchParent(b)
			for b.Loop() {
				benchScoped(b, gauges, func() *registry.Scope { return registry.NewScope(reg, opts...) })
			}
			benchReportPerCollector(b, benchComponent)
		})
	}
}

// BenchmarkRegister times registration alone: one component's 10 gauges
// per iteration, on a registry that holds 1,000 others. NewScope is timed,
// since a component pays for it.
//
// Taking the gauges out again is not timed, and is the same for both sides,
// so that neither side's timed part pays for the other's garbage: each
// iteration registers a different component of a batch of 100, and once the
// whole batch is registered the benchmark stops the timer and unregisters
// every gauge from the registry with raw client_golang Unregister. That
// removes a scope's wrapper as well, since client_golang unregisters by
// descriptors; the scopes are then dropped unclosed. The batch spreads the
// cost of stopping the timer, which reads the memory statistics with the
// world stopped, over 100 iterations.
func BenchmarkRegister(b *testing.B) {
	const batch = 100
	components := make([][]prometheus.Collector, batch)
	for i := range components {
		components[i] = benchGauges(fmt.Sprintf("component%d", i), benchComponent)
	}
	run := func(b *testing.B, register func(reg *prometheus.Registry, gauges []prometheus.Collector) error) {
		reg := benchParent(b)
		i := 0
		remove := func() {
			for _, c := range components[:i] {
				for _, g := range c {
					if !reg.Unregister(g) {
						b.Fatal("Unregister found nothing")
					}
				}
			}
			i = 0
		}
		for b.Loop() {
			if i == batch {
				b.StopTimer()
				remove()
				b.StartTimer()
			}
			if err := register(reg, components[i]); err != nil {
				b.Fatal(err)
			}
			i++
		}
		remove()
		benchReportPerCollector(b, benchComponent)
	}
	b.Run("impl=raw", func(b *testing.B) {
		run(b, func(reg *prometheus.Registry, gauges []prometheus.Collector) error {
			for _, g := range gauges {
				if err := reg.Register(g); err != nil {
					return err
				}
			}
			return nil
		})
	})
	b.Run("impl=scope", func(b *testing.B) {
		run(b, func(reg *prometheus.Registry, gauges []prometheus.Collector) error {
			s := registry.NewScope(reg)
			for _, g := range gauges {
				if err := s.Register(g); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// BenchmarkCloseScaling times Close of a scope owning n gauges, registered
// with the timer stopped, and reports the time per collector: it must not
// grow with n. scope=plain registers straight into a registry; scope=nested
// is a scope made with NewScope(outer, WithLabels(...)), whose Close goes
// through the outer scope. scope=floor and scope=floor-labelled are raw
// client_golang making the calls of that Close (the probe, then Unregister)
// on the registry and on prometheus.WrapRegistererWith of it: how much of
// any growth is client_golang's own. scope=taken is scope=plain after
// somebody else unregistered every gauge behind the scope's back, which
// Close reports.
func BenchmarkCloseScaling(b *testing.B) {
	labels := prometheus.Labels{"shard": "a"}
	for _, kind := range []string{"plain", "nested", "floor", "floor-labelled", "taken"} {
		for _, n := range []int{100, 10_000} {
			b.Run(fmt.Sprintf("scope=%s/n=%d", kind, n), func(b *testing.B) {
				gauges := benchGauges("scaling", n)
				reg := prometheus.NewRegistry()
				var parent prometheus.Registerer = reg
				var opts []registry.Option
				switch kind {
				case "nested":
					parent = registry.NewScope(reg)
					opts = append(opts, registry.WithLabels(labels))
				case "floor-labelled":
					parent = prometheus.WrapRegistererWith(labels, reg)
				}
				for b.Loop() {
					b.StopTimer()
					r := parent
					var s *registry.Scope
					if kind != "floor" && kind != "floor-labelled" {
						s = registry.NewScope(parent, opts...)
						r = s
					}
					for _, g := range gauges {
						if err := r.Register(g); err != nil {
							b.Fatal(err)
						}
						if kind == "taken" {
							reg.Unregister(g)
						}
					}
					b.StartTimer()
					if s == nil {
						benchRawRelease(b, parent, gauges)
					} else if err := s.Close(); (err != nil) != (kind == "taken") {
						b.Fatalf("Close = %v", err)
					}
				}
				benchReportPerCollector(b, n)
			})
		}
	}
}

// BenchmarkSameNameScaling times, per collector, what a scope does with n
// registrations of one metric name that differ only in their constant labels,
// at n=100 and n=10,000: it must not grow with n. op=len is Len of a program
// scope with n children, each with its own label and one gauge of the same
// name, the README's usual shape; op=unregister is Unregister of each of n
// gauges of one name, each with its own constant label, registered in one
// scope with the timer stopped.
func BenchmarkSameNameScaling(b *testing.B) {
	for _, op := range []string{"len", "unregister"} {
		for _, n := range []int{100, 10_000} {
			b.Run(fmt.Sprintf("op=%s/n=%d", op, n), func(b *testing.B) {
				gauges := make([]prometheus.Collector, n)
				for i := range gauges {
					opts := prometheus.GaugeOpts{Name: "cache_size", Help: "A gauge of the benchmarks."}
					if op == "unregister" {
						opts.ConstLabels = prometheus.Labels{"object": fmt.Sprint(i)}
					}
					gauges[i] = prometheus.NewGauge(opts)
				}
				reg := prometheus.NewRegistry()
				program := registry.NewScope(reg)
				if op == "len" {
					for i, g := range gauges {
						program.Child(registry.WithLabels(prometheus.Labels{"cluster": fmt.Sprint(i)})).MustRegister(g)
					}
				}
				for b.Loop() {
					if op == "len" {
						if got := program.Len(); got != n {
							b.Fatalf("Len is %d, want %d", got, n)
						}
						continue
					}
					b.StopTimer()
					s := program.Child()
					s.MustRegister(gauges...)
					b.StartTimer()
					for _, g := range gauges {
						if !s.Unregister(g) {
							b.Fatal("Unregister found nothing")
						}
					}
				}
				benchReportPerCollector(b, n)
			})
		}
	}
}

// BenchmarkUnregisterScaling times, per call, Unregister on a scope that
// owns n collectors, registered with the timer stopped, at n=100 and
// n=10,000: it must not grow with n. op=unchecked unregisters each of n
// unchecked collectors, oldest first; op=value each of n collectors of a
// value type (promtest.Gauges), oldest first, once the scope has its index;
// op=missing unregisters, n times, a gauge the scope does not own, as code
// that unregisters before it registers does.
func BenchmarkUnregisterScaling(b *testing.B) {
	for _, op := range []string{"unchecked", "value", "missing"} {
		for _, n := range []int{100, 10_000} {
			b.Run(fmt.Sprintf("op=%s/n=%d", op, n), func(b *testing.B) {
				owned := make([]prometheus.Collector, n)
				for i := range owned {
					switch op {
					case "unchecked":
						owned[i] = &promtest.Unchecked{Name: fmt.Sprintf("unchecked%d", i)}
					case "value":
						owned[i] = promtest.Gauges{promtest.Gauge(fmt.Sprintf("value%d", i), 1)}
					default:
						owned[i] = promtest.Gauge(fmt.Sprintf("owned%d", i), 1)
					}
				}
				missing := promtest.Gauge("missing", 1)
				program := registry.NewScope(prometheus.NewRegistry())
				for b.Loop() {
					b.StopTimer()
					s := program.Child()
					s.MustRegister(owned...)
					s.Unregister(missing) // builds the index
					b.StartTimer()
					for _, c := range owned {
						if op == "missing" {
							c = missing
						}
						if s.Unregister(c) != (op != "missing") {
							b.Fatalf("Unregister of %v found the wrong thing", c)
						}
					}
					b.StopTimer()
					if err := s.Close(); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				benchReportPerCollector(b, n)
			})
		}
	}
}

// BenchmarkCollisionScaling times a colliding MustRegister on a program
// scope whose tree holds n registrations, one gauge in each of n named
// children, at n=1,000 and n=10,000, against raw client_golang's colliding
// MustRegister on a registry of n gauges: naming the holder must not cost
// what the tree holds.
func BenchmarkCollisionScaling(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		gauges := benchGauges("held", n)
		for _, impl := range []string{"raw", "scope"} {
			b.Run(fmt.Sprintf("n=%d/impl=%s", n, impl), func(b *testing.B) {
				reg := prometheus.NewRegistry()
				var r prometheus.Registerer = reg
				if impl == "scope" {
					program := registry.NewScope(reg, registry.WithName("program"))
					for i, g := range gauges {
						program.Child(registry.WithName(fmt.Sprint(i))).MustRegister(g)
					}
					r = program
				} else {
					reg.MustRegister(gauges...)
				}
				again := benchGauges("held", 1)[0] // the identity of the first gauge
				for b.Loop() {
					if promtest.Panic(func() { r.MustRegister(again) }) == nil {
						b.Fatal("MustRegister did not collide")
					}
				}
			})
		}
	}
}

// BenchmarkDeleteOnCloseScaling times, per call, DeleteOnClose of one
// label on each of n vectors in turn, all pending on one scope, at n=100
// and n=10,000: finding a call made again must not cost what is pending.
func BenchmarkDeleteOnCloseScaling(b *testing.B) {
	for _, n := range []int{100, 10_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			vecs := make([]*prometheus.CounterVec, n)
			for i := range vecs {
				vecs[i] = promtest.CounterVec(fmt.Sprintf("per_tenant%d", i), "tenant")
			}
			west := prometheus.Labels{"tenant": "west"}
			for b.Loop() {
				b.StopTimer()
				s := registry.NewScope(nil)
				b.StartTimer()
				for _, v := range vecs {
					s.DeleteOnClose(west, v)
				}
				b.StopTimer()
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			benchReportPerCollector(b, n)
		})
	}
}

// benchGather times a scrape of a registry holding 1,000 gauges, registered
// through what through makes of the registry.
func benchGather(b *testing.B, through func(reg *prometheus.Registry) prometheus.Registerer, constLabels ...prometheus.Labels) {
	gauges := benchGauges("gathered", benchOthers, constLabels...)
	reg := prometheus.NewRegistry()
	r := through(reg)
	for i, g := range gauges {
		g.(prometheus.Gauge).Set(float64(i))
		if err := r.Register(g); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		mfs, err := reg.Gather()
		if err != nil || len(mfs) != len(gauges) {
			b.Fatalf("Gather returned %d families and error %v, want %d and none", len(mfs), err, len(gauges))
		}
	}
}

// BenchmarkGather times a scrape of a registry holding 1,000 gauges,
// registered directly (impl=raw) or through one scope without prefix or
// labels (impl=scope).
func BenchmarkGather(b *testing.B) {
	b.Run("impl=raw", func(b *testing.B) {
		benchGather(b, func(reg *prometheus.Registry) prometheus.Registerer { return reg })
	})
	b.Run("impl=scope", func(b *testing.B) {
		benchGather(b, func(reg *prometheus.Registry) prometheus.Registerer { return registry.NewScope(reg) })
	})
}

// BenchmarkGatherLabelled is BenchmarkGather for gauges registered with a
// constant label: through client_golang's WrapRegistererWith (impl=raw), or
// through a scope made with WithLabels (impl=scope); impl=const is the
// gauges carrying the label as ConstLabels, registered directly, which is
// what labelling costs at the least.
func BenchmarkGatherLabelled(b *testing.B) {
	labels := prometheus.Labels{"cluster": "east"}
	b.Run("impl=raw", func(b *testing.B) {
		benchGather(b, func(reg *prometheus.Registry) prometheus.Registerer {
			return prometheus.WrapRegistererWith(labels, reg)
		})
	})
	b.Run("impl=scope", func(b *testing.B) {
		benchGather(b, func(reg *prometheus.Registry) prometheus.Registerer {
			return registry.NewScope(reg, registry.WithLabels(labels))
		})
	})
	b.Run("impl=const", func(b *testing.B) {
		benchGather(b, func(reg *prometheus.Registry) prometheus.Registerer { return reg }, labels)
	})
}

// BenchmarkGatherManyDescs is BenchmarkGatherLabelled for one collector
// that describes n metrics, at n=100 and n=10,000, and reports the time per
// metric: it must not grow with n, and the scope must stay below raw.
func BenchmarkGatherManyDescs(b *testing.B) {
	labels := prometheus.Labels{"cluster": "east"}
	for _, n := range []int{100, 10_000} {
		for _, impl := range []string{"raw", "scope"} {
			b.Run(fmt.Sprintf("n=%d/impl=%s", n, impl), func(b *testing.B) {
				reg := prometheus.NewRegistry()
				var r prometheus.Registerer = registry.NewScope(reg, registry.WithLabels(labels))
				if impl == "raw" {
					r = prometheus.WrapRegistererWith(labels, reg)
				}
				if err := r.Register(promtest.NewMany(n)); err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					mfs, err := reg.Gather()
					if err != nil || len(mfs) != n {
						b.Fatalf("gathered %d families (%v), want %d", len(mfs), err, n)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/metric")
			})
		}
	}
}

// BenchmarkDeleteNone times the Close of a scope whose DeleteOnClose finds
// nothing to delete in a vector it shares with n series of other tenants (a
// tenant that never wrote a series, or whose component deleted them
// itself), against raw DeletePartialMatch of the same labels: a mass
// shutdown closes one such scope per tenant.
func BenchmarkDeleteNone(b *testing.B) {
	for _, n := range []int{100, 10_000} {
		vec := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "queue_depth", Help: "Queued items."}, []string{"tenant"})
		for i := range n {
			vec.WithLabelValues(fmt.Sprintf("tenant%d", i)).Set(1)
		}
		gone := prometheus.Labels{"tenant": "gone"}
		reg := prometheus.NewRegistry()
		reg.MustRegister(vec)
		b.Run(fmt.Sprintf("n=%d/impl=raw", n), func(b *testing.B) {
			for b.Loop() {
				if vec.DeletePartialMatch(gone) != 0 {
					b.Fatal("deleted a series")
				}
			}
		})
		b.Run(fmt.Sprintf("n=%d/impl=scope", n), func(b *testing.B) {
			for b.Loop() {
				s := registry.NewScope(reg)
				s.DeleteOnClose(gone, vec)
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkInc times Counter.Inc on a counter registered directly
// (impl=raw) or through a labelled scope (impl=scope). The scope hands back
// the user's own counter, so the two must not differ.
func BenchmarkInc(b *testing.B) {
	opts := prometheus.CounterOpts{Name: "incremented_total", Help: "A counter of the benchmarks."}
	b.Run("impl=raw", func(b *testing.B) {
		c := promauto.With(prometheus.NewRegistry()).NewCounter(opts)
		for b.Loop() {
			c.Inc()
		}
	})
	b.Run("impl=scope", func(b *testing.B) {
		s := registry.NewScope(prometheus.NewRegistry(), registry.WithLabels(prometheus.Labels{"cluster": "east"}))
		c := promauto.With(s).NewCounter(opts)
		for b.Loop() {
			c.Inc()
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	})
}

// TestUpdatesThroughAScopeDoNotAllocate checks the hot path that BenchmarkInc
// times: updating a metric registered through a scope allocates nothing,
// whatever the scope's options, and the parent exposes the result.
func TestUpdatesThroughAScopeDoNotAllocate(t *testing.T) {
	const runs = 100
	scopes := []struct {
		name string
		opts []registry.Option
	}{
		{name: "plain"},
		{name: "labelled", opts: []registry.Option{
			registry.WithPrefix("app_"), registry.WithLabels(prometheus.Labels{"cluster": "east"}),
		}},
	}
	tests := []struct {
		name string
		give func(f promauto.Factory) func() // registers a metric named "updated", returns the update
		want float64                         // what the parent exposes after runs+1 updates
	}{
		{
			name: "Inc on a counter",
			give: func(f promauto.Factory) func() {
				return f.NewCounter(prometheus.CounterOpts{Name: "updated", Help: "h"}).Inc
			},
			want: runs + 1,
		},
		{
			name: "Inc on a vector's child",
			give: func(f promauto.Factory) func() {
				return f.NewCounterVec(prometheus.CounterOpts{Name: "updated", Help: "h"}, []string{"link"}).WithLabelValues("a").Inc
			},
			want: runs + 1,
		},
		{
			name: "Set on a gauge",
			give: func(f promauto.Factory) func() {
				g := f.NewGauge(prometheus.GaugeOpts{Name: "updated", Help: "h"})
				return func() { g.Set(42) }
			},
			want: 42,
		},
		{
			name: "Observe on a histogram",
			give: func(f promauto.Factory) func() {
				h := f.NewHistogram(prometheus.HistogramOpts{Name: "updated", Help: "h"})
				return func() { h.Observe(0.5) }
			},
			want: runs + 1, // the sample count
		},
	}
	for _, sc := range scopes {
		for _, tt := range tests {
			// An update of a metric registered through a scope does
			// not allocate.
			t.Run(sc.name+": "+tt.name, func(t *testing.T) {
				reg := prometheus.NewPedanticRegistry()
				s := registry.NewScope(reg, sc.opts...)
				defer func() {
					if err := s.Close(); err != nil {
						t.Error(err)
					}
				}()
				update := tt.give(promauto.With(s))
				if allocs := testing.AllocsPerRun(runs, update); allocs != 0 {
					t.Errorf("the update allocates %v times per call, want 0", allocs)
				}
				got, err := promtest.Series(reg)
				if err != nil || len(got) != 1 || !strings.HasSuffix(got[0], fmt.Sprintf("} %v", tt.want)) {
					t.Errorf("the parent exposes %q (%v), want one series of value %v", got, err, tt.want)
				}
			})
		}
	}
}
