// Package metricleak defines an [analysis.Analyzer] that finds the
// constructor leak: a function that registers Prometheus metrics and then
// returns an error without undoing the registration.
//
// # Overview
//
// A constructor registers its metrics, then fails to connect and returns
// nil and an error. Nobody can unregister what it registered: the caller
// has no value to unregister through. The metrics stay in the registry, a
// GaugeFunc keeps the failed component reachable, and the next attempt fails
// with "duplicate metrics collector registration attempted". The analyzer
// reports the return statement where this happens:
//
//	func NewWatcher(reg prometheus.Registerer) (*Watcher, error) {
//		api, err := kube.NewAPI(reg) // registers gauges, hands them back in api
//		if err != nil {
//			return nil, err
//		}
//		if err := connect(); err != nil {
//			return nil, err // reported
//		}
//		return &Watcher{api: api}, nil
//	}
//
// with the message
//
//	service_cache_size registered at api.go:31 (via kube.NewAPI) stays
//	registered when this returns an error: close its scope, or call
//	(*API).UnregisterGauges, before returning
//
// The fix is to undo the registration on that path, or better, to register
// through a promscope registry.Scope and close it with a deferred
// lifecycle.CloseOnError.
//
// # Rules
//
// A registration is one of these calls:
//
//   - Register or MustRegister on any value with the methods of
//     prometheus.Registerer (a *prometheus.Registry, a registry.Scope, a
//     wrapper, the interface), and the package-level prometheus.Register and
//     MustRegister, which use the default registry;
//   - promauto.NewXxx (the default registry) and promauto.With(r).NewXxx;
//   - a call to a function, of any package, known to register and to hand
//     the registration to its caller: through a result that owns it, or
//     through the registerer the caller passed in. Such a function carries a
//     fact, so this works across packages.
//
// A registration is left behind at a return if the function has an error
// result, the return may give a non-nil error, and some path leads from the
// registration to the return on which it is neither undone nor handed on.
// The owners of a registration are the collectors, the value a callee
// handed back, the scope it went through or any other registerer the
// function made and registered through (a wrapper that can unregister all
// it registered, say), and whatever they are stored in, captured by, pushed
// on, or given to a function that keeps its argument in another (a fact
// carries this too). A string or number read from an owner carries
// nothing. It is undone by
//
//   - Unregister of an owner, on any registerer;
//   - a call, with an owner as receiver or argument, to a function that
//     unregisters: one whose body unregisters what it was given, closes a
//     scope, or calls such a function (a fact carries this across
//     packages). A method of an interface, whose body cannot be seen, counts
//     if it is named Close, Stop, Shutdown, Cleanup or Unregister-something;
//   - closing an owned registry.Scope, lifecycle.Stack or lifecycle.Slot,
//     directly, through lifecycle.CloseOnError, or through a closure or a
//     method value that does, including one stored in a struct;
//   - any of these deferred before the return, even if the deferred call
//     only acts when the function fails;
//
// and handed on by
//
//   - returning an owner (in any result but the error);
//   - storing it where it outlives the call: a field of a parameter or the
//     receiver, a package variable, a captured variable, a map or a
//     lifecycle.Stack that is one of these; passing it to a function that
//     keeps it there, such as a setter on the receiver; sending it on a
//     channel; starting a goroutine with it;
//   - registering through a *registry.Scope the caller passed in, or
//     registering a collector the caller passed in or a package variable
//     holds: the caller, or the program, owns those.
//
// A registration whose registerer is nil (promauto.With(nil)) or a registry
// the function made itself with prometheus.NewRegistry is not a leak: the
// registry goes away with what is in it. Registerers are followed through
// wrappers, calls like prometheus.WrapRegistererWith that take one
// registerer and return another. A registering call that failed (its error,
// or a []error, is not nil) registered nothing, so the branch that returns
// after that failure, or a return of that error itself, is not reported. A
// Register call whose error is tested for prometheus.AlreadyRegisteredError
// is idempotent by design, and not tracked at all.
//
// Functions named init, the main function of a command, closures within
// them and package-level variable initializers are not checked: what they
// register lives as long as the process, and a failure there ends it.
//
// # Limitations
//
// The analysis follows values within one function and facts about callees
// it can name statically. A callee reached through an interface or a
// function value is unknown: passing an owner to it is neither undoing nor
// handing it on, and registrations made through it are not seen. Facts are
// not path-sensitive: a callee that registers only on some paths is taken
// to register always, and one that keeps an argument, or starts a goroutine
// holding it, hands it on even if it then fails.
//
// A registerer that is an interface parameter is taken not to be a scope,
// even if the caller passes one; declare the parameter as *registry.Scope
// to say that the caller owns what is registered. Collectors held in a
// package variable, or in a field of the receiver, are taken to be owned by
// the program or the receiver, so registering them and failing is not
// reported, though a retry may then fail with a duplicate registration; a
// helper that returns package variables in a fresh slice hides them,
// though, and registering those is reported.
//
// Undoing is not checked for its conditions or its registerer: a deferred
// cleanup counts whatever its condition, even one that acts only when the
// function succeeds, and Unregister on any registerer counts, even on the
// parent of a prefixing or labelling wrapper the collector was registered
// through, where client_golang finds nothing to remove.
//
// Whether the error on a path is nil is judged from constants and from the
// check of the registering call's own error; a return of an error variable
// that is nil on that path, but not visibly so, may be reported.
//
// Only the function main is exempt: the setup functions of a command, which
// main calls and which end the process when they fail, are checked like any
// other, and their reports, though true, are harmless; leave cmd/... out of
// the run if they are noise.
package metricleak
