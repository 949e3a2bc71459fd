package registrytest_test

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/lifecycle"
	"github.com/promscope/promscope/registry"
	"github.com/promscope/promscope/registry/registrytest"
)

var errUnreachable = errors.New("cluster unreachable")

// component is what the constructors of the tests build: a scope, closed
// with the component, whose Close returns err too, or panics with panics.
type component struct {
	promtest.Component
	scope  *registry.Scope
	panics string
}

func (c *component) Close() error {
	if c.panics != "" {
		panic(c.panics)
	}
	return errors.Join(c.Component.Close(), c.scope.Close())
}

// careful is a constructor that closes its scope when it fails.
func careful(reg prometheus.Registerer, fail bool) (_ *component, err error) {
	scope := registry.NewScope(reg)
	defer lifecycle.CloseOnError(&err, scope)
	scope.MustRegister(promtest.Gauge("watcher_up", 1))
	promauto.With(scope).NewGaugeVec(prometheus.GaugeOpts{Name: "watcher_objects", Help: "h"}, []string{"kind"})
	if fail {
		return nil, errUnreachable
	}
	return &component{scope: scope}, nil
}

func TestVerifyRecycle(t *testing.T) {
	// VerifyRecycle passes for a constructor that cleans up, whether it
	// fails or not, and closes each value it built.
	t.Run("clean constructor", func(t *testing.T) {
		var built []*component
		var regs []prometheus.Registerer
		var r promtest.Recorder
		registrytest.VerifyRecycle(&r, 10, func(reg prometheus.Registerer) (*component, error) {
			regs = append(regs, reg)
			c, err := careful(reg, len(regs)%2 == 1)
			if c != nil {
				built = append(built, c)
			}
			return c, err
		})
		r.Check(t)
		if len(regs) != 10 || len(built) != 5 {
			t.Fatalf("build ran %d times and built %d values, want 10 and 5", len(regs), len(built))
		}
		for _, c := range built {
			if c.Closes() != 1 {
				t.Errorf("a value was closed %d times, want 1", c.Closes())
			}
		}
		if s, ok := regs[0].(*registry.Scope); !ok || s.Len() != 0 || regs[9] != regs[0] {
			t.Errorf("build got a %T, want the same empty *registry.Scope every round", regs[0])
		}
	})

	// A scope that build drops while it holds nothing, not closed, is no
	// leak: the garbage collector closes it. Whether it ran during build
	// or not does not change the verdict.
	t.Run("scope dropped empty", func(t *testing.T) {
		for _, gc := range []bool{false, true} {
			var r promtest.Recorder
			registrytest.VerifyRecycle(&r, 3, func(reg prometheus.Registerer) (*component, error) {
				dropEmpty(reg, gc)
				return nil, errUnreachable
			})
			r.Check(t)
		}
	})

	// It does not close a value returned together with an error, and runs
	// all rounds of a clean failure.
	t.Run("value with an error", func(t *testing.T) {
		c := &component{scope: registry.NewScope(nil)}
		calls := 0
		var r promtest.Recorder
		registrytest.VerifyRecycle(&r, 3, func(prometheus.Registerer) (*component, error) {
			calls++
			return c, errUnreachable
		})
		r.Check(t)
		if calls != 3 || c.Closes() != 0 {
			t.Errorf("build ran %d times, the value was closed %d times; want 3 and 0", calls, c.Closes())
		}
	})

	failures := []struct {
		name string
		// misbehave is what build does at round 2 of 3.
		misbehave func(reg prometheus.Registerer) (*component, error)
		want      []string
	}{
		{
			name: "forgets its scope",
			misbehave: func(reg prometheus.Registerer) (*component, error) {
				scope := registry.NewScope(reg, registry.WithName("watcher"))
				scope.MustRegister(promtest.Gauge("watcher_up", 1))
				//lint:ignore metricleak the leak that VerifyRecycle must catch
				return nil, errUnreachable
			},
			want: []string{`round 2 of 3: after build failed with "cluster unreachable": 1 metric family still exposed: watcher_up (1 series); owned by:`,
				"\nwatcher (made at github.com/promscope/promscope/registry/registrytest/recycle_test.go:"},
		},
		{
			name: "Close leaves a metric",
			misbehave: func(reg prometheus.Registerer) (*component, error) {
				reg.MustRegister(promtest.Gauge("watcher_up", 1))
				return &component{scope: registry.NewScope(nil)}, nil
			},
			want: []string{"round 2 of 3: after a successful build and close: 1 metric family still exposed: watcher_up (1 series); " +
				"registered straight on the Registerer build was given: watcher_up"},
		},
		{
			name: "unchecked collector left",
			misbehave: func(reg prometheus.Registerer) (*component, error) {
				reg.MustRegister(&promtest.Unchecked{}) // collects nothing
				return &component{scope: registry.NewScope(nil)}, nil
			},
			want: []string{"round 2 of 3: after a successful build and close: 1 unchecked collector still registered, exposing nothing; registered straight on the Registerer build was given: 1 unchecked"},
		},
		{
			name: "scope left open, with a deletion pending",
			misbehave: func(reg prometheus.Registerer) (*component, error) {
				scope := registry.NewScope(reg, registry.WithName("link"))
				errs := promtest.CounterVec("link_errors_total", "link")
				errs.WithLabelValues("west").Inc()
				scope.DeleteOnClose(prometheus.Labels{"link": "west"}, errs)
				//lint:ignore metricleak the leak that VerifyRecycle must catch
				return nil, errUnreachable
			},
			want: []string{`round 2 of 3: after build failed with "cluster unreachable": 1 scope still open; still to delete on close: link_errors_total{link="west"}; owned by:`},
		},
		{
			name: "empty vector left",
			misbehave: func(reg prometheus.Registerer) (*component, error) {
				promauto.With(reg).NewGaugeVec(prometheus.GaugeOpts{Name: "watcher_objects", Help: "h"}, []string{"kind"})
				//lint:ignore metricleak the leak that VerifyRecycle must catch
				return nil, errUnreachable
			},
			want: []string{"still registered with no series: watcher_objects"},
		},
		{
			name: "AlreadyRegisteredError",
			misbehave: func(reg prometheus.Registerer) (_ *component, err error) {
				scope := registry.NewScope(reg)
				defer lifecycle.CloseOnError(&err, scope)
				scope.MustRegister(promtest.Gauge("watcher_up", 1))
				return nil, scope.Register(promtest.Gauge("watcher_up", 2))
			},
			want: []string{"round 2 of 3: build hit a registration left from an earlier round"},
		},
		{
			name: "a component whose Close fails",
			misbehave: func(reg prometheus.Registerer) (*component, error) {
				return &component{Component: promtest.Component{Err: io.ErrClosedPipe}, scope: registry.NewScope(reg)}, nil
			},
			want: []string{"round 2 of 3: close: io: read/write on closed pipe"},
		},
		{
			name:      "a constructor that panics",
			misbehave: func(prometheus.Registerer) (*component, error) { panic("nil map write") },
			want:      []string{"round 2 of 3: build panicked: nil map write"},
		},
		{
			name: "a component whose Close panics",
			misbehave: func(prometheus.Registerer) (*component, error) {
				return &component{panics: "use of closed network connection"}, nil
			},
			want: []string{"round 2 of 3: close panicked: use of closed network connection"},
		},
		{
			name: "a nil value with no error",
			misbehave: func(reg prometheus.Registerer) (*component, error) {
				reg.MustRegister(promtest.Gauge("watcher_up", 1))
				return nil, nil
			},
			want: []string{"round 2 of 3: after build returned a nil value and no error, which is not closed: 1 metric family still exposed: watcher_up (1 series)"},
		},
	}
	for _, tt := range failures {
		// It stops at the first bad round and names it.
		t.Run("fails: "+tt.name, func(t *testing.T) {
			round := 0
			var r promtest.Recorder
			registrytest.VerifyRecycle(&r, 3, func(reg prometheus.Registerer) (*component, error) {
				round++
				if round == 1 {
					return careful(reg, false)
				}
				return tt.misbehave(reg)
			})
			r.Check(t, append(tt.want, "registrytest: ")...)
			if round != 2 {
				t.Errorf("build ran %d times, want 2: VerifyRecycle stops at the first failure", round)
			}
		})
	}

	for _, n := range []int{0, -2} {
		// It panics with the package prefix for fewer than one round,
		// which would prove nothing, and runs nothing.
		t.Run(strconv.Itoa(n)+" rounds", func(t *testing.T) {
			v := promtest.Panic(func() {
				registrytest.VerifyRecycle(&promtest.Recorder{}, n, func(prometheus.Registerer) (io.Closer, error) {
					t.Error("build ran")
					return nil, nil
				})
			})
			if msg, ok := v.(string); !ok || !strings.HasPrefix(msg, "registrytest: VerifyRecycle needs at least one round") {
				t.Errorf("panicked with %#v", v)
			}
		})
	}

	// A value whose Close closes the Registerer build was given would make
	// every later round register nothing, which proves nothing: the round
	// that closed it is reported, whether the next build would return
	// Register's ErrClosed or ignore it.
	for _, ignores := range []bool{false, true} {
		t.Run(fmt.Sprintf("Close closes the Registerer, ignored %t", ignores), func(t *testing.T) {
			var r promtest.Recorder
			registrytest.VerifyRecycle(&r, 3, func(reg prometheus.Registerer) (*component, error) {
				if err := reg.Register(promtest.Gauge("watcher_up", 1)); err != nil && !ignores {
					return nil, err
				}
				return &component{scope: reg.(*registry.Scope)}, nil
			})
			r.Check(t, "registrytest: round 1 of 3: the Registerer build was given is closed after the round; neither build nor a value's Close may close it")
		})
	}

	// In the first round, an AlreadyRegisteredError can only be build's
	// own collision, and is named so.
	t.Run("collision in the first round", func(t *testing.T) {
		var r promtest.Recorder
		registrytest.VerifyRecycle(&r, 3, func(reg prometheus.Registerer) (_ *component, err error) {
			scope := registry.NewScope(reg)
			defer lifecycle.CloseOnError(&err, scope)
			scope.MustRegister(promtest.Gauge("watcher_up", 1))
			return &component{scope: scope}, scope.Register(promtest.Gauge("watcher_up", 2))
		})
		r.Check(t, "registrytest: round 1 of 3: build registered a metric twice: ")
	})

	// It panics with the package prefix without a build function.
	t.Run("nil build", func(t *testing.T) {
		v := promtest.Panic(func() { registrytest.VerifyRecycle[io.Closer](&promtest.Recorder{}, 1, nil) })
		if msg, ok := v.(string); !ok || !strings.HasPrefix(msg, "registrytest: ") {
			t.Errorf("panicked with %#v", v)
		}
	})
}

// dropEmpty makes a scope on reg and drops it, holding nothing; if gc, the
// garbage collector runs before it returns.
//
//go:noinline
func dropEmpty(reg prometheus.Registerer, gc bool) {
	registry.NewScope(reg, registry.WithName("forgotten"))
	if gc {
		for range 3 {
			runtime.GC()
			time.Sleep(5 * time.Millisecond)
		}
	}
}
