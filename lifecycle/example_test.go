package lifecycle_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/lifecycle"
	"github.com/promscope/promscope/registry"
)

// A cache registers a gauge in its constructor, then loads its entries. The
// load may fail after the gauge is registered.
type cache struct {
	scope *registry.Scope
}

func newCache(reg prometheus.Registerer, load func() (int, error)) (_ *cache, err error) {
	scope := registry.NewScope(reg)
	defer lifecycle.CloseOnError(&err, scope)

	entries := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "cache_entries", Help: "Entries in the cache.",
	})
	if err := scope.Register(entries); err != nil {
		return nil, err
	}
	n, err := load()
	if err != nil {
		return nil, fmt.Errorf("load cache: %w", err) // the gauge is unregistered again
	}
	entries.Set(float64(n))
	return &cache{scope: scope}, nil
}

func (c *cache) Close() error { return c.scope.Close() }

func ExampleCloseOnError() {
	reg := prometheus.NewPedanticRegistry()

	_, err := newCache(reg, func() (int, error) { return 0, errors.New("disk full") })
	fmt.Println("first try:", err)
	printMetrics(reg)

	// The failed constructor left nothing behind, so the same gauge
	// registers again.
	c, err := newCache(reg, func() (int, error) { return 3, nil })
	fmt.Println("second try:", err)
	printMetrics(reg)
	_ = c.Close()
	// Output:
	// first try: load cache: disk full
	// (nothing exposed)
	// second try: <nil>
	// cache_entries 3
}

// step is a cleanup that says what it does.
type step string

func (s step) Close() error {
	fmt.Println("close", string(s))
	return nil
}

func ExampleStack() {
	var cleanup lifecycle.Stack
	cleanup.Push(step("database"))
	cleanup.PushFunc(func() error {
		fmt.Println("stop informer")
		return errors.New("informer: already stopped")
	})
	cleanup.Push(step("listener"))

	// Newest first, every one of them, even after a failure.
	fmt.Println("error:", cleanup.Close())
	fmt.Println("again:", cleanup.Close())
	// Output:
	// close listener
	// stop informer
	// close database
	// error: informer: already stopped
	// again: <nil>
}

// A watcher follows one cluster. Its constructor registers its gauges, then
// dials the cluster; when the dial fails it returns without cleaning up, and
// the slot that builds it removes the gauges.
type watcher struct {
	cluster string
}

func newWatcher(reg prometheus.Registerer, cluster string, dial func() (int, error)) (*watcher, error) {
	connected := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "watcher_connected", Help: "Whether the watcher is connected to its cluster.",
	})
	objects := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "watcher_cached_objects", Help: "Objects in the watcher's cache.",
	})
	if err := reg.Register(connected); err != nil {
		return nil, err
	}
	if err := reg.Register(objects); err != nil {
		return nil, err
	}
	n, err := dial()
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", cluster, err)
	}
	connected.Set(1)
	objects.Set(float64(n))
	return &watcher{cluster: cluster}, nil
}

func (w *watcher) Close() error {
	fmt.Println("watcher for", w.cluster, "stopped")
	return nil
}

func ExampleSlot_Replace() {
	reg := prometheus.NewPedanticRegistry()
	slot := lifecycle.NewSlot[*watcher](reg, registry.WithLabels(prometheus.Labels{"cluster": "east"}))

	// The cluster is unreachable for the first two attempts.
	attempts := 0
	dial := func() (int, error) {
		attempts++
		if attempts < 3 {
			return 0, errors.New("dial tcp 10.0.0.7:6443: connection refused")
		}
		return 42, nil
	}

	for attempt := 1; ; attempt++ {
		_, err := slot.Replace(func(scope *registry.Scope) (*watcher, error) {
			return newWatcher(scope, "east", dial)
		})
		if err != nil {
			// A real loop would back off here. Every failed attempt
			// registered the same gauges, and none of them is left.
			fmt.Printf("attempt %d: %v\n", attempt, err)
			continue
		}
		fmt.Printf("attempt %d: connected\n", attempt)
		break
	}
	printMetrics(reg)

	_ = slot.Close()
	printMetrics(reg)
	// Output:
	// attempt 1: watch east: dial tcp 10.0.0.7:6443: connection refused
	// attempt 2: watch east: dial tcp 10.0.0.7:6443: connection refused
	// attempt 3: connected
	// watcher_cached_objects{cluster="east"} 42
	// watcher_connected{cluster="east"} 1
	// watcher for east stopped
	// (nothing exposed)
}

