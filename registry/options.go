package registry

import (
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

// options is what one NewScope call asks for; newView composes it with the
// options of the scopes above.
type options struct {
	prefix string
	labels prometheus.Labels
}

// WithLabels adds constant labels to every metric registered through the
// scope, as [prometheus.WrapRegistererWith] does. Several WithLabels options
// are merged; where two set the same name, the later one wins. The map is
// copied.
//
// A scope nested in another has the labels of both. A label that the scope
// and a scope above it both set makes every registration through the inner
// scope fail, as nesting two WrapRegistererWith with the same label does; a
// label that a collector's own descriptors already carry makes its
// registration fail with the parent's error.
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
// WithPrefix given to one call wins. A nested scope's prefix comes after the
// prefix of the scope above: prefix "b_" in a scope with prefix "a_" exposes
// "a_b_name".
func WithPrefix(prefix string) Option {
	return optionFunc(func(o *options) { o.prefix = prefix })
}

// newOptions applies opts over the defaults (no prefix, no labels).
func newOptions(opts []Option) options {
	if len(opts) == 0 {
		return options{}
	}
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt.apply(&o)
		}
	}
	return o
}
