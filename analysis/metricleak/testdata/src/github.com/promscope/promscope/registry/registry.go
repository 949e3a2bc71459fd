// Package registry is a stub of promscope's registry package.
package registry

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

type Option interface{ apply() }

type Scope struct {
	parent prometheus.Registerer
	cs     []prometheus.Collector
}

func NewScope(parent prometheus.Registerer, opts ...Option) *Scope { return &Scope{parent: parent} }

func (s *Scope) Register(c prometheus.Collector) error {
	if err := s.parent.Register(c); err != nil {
		return err
	}
	s.cs = append(s.cs, c)
	return nil
}

func (s *Scope) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := s.Register(c); err != nil {
			panic(err)
		}
	}
}

func (s *Scope) Unregister(c prometheus.Collector) bool { return s.parent.Unregister(c) }

func (s *Scope) Child(opts ...Option) *Scope { return NewScope(s, opts...) }

func (s *Scope) Close() error {
	var err error
	for _, c := range s.cs {
		if !s.parent.Unregister(c) {
			err = errors.New("registry: not registered")
		}
	}
	return err
}
