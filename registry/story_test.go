package registry_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/promscope/promscope/lifecycle"
	"github.com/promscope/promscope/registry"
	"github.com/promscope/promscope/registry/registrytest"
)

// The failing-constructor story: a cluster watcher registers two GaugeFuncs
// that read its cache, then connects to the cluster. While the cluster is
// unreachable the constructor fails and is retried. Without a scope, every
// retry after the first fails with "duplicate metrics collector registration
// attempted" and the first watcher's gauges stay behind, holding it.

// storyCache is the watcher's cache of cluster objects.
type storyCache struct {
	mu      sync.Mutex
	objects map[string][]byte // guarded by mu
}

func (c *storyCache) put(name string, obj []byte) {
	c.mu.Lock()
	c.objects[name] = obj
	c.mu.Unlock()
}

func (c *storyCache) count() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return float64(len(c.objects))
}

func (c *storyCache) bytes() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, obj := range c.objects {
		n += len(obj)
	}
	return float64(n)
}

// storyWatcher is the component of the story.
type storyWatcher struct {
	scope *registry.Scope
	cache *storyCache
}

var errStoryUnreachable = errors.New("cluster unreachable")

// newStoryWatcher is written as a user would write it: a scope for the
// component's metrics, closed by a deferred CloseOnError if the constructor
// fails.
func newStoryWatcher(reg prometheus.Registerer, cluster string, connect func() error) (_ *storyWatcher, err error) {
	scope := registry.NewScope(reg, registry.WithLabels(prometheus.Labels{"cluster": cluster}))
	defer lifecycle.CloseOnError(&err, scope)

	w := &storyWatcher{scope: scope, cache: &storyCache{objects: map[string][]byte{}}}
	if err := scope.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "watcher_cache_objects",
		Help: "Objects in the watcher's cache.",
	}, w.cache.count)); err != nil {
		return nil, err
	}
	if err := scope.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "watcher_cache_bytes",
		Help: "Bytes held by the watcher's cache.",
	}, w.cache.bytes)); err != nil {
		return nil, err
	}
	if err := connect(); err != nil {
		return nil, fmt.Errorf("connect to %s: %w", cluster, err)
	}
	return w, nil
}

func (w *storyWatcher) Close() error { return w.scope.Close() }

func TestFailingConstructorStory(t *testing.T) {
	t.Run("a constructor that fails 100 times leaves nothing behind and then comes up", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		unreachable := func() error { return errStoryUnreachable }
		for try := 1; try <= 100; try++ {
			w, err := newStoryWatcher(reg, "east", unreachable)
			if !errors.Is(err, errStoryUnreachable) {
				t.Fatalf("try %d: err = %v, want the connection error", try, err)
			}
			if errors.As(err, &prometheus.AlreadyRegisteredError{}) {
				t.Fatalf("try %d: registration failed: %v", try, err)
			}
			if w != nil {
				t.Fatalf("try %d: a failed constructor returned a watcher", try)
			}
			registrytest.VerifyNone(t, reg)
			if t.Failed() {
				t.Fatalf("try %d left metrics behind", try)
			}
		}

		w, err := newStoryWatcher(reg, "east", func() error { return nil })
		if err != nil {
			t.Fatalf("final build: %v", err)
		}
		w.cache.put("pod/a", make([]byte, 100))
		w.cache.put("pod/b", make([]byte, 20))
		const live = `
# HELP watcher_cache_bytes Bytes held by the watcher's cache.
# TYPE watcher_cache_bytes gauge
watcher_cache_bytes{cluster="east"} %d
# HELP watcher_cache_objects Objects in the watcher's cache.
# TYPE watcher_cache_objects gauge
watcher_cache_objects{cluster="east"} %d
`
		if err := testutil.GatherAndCompare(reg, strings.NewReader(fmt.Sprintf(live, 120, 2))); err != nil {
			t.Error(err)
		}
		// The values are read live from the cache at each scrape.
		w.cache.put("pod/c", make([]byte, 3))
		if err := testutil.GatherAndCompare(reg, strings.NewReader(fmt.Sprintf(live, 123, 3))); err != nil {
			t.Error(err)
		}

		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		registrytest.VerifyNone(t, reg)
	})

	t.Run("the same constructor without a scope fails its second try, which the checks catch", func(t *testing.T) {
		// This is the bug the scope fixes, kept here to show that the
		// checks above would see it.
		reg := prometheus.NewPedanticRegistry()
		leaky := func(reg prometheus.Registerer) error {
			cache := &storyCache{objects: map[string][]byte{}}
			if err := reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "watcher_cache_objects",
				Help: "Objects in the watcher's cache.",
			}, cache.count)); err != nil {
				return err
			}
			return errStoryUnreachable
		}
		if err := leaky(reg); !errors.Is(err, errStoryUnreachable) {
			t.Fatalf("first try: %v", err)
		}
		rec := &storyRecordingT{}
		registrytest.VerifyNone(rec, reg)
		if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "watcher_cache_objects") {
			t.Errorf("VerifyNone reported %q, want the leaked gauge named", rec.errors)
		}
		if err := leaky(reg); !errors.As(err, &prometheus.AlreadyRegisteredError{}) {
			t.Errorf("second try: %v, want an AlreadyRegisteredError", err)
		}
	})
}

// storyRecordingT is a registrytest.TestingT that records what it is told.
type storyRecordingT struct {
	errors []string
}

func (*storyRecordingT) Helper() {}

func (r *storyRecordingT) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
