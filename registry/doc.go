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
// value forever, and per-object series are never deleted. Give each
// component a scope, register through it, and close it when the component
// goes away or fails to come up:
//
//	func NewWatcher(reg prometheus.Registerer, cluster string, connect func() error) (_ *Watcher, err error) {
//		scope := registry.NewScope(reg, registry.WithLabels(prometheus.Labels{"cluster": cluster}))
//		defer lifecycle.CloseOnError(&err, scope)
//
//		w := &Watcher{scope: scope}
//		scope.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
//			Name: "watcher_cache_objects",
//			Help: "Objects in the watcher's cache.",
//		}, func() float64 { return float64(w.objects.Load()) }))
//
//		if err := connect(); err != nil {
//			return nil, fmt.Errorf("connect to %s: %w", cluster, err)
//		}
//		return w, nil
//	}
//
// # Usage
//
// [NewScope] makes a scope on a parent Registerer, optionally with a prefix
// ([WithPrefix]) and constant labels ([WithLabels]). [Scope.Register],
// [Scope.MustRegister] and [Scope.Unregister] behave as a
// prometheus.Registry's do, and record what the scope owns; promauto.With(scope)
// works too. The metrics are the user's own objects: Inc, Set and Observe go
// straight to them.
//
// NewScope on a scope, its short form [Scope.Child], and NewScope on
// client_golang's WrapRegistererWith or WrapRegistererWithPrefix of a scope
// (any number of them) all make a scope nested in it, with the prefixes and
// labels of the scope, the wrappers and its own: it registers straight into
// the same registry, and the outer scope counts, gathers and closes it. A
// long-lived program scope with a scope per component in it is the usual
// shape. A collector registered through a wrapper of a scope is the scope's
// too.
//
// [Scope.DeleteOnClose] names series in vectors the component shares with
// others (one per link, tenant or cluster) that Close must delete.
// [Scope.Gather] gathers only what one scope owns, for tests; package
// registrytest builds leak checks on it.
//
// # Ownership
//
// client_golang identifies a collector by the fully-qualified names and
// constant label values of what it describes, and unregisters whatever holds
// that identity. A Scope never removes what it does not own: before each
// Unregister, Close registers a question with the descriptors recorded at
// Register, and reads from the [prometheus.AlreadyRegisteredError] who holds
// the identity. A scope with no prefix and no labels registers the user's
// collector itself, and takes back the identity if the registry holds that
// same collector; code outside the scopes that collides with it meets the
// user's collector. A scope with a prefix or labels registers a collector of
// its own in front of the user's, which makes its scrapes cheaper than
// client_golang's wrappers, and takes back only that; code outside meets it
// as a collector that names the scope and unwraps to the user's. Either way
// the recorded descriptors find the registration even if the collector's
// Describe has changed, and a collector that somebody else put in the
// scope's place is left alone and reported with [ErrNotRegistered].
//
// Unchecked collectors, whose Describe yields nothing, cannot be
// unregistered from a prometheus.Registry at all. The scopes of one tree
// expose them through one unchecked collector of their own, which the
// outermost scope registers the first time it is needed; Close removes them
// from it. Closing the outermost scope leaves that one collector, empty, in a
// prometheus.Registry for the registry's lifetime.
//
// The rules, one by one, with the tests that prove them, are in the
// repository's [GUARANTEES].
//
// # Diagnostics
//
// [WithName] names a scope, and [Scope.String] gives the name with the
// labels and prefix: close errors, leak reports, the ownership page and the
// panic of a colliding MustRegister say whose each metric is.
// [WithLeakReport] reports a scope dropped without Close while it still owns
// registrations or series to delete, with where it was made and a way to
// close it ([Leak.Close]). [Handler] serves the tree of scopes and what each
// owns, of one scope or of every scope made with [WithIndex].
//
// # Limits
//
// client_golang offers no atomic "unregister if it is still mine". Between
// the question Close asks and its Unregister, an outsider who unregisters
// the scope's collector and registers an equal one of their own (straight on
// the parent, behind the scope's back) loses theirs to the Unregister. Code
// that stays safe removes a scope's collectors through the scope only.
//
// A scope with no prefix and no labels knows its registration by the
// collector: if the parent refuses to unregister it, the collector stays
// exposed there.
//
// # Concurrency
//
// All methods of Scope and Index are safe for concurrent use. A Register
// racing with Close either completes first, and is removed by Close, or
// returns [ErrClosed]. Unregister runs alone on its scope: Registers and
// Unregisters of that scope wait for it. Scrapes hold no lock of a scope's
// while they collect, only for a moment to copy what it owns, so a slow
// collector delays no call of a scope's; a slow parent delays only the calls
// that wait for it: those of the scope, and, the first time one of a tree's
// scopes registers an unchecked collector, that tree's other unchecked
// registrations.
//
// # Errors
//
// Register returns the parent's errors, and a
// [prometheus.AlreadyRegisteredError] as a plain registry would make it:
// errors.As works as usual, and ExistingCollector is the collector its
// owner registered, never an object of promscope's. It returns [ErrClosed]
// once the Close of the scope, or of a scope it is nested in, has begun,
// and [ErrNilCollector] for a nil collector. Close combines one
// [UnregisterError] per collector it could not remove, and one [DeleteError]
// per vector whose series a DeleteOnClose could not delete, with
// go.uber.org/multierr; errors.Is and errors.As see through the
// combination. Misuse that no caller can handle, such as
// [Scope.DeleteOnClose] with no labels or Register on a Scope that NewScope
// did not make, panics with a message starting "registry:". If the parent
// panics, the panic goes on, and a later Close carries on where it stopped.
//
// [GUARANTEES]: https://github.com/promscope/promscope/blob/main/docs/GUARANTEES.md
package registry
