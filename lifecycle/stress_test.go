package lifecycle_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/lifecycle"
	"github.com/promscope/promscope/registry"
	"github.com/promscope/promscope/registry/registrytest"
)

// stComp is one generation of a component in the stress test.
type stComp struct {
	gen    int64
	ok     bool // its build succeeded
	closes atomic.Int32
}

func (c *stComp) Close() error {
	c.closes.Add(1)
	return nil
}

var errStBuild = errors.New("the component failed to come up")

func TestSlotStress(t *testing.T) {
	t.Run("concurrent Replace, Current, Gather and Close keep one generation at most and leave nothing", func(t *testing.T) {
		const (
			replacers    = 8
			replaces     = 80
			closeAfter   = replacers * replaces / 2
			readers      = 4
			reads        = 300
			gathers      = 100
			failingEvery = 3
		)
		reg := prometheus.NewPedanticRegistry()
		other := prometheus.NewGauge(prometheus.GaugeOpts{Name: "other", Help: "Another owner's gauge."})
		reg.MustRegister(other)
		slot := lifecycle.NewSlot[*stComp](reg)

		var (
			gens    atomic.Int64
			calls   atomic.Int64
			closing atomic.Bool // set before the Close
			done    atomic.Bool // set after it
			mu      sync.Mutex
			all     []*stComp // guarded by mu
		)
		build := func(scope *registry.Scope) (*stComp, error) {
			c := &stComp{gen: gens.Add(1)}
			mu.Lock()
			all = append(all, c)
			mu.Unlock()
			g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "gen", Help: "Generation."})
			g.Set(float64(c.gen))
			if err := scope.Register(g); err != nil {
				return c, err
			}
			if err := scope.Register(prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobs", Help: "Jobs."})); err != nil {
				return c, err
			}
			if c.gen%failingEvery == 0 {
				return c, errStBuild // the slot must not keep it, nor close it
			}
			c.ok = true
			return c, nil
		}

		var wg sync.WaitGroup
		for range replacers {
			wg.Go(func() {
				for range replaces {
					if calls.Add(1) == closeAfter {
						closing.Store(true)
						if err := slot.Close(); err != nil {
							t.Errorf("Close = %v", err)
						}
						done.Store(true)
						continue
					}
					closed := done.Load()
					v, err := slot.Replace(build)
					switch {
					case errors.Is(err, lifecycle.ErrClosed):
						if !closing.Load() {
							t.Error("Replace = ErrClosed before Close")
						}
					case closed:
						t.Errorf("Replace after Close = %v, %v, want ErrClosed", v, err)
					case errors.Is(err, errStBuild):
						if v != nil {
							t.Errorf("Replace returned the value %d of a failed build", v.gen)
						}
					case err != nil:
						t.Errorf("Replace = %v", err)
					case v == nil || !v.ok:
						t.Errorf("Replace = %v, nil", v)
					}
				}
			})
		}
		for range readers {
			wg.Go(func() {
				for range reads {
					if v, ok := slot.Current(); ok && (v == nil || !v.ok) {
						t.Errorf("Current() = %v, a value whose build failed", v)
					}
				}
			})
		}
		wg.Go(func() {
			for range gathers {
				mfs, err := reg.Gather()
				if err != nil {
					t.Errorf("Gather = %v", err)
				}
				for _, mf := range mfs {
					if mf.GetName() == "gen" && len(mf.GetMetric()) > 1 {
						t.Errorf("%d generations exposed at once", len(mf.GetMetric()))
					}
				}
			}
		})
		wg.Wait()

		if v, ok := slot.Current(); ok {
			t.Errorf("Current() after Close = %v", v)
		}
		if err := slot.Close(); err != nil {
			t.Errorf("second Close = %v", err)
		}
		for _, c := range all {
			want := int32(0)
			if c.ok {
				want = 1
			}
			if got := c.closes.Load(); got != want {
				t.Errorf("generation %d (built: %v) was closed %d times, want %d", c.gen, c.ok, got, want)
			}
		}
		registrytest.VerifyNone(t, reg, "other")
	})
}
