package registry_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/registry"
	"github.com/promscope/promscope/registry/registrytest"
)

const (
	stWorkers    = 16
	stIterations = 300
	stNames      = 4
)

// stWorker is one goroutine of the stress test. It only ever touches its own
// scopes, so what it owns is known exactly; it shares descriptor identities
// with its partner (the other worker of its pair), so that the two compete
// for every registration.
type stWorker struct {
	t      *testing.T
	id     int
	base   *registry.Scope // root, or the mid scope for group B
	prefix string          // the base's prefix
	pair   string
	rng    *rand.Rand
	// underMid says the worker's scopes may be closed under it, by the
	// Close of the mid scope.
	underMid bool

	top *registry.Scope // the child of base this worker closes and reopens
	cur *registry.Scope // where it registers: top, a child of top, or a scope on top

	owned map[string]prometheus.Gauge // by metric name, registered through cur
}

func (w *stWorker) errorf(format string, args ...any) {
	w.t.Helper()
	w.t.Errorf("worker %d: %s", w.id, fmt.Sprintf(format, args...))
}

// reopen closes the worker's scopes and makes fresh ones.
func (w *stWorker) reopen() {
	if w.top != nil {
		if err := w.cur.Close(); err != nil {
			w.errorf("Close of the current scope = %v", err)
		}
		if err := w.top.Close(); err != nil {
			w.errorf("Close of the top scope = %v", err)
		}
	}
	w.top = w.base.Child(registry.WithLabels(prometheus.Labels{"pair": w.pair}))
	switch w.rng.IntN(4) {
	case 0:
		w.cur = w.top
	case 1:
		w.cur = w.top.Child()
	case 2:
		w.cur = registry.NewScope(w.top)
	case 3:
		w.cur = registry.NewScope(prometheus.WrapRegistererWithPrefix("", w.top))
	}
	w.owned = map[string]prometheus.Gauge{}
}

func (w *stWorker) gauge(name string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: "Stress gauge " + name + "."})
	g.Set(float64(w.id + 1))
	return g
}

// run does stIterations random operations. closing reports that the mid
// scope, and with it every group B scope, may be closed under the worker.
func (w *stWorker) run(reg *prometheus.Registry, closing *atomic.Bool) {
	w.reopen()
	for range stIterations {
		// mayLose reports, after an operation, that the mid scope may
		// have been closing during it.
		mayLose := func() bool { return w.underMid && closing.Load() }
		name := "m" + strconv.Itoa(w.rng.IntN(stNames))
		switch op := w.rng.IntN(20); {
		case op < 8:
			g := w.gauge(name)
			err := w.cur.Register(g)
			var are prometheus.AlreadyRegisteredError
			switch {
			case err == nil:
				if _, dup := w.owned[name]; dup {
					w.errorf("Register(%s) succeeded twice", name)
				}
				w.owned[name] = g
			case errors.As(err, &are):
				// Ours, or the partner's: never a scope's wrapper.
				if mine, ok := w.owned[name]; ok && are.ExistingCollector != prometheus.Collector(mine) {
					w.errorf("AlreadyRegisteredError for %s names %T, not the worker's own gauge", name, are.ExistingCollector)
				}
				if _, ok := are.ExistingCollector.(prometheus.Gauge); !ok {
					w.errorf("AlreadyRegisteredError for %s names a %T", name, are.ExistingCollector)
				}
			case errors.Is(err, registry.ErrClosed) && mayLose():
				// The mid scope closed the worker's top scope, and
				// took back everything registered through it; a
				// scope on top still tracks its (now stale) entries.
			default:
				w.errorf("Register(%s) = %v", name, err)
			}
		case op < 12:
			if g, ok := w.owned[name]; ok {
				if !w.cur.Unregister(g) && !mayLose() {
					w.errorf("Unregister of its own %s = false", name)
				}
				delete(w.owned, name)
			} else if w.cur.Unregister(w.gauge(name)) {
				w.errorf("Unregister of %s, which it does not own, = true", name)
			}
		case op < 14:
			if _, err := reg.Gather(); err != nil {
				w.errorf("the registry's Gather = %v", err)
			}
		case op < 17:
			w.checkOwn(mayLose)
		case op < 19:
			if got := w.cur.Len(); got != len(w.owned) && !mayLose() {
				w.errorf("Len() = %d, want %d", got, len(w.owned))
			}
		default:
			w.reopen()
		}
	}
}

