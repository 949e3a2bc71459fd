// Package kv has the shape of cortex's KV clients: NewClient registers only
// after its last error return, so when it fails it has registered nothing;
// NewSyncedClient registers through it and then syncs, and leaves the
// client's metrics behind when the sync fails, which is reported here and
// not in its callers.
package kv

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	errNoAddress = errors.New("kv: no address")
	errNoKey     = errors.New("kv: no key")
)

// Client talks to one store.
type Client struct {
	requests prometheus.Counter
}

// NewClient checks its configuration, then registers.
func NewClient(reg prometheus.Registerer, addr string) (*Client, error) { // want NewClient:"registers kv_requests_total at kv/kv.go:30 \\(result 0, registerer 0\\)"
	if addr == "" {
		return nil, errNoAddress
	}
	c := &Client{requests: prometheus.NewCounter(prometheus.CounterOpts{Name: "kv_requests_total"})}
	reg.MustRegister(c.requests)
	return c, nil
}

// NewSyncedClient leaks when the sync fails.
func NewSyncedClient(reg prometheus.Registerer, addr string, sync func() error) (*Client, error) { // want NewSyncedClient:"registers kv_requests_total at kv/kv.go:30 \\(result 0, registerer 0\\)"
	c, err := NewClient(reg, addr)
	if err != nil {
		return nil, err
	}
	if err := sync(); err != nil {
		return nil, err // want `^kv_requests_total registered at kv\.go:30 \(via NewClient\) stays registered when this returns an error: unregister it before returning, or call NewClient after the last error return$`
	}
	return c, nil
}

// Get reads a key.
func (c *Client) Get(key string) (string, error) {
	c.requests.Inc()
	if key == "" {
		return "", errNoKey
	}
	return key, nil
}
