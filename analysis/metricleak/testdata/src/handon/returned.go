package handon

import (
	"errors"
	"io/fs"
	"log"
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

// errStopped is nil until Shutdown runs, and errLazy until lazy does: a
// return of either may hand the API back.
var errStopped, errLazy error

// Shutdown stops the package.
func Shutdown() { errStopped = errors.New("stopped") }

func lazy() { errLazy = errors.New("lazy") }

// errAliased is a new error, but another variable holds its address, and
// anything may store through it.
var errAliased = errors.New("aliased")

var aliasOfErr = &errAliased

// ReturnedWithUnset returns the API with variables that may be nil.
func ReturnedWithUnset(reg prometheus.Registerer, stopped, aliased bool) (*kube.API, error) { // want ReturnedWithUnset:"^registers"
	lazy()
	api, err := kube.NewAPI(reg)
	if err != nil {
		return nil, err
	}
	switch {
	case stopped:
		return api, errStopped
	case aliased:
		*aliasOfErr = nil
		return api, errAliased
	}
	return api, errLazy
}

func init() { fs.ErrClosed = nil }

// ReturnedWithSpoiltSentinel returns the API with another package's ErrXxx,
// which this package sets to nil.
func ReturnedWithSpoiltSentinel(reg prometheus.Registerer) (*kube.API, error) { // want ReturnedWithSpoiltSentinel:"^registers"
	api, err := kube.NewAPI(reg)
	if err != nil {
		return nil, err
	}
	return api, fs.ErrClosed
}

// LoggedByDefer returns the API with a new error, which a deferred closure
// only reads.
func LoggedByDefer(reg prometheus.Registerer, connect func() error) (_ *kube.API, err error) { // want LoggedByDefer:"^registers"
	defer func() {
		if err != nil {
			log.Print(err)
		}
	}()
	api, e := kube.NewAPI(reg)
	if e != nil {
		return nil, e
	}
	if e := connect(); e != nil {
		return api, errors.New("not connected") // want `via kube\.NewAPI\) stay registered`
	}
	return api, nil
}
