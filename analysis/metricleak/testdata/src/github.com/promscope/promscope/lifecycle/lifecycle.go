// Package lifecycle is a stub of promscope's lifecycle package.
package lifecycle

import (
	"io"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/promscope/promscope/registry"
)

func CloseOnError(errp *error, c io.Closer) {
	if *errp != nil {
		c.Close()
	}
}

type Stack struct{ fns []func() error }

func (s *Stack) Push(c io.Closer)        { s.PushFunc(c.Close) }
func (s *Stack) PushFunc(f func() error) { s.fns = append(s.fns, f) }

func (s *Stack) Close() error {
	var err error
	for i := len(s.fns) - 1; i >= 0; i-- {
		if e := s.fns[i](); e != nil {
			err = e
		}
	}
	return err
}

type Slot[T io.Closer] struct {
	parent prometheus.Registerer
	cur    T
}

func NewSlot[T io.Closer](parent prometheus.Registerer) *Slot[T] { return &Slot[T]{parent: parent} }

func (s *Slot[T]) Replace(build func(*registry.Scope) (T, error)) (T, error) {
	scope := registry.NewScope(s.parent)
	v, err := build(scope)
	if err != nil {
		scope.Close()
		return v, err
	}
	s.cur = v
	return v, nil
}
