package lifecycle_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/promscope/promscope/internal/describe"
	"github.com/promscope/promscope/lifecycle"
	"github.com/promscope/promscope/registry"
	"github.com/promscope/promscope/registry/registrytest"
)

var errFltInjected = errors.New("injected register failure")

type fltKind int

const (
	fltPass       fltKind = iota
	fltFail               // Register returns errFltInjected and registers nothing
	fltRefuse             // Unregister returns false and keeps the collector
	fltLieRemoved         // Unregister removes the collector and returns false
	fltBlock              // the call waits until released, then passes
)

// fltParent passes every call on to a pedantic registry unless its script
// injects a fault. The script sees the operation, the metric names of the
// collector, and how many calls of that operation for those names came
// before.
type fltParent struct {
	reg    *prometheus.Registry
	script func(op, names string, n int) fltKind

	entered chan struct{} // told when a call blocks
	release chan struct{} // closed to let blocked calls go on

	mu    sync.Mutex
	calls map[string]int // guarded by mu
}

func newFltParent(script func(op, names string, n int) fltKind) *fltParent {
	return &fltParent{
		reg:     prometheus.NewPedanticRegistry(),
		script:  script,
		entered: make(chan struct{}, 1),
		release: make(chan struct{}),
		calls:   map[string]int{},
	}
}

func (p *fltParent) fault(op string, c prometheus.Collector) fltKind {
	names := strings.Join(describe.Names(describe.Descs(c)), ",")
	p.mu.Lock()
	n := p.calls[op+" "+names]
	p.calls[op+" "+names]++
	p.mu.Unlock()
	k := p.script(op, names, n)
	if k == fltBlock {
		p.entered <- struct{}{}
		<-p.release
	}
	return k
}

func (p *fltParent) Register(c prometheus.Collector) error {
	if p.fault("register", c) == fltFail {
		return errFltInjected
	}
	return p.reg.Register(c)
}

func (p *fltParent) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := p.Register(c); err != nil {
			panic(err)
		}
	}
}

func (p *fltParent) Unregister(c prometheus.Collector) bool {
	switch p.fault("unregister", c) {
	case fltRefuse:
		return false
	case fltLieRemoved:
		p.reg.Unregister(c)
		return false
	}
	return p.reg.Unregister(c)
}

// fltComp is a component that registers a gauge gen, set to its generation,
// and a gauge jobs.
type fltComp struct {
	gen    int
	closes atomic.Int32
}

func (c *fltComp) Close() error {
	c.closes.Add(1)
	return nil
}

func fltBuild(gen int, built *[]*fltComp) func(*registry.Scope) (*fltComp, error) {
	return func(scope *registry.Scope) (*fltComp, error) {
		c := &fltComp{gen: gen}
		*built = append(*built, c)
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "gen", Help: "Generation."})
		g.Set(float64(gen))
		if err := scope.Register(g); err != nil {
			return nil, err
		}
		if err := scope.Register(prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobs", Help: "Jobs."})); err != nil {
			return nil, err
		}
		return c, nil
	}
}

func fltGen(gen int) string {
	return fmt.Sprintf("# HELP gen Generation.\n# TYPE gen gauge\ngen %d\n# HELP jobs Jobs.\n# TYPE jobs gauge\njobs 0\n", gen)
}

const fltOther = "# HELP other Another owner's gauge.\n# TYPE other gauge\nother 42\n"