func ExampleBuildError() {
	reg := prometheus.NewPedanticRegistry()
	slot := lifecycle.NewSlot[*closing](reg)
	defer slot.Close()
	build := func(name string, dial error) func(*registry.Scope) (*closing, error) {
		return func(*registry.Scope) (*closing, error) {
			if dial != nil {
				return nil, dial
			}
			return &closing{name: name, err: errors.New(name + " did not stop cleanly")}, nil
		}
	}

	// report says what a Replace left installed.
	report := func(err error) {
		var failed *lifecycle.BuildError
		switch {
		case errors.As(err, &failed):
			fmt.Println("nothing installed:", failed.Err)
		case err != nil:
			fmt.Println("installed, but:", err)
		default:
			fmt.Println("installed")
		}
	}
	_, err := slot.Replace(build("first", nil))
	report(err)
	_, err = slot.Replace(build("second", nil))
	report(err)
	_, err = slot.Replace(build("third", errors.New("connection refused")))
	report(err)
	_, ok := slot.Current()
	fmt.Println("slot holds an instance:", ok)
	// Output:
	// installed
	// installed, but: first did not stop cleanly
	// nothing installed: connection refused
	// slot holds an instance: false
}

// closing is a component whose Close fails with err.
type closing struct {
	name string
	err  error
}

func (c *closing) Close() error { return c.err }

func ExampleSlot_Current() {
	reg := prometheus.NewPedanticRegistry()
	slot := lifecycle.NewSlot[*watcher](reg)
	defer slot.Close()

	// A health check reads the slot without waiting for a reconnect.
	healthy := func() string {
		if w, ok := slot.Current(); ok {
			return "watching " + w.cluster
		}
		return "not connected"
	}
	fmt.Println(healthy())

	_, _ = slot.Replace(func(scope *registry.Scope) (*watcher, error) {
		return newWatcher(scope, "west", func() (int, error) { return 0, errors.New("timeout") })
	})
	fmt.Println(healthy())

	_, _ = slot.Replace(func(scope *registry.Scope) (*watcher, error) {
		return newWatcher(scope, "west", func() (int, error) { return 7, nil })
	})
	fmt.Println(healthy())
	// Output:
	// not connected
	// not connected
	// watching west
	// watcher for west stopped
}

func ExampleSlot_Clear() {
	reg := prometheus.NewPedanticRegistry()
	slot := lifecycle.NewSlot[*watcher](reg)
	defer slot.Close()
	lead := func() {
		_, _ = slot.Replace(func(scope *registry.Scope) (*watcher, error) {
			return newWatcher(scope, "east", func() (int, error) { return 3, nil })
		})
	}

	lead()
	printMetrics(reg)

	// Leadership is lost: the watcher stops, and its metrics go, but the
	// slot stays for when leadership comes back.
	fmt.Println("clear:", slot.Clear())
	printMetrics(reg)

	lead()
	printMetrics(reg)
	// Output:
	// watcher_cached_objects 3
	// watcher_connected 1
	// watcher for east stopped
	// clear: <nil>
	// (nothing exposed)
	// watcher_cached_objects 3
	// watcher_connected 1
	// watcher for east stopped
}

