// Package unchecked registers collectors that describe nothing: Unregister
// cannot take them back, so the reports say to register them later, and
// offer no fix.
package unchecked

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"kube"
)

var errFailed = errors.New("failed")

func start() error { return errFailed }

// lazy describes nothing, and collects what it is given later.
type lazy struct{ inner prometheus.Collector }

func (*lazy) Describe(chan<- *prometheus.Desc) {} // want Describe:"does nothing"

func (l *lazy) Collect(ch chan<- prometheus.Metric) {
	if l.inner != nil {
		l.inner.Collect(ch)
	}
}

// described describes its descriptor.
type described struct{ desc *prometheus.Desc }

func (d *described) Describe(ch chan<- *prometheus.Desc) { ch <- d.desc } // want Describe:"keeps 0>-1"

func (*described) Collect(chan<- prometheus.Metric) {}

func newLazy(reg prometheus.Registerer) (*lazy, error) {
	l := &lazy{}
	if err := reg.Register(l); err != nil {
		return nil, err
	}
	if err := start(); err != nil {
		return nil, err // want `^the metrics registered at unchecked\.go:\d+ stay registered when this returns an error: Unregister cannot take back a collector that describes nothing, so register them after the last error return$`
	}
	return l, nil
}

// newKubeLazy registers a collector of another package that describes
// nothing, known by a fact.
func newKubeLazy(reg prometheus.Registerer) error {
	l := &kube.Lazy{}
	reg.MustRegister(l)
	return start() // want `^the metrics registered at unchecked\.go:\d+ stay registered when this returns an error: Unregister cannot take back a collector that describes nothing, so register them after the last error return$`
}

// newDescribed registers a collector that describes what it collects:
// Unregister takes it back.
func newDescribed(reg prometheus.Registerer) error {
	reg.MustRegister(&described{})
	return start() // want `^the metrics registered at unchecked\.go:\d+ stay registered when this returns an error: unregister them before returning, or register them after the last error return$`
}

// generic describes nothing, whatever it is instantiated with.
type generic[T any] struct{ last T }

func (*generic[T]) Describe(chan<- *prometheus.Desc) {} // want Describe:"does nothing"

func (*generic[T]) Collect(chan<- prometheus.Metric) {}

func newGeneric(reg prometheus.Registerer) error {
	g := &generic[int]{}
	reg.MustRegister(g)
	return start() // want `^the metrics registered at unchecked\.go:\d+ stay registered when this returns an error: Unregister cannot take back a collector that describes nothing, so register them after the last error return$`
}

// newKubeGeneric registers another package's generic collector that
// describes nothing.
func newKubeGeneric(reg prometheus.Registerer) error {
	reg.MustRegister(&kube.GenericLazy[string]{})
	return start() // want `^the metrics registered at unchecked\.go:\d+ stay registered when this returns an error: Unregister cannot take back a collector that describes nothing, so register them after the last error return$`
}

// newMixed registers one collector of each kind.
func newMixed(reg prometheus.Registerer) error {
	reg.MustRegister(&described{}, &lazy{})
	return start() // want `^the metrics registered at unchecked\.go:\d+ stay registered when this returns an error: unregister them before returning, and register those that describe nothing, which Unregister cannot take back, after the last error return$`
}
