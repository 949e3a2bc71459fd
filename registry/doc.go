// Package registry provides [Scope], a [prometheus.Registerer] that owns what
// is registered through it and removes all of it on [Scope.Close].
//
// # Overview
//
// Components of a controller (cluster watchers, informers, per-tenant
// workers) register metrics in their constructors. When a constructor fails
// halfway, or the component is recycled, those metrics stay registered: the
// retry fails with "duplicate metrics collector registration attempted", a
// stale GaugeFunc keeps the dead component reachable and reports its last
// value forever, and per-object series are never deleted. A Scope makes the
// ownership explicit. Give each component its own scope, register through
// it, and close it when the component goes away or fails to come up:
//
//	func NewWatcher(reg prometheus.Registerer, cluster string) (_ *Watcher, err error) {
//		scope := registry.NewScope(reg, registry.WithLabels(prometheus.Labels{"cluster": cluster}))
//		defer lifecycle.CloseOnError(&err, scope)
//		w := &Watcher{scope: scope}
//		scope.MustRegister(prometheus.NewGaugeFunc(opts, w.cacheSize))
//		if err := w.connect(); err != nil {
//			return nil, err // the gauge is gone again
//		}
//		return w, nil
//	}
//
// # Usage
//
// [NewScope] makes a scope on a parent Registerer, optionally adding a
// prefix ([WithPrefix]) and constant labels ([WithLabels]).
// [Scope.Register], [Scope.MustRegister] and [Scope.Unregister] behave as a
// prometheus.Registry's do, and record what the scope owns; promauto.With(scope)
// works too. The metrics registered are the user's own objects: Inc, Set and
// Observe go straight to them, with nothing in between.
//
// Scopes nest one way: NewScope on a scope (or its short form [Scope.Child])
// makes a scope inside it, which registers into the same parent with the
// prefixes and labels of both, is counted and gathered by the outer scope,
// and is closed with it. A long-lived program scope with a scope per
// component inside it is the usual shape. Code that is handed a scope may
// also wrap it with client_golang's WrapRegistererWith or
// WrapRegistererWithPrefix, register through the wrapper, or make a scope of
// its own on the wrapper; all of that is owned and closed as if it had been
// registered on the scope directly.
//
// [Scope.DeleteOnClose] names series in vectors the component shares with
// others (one per link, tenant or cluster) that Close must delete.
// [Scope.Gather] gathers only what one scope owns, for tests; package
// registrytest builds leak checks on it.
//
// # Diagnostics
//
// [WithName] names a scope, and [Scope.String] gives the name with the
// labels and prefix: close errors, leak reports and the ownership page say
// whose each metric is. [WithLeakReport] reports a scope dropped without
// Close while it still owns registrations, with the line that made it.
// [Handler] serves the tree of open scopes and what each owns.
//
// # Ownership
//
// client_golang identifies a collector by the fully-qualified names and
// constant label values of what it describes, and unregisters whatever holds
// that identity. A Scope never removes what it does not own. It registers a
// small record of its own in place of each collector; on Close it first asks
// the parent who holds the identity (by registering the record again, and
// reading the [prometheus.AlreadyRegisteredError]), and unregisters only if
// the answer is its own record. If somebody else has replaced the scope's
// collector with an equal one, theirs stays registered and Close reports an
// error wrapping [ErrNotRegistered].
//
// The record describes what the collector described at Register, so Close
// finds the registration even if the collector's Describe has changed since.
// After Close it collects nothing and no longer refers to the user's
// collector, so nothing keeps the component reachable, even where the
// parent keeps the record.
//
// Unchecked collectors, whose Describe yields nothing, cannot be
// unregistered from a prometheus.Registry at all. The scopes of one tree
// expose them through one unchecked collector of their own, which the
// outermost scope registers the first time it is needed; Close removes
// them from it. Closing the outermost scope leaves that one collector,
// empty, in a prometheus.Registry for the registry's lifetime.
//
// # Limits
//
// client_golang offers no atomic "unregister if it is still mine". Between
// the question Close asks and its Unregister, an outsider who unregisters
// the scope's collector and registers an equal one of their own (straight on
// the parent, behind the scope's back) loses theirs to the Unregister. Code
// that stays safe removes a scope's collectors through the scope only.
//
// A caller that registers straight on the parent, not through the scope, and
// collides with a scope's registration gets an AlreadyRegisteredError whose
// ExistingCollector is the scope's record, not the user's collector: the
// parent holds the record, and a prometheus.Registry unwraps only its own
// wrappers. The record prints as the metric names it holds and the name of
// the scope that holds it (see [WithName]), and has a method
// Unwrap() prometheus.Collector that returns the user's collector (nil once
// the scope has closed). Register through the scope, and the error names
// the user's collectors.
//
// # Concurrency
//
// All methods of Scope are safe for concurrent use. A Register racing with
// Close either completes first, and is removed by Close, or returns
// [ErrClosed]. A scope calls its parent without holding its own lock, and
// scrapes take no lock of the scope's, so a slow parent delays only the
// call that is waiting for it.
//
// # Errors
//
// Register returns the parent's errors as they are, so
// errors.As(err, &prometheus.AlreadyRegisteredError{}) works as usual, with
// ExistingCollector set to the collector really registered. It returns
// [ErrClosed] after Close and [ErrNilCollector] for a nil collector.
// Close combines one [UnregisterError] per collector it could not remove with
// go.uber.org/multierr; errors.Is and errors.As see through the combination.
// Misuse that no caller can handle, such as [Scope.DeleteOnClose] with no
// labels or Register on a Scope that NewScope did not make, panics with a
// message starting "registry:".
package registry
