// Package mirror reproduces the original bug, linkerd2's service mirror
// before its fix: a constructor in another package than the one that
// registers, failing after the registration.
package mirror

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"kube"
)

var errUnreachable = errors.New("cluster unreachable")

type Watcher struct{ api *kube.API }

// NewWatcher is the bug, in the shape of NewRemoteClusterServiceWatcher:
// the API's gauges stay registered when the cluster cannot be reached.
func NewWatcher(reg prometheus.Registerer, clusterName string) (*Watcher, error) { // want NewWatcher:"registers service_cache_size,endpoints_cache_size at kube/kube.go:29 \\(result 0, registerer 0\\)"
	remoteAPI, err := kube.NewAPI(reg)
	if err != nil {
		return nil, fmt.Errorf("cannot initialize api for target cluster %s: %w", clusterName, err) // NewAPI failed: it registered nothing
	}
	_, err = remoteAPI.ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("cannot connect to api for target cluster %s: %w", clusterName, err) // want `^service_cache_size and endpoints_cache_size registered at kube/kube\.go:29 \(via kube\.NewAPI\) stay registered when this returns an error: unregister them, or call \(\*API\)\.UnregisterGauges, before returning$`
	}
	return &Watcher{api: remoteAPI}, nil
}

// NewWatcherFixed is the fix that was made: the suggested fix for
// NewWatcher makes the same change (mirror.go.golden).
func NewWatcherFixed(reg prometheus.Registerer, clusterName string) (*Watcher, error) { // want NewWatcherFixed:"^registers"
	remoteAPI, err := kube.NewAPI(reg)
	if err != nil {
		return nil, fmt.Errorf("cannot initialize api for target cluster %s: %w", clusterName, err)
	}
	_, err = remoteAPI.ServerVersion()
	if err != nil {
		remoteAPI.UnregisterGauges()
		return nil, fmt.Errorf("cannot connect to api for target cluster %s: %w", clusterName, err)
	}
	return &Watcher{api: remoteAPI}, nil
}

// NewWatcherClosing calls Close, which does not unregister.
func NewWatcherClosing(reg prometheus.Registerer, connect func() error) (*Watcher, error) { // want NewWatcherClosing:"^registers"
	remoteAPI, err := kube.NewAPI(reg)
	if err != nil {
		return nil, err
	}
	if err := connect(); err != nil {
		remoteAPI.Close()
		return nil, err // want `stay registered when this returns an error: unregister them, or call \(\*API\)\.UnregisterGauges`
	}
	return &Watcher{api: remoteAPI}, nil
}

// NewWatcherDropping does not even keep the API.
func NewWatcherDropping(reg prometheus.Registerer, connect func() error) error { // want NewWatcherDropping:"registers .* \\(result -1, registerer 0, own\\)"
	if _, err := kube.NewAPI(reg); err != nil {
		return err
	}
	return connect() // want `service_cache_size and endpoints_cache_size registered at kube/kube\.go:29 \(via kube\.NewAPI\)`
}

// NewWatcherSucceeding only returns errors before the registration.
func NewWatcherSucceeding(reg prometheus.Registerer, connect func() error) (*Watcher, error) { // want NewWatcherSucceeding:"^registers"
	if err := connect(); err != nil {
		return nil, err
	}
	remoteAPI, err := kube.NewAPI(reg)
	if err != nil {
		return nil, err
	}
	return &Watcher{api: remoteAPI}, nil
}

// NewThroughInterface gets an interface: its UnregisterGauges method is
// taken to undo the registration by its name, but not suggested, as
// nothing is known of what it does.
func NewThroughInterface(reg prometheus.Registerer, connect func() error) (kube.Interface, error) { // want NewThroughInterface:"^registers"
	api, err := kube.NewInterface(reg)
	if err != nil {
		return nil, err
	}
	if err := api.Sync(); err != nil {
		api.UnregisterGauges()
		return nil, err
	}
	if err := connect(); err != nil {
		return nil, errUnreachable // want `\(via kube\.NewInterface\) stay registered when this returns an error: unregister them before returning, or call kube\.NewInterface after the last error return$`
	}
	return api, nil
}

// newLocal registers through a function of the same package, declared
// after its caller.
func newLocal(reg prometheus.Registerer, connect func() error) (*Watcher, error) {
	w, err := newWatcherNoFail(reg)
	if err != nil {
		return nil, err
	}
	if err := connect(); err != nil {
		return nil, err // want `registered at kube/kube\.go:29 \(via newWatcherNoFail\)`
	}
	return w, nil
}

func newWatcherNoFail(reg prometheus.Registerer) (*Watcher, error) {
	api, err := kube.NewAPI(reg)
	if err != nil {
		return nil, err
	}
	return &Watcher{api: api}, nil
}

// loadAll reports every error it found, as rule loaders do.
func loadAll(reg prometheus.Registerer) (*Watcher, []error) {
	api, err := kube.NewAPI(reg)
	if err != nil {
		return nil, []error{err}
	}
	return &Watcher{api: api}, nil
}

// Reload returns an error when loadAll failed: it registered nothing then.
func Reload(reg prometheus.Registerer, connect func() error) (*Watcher, error) { // want Reload:"^registers"
	w, errs := loadAll(reg)
	if errs != nil {
		return nil, errUnreachable
	}
	if err := connect(); err != nil {
		return nil, err // want `\(via loadAll\) stay registered`
	}
	return w, nil
}
