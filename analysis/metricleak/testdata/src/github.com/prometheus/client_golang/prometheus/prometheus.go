// Package prometheus is a stub of client_golang's prometheus package: just
// enough of its API, with the same names and signatures, for the tests.
package prometheus

import "errors"

type Desc struct{ name string }

type Metric interface{ Desc() *Desc }

type Collector interface {
	Describe(chan<- *Desc)
	Collect(chan<- Metric)
}

type Registerer interface {
	Register(Collector) error
	MustRegister(...Collector)
	Unregister(Collector) bool
}

type AlreadyRegisteredError struct {
	ExistingCollector, NewCollector Collector
}

func (AlreadyRegisteredError) Error() string {
	return "duplicate metrics collector registration attempted"
}

type Registry struct{ cs []Collector }

func NewRegistry() *Registry         { return &Registry{} }
func NewPedanticRegistry() *Registry { return &Registry{} }

func (r *Registry) Register(c Collector) error {
	for _, have := range r.cs {
		if have == c {
			return AlreadyRegisteredError{ExistingCollector: have, NewCollector: c}
		}
	}
	r.cs = append(r.cs, c)
	return nil
}

func (r *Registry) MustRegister(cs ...Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

func (r *Registry) Unregister(c Collector) bool {
	for i, have := range r.cs {
		if have == c {
			r.cs = append(r.cs[:i], r.cs[i+1:]...)
			return true
		}
	}
	return false
}

var DefaultRegisterer Registerer = NewRegistry()

func Register(c Collector) error        { return DefaultRegisterer.Register(c) }
func MustRegister(cs ...Collector)      { DefaultRegisterer.MustRegister(cs...) }
func Unregister(c Collector) bool       { return DefaultRegisterer.Unregister(c) }
func BuildFQName(a, b, c string) string { return a + "_" + b + "_" + c }

type Labels map[string]string

type Opts struct {
	Namespace, Subsystem, Name, Help string
	ConstLabels                      Labels
}

type (
	GaugeOpts   Opts
	CounterOpts Opts
)

type metric struct{ name string }

func (m *metric) Describe(chan<- *Desc) {}
func (m *metric) Collect(chan<- Metric) {}
func (m *metric) Set(float64)           {}
func (m *metric) Inc()                  {}

type Gauge interface {
	Collector
	Set(float64)
}

type Counter interface {
	Collector
	Inc()
}

type GaugeFunc interface{ Collector }

type CounterVec struct{ *metric }

func NewGauge(o GaugeOpts) Gauge                               { return &metric{o.Name} }
func NewCounter(o CounterOpts) Counter                         { return &metric{o.Name} }
func NewGaugeFunc(o GaugeOpts, f func() float64) GaugeFunc     { return &metric{o.Name} }
func NewCounterVec(o CounterOpts, labels []string) *CounterVec { return &CounterVec{&metric{o.Name}} }

// The wrappers make a new Registerer, as client_golang's do.
func WrapRegistererWith(l Labels, r Registerer) Registerer       { return &wrapping{r} }
func WrapRegistererWithPrefix(p string, r Registerer) Registerer { return &wrapping{r} }

type wrapping struct{ Registerer }

var errStub = errors.New("stub")
