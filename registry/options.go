package registry

import (
	"fmt"
	"maps"

	"github.com/prometheus/client_golang/prometheus"
)

// An Option configures a [Scope]. Options are passed to [NewScope],
// [Scope.Child] and, in package lifecycle, to NewSlot.
type Option interface {
	apply(*options)
}

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

// options is what a scope applies to every collector registered through it.
type options struct {
	prefix string
	labels prometheus.Labels
}

// WithLabels adds constant labels to every metric registered through the
// scope, as [prometheus.WrapRegistererWith] does. Several WithLabels options
// are merged; where two set the same name, the later one wins. The map is
// copied.
//
// As with client_golang, a label that a collector's own descriptors already
// carry makes its registration fail with the parent's error.
func WithLabels(labels prometheus.Labels) Option {
	labels = maps.Clone(labels)
	return optionFunc(func(o *options) {
		if len(labels) == 0 {
			return
		}
		if o.labels == nil {
			o.labels = make(prometheus.Labels, len(labels))
		}
		maps.Copy(o.labels, labels)
	})
}

// WithPrefix prepends prefix to the name of every metric registered through
// the scope, as [prometheus.WrapRegistererWithPrefix] does. The last
// WithPrefix given to one call wins. A child's prefix comes after its
// parent's: a child with prefix "b_" of a scope with prefix "a_" exposes
// "a_b_name".
func WithPrefix(prefix string) Option {
	return optionFunc(func(o *options) { o.prefix = prefix })
}

// newOptions applies opts over the defaults (no prefix, no labels).
func newOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt.apply(&o)
		}
	}
	return o
}

// under composes a child's options with its parent's: prefixes concatenate
// and label sets merge. A label name set by both is programmer misuse.
func (o options) under(parent options) options {
	out := options{prefix: parent.prefix + o.prefix}
	if len(parent.labels)+len(o.labels) > 0 {
		out.labels = make(prometheus.Labels, len(parent.labels)+len(o.labels))
		maps.Copy(out.labels, parent.labels)
		for name, value := range o.labels {
			if _, dup := parent.labels[name]; dup {
				panic(fmt.Sprintf("registry: Child: label %q is already set by the parent scope", name))
			}
			out.labels[name] = value
		}
	}
	return out
}

// wrap returns c as the parent must see it: with the prefix and labels
// applied. With neither, it is c itself, so the common case adds no
// indirection to Describe or Collect.
func (o options) wrap(c prometheus.Collector) prometheus.Collector {
	if o.prefix != "" {
		c = prometheus.WrapCollectorWithPrefix(o.prefix, c)
	}
	if len(o.labels) > 0 {
		c = prometheus.WrapCollectorWith(o.labels, c)
	}
	return c
}