func TestSlotFaultyParent(t *testing.T) {
	// on injects kind into the calls of op for names, numbered n (every
	// call when n < 0).
	on := func(op, names string, n int, kind fltKind) func(string, string, int) fltKind {
		return func(o, m string, i int) fltKind {
			if o == op && m == names && (n < 0 || i == n) {
				return kind
			}
			return fltPass
		}
	}
	tests := []struct {
		name   string
		script func(op, names string, n int) fltKind
		// wantErrs are what errors.Is must find in the second Replace's
		// error; wantUnregister says an UnregisterError for gen is in it.
		wantErrs       []error
		wantUnregister bool
		// wantKept says the second generation is built and kept.
		wantKept bool
	}{
		{
			name:     "the new instance's Register of jobs fails",
			script:   on("register", "jobs", 2, fltFail), // 0: first build, 1: its probe
			wantErrs: []error{errFltInjected},
		},
		{
			name:           "the parent removes the old gen but says it did not",
			script:         on("unregister", "gen", 0, fltLieRemoved),
			wantErrs:       []error{registry.ErrNotRegistered},
			wantUnregister: true,
			wantKept:       true,
		},
		{
			// The parent keeps the old gen's wrapper, silent, so the
			// new instance cannot register gen either.
			name:           "the parent refuses to unregister the old gen",
			script:         on("unregister", "gen", 0, fltRefuse),
			wantErrs:       []error{registry.ErrNotRegistered},
			wantUnregister: true,
		},
		{
			name:           "the parent fails the probe for the old gen",
			script:         on("register", "gen", 1, fltFail),
			wantErrs:       []error{registry.ErrNotRegistered, errFltInjected},
			wantUnregister: true,
		},
		{
			name:     "nothing fails",
			script:   on("", "", -1, fltPass),
			wantKept: true,
		},
	}
	for _, tt := range tests {
		t.Run("Replace reports it when "+tt.name+", and leaves nothing exposed but the instance it keeps", func(t *testing.T) {
			p := newFltParent(tt.script)
			other := prometheus.NewGauge(prometheus.GaugeOpts{Name: "other", Help: "Another owner's gauge."})
			other.Set(42)
			p.reg.MustRegister(other)
			slot := lifecycle.NewSlot[*fltComp](p)
			var built []*fltComp
			first, err := slot.Replace(fltBuild(1, &built))
			if err != nil {
				t.Fatalf("first Replace = %v", err)
			}

			v, err := slot.Replace(fltBuild(2, &built))
			for _, want := range tt.wantErrs {
				if !errors.Is(err, want) {
					t.Errorf("Replace = %v, want it to wrap %q", err, want)
				}
			}
			if len(tt.wantErrs) == 0 && err != nil {
				t.Errorf("Replace = %v, want nil", err)
			}
			var ue *registry.UnregisterError
			if got := errors.As(err, &ue); got != tt.wantUnregister || got && strings.Join(ue.Metrics, ",") != "gen" {
				t.Errorf("Replace = %v, want an UnregisterError for gen: %v", err, tt.wantUnregister)
			}
			if got := first.closes.Load(); got != 1 {
				t.Errorf("the first instance was closed %d times, want 1", got)
			}

			cur, ok := slot.Current()
			want := fltOther
			if tt.wantKept {
				if v == nil || cur != v || !ok || v.gen != 2 {
					t.Errorf("Current() = %v, %v; Replace returned %v, want the second generation kept", cur, ok, v)
				}
				want += fltGen(2)
			} else if ok || v != nil {
				t.Errorf("Current() = %v, %v; Replace returned %v, want an empty slot", cur, ok, v)
			}
			if err := testutil.GatherAndCompare(p.reg, strings.NewReader(want)); err != nil {
				t.Error(err)
			}

			if err := slot.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
			second := built[1]
			wantCloses := int32(0) // a value returned with an error is the constructor's
			if tt.wantKept {
				wantCloses = 1
			}
			if got := second.closes.Load(); got != wantCloses {
				t.Errorf("the second instance was closed %d times, want %d", got, wantCloses)
			}
			if _, err := slot.Replace(fltBuild(3, &built)); !errors.Is(err, lifecycle.ErrClosed) {
				t.Errorf("Replace after Close = %v, want ErrClosed", err)
			}
			if err := testutil.GatherAndCompare(p.reg, strings.NewReader(fltOther)); err != nil {
				t.Error(err)
			}
		})
	}

	t.Run("Close reports a parent that refuses, and exposes nothing, though the parent still holds the identity", func(t *testing.T) {
		p := newFltParent(on("unregister", "jobs", -1, fltRefuse))
		slot := lifecycle.NewSlot[*fltComp](p)
		var built []*fltComp
		if _, err := slot.Replace(fltBuild(1, &built)); err != nil {
			t.Fatal(err)
		}
		err := slot.Close()
		var ue *registry.UnregisterError
		if !errors.As(err, &ue) || !errors.Is(err, registry.ErrNotRegistered) || strings.Join(ue.Metrics, ",") != "jobs" {
			t.Errorf("Close = %v, want an UnregisterError for jobs", err)
		}
		if _, ok := slot.Current(); ok {
			t.Error("Current() reports an instance after Close")
		}
		if err := testutil.GatherAndCompare(p.reg, strings.NewReader("")); err != nil {
			t.Error(err)
		}
		if err := p.reg.Register(prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobs", Help: "Jobs."})); err == nil {
			t.Error("the parent accepted an equal jobs gauge, so it did let go of the identity")
		}
	})

	t.Run("Current does not wait for a Replace blocked in the parent, and reports the slot empty meanwhile", func(t *testing.T) {
		p := newFltParent(on("unregister", "gen", 0, fltBlock))
		slot := lifecycle.NewSlot[*fltComp](p)
		var built []*fltComp
		if _, err := slot.Replace(fltBuild(1, &built)); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			var later []*fltComp
			_, err := slot.Replace(fltBuild(2, &later))
			done <- err
		}()
		<-p.entered
		if cur, ok := slot.Current(); ok || cur != nil {
			t.Errorf("Current() during the Replace = %v, %v, want empty: the old instance is being closed", cur, ok)
		}
		close(p.release)
		if err := <-done; err != nil {
			t.Errorf("Replace = %v", err)
		}
		if cur, ok := slot.Current(); !ok || cur.gen != 2 {
			t.Errorf("Current() = %v, %v, want the second generation", cur, ok)
		}
		if err := testutil.GatherAndCompare(p.reg, strings.NewReader(fltGen(2))); err != nil {
			t.Error(err)
		}
		if err := slot.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
		registrytest.VerifyNone(t, p.reg)
	})
}
