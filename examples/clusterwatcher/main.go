// Command clusterwatcher is a small multicluster controller whose metrics
// come and go with the components that own them.
//
// For each link to a remote cluster, the controller keeps a watcher in a
// [lifecycle.Slot]. The watcher's constructor registers gauges that read its
// cache, then connects; when the connect fails, its scope is closed, so the
// retry registers the same names cleanly. When a link is deleted, its scope
// deletes its series from a vector that every link shares.
//
//	go run ./examples/clusterwatcher [-fail N] [-listen ADDR]
//
// tells the story of two links, east and west, where west's cluster fails
// its first N connects (3 by default), and prints what /metrics serves of a
// link after each event. With -listen it then serves /metrics and the
// ownership page, /debug/scopes, on ADDR until interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/promscope/promscope/lifecycle"
	"github.com/promscope/promscope/registry"
)

func main() {
	var cfg config
	flag.IntVar(&cfg.fail, "fail", 3, "connects to west's cluster that fail before one succeeds")
	flag.StringVar(&cfg.listen, "listen", "", "after the story, serve /metrics and /debug/scopes on `ADDR` until interrupted")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Stdout, prometheus.NewRegistry(), cfg)
	stop()
	if err != nil {
		log.Fatal(err)
	}
}

// config is what the flags say.
type config struct {
	fail   int    // connects to west's cluster that fail before one succeeds
	listen string // where to serve after the story; "" for nowhere
}

// run tells the story with the metrics in reg, printing to w; then, if
// cfg.listen is set, it serves until ctx is done. It closes everything
// before it returns, which leaves reg empty.
func run(ctx context.Context, w io.Writer, reg *prometheus.Registry, cfg config) (err error) {
	c, err := newController(reg)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, c.Close()) }()
	mux := newMux(reg, c.scope)
	out := log.New(w, "", 0)

	// tell prints what happened to a link, and what /metrics now serves of
	// it.
	tell := func(link, event string, err error) {
		if err != nil {
			event += ": " + err.Error()
		}
		out.Printf("link %s %s", link, event)
		lines := scrape(mux, link)
		if len(lines) == 0 {
			lines = []string{"(no series of " + link + ")"}
		}
		for _, line := range lines {
			out.Printf("    %s", line)
		}
	}

	out.Printf("west's cluster fails its first %d connects", cfg.fail)
	tell("east", "added", c.add("east", fakeCluster(0, map[string]int{"web": 2, "api": 2, "db": 2})))
	err = c.add("west", fakeCluster(cfg.fail, map[string]int{"web": 2, "api": 2}))
	tell("west", "added", err)
	// A real controller would requeue the link, and retry after a backoff.
	for errors.Is(err, errUnreachable) {
		err = c.sync("west")
		tell("west", "retried", err)
	}
	tell("east", "updated", c.update("east", fakeCluster(0, map[string]int{"web": 2, "api": 2, "db": 2, "auth": 2})))
	tell("west", "deleted", c.remove("west"))

	if cfg.listen == "" {
		return nil
	}
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return err
	}
	out.Printf("serving http://%s/metrics and /debug/scopes until interrupted", ln.Addr())
	return serve(ctx, ln, mux)
}

// A cluster stands in for a remote cluster's API: connecting to it lists
// its services, with the number of endpoints of each.
type cluster func() (map[string]int, error)

// errUnreachable is what connecting to a cluster that is down fails with.
var errUnreachable = errors.New("connection refused")

// fakeCluster returns a cluster that fails its first failures connects, and
// then lists services.
func fakeCluster(failures int, services map[string]int) cluster {
	return func() (map[string]int, error) {
		if failures > 0 {
			failures--
			return nil, errUnreachable
		}
		return services, nil
	}
}

// A watcher mirrors the services of a remote cluster into its cache, which
// its gauges read. A real one would keep the cache up to date from a watch;
// this one fills it once, when it connects.
type watcher struct {
	scope     *registry.Scope
	services  atomic.Int64 // in the cache
	endpoints atomic.Int64 // of those services
}

// newWatcher registers the watcher's gauges in a scope of its own on reg,
// labelled with the cluster's name, and then connects. If anything fails,
// the deferred CloseOnError closes the scope: the gauges are gone again, and
// the next attempt registers the same names cleanly.
func newWatcher(reg prometheus.Registerer, name string, connect cluster) (_ *watcher, err error) {
	scope := registry.NewScope(reg, registry.WithLabels(prometheus.Labels{"cluster": name}))
	defer lifecycle.CloseOnError(&err, scope)

	w := &watcher{scope: scope}
	for _, g := range []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "service_cache_size",
			Help: "Services in the watcher's cache.",
		}, func() float64 { return float64(w.services.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "endpoints_cache_size",
			Help: "Endpoints of the services in the watcher's cache.",
		}, func() float64 { return float64(w.endpoints.Load()) }),
	} {
		if err := scope.Register(g); err != nil {
			return nil, err
		}
	}

	services, err := connect()
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", name, err)
	}
	for _, endpoints := range services {
		w.endpoints.Add(int64(endpoints))
	}
	w.services.Store(int64(len(services)))
	return w, nil
}

