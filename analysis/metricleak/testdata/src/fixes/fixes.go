// Package fixes has the leaks whose fix is plain, which the analyzer
// suggests (fixes.go.golden is this file after them), and those it leaves
// to the maintainer.
package fixes

import (
	"errors"
	"fmt"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"kube"
)

var errFailed = errors.New("failed")

type Watcher struct{ api *kube.API }

// newWatcher is the original bug: the fix calls the method that undoes
// what kube.NewAPI registered, on every error return after it.
func newWatcher(reg prom.Registerer, connect, sync func() error) (*Watcher, error) {
	remoteAPI, err := kube.NewAPI(reg)
	if err != nil {
		return nil, err
	}
	if err := connect(); err != nil {
		return nil, fmt.Errorf("connect: %w", err) // want `\(via kube\.NewAPI\) stay registered when this or 2 other returns give an error: unregister them, or call \(\*API\)\.UnregisterGauges, before returning`
	}
	if err := sync(); err != nil {
		return nil, err // related
	}
	if !remoteAPI.Ready() {
		return nil, errFailed // related
	}
	return &Watcher{api: remoteAPI}, nil
}

type metrics struct {
	reg prom.Registerer
	up  prom.Gauge
}

func newMetrics(reg prom.Registerer) *metrics {
	m := &metrics{reg: reg, up: prom.NewGauge(prom.GaugeOpts{Name: "server_up"})}
	reg.MustRegister(m.up)
	return m
}

// Unregister undoes newMetrics.
func (m *metrics) Unregister() { m.reg.Unregister(m.up) } // want Unregister:"unregisters"

type server struct{ metrics *metrics }

// newServer keeps its metrics in a field of the server it makes, as
// Prometheus's write log does: the fix calls the undo method through it.
func newServer(reg prom.Registerer, open func() error) (*server, error) {
	s := &server{}
	s.metrics = newMetrics(reg)
	if err := open(); err != nil {
		return nil, fmt.Errorf("open: %w", err) // want `^server_up registered at fixes\.go:\d+ \(via newMetrics\) stays registered when this returns an error: unregister it, or call \(\*metrics\)\.Unregister, before returning$`
	}
	return s, nil
}

// collectors registers two collectors: the fix unregisters both, the last
// registered first, from the registerer they went through.
func collectors(reg prom.Registerer, connect func() error) error {
	requests := prom.NewCounter(prom.CounterOpts{Name: "requests_total"})
	wrapped := prom.WrapRegistererWithPrefix("app_", reg)
	wrapped.MustRegister(requests)
	up := promauto.With(reg).NewGauge(prom.GaugeOpts{Name: "up"}) // related: registered
	if err := connect(); err != nil {
		return err // want `^app_requests_total and up registered at fixes\.go:\d+ and 1 other place stay registered`
	}
	up.Set(1)
	return nil
}

// defaultRegistry registers on the default registry, through promauto: the
// fix names the prometheus package as this file imports it.
func defaultRegistry(connect func() error) (prom.Gauge, error) {
	factory := promauto.With(prom.DefaultRegisterer)
	g := factory.NewGauge(prom.GaugeOpts{Name: "ready"})
	c := promauto.NewCounter(prom.CounterOpts{Name: "starts_total"}) // related: registered
	if err := connect(); err != nil {
		return nil, err // want `^ready and starts_total registered at fixes\.go:\d+ and 1 other place stay registered`
	}
	c.Inc()
	return g, nil
}

// mayReturnNil returns an error that may be nil: an undo there would run
// on success too, so there is no fix.
func mayReturnNil(reg prom.Registerer, connect func() error) error {
	g := prom.NewGauge(prom.GaugeOpts{Name: "connected"})
	reg.MustRegister(g)
	return connect() // want `^connected registered at fixes\.go:\d+ stays registered`
}

// unnamed registers a collector held in no variable: no fix.
func unnamed(reg prom.Registerer, connect func() error) error {
	reg.MustRegister(prom.NewGauge(prom.GaugeOpts{Name: "unnamed"}))
	if err := connect(); err != nil {
		return err // want `^unnamed registered at fixes\.go:\d+ stays registered`
	}
	return nil
}

// reassigned assigns the collector's variable again: no fix.
func reassigned(reg prom.Registerer, connect func() error) error {
	g := prom.NewGauge(prom.GaugeOpts{Name: "first"})
	reg.MustRegister(g)
	g = prom.NewGauge(prom.GaugeOpts{Name: "second"})
	if err := connect(); err != nil {
		return err // want `^first registered at fixes\.go:\d+ stays registered`
	}
	g.Set(1)
	return nil
}

