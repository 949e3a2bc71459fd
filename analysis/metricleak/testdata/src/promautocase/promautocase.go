// Package promautocase registers with promauto.
package promautocase

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var errFailed = errors.New("failed")

type metrics struct {
	requests prometheus.Counter
	inflight prometheus.Gauge
}

// newMetrics registers and hands the metrics back.
func newMetrics(reg prometheus.Registerer) *metrics {
	f := promauto.With(reg)
	return &metrics{
		requests: f.NewCounter(prometheus.CounterOpts{Namespace: "app", Name: "requests_total"}),
		inflight: f.NewGauge(prometheus.GaugeOpts{Namespace: "app", Name: "inflight"}),
	}
}

type Server struct{ m *metrics }

func NewServer(reg prometheus.Registerer, listen func() error) (*Server, error) { // want NewServer:"^registers"
	m := newMetrics(reg)
	if err := listen(); err != nil {
		return nil, err // want `^app_requests_total and app_inflight registered at promautocase\.go:22 \(via newMetrics\) stay registered when this returns an error: unregister them before returning, or call newMetrics after the last error return$`
	}
	return &Server{m: m}, nil
}

func DefaultRegistry(listen func() error) (prometheus.Counter, error) { // want DefaultRegistry:"^registers"
	c := promauto.NewCounter(prometheus.CounterOpts{Name: "jobs_total"})
	if err := listen(); err != nil {
		return nil, err // want `^jobs_total registered at promautocase\.go:38 stays`
	}
	return c, nil
}

func WithRegisterer(reg prometheus.Registerer, listen func() error) (prometheus.Gauge, error) { // want WithRegisterer:"^registers"
	g := promauto.With(reg).NewGauge(prometheus.GaugeOpts{Name: "up"})
	if err := listen(); err != nil {
		return nil, err // want `^up registered at promautocase\.go:46 stays`
	}
	return g, nil
}

// WithRegistererUndone is WithRegisterer with its suggested fix: where
// the gauge was registered, reg is not nil.
func WithRegistererUndone(reg prometheus.Registerer, listen func() error) (prometheus.Gauge, error) { // want WithRegistererUndone:"^registers"
	g := promauto.With(prometheus.WrapRegistererWithPrefix("a_", reg)).NewGauge(prometheus.GaugeOpts{Name: "up"})
	if err := listen(); err != nil {
		if reg != nil {
			reg.Unregister(g)
		}
		return nil, err
	}
	return g, nil
}

// WithFallback registers into the default registerer where reg is nil:
// testing reg is no test of where the gauge went.
func WithFallback(reg prometheus.Registerer, listen func() error) (prometheus.Gauge, error) { // want WithFallback:"^registers"
	r := reg
	if r == nil {
		r = prometheus.DefaultRegisterer
	}
	g := promauto.With(r).NewGauge(prometheus.GaugeOpts{Name: "up"})
	if err := listen(); err != nil {
		if reg != nil {
			reg.Unregister(g)
		}
		return nil, err // want `^up registered at promautocase\.go:\d+ stays`
	}
	return g, nil
}

func WithNil(listen func() error) (prometheus.Gauge, error) {
	g := promauto.With(nil).NewGauge(prometheus.GaugeOpts{Name: "up"})
	if err := listen(); err != nil {
		return nil, err
	}
	return g, nil
}

func WithPrivateRegistry(listen func() error) error {
	promauto.With(prometheus.NewRegistry()).NewGauge(prometheus.GaugeOpts{Name: "up"})
	return listen()
}

func UnregisterField(reg prometheus.Registerer, listen func() error) (*Server, error) { // want UnregisterField:"^registers"
	m := newMetrics(reg)
	if err := listen(); err != nil {
		reg.Unregister(m.requests)
		reg.Unregister(m.inflight)
		return nil, err
	}
	return &Server{m: m}, nil
}

// Options hold the registerer among other settings.
type Options struct {
	Registerer prometheus.Registerer
	Dir        string
}

func (o *Options) validate() error { return nil }

// FromOptions registers through a registerer loaded from its options: the
// options are not an owner that could undo or hand the registration on.
func FromOptions(o Options, open func(string) error) (*Server, error) { // want FromOptions:"^registers"
	opts := o
	if err := opts.validate(); err != nil {
		return nil, err
	}
	m := newMetrics(opts.Registerer)
	if err := open(opts.Dir); err != nil {
		return nil, err // want `app_requests_total and app_inflight registered at promautocase\.go:22 \(via newMetrics\)`
	}
	return &Server{m: m}, nil
}
