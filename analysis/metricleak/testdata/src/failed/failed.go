// Package failed returns after registering calls that failed. A call that
// failed registered nothing, or its callee left behind what it registered,
// which is reported in the callee: a return on that failure is not
// reported, also after the error was merged with other calls' errors.
package failed

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"kv"
)

var errUnknown = errors.New("unknown backend")

// Store is what the constructors below make.
type Store interface {
	Get(key string) (string, error)
}

// createStore has the shape of cortex's kv.createClient: the err it tests
// is one of the constructors' errors, merged, and each of those
// constructors registered nothing if it failed.
func createStore(backend, addr string, reg prometheus.Registerer) (Store, error) {
	var s Store
	var err error
	switch backend {
	case "kv":
		s, err = kv.NewClient(reg, addr)
	case "mem":
		s, err = newMem(reg, addr)
	default:
		return nil, fmt.Errorf("%w: %s", errUnknown, backend)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Open fails only where createStore failed.
func Open(backend, addr string, reg prometheus.Registerer) (Store, error) { // want Open:"registers kv_requests_total,mem_entries at kv/kv.go:30 \\(result 0, registerer 2\\)"
	s, err := createStore(backend, addr, reg)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", backend, err)
	}
	return s, nil
}

// connect fails after createStore succeeded, too.
func connect(backend, addr string, reg prometheus.Registerer, dial func() error) (Store, error) {
	s, err := createStore(backend, addr, reg)
	if err != nil {
		return nil, err
	}
	if err := dial(); err != nil {
		return nil, err // want `^kv_requests_total and mem_entries registered at kv/kv\.go:30 \(via createStore\) stay registered when this returns an error: unregister them before returning, or call createStore after the last error return$`
	}
	return s, nil
}

type mem struct{ entries prometheus.Gauge }

func (m *mem) Get(key string) (string, error) {
	if key == "" {
		return "", errUnknown
	}
	return key, nil
}

// newMem is declared after its caller, and registers only after its last
// error return.
func newMem(reg prometheus.Registerer, addr string) (*mem, error) {
	if addr != "" {
		return nil, fmt.Errorf("mem: no address is needed, got %q", addr)
	}
	m := &mem{entries: prometheus.NewGauge(prometheus.GaugeOpts{Name: "mem_entries"})}
	if err := reg.Register(m.entries); err != nil {
		return nil, err
	}
	return m, nil
}

// newLeaky leaves its gauge behind when dial fails.
func newLeaky(reg prometheus.Registerer, dial func() error) (*mem, error) {
	m := &mem{entries: prometheus.NewGauge(prometheus.GaugeOpts{Name: "leaky_entries"})}
	reg.MustRegister(m.entries)
	if err := dial(); err != nil {
		return nil, err // want `^leaky_entries registered at failed\.go:89 stays registered when this returns an error: unregister it before returning, or register it after the last error return$`
	}
	return m, nil
}

// useLeaky returns newLeaky's failure, which is newLeaky's leak, and then
// one of its own.
func useLeaky(reg prometheus.Registerer, dial, sync func() error) (*mem, error) {
	m, err := newLeaky(reg, dial)
	if err != nil {
		return nil, err
	}
	if err := sync(); err != nil {
		return nil, err // want `^leaky_entries registered at failed\.go:89 \(via newLeaky\) stays registered when this returns an error: unregister it before returning, or call newLeaky after the last error return$`
	}
	return m, nil
}

// OpenSynced returns the failure of a callee of another package that
// leaks there: kv reports it.
func OpenSynced(reg prometheus.Registerer, addr string, sync func() error) (*kv.Client, error) { // want OpenSynced:"registers kv_requests_total at kv/kv.go:30 \\(result 0, registerer 0\\)"
	c, err := kv.NewSyncedClient(reg, addr, sync)
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	if _, err := c.Get("ready"); err != nil {
		return nil, err // want `^kv_requests_total registered at kv/kv\.go:30 \(via kv\.NewSyncedClient\) stays registered when this returns an error: unregister it before returning, or call kv\.NewSyncedClient after the last error return$`
	}
	return c, nil
}