// shadowed returns where the registerer's name means another variable:
// no fix.
func shadowed(reg prom.Registerer, other prom.Registerer, connect func() error) error {
	g := prom.NewGauge(prom.GaugeOpts{Name: "shadowed"})
	reg.MustRegister(g)
	if reg := other; reg != nil {
		return errFailed // want `^shadowed registered at fixes\.go:\d+ stays registered`
	}
	return nil
}

// packageShadowed returns where the name of the prometheus package means
// a variable: no fix.
func packageShadowed(connect func() error) error {
	c := promauto.NewCounter(prom.CounterOpts{Name: "package_shadowed_total"})
	g := prom.NewGauge(prom.GaugeOpts{Name: "package_shadowed"})
	prom.MustRegister(g) // related: registered
	if prom := connect(); prom != nil {
		return prom // want `^package_shadowed_total and package_shadowed registered at fixes\.go:\d+ and 1 other place stay registered when this or 1 other return gives an error`
	}
	if err := connect(); err != nil {
		return err // related
	}
	c.Inc()
	return nil
}

// checked registers with Register and returns its error: where connect
// fails, Register has succeeded, and the fix unregisters.
func checked(reg prom.Registerer, connect func() error) error {
	g := prom.NewGauge(prom.GaugeOpts{Name: "checked"})
	if err := reg.Register(g); err != nil {
		return err
	}
	if err := connect(); err != nil {
		return err // want `^checked registered at fixes\.go:\d+ stays registered`
	}
	return nil
}

// merged returns one error for two failures: where Register failed, the
// collector registered under the same name is someone else's, which
// Unregister would remove, so there is no fix.
func merged(reg prom.Registerer, connect func() error) error {
	g := prom.NewGauge(prom.GaugeOpts{Name: "merged"})
	err := reg.Register(g)
	if err == nil {
		err = connect()
	}
	if err != nil {
		return err // want `^merged registered at fixes\.go:\d+ stays registered`
	}
	return nil
}

// nilOwner returns where the API is nil: kube.NewAPI handed back nothing
// that holds a registration, so nothing is reported there.
func nilOwner(reg prom.Registerer, connect func() error) (*Watcher, error) {
	api, err := kube.NewAPI(reg)
	if err != nil {
		return nil, err
	}
	if api == nil {
		return nil, errFailed
	}
	return &Watcher{api: api}, connect()
}

// unchecked ignores kube.NewAPI's error: the API may be nil, and calling
// its method could panic, so there is no fix.
func unchecked(reg prom.Registerer, connect func() error) (*Watcher, error) {
	api, _ := kube.NewAPI(reg)
	if err := connect(); err != nil {
		return nil, err // want `\(via kube\.NewAPI\) stay registered`
	}
	return &Watcher{api: api}, nil
}

// throughInterface holds an interface, whose methods are not known to
// unregister: no fix.
func throughInterface(reg prom.Registerer, connect func() error) (kube.Interface, error) {
	api, err := kube.NewInterface(reg)
	if err != nil {
		return nil, err
	}
	if err := connect(); err != nil {
		return nil, err // want `\(via kube\.NewInterface\) stay registered when this returns an error: unregister them before returning, or call kube\.NewInterface after the last error return$`
	}
	return api, nil
}

var goCollector = prom.NewGauge(prom.GaugeOpts{Name: "process_go"})

type client struct {
	reg prom.Registerer
	up  prom.Gauge
}

func newClient(reg prom.Registerer) *client {
	c := &client{reg: reg, up: prom.NewGauge(prom.GaugeOpts{Name: "client_up"})}
	reg.MustRegister(c.up)
	return c
}

// UnregisterGo unregisters the program's collector, not the client's: it
// undoes nothing newClient did.
func (c *client) UnregisterGo() { prom.Unregister(goCollector) }

// Refresh registers a gauge in place of the old one: no undo either.
func (c *client) Refresh() { // want Refresh:"registers client_up at fixes/fixes.go:\\d+ \\(result -1, registerer 0, collectors \\[0\\]\\)"
	c.reg.Unregister(c.up)
	c.up = prom.NewGauge(prom.GaugeOpts{Name: "client_up"})
	c.reg.MustRegister(c.up)
}

// notUndone is told of neither method as an undo, and calling UnregisterGo
// undoes nothing.
func notUndone(reg prom.Registerer, connect func() error) (*client, error) {
	cl := newClient(reg)
	if err := connect(); err != nil {
		cl.UnregisterGo()
		return nil, err // want `^client_up registered at fixes\.go:\d+ \(via newClient\) stays registered when this returns an error: unregister it before returning, or call newClient after the last error return$`
	}
	return cl, nil
}

