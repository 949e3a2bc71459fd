package registry_test

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/registry"
)

// leaks collects what WithLeakReport reports.
type leaks chan registry.Leak

func (l leaks) report(leak registry.Leak) { l <- leak }

// wait runs the garbage collector until n leaks have been reported, at most
// cycles times, and returns what was reported. A cleanup runs within a cycle
// or two of its object becoming unreachable; 20 cycles show that none will.
func (l leaks) wait(n, cycles int) []registry.Leak {
	var got []registry.Leak
	for range cycles {
		if len(got) == n {
			break
		}
		runtime.GC()
		select {
		case leak := <-l:
			got = append(got, leak)
		case <-time.After(10 * time.Millisecond):
		}
	}
	return got
}

// line returns "leak_test.go:N" for the line after the call.
func line() string {
	_, file, n, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", file[strings.LastIndex(file, "/")+1:], n+1)
}

// newForgetfulWatcher is the story's failing constructor with its
// CloseOnError left out: its scope is dropped, still registered.
func newForgetfulWatcher(reg prometheus.Registerer, report func(registry.Leak)) (*registry.Scope, string, error) {
	where := line()
	scope := registry.NewScope(reg, registry.WithName("watcher"), registry.WithLeakReport(report),
		registry.WithLabels(prometheus.Labels{"cluster": "east"}))
	cache := &storyCache{objects: map[string]int{}}
	scope.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "watcher_cache_objects",
		Help: "Objects in the watcher's cache.",
	}, cache.count))
	return nil, where, errStoryUnreachable
}

func TestLeakReport(t *testing.T) {
	t.Run("a failing constructor without CloseOnError is reported once, with its scope's name, the line that made it and its metrics", func(t *testing.T) {
		ch := make(leaks, 4)
		reg := prometheus.NewPedanticRegistry()
		_, where, _ := newForgetfulWatcher(reg, ch.report)
		got := ch.wait(1, 500)
		want := registry.Leak{Scope: `watcher{cluster="east"}`, Created: where, Metrics: []string{"watcher_cache_objects"}}
		if len(got) != 1 || got[0].Scope != want.Scope || got[0].Created != want.Created || !slices.Equal(got[0].Metrics, want.Metrics) {
			t.Fatalf("reported %+v, want %+v", got, want)
		}
		if s := got[0].String(); s != fmt.Sprintf(`registry: scope "watcher{cluster=\"east\"}" made at %s was dropped without Close; it still has [watcher_cache_objects] registered`, where) {
			t.Errorf("String() = %s", s)
		}
		if more := ch.wait(1, 20); len(more) != 0 {
			t.Errorf("reported again: %+v", more)
		}
		runtime.KeepAlive(reg)
	})

	t.Run("a closed scope, and one that owns nothing, are never reported", func(t *testing.T) {
		ch := make(leaks, 4)
		reg := prometheus.NewPedanticRegistry()
		func() {
			closed := registry.NewScope(reg, registry.WithLeakReport(ch.report))
			closed.MustRegister(promtest.Gauge("jobs", 1))
			closed.Close()
			registry.NewScope(reg, registry.WithLeakReport(ch.report))
		}()
		if got := ch.wait(1, 20); len(got) != 0 {
			t.Errorf("reported %+v", got)
		}
	})

	t.Run("a nested scope that its outer scope holds is reported only once the outer one leaks too", func(t *testing.T) {
		ch := make(leaks, 4)
		reg := prometheus.NewPedanticRegistry()
		outer := registry.NewScope(reg, registry.WithName("program"), registry.WithLeakReport(ch.report))
		outer.MustRegister(promtest.Gauge("up", 1))
		func() {
			registry.NewScope(outer, registry.WithName("link")).MustRegister(promtest.Gauge("jobs", 1))
		}()
		if got := ch.wait(1, 20); len(got) != 0 {
			t.Fatalf("reported %+v while the outer scope holds the nested one", got)
		}
		runtime.KeepAlive(outer) // and dropped from here on
		got := ch.wait(2, 500)
		slices.SortFunc(got, func(a, b registry.Leak) int { return strings.Compare(a.Scope, b.Scope) })
		if len(got) != 2 || got[0].Scope != "program" || got[1].Scope != "program/link" || got[1].Metrics[0] != "jobs" {
			t.Errorf("reported %+v, want program and program/link", got)
		}
	})
}
