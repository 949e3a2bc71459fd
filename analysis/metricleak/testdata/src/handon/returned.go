package handon

import (
	"os"

	"github.com/prometheus/client_golang/prometheus"

	"kube"
)

// errMaybe may be nil: a return of it may hand the API back.
var errMaybe = maybe()

func maybe() error { return nil }

// ReturnedWithVariable returns the API with an error variable that may be
// nil, so it may hand the API back.
func ReturnedWithVariable(reg prometheus.Registerer) (*kube.API, error) { // want ReturnedWithVariable:"^registers"
	api, err := kube.NewAPI(reg)
	if err != nil {
		return nil, err
	}
	return api, errMaybe
}

// ReturnedWithSentinel returns the API with another package's sentinel,
// which is never nil.
func ReturnedWithSentinel(reg prometheus.Registerer, exists bool) (*kube.API, error) { // want ReturnedWithSentinel:"^registers"
	api, err := kube.NewAPI(reg)
	if err != nil {
		return nil, err
	}
	if !exists {
		return api, os.ErrNotExist // want `via kube\.NewAPI\) stay registered`
	}
	return api, nil
}

// ResetByDefer returns the API with an error that a deferred call drops:
// the caller gets it with a nil error, and owns it.
func ResetByDefer(reg prometheus.Registerer, connect func() error) (_ *kube.API, err error) { // want ResetByDefer:"^registers"
	defer func() { err = nil }()
	api, e := kube.NewAPI(reg)
	if e != nil {
		return nil, e
	}
	if err := connect(); err != nil {
		return api, err
	}
	return api, nil
}
