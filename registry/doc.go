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
// ownership explicit. Give each component its own scope on the shared
// registry, register through it, and close it when the component goes away
// or fails to come up:
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
// [NewScope] wraps a parent Registerer, optionally adding a prefix
// ([WithPrefix]) and constant labels ([WithLabels]). [Scope.Register],
// [Scope.MustRegister] and [Scope.Unregister] behave as the parent's do, and
// record what the scope owns; promauto.With(scope) works too. The metrics
// registered are the user's own objects: Inc, Set and Observe go straight to
// them, with no wrapper in between.
//
// [Scope.Child] makes a nested scope that the parent scope closes with
// itself. [Scope.DeleteOnClose] names series in vectors the component shares
// with others (one per link, tenant or cluster) that Close must delete.
// [Scope.Gather] gathers only what one scope owns, for tests; package
// registrytest builds leak checks on it.
//
// # Ownership
//
// client_golang unregisters by descriptor identity, not by object: any
// collector describing the same descriptors removes whatever holds them. A
// Scope never removes what it does not own. It registers a small wrapper of
// its own in place of each collector, and on Close asks the parent who holds
// the identity (by registering the wrapper again, and reading
// [prometheus.AlreadyRegisteredError]) before it unregisters. If somebody
// else has replaced the scope's collector with an equal one, theirs stays
// registered and Close reports an error wrapping [ErrNotRegistered].
//
// Unchecked collectors, whose Describe yields nothing, cannot be
// unregistered from a prometheus.Registry at all. Close silences the
// wrapper instead: it exposes nothing afterwards and no longer references the
// user's collector, so nothing keeps the component reachable. The parent
// still holds the empty wrapper, a few bytes, for its lifetime.
//
// # Concurrency
//
// All methods of Scope are safe for concurrent use. A Register racing with
// Close either completes first, and is removed by Close, or returns
// [ErrClosed]. Register, Unregister and Close call the parent while holding
// the scope's lock, so a parent must not call back into the scope.
//
// # Errors
//
// Register returns the parent's errors as they are, so
// errors.As(err, &prometheus.AlreadyRegisteredError{}) works as usual, with
// ExistingCollector set to the collector really registered. It returns
// [ErrClosed] after Close and wraps [ErrNilCollector] for a nil collector.
// Close combines one [UnregisterError] per collector it could not remove with
// go.uber.org/multierr; errors.Is and errors.As see through the combination.
// Misuse that no caller can handle, such as [Scope.DeleteOnClose] with no
// labels, panics with a message starting "registry:".
package registry
