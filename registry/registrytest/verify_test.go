package registrytest_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	dto "github.com/prometheus/client_model/go"

	"github.com/promscope/promscope/lifecycle"
	"github.com/promscope/promscope/registry"
	"github.com/promscope/promscope/registry/registrytest"
)

// verifyT is a registrytest.TestingT that records what it is told, so that
// tests can check how the helpers fail.
type verifyT struct {
	helpers int
	errors  []string
}

func (v *verifyT) Helper() { v.helpers++ }

func (v *verifyT) Errorf(format string, args ...any) {
	v.errors = append(v.errors, fmt.Sprintf(format, args...))
}

// check fails t unless v recorded exactly one error containing every one of
// want, or none at all when want is empty.
func (v *verifyT) check(t *testing.T, want ...string) {
	t.Helper()
	if len(want) == 0 {
		if len(v.errors) != 0 {
			t.Errorf("got errors %q, want none", v.errors)
		}
		return
	}
	if len(v.errors) != 1 {
		t.Fatalf("got %d errors %q, want 1", len(v.errors), v.errors)
	}
	for _, w := range want {
		if !strings.Contains(v.errors[0], w) {
			t.Errorf("error %q does not contain %q", v.errors[0], w)
		}
	}
	if !strings.HasPrefix(v.errors[0], "registrytest: ") {
		t.Errorf("error %q lacks the package prefix", v.errors[0])
	}
}

func verifyGauge(reg prometheus.Registerer, name string) prometheus.Gauge {
	return promauto.With(reg).NewGauge(prometheus.GaugeOpts{Name: name, Help: "Test gauge " + name + "."})
}

func verifyPanic(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

func TestVerifyNone(t *testing.T) {
	t.Run("passes when nothing is registered", func(t *testing.T) {
		var v verifyT
		registrytest.VerifyNone(&v, prometheus.NewPedanticRegistry())
		v.check(t)
		if v.helpers == 0 {
			t.Error("VerifyNone did not mark itself a helper")
		}
	})

	t.Run("passes after the scope that registered everything closed", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		scope := registry.NewScope(reg)
		verifyGauge(scope, "jobs").Set(1)
		promauto.With(scope).NewCounterVec(prometheus.CounterOpts{Name: "empty_total", Help: "Empty."}, []string{"x"})
		scope.Close()
		var v verifyT
		registrytest.VerifyNone(&v, reg)
		v.check(t)
	})

	t.Run("names each family still exposed, with its series count", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		verifyGauge(reg, "jobs").Set(1)
		requests := promauto.With(reg).NewCounterVec(prometheus.CounterOpts{Name: "requests_total", Help: "Requests."}, []string{"path"})
		requests.WithLabelValues("/a").Inc()
		requests.WithLabelValues("/b").Inc()
		var v verifyT
		registrytest.VerifyNone(&v, reg)
		v.check(t, "2 metric families still exposed", "jobs (1 series)", "requests_total (2 series)")
	})

	t.Run("names a registered vector without series when given a registry", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		promauto.With(reg).NewGaugeVec(prometheus.GaugeOpts{Name: "per_tenant", Help: "Per tenant."}, []string{"tenant"})
		var v verifyT
		registrytest.VerifyNone(&v, reg)
		v.check(t, "1 metrics still registered with no series: per_tenant")
	})

	t.Run("names the scope it is given, a vector it owns without series, and which nested scope owns what", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		program := registry.NewScope(reg, registry.WithName("program"))
		link := registry.NewScope(program, registry.WithName("west"))
		promauto.With(link).NewCounterVec(prometheus.CounterOpts{Name: "link_errors_total", Help: "Errors."}, []string{"code"})
		var v verifyT
		registrytest.VerifyNone(&v, program)
		v.check(t, "registrytest: scope program: 1 metrics still registered with no series: link_errors_total",
			"owned by:\nprogram: 0 collectors\n  program/west: 1 collectors: link_errors_total")
		program.Close()
	})

	t.Run("sees only families when the gatherer is not a collector", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		promauto.With(reg).NewGaugeVec(prometheus.GaugeOpts{Name: "per_tenant", Help: "Per tenant."}, []string{"tenant"})
		var v verifyT
		registrytest.VerifyNone(&v, prometheus.GathererFunc(reg.Gather))
		v.check(t)
	})

	ignores := []struct {
		name string
		give []string
		want []string // families still named
		omit []string // families that must not be named
	}{
		{name: "nothing ignored", want: []string{"go_goroutines", "go_threads", "gopher_count", "jobs", "jobs_total"}},
		{name: "an exact name", give: []string{"jobs"}, want: []string{"go_goroutines", "jobs_total"}, omit: []string{"jobs ("}},
		{
			name: "a prefix with a star",
			give: []string{"go_*"},
			want: []string{"gopher_count", "jobs", "jobs_total"},
			omit: []string{"go_goroutines", "go_threads"},
		},
		{
			name: "names and prefixes together",
			give: []string{"go_*", "jobs", "jobs_total"},
			want: []string{"gopher_count"},
			omit: []string{"go_goroutines", "jobs ("},
		},
	}
	for _, tt := range ignores {
		t.Run("leaves out "+tt.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			for _, name := range []string{"go_goroutines", "go_threads", "gopher_count", "jobs", "jobs_total"} {
				verifyGauge(reg, name)
			}
			var v verifyT
			registrytest.VerifyNone(&v, reg, tt.give...)
			v.check(t, tt.want...)
			for _, o := range tt.omit {
				if len(v.errors) == 1 && strings.Contains(v.errors[0], o) {
					t.Errorf("error %q names ignored %q", v.errors[0], o)
				}
			}
		})
	}

	t.Run("passes when everything left is ignored", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		verifyGauge(reg, "go_goroutines")
		promauto.With(reg).NewGaugeVec(prometheus.GaugeOpts{Name: "go_empty", Help: "Empty."}, []string{"x"})
		var v verifyT
		registrytest.VerifyNone(&v, reg, "go_*")
		v.check(t)
	})

	t.Run("reports a gather error", func(t *testing.T) {
		var v verifyT
		registrytest.VerifyNone(&v, prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
			return nil, errors.New("scrape exploded")
		}))
		v.check(t, "gather failed: scrape exploded")
	})

	t.Run("panics with the package prefix on a nil gatherer", func(t *testing.T) {
		var v verifyT
		p := verifyPanic(func() { registrytest.VerifyNone(&v, nil) })
		if msg, ok := p.(string); !ok || !strings.HasPrefix(msg, "registrytest:") {
			t.Errorf("VerifyNone(nil) panicked with %#v, want a message starting %q", p, "registrytest:")
		}
	})
}

