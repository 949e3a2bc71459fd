package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/lifecycle"
	"github.com/promscope/promscope/registry"
)

// errRegistration marks a failed attempt that failed because a metric could
// not be registered, as opposed to a cluster that could not be reached. The
// program counts these: with promscope there must be none.
var errRegistration = errors.New("register")

// isRegistrationError reports whether err comes from registering a metric.
func isRegistrationError(err error) bool {
	var are prometheus.AlreadyRegisteredError
	return errors.Is(err, errRegistration) || errors.As(err, &are)
}

// A clusterWatcher mirrors the services of one target cluster into a local
// cache, and exposes the size of that cache through two GaugeFuncs. It is the
// component that the original controller leaked: its constructor registers
// the gauges before it connects, so a failed connect must take them back.
type clusterWatcher struct {
	scope *registry.Scope

	mu    sync.Mutex
	cache map[string][]string // guarded by mu; service name to endpoints
}

// newClusterWatcher registers the watcher's gauges through a scope of its own
// on reg, labelled cluster=<target>, then connects to the target cluster at
// base and fills the cache. If anything fails, the deferred CloseOnError
// closes the scope, so that the next attempt registers the same names
// cleanly.
func newClusterWatcher(ctx context.Context, reg prometheus.Registerer, target, base string, client *http.Client) (_ *clusterWatcher, err error) {
	scope := registry.NewScope(reg, registry.WithLabels(prometheus.Labels{"cluster": target}))
	defer lifecycle.CloseOnError(&err, scope)

	w := &clusterWatcher{scope: scope}
	for _, g := range []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "service_cache_size",
			Help: "Services mirrored from the target cluster.",
		}, w.serviceCount),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "endpoints_cache_size",
			Help: "Endpoints of the services mirrored from the target cluster.",
		}, w.endpointCount),
	} {
		if err := scope.Register(g); err != nil {
			return nil, fmt.Errorf("%w: %w", errRegistration, err)
		}
	}

	list, err := fetchServices(ctx, client, base)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	w.cache = make(map[string][]string, len(list.Services))
	for _, s := range list.Services {
		w.cache[s.Name] = s.Endpoints
	}
	w.mu.Unlock()
	return w, nil
}

// counts returns how many services and endpoints the cache holds.
func (w *clusterWatcher) counts() (services, endpoints int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, eps := range w.cache {
		endpoints += len(eps)
	}
	return len(w.cache), endpoints
}

func (w *clusterWatcher) serviceCount() float64 {
	n, _ := w.counts()
	return float64(n)
}

func (w *clusterWatcher) endpointCount() float64 {
	_, n := w.counts()
	return float64(n)
}

// Close unregisters the watcher's gauges.
func (w *clusterWatcher) Close() error { return w.scope.Close() }

// maxListBytes bounds what fetchServices reads from a target cluster.
const maxListBytes = 1 << 20

// fetchServices asks the target cluster at base for its services.
func fetchServices(ctx context.Context, client *http.Client, base string) (serviceList, error) {
	var list serviceList
	resp, err := get(ctx, client, base+servicesPath)
	if err != nil {
		return list, fmt.Errorf("connect to %s: %w", host(base), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return list, fmt.Errorf("connect to %s: %s", host(base), resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxListBytes)).Decode(&list); err != nil {
		return list, fmt.Errorf("connect to %s: reading the service list: %w", host(base), err)
	}
	return list, nil
}

// probeGateway asks the target cluster's gateway at base whether it is ready,
// and measures how long the answer took with since.
func probeGateway(ctx context.Context, client *http.Client, base string, since func(time.Time) time.Duration) (ok bool, latency time.Duration) {
	start := time.Now()
	resp, err := get(ctx, client, base+readyPath)
	if err != nil {
		return false, 0
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxListBytes))
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK, since(start)
}

// get sends a GET request to u. A transport error is returned without the
// url.Error around it, whose text repeats the whole URL.
func get(ctx context.Context, client *http.Client, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	return resp, err
}

// host returns the host:port of base, for messages.
func host(base string) string {
	if u, err := url.Parse(base); err == nil && u.Host != "" {
		return u.Host
	}
	return base
}
