package lifecycle_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/lifecycle"
	"github.com/promscope/promscope/registry"
	"github.com/promscope/promscope/registry/registrytest"
)

var errStBuild = errors.New("the component failed to come up")

// failing says whether the generation c stands for is one whose build fails.
func failing(c *promtest.Component) bool { return strings.HasSuffix(c.Name, " (failing)") }

func TestSlotStress(t *testing.T) {
	// Concurrent Replace, Clear, Current, Gather and Close keep one
	// generation at most, close each exactly once, and leave nothing.
	t.Run("concurrent", func(t *testing.T) {
		const (
			replacers    = 8
			replaces     = 80
			closeAfter   = replacers * replaces / 2
			readers      = 4
			reads        = 300
			clears       = 100
			gathers      = 100
			failingEvery = 3
		)
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(promtest.Gauge("other", 42))
		slot := lifecycle.NewSlot[*promtest.Component](reg)

		var (
			gens    atomic.Int64
			calls   atomic.Int64
			closing atomic.Bool  // set before the Close
			done    atomic.Bool  // set after it
			active  atomic.Int32 // builds running
			mu      sync.Mutex
			all     []*promtest.Component // guarded by mu
		)
		build := func(scope *registry.Scope) (*promtest.Component, error) {
			if active.Add(1) != 1 {
				t.Error("two builds ran at once")
			}
			defer active.Add(-1)
			gen := gens.Add(1)
			c := &promtest.Component{Name: fmt.Sprint("generation ", gen)}
			if gen%failingEvery == 0 {
				c.Name += " (failing)"
			}
			mu.Lock()
			all = append(all, c)
			mu.Unlock()
			if err := register(scope, int(gen)); err != nil {
				return c, err
			}
			if failing(c) {
				return c, errStBuild // the slot must not keep it, nor close it
			}
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
							t.Errorf("Replace returned the value of a failed build, %s", v.Name)
						}
					case err != nil:
						t.Errorf("Replace = %v", err)
					case v == nil || failing(v):
						t.Errorf("Replace = %v, nil", v)
					}
				}
			})
		}
		wg.Go(func() {
			for range clears {
				closed := done.Load()
				switch err := slot.Clear(); {
				case errors.Is(err, lifecycle.ErrClosed):
					if !closing.Load() {
						t.Error("Clear = ErrClosed before Close")
					}
				case closed:
					t.Errorf("Clear after Close = %v, want ErrClosed", err)
				case err != nil:
					t.Errorf("Clear = %v", err)
				}
			}
		})
		for range readers {
			wg.Go(func() {
				for range reads {
					if v, ok := slot.Current(); ok && (v == nil || failing(v)) {
						t.Errorf("Current() = %v, a value whose build failed", v)
					}
				}
			})
		}
		wg.Go(func() {
			for range gathers {
				lines, err := promtest.Series(reg)
				if err != nil {
					t.Errorf("Gather = %v", err)
				}
				gens := 0
				for _, l := range lines {
					if strings.HasPrefix(l, "gen{") {
						gens++
					}
				}
				if gens > 1 {
					t.Errorf("%d generations exposed at once: %q", gens, lines)
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
			want := 1
			if failing(c) {
				want = 0
			}
			if c.Closes() != want {
				t.Errorf("%s was closed %d times, want %d", c.Name, c.Closes(), want)
			}
		}
		registrytest.VerifyNone(t, reg, "other")
	})
}