// verifyComponent is what the constructors in the VerifyRecycle tests build.
type verifyComponent struct {
	scope    *registry.Scope
	closeErr error
	closed   *int
}

func (c *verifyComponent) Close() error {
	if c.closed != nil {
		*c.closed++
	}
	return errors.Join(c.closeErr, c.scope.Close())
}

var errVerifyUnreachable = errors.New("cluster unreachable")

func TestVerifyRecycle(t *testing.T) {
	t.Run("passes for a constructor that cleans up, whether it fails or not", func(t *testing.T) {
		builds, closes := 0, 0
		var regs []prometheus.Registerer
		var v verifyT
		registrytest.VerifyRecycle(&v, 10, func(reg prometheus.Registerer) (_ *verifyComponent, err error) {
			builds++
			regs = append(regs, reg)
			scope := registry.NewScope(reg, registry.WithLabels(prometheus.Labels{"cluster": "east"}))
			defer lifecycle.CloseOnError(&err, scope)
			verifyGauge(scope, "watcher_up").Set(1)
			promauto.With(scope).NewGaugeVec(prometheus.GaugeOpts{Name: "watcher_objects", Help: "Objects."}, []string{"kind"})
			if builds%2 == 1 {
				return nil, errVerifyUnreachable
			}
			return &verifyComponent{scope: scope, closed: &closes}, nil
		})
		v.check(t)
		if builds != 10 {
			t.Errorf("build ran %d times, want 10", builds)
		}
		if closes != 5 {
			t.Errorf("%d values closed, want the 5 built without error", closes)
		}
		for i, reg := range regs {
			if reg != regs[0] {
				t.Errorf("round %d got another registry than round 1", i+1)
			}
		}
		if s, ok := regs[0].(*registry.Scope); !ok || s.Len() != 0 {
			t.Errorf("build got a %T, want an empty *registry.Scope", regs[0])
		}
	})

	t.Run("does not close a value returned together with an error", func(t *testing.T) {
		closes := 0
		var v verifyT
		registrytest.VerifyRecycle(&v, 3, func(reg prometheus.Registerer) (*verifyComponent, error) {
			return &verifyComponent{scope: registry.NewScope(reg), closed: &closes}, errVerifyUnreachable
		})
		v.check(t)
		if closes != 0 {
			t.Errorf("%d values closed, want none", closes)
		}
	})

	failures := []struct {
		name   string
		rounds int
		// failAt is the round at which build misbehaves.
		failAt int
		// misbehave is what build does at round failAt.
		misbehave func(reg prometheus.Registerer) (*verifyComponent, error)
		want      []string
	}{
		{
			name:   "a constructor that forgets to close its scope when it fails",
			rounds: 10, failAt: 3,
			misbehave: func(reg prometheus.Registerer) (*verifyComponent, error) {
				scope := registry.NewScope(reg)
				verifyGauge(scope, "watcher_up").Set(1)
				return nil, errVerifyUnreachable
			},
			want: []string{"round 3 of 10", `after build failed with "cluster unreachable"`, "watcher_up (1 series)"},
		},
		{
			name:   "a component whose Close leaves a metric behind",
			rounds: 5, failAt: 2,
			misbehave: func(reg prometheus.Registerer) (*verifyComponent, error) {
				verifyGauge(reg, "watcher_up")
				return &verifyComponent{scope: registry.NewScope(reg)}, nil
			},
			want: []string{"round 2 of 5", "after a successful build and close", "watcher_up"},
		},
		{
			name:   "a constructor leaving an empty vector registered",
			rounds: 5, failAt: 1,
			misbehave: func(reg prometheus.Registerer) (*verifyComponent, error) {
				promauto.With(reg).NewGaugeVec(prometheus.GaugeOpts{Name: "watcher_objects", Help: "Objects."}, []string{"kind"})
				return nil, errVerifyUnreachable
			},
			want: []string{"round 1 of 5", "still registered with no series: watcher_objects"},
		},
		{
			name:   "a constructor that hits an AlreadyRegisteredError",
			rounds: 5, failAt: 4,
			misbehave: func(reg prometheus.Registerer) (_ *verifyComponent, err error) {
				scope := registry.NewScope(reg)
				defer lifecycle.CloseOnError(&err, scope)
				verifyGauge(scope, "watcher_up")
				return nil, scope.Register(prometheus.NewGauge(prometheus.GaugeOpts{Name: "watcher_up", Help: "Test gauge watcher_up."}))
			},
			want: []string{"round 4 of 5", "build hit a registration left from an earlier round"},
		},
		{
			name:   "a component whose Close fails",
			rounds: 5, failAt: 2,
			misbehave: func(reg prometheus.Registerer) (*verifyComponent, error) {
				return &verifyComponent{scope: registry.NewScope(reg), closeErr: errors.New("connection reset")}, nil
			},
			want: []string{"round 2 of 5", "close: connection reset"},
		},
		{
			name:   "a constructor that panics",
			rounds: 5, failAt: 3,
			misbehave: func(prometheus.Registerer) (*verifyComponent, error) {
				panic("nil map write")
			},
			want: []string{"round 3 of 5", "build panicked: nil map write"},
		},
	}
	for _, tt := range failures {
		t.Run("fails at the first bad round, and names it, for "+tt.name, func(t *testing.T) {
			builds := 0
			var v verifyT
			registrytest.VerifyRecycle(&v, tt.rounds, func(reg prometheus.Registerer) (_ *verifyComponent, err error) {
				builds++
				if builds == tt.failAt {
					return tt.misbehave(reg)
				}
				scope := registry.NewScope(reg)
				defer lifecycle.CloseOnError(&err, scope)
				verifyGauge(scope, "watcher_up")
				return &verifyComponent{scope: scope}, nil
			})
			v.check(t, tt.want...)
			if builds != tt.failAt {
				t.Errorf("build ran %d times, want %d: VerifyRecycle must stop at the first failure", builds, tt.failAt)
			}
		})
	}

	t.Run("runs nothing for zero rounds", func(t *testing.T) {
		var v verifyT
		registrytest.VerifyRecycle(&v, 0, func(prometheus.Registerer) (io.Closer, error) {
			t.Error("build ran")
			return nil, nil
		})
		v.check(t)
	})

	t.Run("panics with the package prefix without a build function", func(t *testing.T) {
		var v verifyT
		p := verifyPanic(func() { registrytest.VerifyRecycle[io.Closer](&v, 1, nil) })
		if msg, ok := p.(string); !ok || !strings.HasPrefix(msg, "registrytest:") {
			t.Errorf("VerifyRecycle(nil build) panicked with %#v, want a message starting %q", p, "registrytest:")
		}
	})
}
