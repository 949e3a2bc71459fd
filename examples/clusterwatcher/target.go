package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"go.uber.org/multierr"
)

// A service is one entry of the list a target cluster serves: a name and the
// addresses of its endpoints.
type service struct {
	Name      string   `json:"name"`
	Endpoints []string `json:"endpoints"`
}

// serviceList is the JSON document served at /api/v1/services.
type serviceList struct {
	Services []service `json:"services"`
}

// Paths of the two endpoints a target cluster serves: its API, which the
// watcher connects to, and its gateway's readiness check, which the link
// probes.
const (
	servicesPath = "/api/v1/services"
	readyPath    = "/ready"
)

// A targetCluster stands in for the API server and gateway of a remote
// cluster. It is a real HTTP server on 127.0.0.1, on an ephemeral port. It
// fails the first failFirst requests to its API, alternating between a 503
// and a connection closed without a response, and its gateway reports not
// ready until the API has answered once; from then on it serves its list of
// services.
type targetCluster struct {
	name      string
	failFirst int
	log       *logger
	ln        net.Listener
	srv       *http.Server
	served    chan struct{} // closed when srv.Serve has returned

	mu       sync.Mutex
	calls    int       // guarded by mu; requests to the API so far
	services []service // guarded by mu
}

// startTarget starts a target cluster serving services, after failing its
// first failFirst API requests.
func startTarget(name string, failFirst int, services []service, log *logger) (*targetCluster, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("target cluster %s: %w", name, err)
	}
	t := &targetCluster{
		name:      name,
		failFirst: failFirst,
		log:       log,
		ln:        ln,
		served:    make(chan struct{}),
		services:  services,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+servicesPath, t.serveServices)
	mux.HandleFunc("GET "+readyPath, t.serveReady)
	t.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		defer close(t.served)
		_ = t.srv.Serve(ln) // always ErrServerClosed, once Close is called
	}()
	return t, nil
}

// url returns the base URL of the cluster's API.
func (t *targetCluster) url() string { return "http://" + t.ln.Addr().String() }

// addService makes the cluster serve one more service from now on.
func (t *targetCluster) addService(s service) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.services = append(t.services, s)
}

// counts returns how many services and endpoints the cluster serves.
func (t *targetCluster) counts() (services, endpoints int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return countServices(t.services)
}

// Close stops the server, closing every connection, and waits for it.
func (t *targetCluster) Close() error {
	err := t.srv.Close()
	<-t.served
	return err
}

func (t *targetCluster) serveServices(w http.ResponseWriter, _ *http.Request) {
	t.mu.Lock()
	t.calls++
	call := t.calls
	list := serviceList{Services: slices.Clone(t.services)}
	t.mu.Unlock()

	if call <= t.failFirst {
		if call%2 == 0 {
			t.log.debugf("target %s: %s call %d of %d failing: closing the connection", t.name, servicesPath, call, t.failFirst)
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		t.log.debugf("target %s: %s call %d of %d failing: 503", t.name, servicesPath, call, t.failFirst)
		http.Error(w, "cluster API not ready", http.StatusServiceUnavailable)
		return
	}
	t.log.debugf("target %s: %s call %d: serving %d services", t.name, servicesPath, call, len(list.Services))
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(list)
}

func (t *targetCluster) serveReady(w http.ResponseWriter, _ *http.Request) {
	t.mu.Lock()
	up := t.calls > t.failFirst
	t.mu.Unlock()
	if !up {
		http.Error(w, "gateway not ready", http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}

// serviceNames name the services of the fake clusters, in order.
var serviceNames = [...]string{"web", "api", "db", "auth", "billing", "search"}

// servicesFor returns the first n services of link number i (from 0), with
// two endpoints each. Addresses are distinct across links.
func servicesFor(i, n int) []service {
	out := make([]service, 0, n)
	for j := range n {
		out = append(out, serviceFor(i, j, 2))
	}
	return out
}

// serviceFor returns service j of link number i, with n endpoints.
func serviceFor(i, j, n int) service {
	s := service{Name: serviceNames[j%len(serviceNames)]}
	if j >= len(serviceNames) {
		s.Name = fmt.Sprintf("%s-%d", s.Name, j/len(serviceNames)+1)
	}
	for k := range n {
		s.Endpoints = append(s.Endpoints, fmt.Sprintf("10.%d.%d.%d:8080", i+1, j, k+1))
	}
	return s
}

func countServices(list []service) (services, endpoints int) {
	for _, s := range list {
		endpoints += len(s.Endpoints)
	}
	return len(list), endpoints
}

// closeTargets closes every target, newest first.
func closeTargets(ts []*targetCluster) error {
	var err error
	for _, t := range slices.Backward(ts) {
		err = multierr.Append(err, t.Close())
	}
	return err
}
