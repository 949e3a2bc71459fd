// Package promauto is a stub of client_golang's promauto package.
package promauto

import "github.com/prometheus/client_golang/prometheus"

type Factory struct{ r prometheus.Registerer }

func With(r prometheus.Registerer) Factory { return Factory{r: r} }

func (f Factory) NewCounter(o prometheus.CounterOpts) prometheus.Counter {
	c := prometheus.NewCounter(o)
	if f.r != nil {
		f.r.MustRegister(c)
	}
	return c
}

func (f Factory) NewGauge(o prometheus.GaugeOpts) prometheus.Gauge {
	g := prometheus.NewGauge(o)
	if f.r != nil {
		f.r.MustRegister(g)
	}
	return g
}

func (f Factory) NewGaugeFunc(o prometheus.GaugeOpts, fn func() float64) prometheus.GaugeFunc {
	g := prometheus.NewGaugeFunc(o, fn)
	if f.r != nil {
		f.r.MustRegister(g)
	}
	return g
}

func NewCounter(o prometheus.CounterOpts) prometheus.Counter {
	return With(prometheus.DefaultRegisterer).NewCounter(o)
}

func NewGaugeFunc(o prometheus.GaugeOpts, fn func() float64) prometheus.GaugeFunc {
	return With(prometheus.DefaultRegisterer).NewGaugeFunc(o, fn)
}