// Close removes the watcher's gauges.
func (w *watcher) Close() error { return w.scope.Close() }

// A controller keeps a watcher for each link to a remote cluster. It handles
// one event at a time, as a controller's work queue would call it; scrapes
// may run meanwhile.
type controller struct {
	scope    *registry.Scope        // the program's; every link's scope is nested in it
	attempts *prometheus.CounterVec // connect attempts, by link and result; every link shares it
	links    map[string]*link
}

// A link is what the controller keeps of one remote cluster.
type link struct {
	scope   *registry.Scope           // deletes the link's series in attempts when it closes
	slot    *lifecycle.Slot[*watcher] // the current watcher, if it is connected
	connect cluster
}

// newController registers the vector that every link shares in the
// program's scope on reg. The scope is named, so that errors and the
// ownership page say whose each metric is, and it and every scope nested in
// it log a leak report if their user drops them without Close.
func newController(reg prometheus.Registerer) (_ *controller, err error) {
	scope := registry.NewScope(reg, registry.WithName("mirror"),
		registry.WithLeakReport(func(l registry.Leak) { log.Printf("metrics leak: %v", l) }))
	defer lifecycle.CloseOnError(&err, scope)

	attempts := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "connect_attempts_total",
		Help: "Attempts to connect a watcher to its remote cluster, by result.",
	}, []string{"target_cluster_name", "result"})
	if err := scope.Register(attempts); err != nil {
		return nil, err
	}
	return &controller{scope: scope, attempts: attempts, links: map[string]*link{}}, nil
}

// add links a new remote cluster, in a scope named after it, and connects
// its watcher.
func (c *controller) add(name string, connect cluster) error {
	scope := c.scope.Child(registry.WithName(name))
	scope.DeleteOnClose(prometheus.Labels{"target_cluster_name": name}, c.attempts)
	slot := lifecycle.NewSlot[*watcher](scope, registry.WithName("watcher"))
	c.links[name] = &link{scope: scope, slot: slot, connect: connect}
	return c.sync(name)
}

// sync builds the link's watcher anew in its slot: the slot closes the
// current watcher first, so that the new one registers the same names, and
// closes whatever a failed build left. A failed sync is retried by calling
// sync again.
func (c *controller) sync(name string) error {
	l, ok := c.links[name]
	if !ok {
		return fmt.Errorf("no link to %s", name)
	}
	_, err := l.slot.Replace(func(scope *registry.Scope) (*watcher, error) {
		return newWatcher(scope, name, l.connect)
	})
	result := "ok"
	if err != nil {
		result = "error"
	}
	c.attempts.WithLabelValues(name, result).Inc()
	return err
}

// update points the link at its cluster anew, and rebuilds its watcher.
func (c *controller) update(name string, connect cluster) error {
	if l, ok := c.links[name]; ok {
		l.connect = connect
	}
	return c.sync(name)
}

// remove closes the link's watcher, then the link's scope, which deletes
// the link's series from the shared vector.
func (c *controller) remove(name string) error {
	l, ok := c.links[name]
	if !ok {
		return nil
	}
	delete(c.links, name)
	return errors.Join(l.slot.Close(), l.scope.Close())
}

// Close removes every link, then closes the program's scope.
func (c *controller) Close() error {
	var err error
	for name := range c.links {
		err = errors.Join(err, c.remove(name))
	}
	return errors.Join(err, c.scope.Close())
}

// newMux serves the metrics in reg, and no others, at /metrics, and the
// ownership page, which lists the program's open scopes with the metrics
// each owns, at /debug/scopes.
func newMux(reg prometheus.Gatherer, program *registry.Scope) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle("GET /debug/scopes", registry.Handler(program))
	return mux
}

// scrape returns the samples that h serves at /metrics about the link, as a
// scraper sees them.
func scrape(h http.Handler, link string) []string {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	var lines []string
	for line := range strings.Lines(rec.Body.String()) {
		if !strings.HasPrefix(line, "#") && strings.Contains(line, `="`+link+`"`) {
			lines = append(lines, strings.TrimSuffix(line, "\n"))
		}
	}
	return lines
}

// serve serves h on ln until ctx is done.
func serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	// Close, not Shutdown: a scrape cut short is retried at the next one.
	stop := context.AfterFunc(ctx, func() { _ = srv.Close() })
	defer stop()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
