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
	name   string
	report func(Leak)
	index  *Index
	err    error // set by no Option: the labels of wrappers that a probe found set one label twice
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
//
// A scope with labels (or a prefix) registers a collector of its own in place
// of each of the user's, and adds the labels at every scrape, at less cost
// than WrapRegistererWith (see [BENCHMARKS]), though not for nothing: a
// component whose collectors carry the labels as ConstLabels can keep them
// there, in a scope without labels. The parent holds the scope's collector,
// not the user's, so its own Unregister of the user's collector returns
// false: unregister through the scope. Code that registers straight on the
// parent and collides meets the scope's collector as the ExistingCollector of
// a [prometheus.AlreadyRegisteredError], where client_golang's wrapper hands
// out the user's: a type assertion to the user's type fails, and its method
// Unwrap() prometheus.Collector returns the user's collector.
//
// [BENCHMARKS]: https://github.com/promscope/promscope/blob/main/BENCHMARKS.md
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
// the scope, as [prometheus.WrapRegistererWithPrefix] does, with a collector
// of the scope's in place of the user's, as [WithLabels] says. The last
// WithPrefix given to one call wins. A nested scope's prefix comes after the
// prefix of the scope above: prefix "b_" in a scope with prefix "a_" exposes
// "a_b_name".
func WithPrefix(prefix string) Option {
	return optionFunc(func(o *options) { o.prefix = prefix })
}

// WithName names the scope in errors, leak reports and the ownership page
// (see [Scope.String] and [Handler]). The name of a scope nested in another is
// the outer scope's name, "/", then its own: "mirror/west"; a nested scope
// without a name of its own has the outer scope's, and one nested in a scope
// without a name has its own alone. The last WithName given to one call
// wins.
func WithName(name string) Option {
	return optionFunc(func(o *options) { o.name = name })
}

// WithLeakReport makes the scope, and every scope nested in it, report itself
// if it is dropped without Close: when the Scope NewScope returned, and
// every copy of it, are unreachable while the scope, or a scope nested in
// it, still owns registrations, or has a [Scope.DeleteOnClose] pending whose
// vectors still hold series with its labels, report is called once, with
// what it left behind (see [Leak]). It is called on a goroutine of its
// own, which a runtime cleanup starts, possibly with other reports at the
// same time: guard what it shares with the program. It may block, and call
// [Leak.Close], without holding up the program's other cleanups; it must
// not refer to the scope.
//
// A nested scope is reported whether or not the scope around it is still
// open; the outer scope still closes it. Each leaked metric is named once: a
// scope nested in one that was reported is not reported, since that report's
// [Leak.Close] takes it back too, and a report leaves out the nested scopes
// reported before it. So a component dropped together with the scopes around
// it is one report, or one per scope that left something of its own. A child
// used only as a labelled view, whose handle is dropped while code still
// writes its metrics, is reported, and [Leak.Close] takes those metrics back:
// keep such a handle, or make the view with [prometheus.WrapRegistererWith],
// whose registrations the scope owns. A handle is dropped once the garbage
// collector finds nothing refers to it, which may be right after its last
// use, before its variable goes out of scope: a program scope used last to
// make a Child can be reported while the child runs. defer s.Close() keeps s
// until the function returns.
//
// A scope dropped while it has nothing to report is not reported but
// closed, as soon as it holds no registration and no nested scope (a
// pending DeleteOnClose with no series to delete is forgotten), so that the
// scope it is nested in no longer keeps it.
//
// Without this option (or an [Index]) no scope is watched and nothing
// costs, and a nested scope dropped without Close stays in the scope it is
// nested in until that one closes; with it, each scope records where it
// was made (one runtime.Callers) and adds a runtime cleanup. A scope that
// something still refers to never becomes unreachable and so cannot be
// reported: a component whose goroutines still run, or one that a GaugeFunc
// of its scope reads. [Handler] shows those instead.
func WithLeakReport(report func(Leak)) Option {
	return optionFunc(func(o *options) { o.report = report })
}

// WithIndex lists the scope in x, for [Handler], from NewScope until its
// Close completes, with every scope nested in it. [Scope.MustRegister] looks
// there for the holder of a metric that its own tree does not hold. It
// applies to an outermost scope; a nested scope is listed under the scope it
// is nested in, and ignores it: to see a nested scope's page alone, give
// Handler the scope itself. Runtime cleanups close a scope of the tree
// dropped while it owns nothing, so that x no longer lists it (see [Index]).
// As with [WithLeakReport], each scope of the tree records where it was made
// (one runtime.Callers), which the page shows.
func WithIndex(x *Index) Option {
	return optionFunc(func(o *options) { o.index = x })
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
