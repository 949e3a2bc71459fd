// Package kube has the shape of the package behind the original bug: NewAPI
// registers gauges and hands them back in the API, which has a method to
// unregister them.
package kube

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var errNoRegisterer = errors.New("kube: no registerer")

// API caches the objects of one cluster.
type API struct {
	reg    prometheus.Registerer
	gauges []prometheus.GaugeFunc
}

// NewAPI registers the cache-size gauges on reg; the API owns them.
func NewAPI(reg prometheus.Registerer) (*API, error) { // want NewAPI:"registers service_cache_size,endpoints_cache_size at kube/kube.go:29 \\(result 0, registerer 0\\)"
	if reg == nil {
		return nil, errNoRegisterer
	}
	api := &API{reg: reg}
	size := func() float64 { return 0 }
	api.gauges = append(api.gauges,
		promauto.With(reg).NewGaugeFunc(prometheus.GaugeOpts{Name: "service_cache_size"}, size),
		promauto.With(reg).NewGaugeFunc(prometheus.GaugeOpts{Name: "endpoints_cache_size"}, size),
	)
	return api, nil
}

// UnregisterGauges removes what NewAPI registered.
func (api *API) UnregisterGauges() { // want UnregisterGauges:"unregisters"
	for _, g := range api.gauges {
		api.reg.Unregister(g)
	}
}

// Close stops the API's informers. Despite its name it leaves the gauges
// registered: the analyzer goes by what a method does, not its name.
func (api *API) Close() error { // want Close:"never fails"
	api.gauges = api.gauges[:0:0]
	return nil
}

// ServerVersion asks the cluster for its version.
func (api *API) ServerVersion() (string, error) {
	if api.reg == nil {
		return "", errNoRegisterer
	}
	return "v1.29.0", nil
}

// Ready reports whether the informers have synced.
func (api *API) Ready() bool { return len(api.gauges) > 0 }

// Interface is how some callers see the API.
type Interface interface {
	Sync() error
	UnregisterGauges()
}

// Sync is a stand-in for the informers' sync; it never fails, which its
// callers' branches on its error can rely on.
func (api *API) Sync() error { return nil } // want Sync:"never fails"

// NewInterface wraps NewAPI; it hands the registration on too.
func NewInterface(reg prometheus.Registerer) (Interface, error) { // want NewInterface:"registers service_cache_size,endpoints_cache_size at kube/kube.go:29 \\(result 0, registerer 0\\)"
	api, err := NewAPI(reg)
	if err != nil {
		return nil, err
	}
	return api, nil
}

// Lazy is an unchecked collector: it describes nothing.
type Lazy struct{}

func (*Lazy) Describe(chan<- *prometheus.Desc) {} // want Describe:"does nothing"

func (*Lazy) Collect(chan<- prometheus.Metric) {}

// GenericLazy is an unchecked collector of any element type.
type GenericLazy[T any] struct{ last T }

func (*GenericLazy[T]) Describe(chan<- *prometheus.Desc) {} // want Describe:"does nothing"

func (*GenericLazy[T]) Collect(chan<- prometheus.Metric) {}