// checkOwn compares the current scope's Gather with what the worker owns.
// Once the mid scope may be closing, its scopes may have lost anything.
func (w *stWorker) checkOwn(mayLose func() bool) {
	w.t.Helper()
	mfs, err := w.cur.Gather()
	if err != nil {
		w.errorf("Gather of its scope = %v", err)
		return
	}
	got := promtest.Values(mfs)
	for key, v := range got {
		name, _, _ := strings.Cut(key, "{")
		// Once the mid scope is closing, Unregister says false and
		// leaves the collector to the mid scope's Close.
		if _, ok := w.owned[strings.TrimPrefix(name, w.prefix)]; !ok && !mayLose() || v != float64(w.id+1) {
			w.errorf("its scope exposes %s = %v, which it does not own", key, v)
		}
	}
	if !mayLose() && len(got) != len(w.owned) {
		w.errorf("its scope exposes %d series, want %d", len(got), len(w.owned))
	}
}

func TestConcurrency(t *testing.T) {
	// 16 goroutines registering, unregistering, gathering and closing
	// nested scopes, while a scope around half of them is closed under
	// their feet, leave the registry holding exactly what the survivors
	// own, and nothing once the outermost scope is closed.
	t.Run("stress", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		other := prometheus.NewGauge(prometheus.GaugeOpts{Name: "other", Help: "Another owner's gauge."})
		other.Set(42)
		reg.MustRegister(other)
		root := registry.NewScope(reg)
		mid := root.Child(registry.WithPrefix("mid_"))

		// Workers 0-7 (group A) work under the root; workers 8-15
		// (group B) under mid, which worker 15 closes halfway, under
		// the feet of the others in its group.
		var closing atomic.Bool
		workers := make([]*stWorker, stWorkers)
		var wg sync.WaitGroup
		for i := range workers {
			w := &stWorker{t: t, id: i, base: root, pair: strconv.Itoa(i / 2), rng: rand.New(rand.NewPCG(uint64(i), 1))}
			if i >= stWorkers/2 {
				w.base, w.prefix, w.underMid = mid, "mid_", true
			}
			workers[i] = w
			wg.Go(func() {
				if i == stWorkers-1 {
					w.run(reg, &closing)
					closing.Store(true)
					if err := mid.Close(); err != nil {
						t.Errorf("mid Close = %v", err)
					}
					return
				}
				w.run(reg, &closing)
			})
		}
		wg.Wait()

		// The registry holds exactly what group A's survivors own, and
		// the other owner's gauge; group B went with mid.
		want := map[string]float64{`other{}`: 42}
		for _, w := range workers[:stWorkers/2] {
			for name := range w.owned {
				want[fmt.Sprintf("%s{pair=%q}", name, w.pair)] = float64(w.id + 1)
			}
		}
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatalf("Gather = %v", err)
		}
		got := promtest.Values(mfs)
		for key, v := range want {
			if got[key] != v {
				t.Errorf("the registry exposes %s = %v, want %v", key, got[key], v)
			}
		}
		for key, v := range got {
			if _, ok := want[key]; !ok {
				t.Errorf("the registry exposes %s = %v, which no survivor owns", key, v)
			}
		}
		n := 0
		for _, w := range workers[:stWorkers/2] {
			n += len(w.owned)
		}
		if got := root.Len(); got != n {
			t.Errorf("root Len() = %d, want %d", got, n)
		}

		if err := root.Close(); err != nil {
			t.Errorf("root Close = %v", err)
		}
		for _, w := range workers {
			if err := w.cur.Close(); err != nil {
				t.Errorf("worker %d: Close after the root's = %v", w.id, err)
			}
		}
		registrytest.VerifyNone(t, reg, "other")
		if got, err := promtest.Series(reg); err != nil || !slices.Equal(got, []string{"other{} 42"}) {
			t.Errorf("the registry exposes %q (%v), want other{} 42", got, err)
		}
	})

	// Every method may be called from many goroutines at once.
	t.Run("every method", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		root := registry.NewScope(reg, registry.WithPrefix("app_"))
		shared := promauto.With(reg).NewGaugeVec(prometheus.GaugeOpts{Name: "shared", Help: "Shared."}, []string{"worker"})
		var wg sync.WaitGroup
		for w := range 6 {
			wg.Go(func() {
				label := fmt.Sprint(w)
				nested := registry.NewScope(prometheus.WrapRegistererWith(prometheus.Labels{"worker": label}, root))
				nested.DeleteOnClose(prometheus.Labels{"worker": label}, shared)
				for i := range 30 {
					g := promtest.Gauge(fmt.Sprintf("g_%d", i%5), float64(i))
					if err := nested.Register(g); err != nil && !errors.As(err, &prometheus.AlreadyRegisteredError{}) {
						t.Errorf("Register: %v", err)
					}
					shared.WithLabelValues(label).Set(float64(i))
					if _, err := root.Gather(); err != nil {
						t.Errorf("Gather: %v", err)
					}
					if _, err := reg.Gather(); err != nil {
						t.Errorf("the registry's Gather: %v", err)
					}
					_, _ = root.Len(), root.String()
					_ = body(serve(registry.Handler(root), "GET", "/"))
					if i%3 == 0 {
						nested.Unregister(g)
					}
				}
				if w%2 == 0 {
					if err := nested.Close(); err != nil {
						t.Errorf("Close: %v", err)
					}
				}
			})
		}
		wg.Wait()
		if err := root.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		registrytest.VerifyNone(t, reg, "shared")
		promtest.Expose(t, reg)
	})

	// A Close racing Registers never leaves anything registered: each
	// Register either completes first, and is taken back, or returns
	// ErrClosed.
	t.Run("Close racing Register", func(t *testing.T) {
		const workers = 8
		for round := range 10 {
			reg := prometheus.NewPedanticRegistry()
			scope := registry.NewScope(reg)
			var registered atomic.Int64
			busy, stop := make(chan struct{}), make(chan struct{})
			var once sync.Once
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for i := 0; ; i++ {
						if err := scope.Register(promtest.Gauge(fmt.Sprintf("race_%d_%d", w, i), 1)); err != nil {
							if !errors.Is(err, registry.ErrClosed) {
								t.Errorf("Register = %v, want ErrClosed", err)
							}
							return
						}
						if registered.Add(1) >= 4*workers {
							once.Do(func() { close(busy) })
						}
						select {
						case <-stop:
							return
						default:
						}
					}
				})
			}
			<-busy
			if err := scope.Close(); err != nil {
				t.Errorf("round %d: Close: %v", round, err)
			}
			close(stop)
			wg.Wait()
			registrytest.VerifyNone(t, reg)
		}
	})

	// A tree on a forwarder over t1 registers t1, which describes
	// nothing (it owns an unchecked collector): that would collect the
	// tree's own collectors without end, so it is refused, and the tree's
	// collector of unchecked ones, registered for it alone, is taken back.
	// An unchecked collector that the tree registers meanwhile is exposed
	// all the same: it waits for the refusal, and registers that
	// collector anew.
	t.Run("refusal racing an unchecked Register", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		t1 := registry.NewScope(reg)
		t1.MustRegister(&promtest.Unchecked{Name: "t1_unchecked"})
		for i := range 2000 { // a tree that takes a while to look through
			t1.MustRegister(promtest.Gauge(fmt.Sprintf("t1_%d", i), 1))
		}
		for round := range 5 {
			p := promtest.NewParent(promtest.On("register", "", 0, promtest.BlockAfter))
			p.Next = t1
			t2 := registry.NewScope(p)
			refused := make(chan error)
			go func() { refused <- t2.Register(t1) }()
			<-p.Entered // t2's collector of unchecked ones is in t1
			good := &promtest.Unchecked{Name: fmt.Sprintf("good_%d", round), Value: 1}
			registered := make(chan error)
			go func() { registered <- t2.Register(good) }()
			p.Release()
			if err := <-refused; err == nil {
				t.Fatalf("round %d: Register(t1) = nil", round)
			}
			if err := <-registered; err != nil {
				t.Fatalf("round %d: Register(good) = %v", round, err)
			}
			series, err := promtest.Series(reg)
			if err != nil || !slices.Contains(series, good.Name+"{} 1") {
				t.Errorf("round %d: the registry exposes %d series without %s (%v)", round, len(series), good.Name, err)
			}
			if err := t2.Close(); err != nil {
				t.Errorf("round %d: Close = %v", round, err)
			}
		}
		if err := t1.Close(); err != nil {
			t.Errorf("t1's Close = %v", err)
		}
		registrytest.VerifyNone(t, reg)
	})

	// Concurrent scrapes of scopes with 1 to 8 labels, under 3 wrappers
	// above and below, are race-free and each sees the right series.
	t.Run("scrapes", func(t *testing.T) {
		for n := 1; n <= 8; n++ {
			reg, scope, want := labelledScope(n, 3)
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					for range 20 {
						mfs, err := reg.Gather()
						if got := promtest.Lines(mfs); err != nil || !slices.Equal(got, want) {
							t.Errorf("%d labels: exposed %q (%v), want %q", n, got, err, want)
							return
						}
						if _, err := scope.Gather(); err != nil {
							t.Errorf("%d labels: the scope's Gather = %v", n, err)
						}
					}
				})
			}
			wg.Wait()
			scope.Close()
		}
	})

	// A collector or Deleter of a value type that changes a map it holds
	// as it collects, under a lock of its own, is compared with others
	// without reading the map: Unregister and DeleteOnClose race with no
	// scrape.
	t.Run("values that change their maps", func(t *testing.T) {
		reg := prometheus.NewRegistry()
		s := registry.NewScope(reg)
		defer s.Close()
		mine := newTally()
		s.MustRegister(mine)
		s.DeleteOnClose(prometheus.Labels{"tenant": "a"}, mine)
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
					_, _ = reg.Gather()
				}
			}
		})
		for range 200 {
			other := newTally()
			s.Unregister(other)
			s.DeleteOnClose(prometheus.Labels{"tenant": "a"}, other)
		}
		close(done)
		wg.Wait()
	})

	// Scopes made with a leak report, registered through, closed and
	// dropped by many goroutines while the garbage collector runs, are
	// never reported.
	t.Run("closed never reported", func(t *testing.T) {
		ch := make(leaks, 1)
		reg := prometheus.NewPedanticRegistry()
		program := registry.NewScope(reg, registry.WithLeakReport(ch.report))
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for i := range 200 {
					child := program.Child()
					child.MustRegister(promtest.Gauge(fmt.Sprintf("g_%d_%d", w, i), 1))
					root := registry.NewScope(reg, registry.WithLeakReport(ch.report))
					root.MustRegister(promtest.Gauge(fmt.Sprintf("r_%d_%d", w, i), 1))
					if err := errors.Join(child.Close(), root.Close()); err != nil {
						t.Error(err)
					}
					if i%50 == 0 {
						runtime.GC()
					}
				}
			})
		}
		wg.Wait()
		if got := ch.wait(1, 20); len(got) != 0 {
			t.Errorf("reported %+v", got)
		}
		program.Close()
	})
}

// tally is an unchecked collector and a Deleter of a value type whose
// Collect counts its scrapes in a map it holds, under its own lock.
type tally struct {
	counts map[string]int // before the lock: a comparison meets it first
	mu     *sync.Mutex
}

func newTally() tally {
	t := tally{counts: map[string]int{}, mu: &sync.Mutex{}}
	for i := range 8 {
		t.counts[fmt.Sprint(i)] = 0
	}
	return t
}

func (tally) Describe(chan<- *prometheus.Desc) {}

func (t tally) Collect(chan<- prometheus.Metric) {
	t.mu.Lock()
	t.counts["scrapes"]++
	delete(t.counts, "scrapes")
	t.mu.Unlock()
}

func (tally) DeletePartialMatch(prometheus.Labels) int { return 0 }