// A set of components keyed by name, reloaded from a configuration, keeps a
// slot per key. Each key gets a scope of its own, made with Child on one
// program scope, for what outlives its builds (here the deletion of its
// series in a vector the program shares), and its slot is made on that
// scope. A key that goes closes its slot, and so its instance, then its
// scope; one whose configuration changed is rebuilt with Replace.
func ExampleSlot_keyed() {
	reg := prometheus.NewPedanticRegistry()
	program := registry.NewScope(reg, registry.WithName("prog"))
	defer program.Close()
	builds := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "watcher_builds_total", Help: "Builds of the watcher of each cluster.",
	}, []string{"cluster"})
	program.MustRegister(builds)

	type component struct {
		scope *registry.Scope
		slot  *lifecycle.Slot[*watcher]
		size  int // the configuration it runs with
	}
	running := map[string]*component{}
	reload := func(config map[string]int) {
		for _, name := range slices.Sorted(maps.Keys(running)) {
			if _, ok := config[name]; !ok {
				_ = running[name].slot.Close()
				_ = running[name].scope.Close()
				delete(running, name)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(config)) {
			c := running[name]
			if c == nil {
				scope := program.Child(registry.WithName(name), registry.WithLabels(prometheus.Labels{"cluster": name}))
				scope.DeleteOnClose(prometheus.Labels{"cluster": name}, builds)
				c = &component{scope: scope, slot: lifecycle.NewSlot[*watcher](scope)}
				running[name] = c
			} else if _, ok := c.slot.Current(); ok && c.size == config[name] {
				continue // running, as configured
			}
			size := config[name]
			builds.WithLabelValues(name).Inc()
			if _, err := c.slot.Replace(func(s *registry.Scope) (*watcher, error) {
				return newWatcher(s, name, func() (int, error) { return size, nil })
			}); err != nil {
				fmt.Println(err) // the next reload builds it again
				continue
			}
			c.size = size
		}
	}

	reload(map[string]int{"east": 3, "west": 5})
	printMetrics(reg)
	fmt.Println("-- reload: east goes, west changes")
	reload(map[string]int{"west": 8})
	printMetrics(reg)
	fmt.Println("-- shutdown")
	reload(nil)
	printMetrics(reg)
	// Output:
	// watcher_builds_total{cluster="east"} 1
	// watcher_builds_total{cluster="west"} 1
	// watcher_cached_objects{cluster="east"} 3
	// watcher_cached_objects{cluster="west"} 5
	// watcher_connected{cluster="east"} 1
	// watcher_connected{cluster="west"} 1
	// -- reload: east goes, west changes
	// watcher for east stopped
	// watcher for west stopped
	// watcher_builds_total{cluster="west"} 2
	// watcher_cached_objects{cluster="west"} 8
	// watcher_connected{cluster="west"} 1
	// -- shutdown
	// watcher for west stopped
	// (nothing exposed)
}

func ExampleSlot_Close() {
	slot := lifecycle.NewSlot[*watcher](prometheus.NewPedanticRegistry())
	_, _ = slot.Replace(func(scope *registry.Scope) (*watcher, error) {
		return newWatcher(scope, "north", func() (int, error) { return 1, nil })
	})

	fmt.Println("close:", slot.Close())
	fmt.Println("close again:", slot.Close())

	_, err := slot.Replace(func(scope *registry.Scope) (*watcher, error) {
		fmt.Println("never built")
		return newWatcher(scope, "north", func() (int, error) { return 1, nil })
	})
	fmt.Println("replace after close:", errors.Is(err, lifecycle.ErrClosed))
	// Output:
	// watcher for north stopped
	// close: <nil>
	// close again: <nil>
	// replace after close: true
}

// printMetrics prints every gauge and counter series that g exposes, one a
// line, as name{labels} value.
func printMetrics(g prometheus.Gatherer) {
	mfs, err := g.Gather()
	if err != nil {
		fmt.Println("gather:", err)
		return
	}
	if len(mfs) == 0 {
		fmt.Println("(nothing exposed)")
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			series := mf.GetName()
			if len(labels) > 0 {
				series += "{" + strings.Join(labels, ",") + "}"
			}
			value := m.GetGauge().GetValue() + m.GetCounter().GetValue()
			fmt.Println(series, value)
		}
	}
}