type mustRegisterer interface {
	MustRegister(...prom.Collector)
}

// onlyMustRegister registers through a type that cannot unregister: no fix.
func onlyMustRegister(reg mustRegisterer, connect func() error) error {
	g := prom.NewGauge(prom.GaugeOpts{Name: "only_must"})
	reg.MustRegister(g)
	if err := connect(); err != nil {
		return err // want `^only_must registered at fixes\.go:\d+ stays registered`
	}
	return nil
}

// sometimes registers only when enabled; where it did not, Unregister
// would remove another collector with the same name: no fix.
func sometimes(reg prom.Registerer, enabled bool, connect func() error) error {
	g := prom.NewGauge(prom.GaugeOpts{Name: "sometimes"})
	if enabled {
		reg.MustRegister(g)
	}
	if err := connect(); err != nil {
		return err // want `^sometimes registered at fixes\.go:\d+ stays registered`
	}
	return nil
}

// Registry is a package variable that packageReassigned changes after
// registering through it: no fix.
var Registry prom.Registerer = prom.NewRegistry()

func packageReassigned(connect func() error) error {
	g := prom.NewGauge(prom.GaugeOpts{Name: "package_reassigned"})
	Registry.MustRegister(g)
	Registry = prom.WrapRegistererWithPrefix("x_", Registry)
	if err := connect(); err != nil {
		return err // want `^package_reassigned registered at fixes\.go:\d+ stays registered`
	}
	return nil
}

type holder struct{ g prom.Gauge }

func (h *holder) rebuild() { h.g = prom.NewGauge(prom.GaugeOpts{Name: "rebuilt"}) }

// changedByCall registers a field that a method then changes: no fix.
func changedByCall(reg prom.Registerer, connect func() error) error {
	h := &holder{g: prom.NewGauge(prom.GaugeOpts{Name: "changed_by_call"})}
	reg.MustRegister(h.g)
	h.rebuild()
	if err := connect(); err != nil {
		return err // want `^changed_by_call registered at fixes\.go:\d+ stays registered`
	}
	return nil
}

type service struct {
	metrics *metrics
	name    string
}

func (s *service) label() string { return s.name }

func (s *service) run() { s.metrics = nil }

// newService calls a getter of the service before its return, which
// changes no field, and a method that does after it: the fix stands.
func newService(reg prom.Registerer, open func(string) error) (*service, error) {
	s := &service{name: "svc"}
	s.metrics = newMetrics(reg)
	if err := open(s.label()); err != nil {
		return nil, err // want `^server_up registered at fixes\.go:\d+ \(via newMetrics\) stays registered when this returns an error: unregister it, or call \(\*metrics\)\.Unregister, before returning$`
	}
	s.run()
	return s, nil
}

// resetAll clears the metrics of every holder it is given.
func resetAll(prefix string, hs ...*holder) {
	for _, h := range hs {
		h.rebuild()
	}
}

// changedByVariadicCall gives the holder to a variadic helper that changes
// its field: no fix.
func changedByVariadicCall(reg prom.Registerer, connect func() error) error {
	h := &holder{g: prom.NewGauge(prom.GaugeOpts{Name: "changed_by_variadic"})}
	reg.MustRegister(h.g)
	resetAll("x", nil, h)
	if err := connect(); err != nil {
		return err // want `^changed_by_variadic registered at fixes\.go:\d+ stays registered`
	}
	return nil
}

// clearFirst changes a field of a holder it reaches through the slice it
// is given.
func clearFirst(hs []*holder) { hs[0].g = nil }

// changedThroughSlice gives the holder to it in a slice: no fix.
func changedThroughSlice(reg prom.Registerer, connect func() error) error {
	h := &holder{g: prom.NewGauge(prom.GaugeOpts{Name: "changed_through_slice"})}
	reg.MustRegister(h.g)
	clearFirst([]*holder{h})
	if err := connect(); err != nil {
		return err // want `^changed_through_slice registered at fixes\.go:\d+ stays registered`
	}
	return nil
}

// otherPackageReassigned registers through another package's variable,
// then changes it: no fix.
func otherPackageReassigned(connect func() error) error {
	g := prom.NewGauge(prom.GaugeOpts{Name: "other_package_reassigned"})
	prom.DefaultRegisterer.MustRegister(g)
	prom.DefaultRegisterer = prom.WrapRegistererWithPrefix("x_", prom.DefaultRegisterer)
	if err := connect(); err != nil {
		return err // want `^other_package_reassigned registered at fixes\.go:\d+ stays registered`
	}
	return nil
}
