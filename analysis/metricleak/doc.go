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
// reports the first return where this happens:
//
//	func NewServiceMirror(reg prometheus.Registerer) (*Mirror, error) {
//		api, err := kube.NewAPI(reg) // registers gauges, hands them back in api
//		if err != nil {
//			return nil, err
//		}
//		if err := connect(); err != nil {
//			return nil, err // reported
//		}
//		if err := sync(); err != nil {
//			return nil, err // listed in the report
//		}
//		return &Mirror{api: api}, nil
//	}
//
// with the message
//
//	service_cache_size and endpoints_cache_size registered at kube/api.go:31
//	(via kube.NewAPI) stay registered when this or 1 other return gives an
//	error: unregister them, or call (*API).UnregisterGauges, before returning
//
// and a suggested fix that calls api.UnregisterGauges() before both
// returns. Registering through a promscope registry.Scope, closed by a
// deferred lifecycle.CloseOnError, prevents the leak for good.
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
//     the registration to its caller: through a result that owns it,
//     through the registerer the caller passed in when that is a scope, or
//     by registering, through the registerer the caller passed in or into
//     the default registry, a collector the caller passed in too (a helper
//     like register(reg, c), registerAll(reg, cs...) or a Register(c) that
//     calls prometheus.MustRegister(c)), which the caller then owns as if
//     it had registered the collector itself;
//   - a call to a function known to register, through the registerer the
//     caller passed in, collectors of its own that it hands to nobody
//     (returns, keeps, sends on a channel or gives a goroutine) and leaves
//     registered when it succeeds: an opener that registers a pool's
//     collector and hands back the pool without it. Unless that registerer
//     is a scope, or one the caller made with a method that unregisters,
//     nothing the caller holds can unregister those, and the message says
//     so.
//
// Such a function carries a fact, so this works across packages.
//
// A registration is left behind at a return if the function has an error
// result, the return may give a non-nil error, and some path leads from the
// registration to the return on which it is neither undone nor handed on.
// The owners of a registration are the collectors, the value a callee
// handed back, the scope it went through or any other registerer the
// function made and registered through (a wrapper that can unregister all
// it registered, say), and whatever they are stored in, captured by, pushed
// on, or given to a function that keeps its argument in another (a fact
// carries this too). A collector registered in a loop over an array or
// slice literal has for owner too the object that all the literal's
// elements are parts of, if there is one: the struct whose fields the
// literal lists. A string or number read from an owner carries
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
//     method value that does, including one stored in a struct or appended
//     to a slice of cleanups that a closure runs;
//   - any of these deferred before the return, even if the deferred call
//     only acts when the function fails;
//   - a loop that unregisters each element of an owned slice, or of a part
//     of it (for _, c := range cs[:i] { reg.Unregister(c) }), counted as
//     undoing all of it where the loop is entered;
//
// and handed on by
//
//   - returning an owner (in any result but the error), unless the error
//     returned with it is never nil: an error tested against nil and found
//     not nil just before, a new error from errors.New or fmt.Errorf, a
//     value of a concrete type, or a sentinel (a package variable of the
//     package's own that its declaration, and every other store, gives a
//     new error, or another package's exported ErrXxx that the package sets
//     to nothing that may be nil), and not a result that a deferred call
//     may change (defer func() { err = nil }()). The collectors themselves
//     (a result of one of client_golang's types, or a slice, array or
//     pointer of them) are handed back even then: returned with an error,
//     they can only be for the caller to take back. An error that may be
//     nil hands the owner back, but not on a path where it is the error of
//     another registering call (or of a later turn of the same call, in a
//     loop) that failed there: alone, among the errors listed in a call
//     to errors.Join, or merged into it by a phi on the way from the
//     registration, as in
//     return m, errors.Join(reg.Register(m.a), reg.Register(m.b)) and in
//     err = reg.Register(m.a); if err == nil { err = reg.Register(m.b) };
//     return m, err. What the others registered stays, and the caller,
//     given an error, ignores the other results, all but the collectors
//     themselves, which are handed back even so;
//   - storing it where it outlives the call: a field of a parameter or the
//     receiver, a package variable, a captured variable, a map or a
//     lifecycle.Stack that is one of these; passing it to a function that
//     keeps it there, such as a setter on the receiver or the Store, Swap,
//     LoadOrStore and CompareAndSwap methods of sync.Map, atomic.Value and
//     atomic.Pointer, in a call or a deferred one; calling, or deferring, a
//     closure that stores it there; sending it on a channel; starting a
//     goroutine with it;
//   - registering through a *registry.Scope the caller passed in, or
//     registering a collector the caller passed in or a package variable
//     holds: the caller, or the program, owns those. So it does what a
//     function shares: a result that, on every return, is package
//     variables, parts of them, a slice or array literal of them, or its
//     own arguments (a getter of package variables, one or several in a
//     fresh slice, or a method that returns its receiver; a fact says so
//     across packages), when the arguments it may be are the caller's or
//     the program's. A literal, or a copy of an argument, that the
//     function stores anything else into is its own;
//   - registering through a registerer parameter of an unexported function
//     that is used only in calls, each of which passes it a scope (or a
//     parameter of its own that is one): the constructor a lifecycle.Slot's
//     build function calls with its scope.
//
// A function that stores the owner of a registration where it outlives the
// call is not one that hands the registration to its caller, even if it
// also returns the owner: a get-or-create method that keeps what it makes
// in a map of its receiver, and returns it, gives its caller nothing to
// undo.
//
// A registration whose registerer is nil (promauto.With(nil)) or a registry
// made in the call is not a leak: the registry goes away with what is in it,
// and the next call makes another. A registry is made in the call when it
// comes from prometheus.NewRegistry or NewPedanticRegistry, from a function
// whose first result is, on every return, a registry it made (a fact says so
// across packages), or from a field of an object that the function made,
// stored only that registry in, and kept to itself: an object given to a
// call, a method's included, may have had the field changed. So is one
// that the function stores, once, in a field of any object, its receiver
// say, and reads back with nothing in between that the object or the field
// is given to (a closure that uses the object only to read that field, or
// to reach its other fields, counts for nothing, wherever it goes): a method
// that makes its receiver a registry each time it runs leaves nothing for
// the next run to collide with. Registerers
// are followed through wrappers, calls like prometheus.WrapRegistererWith
// that take one registerer and return another, but only client_golang's
// own wrappers are known to register into the registerer they were given,
// so a nil or made registry exempts a registration only through those, in
// the function or, as its fact says, in the callee it is given to. So does
// a registerer of a type whose Register method does nothing but return nil
// and whose MustRegister does nothing (a no-op of the project's own, as
// tests use; a fact says so across packages): it registers nowhere.
//
// A registering call that failed (its error, or a []error, is not nil)
// registered nothing, or its callee left behind what it registered, which is
// the callee's leak and reported there (unless the callee hands it back with
// the error; see Limitations): so the branch taken after that failure, or a
// return of that error itself, is not reported. The error is followed into
// the variables that merge it with other calls' errors, as when each case of
// a switch assigns err from a constructor and one test of err follows. A
// branch taken where errors.As, errors.AsType, or errors.Is with a target
// other than nil, finds the error to match is taken after a failure too.
// A branch taken where the error a return gives, or errors.Join of
// errors that include it, is found nil does not lead to that return giving
// an error (unless a loop makes the error anew on the way, or it is read
// from a variable kept in memory, which may be set anywhere).
// A callee that hands the collectors themselves back with its error (see
// above) leaves them to its caller, whose failure branch is then followed.
// Likewise, a branch taken where a value that holds what was registered is
// nil (if c != nil { reg.Unregister(c) }) is not taken after the
// registration: a registered collector is not nil, and a callee that handed
// back nil handed back nothing to undo. Nor is one taken where the
// registerer is nil that the registering call itself went through (if reg
// != nil { reg.Unregister(c) } after promauto.With(reg), which is the
// suggested fix there): through a nil registerer, promauto.With and
// client_golang's wrappers register nowhere. A Register call whose error is
// tested for prometheus.AlreadyRegisteredError (by a type assertion,
// errors.As or errors.AsType) is idempotent by design, and not tracked at
// all.
//
// A function whose error result is nil on every return (a constant nil,
// the error of a call to such a function, or an error tested before the
// return as described under Limitations) never fails, and carries a fact
// that says so. A return of its error gives no error, and a branch taken
// only when its error is not nil is never taken.
//
// Functions named init, the main function of a command, closures within
// them and package-level variable initializers are not checked: what they
// register lives as long as the process, and a failure there ends it.
// Packages main are not checked at all unless the -commands flag is set:
// the setup functions of a command end the process when they fail, so
// their reports, though true, are harmless.
//
// # Reports
//
// A function gets one report for each set of registrations that some of its
// returns leave behind, at the first of those returns in the source; the
// others are the report's related positions, and the message counts them. The
// message names up to five of the metrics (where their names are constants,
// as the collector's options give them: without the prefix of a wrapping
// registerer) and how many more there are, where the first was registered (a
// file of the package checked by its name, one of the same module by its path
// in the module, others by the import path of their package, as in
// github.com/org/repo/kube/api.go:31; the first place of a metric with a
// name, if any has one), the function it was registered through, and what to
// do: close the scope the metrics went through, or unregister them, or call a
// method of the value the callee handed back that undoes what the callee
// registered, or register them (or, registered through a function, call it)
// after the last error return; where one of the registrations may have
// failed at a return that leaves the others (the return gives its error,
// as above), to unregister each whose registration succeeded, and, if the
// function holds that one's collector, that Unregister of one that failed
// removes the collector it collided with; no method is named there, as it
// would undo the one that failed too.
// Only a method known by a fact to unregister, and called without
// arguments or type arguments, is named: a method of an interface, of
// which nothing is known, never is. Where nothing the function
// holds can unregister the registrations (a callee handed nothing back), the
// message says so, and to have the callee hand them back or to make the call
// after the last error return.
// Collectors that describe nothing (unchecked collectors, whose Describe
// method, not one of client_golang's, does nothing but return, as its body or
// a fact for another package's shows) cannot be taken back by Unregister: the
// message says to register them after the last error return instead, and,
// where only some of the registrations describe nothing, says both.
//
// The other places the message counts, where registrations of the set were
// made in a call of the function other than the first, are related
// positions too, each saying where that call registered.
//
// # Suggested fixes
//
// For the plain cases a report carries a fix that inserts, before each of
// its returns, the calls that undo the registrations, as a maintainer does
// by hand: reg.Unregister(c) for a collector held in a variable and
// registered through a registerer held in one (prometheus.Unregister(c) for
// the default registry, promauto's included), or api.UnregisterGauges() for
// the value a callee handed back, when the method is known to unregister.
// Inserting there, rather than deferring an undo guarded on the error right
// after the registration, keeps the signature (a deferred guard needs a
// named error result) and puts the undo beside the failure it handles.
//
// A fix is offered only if the error of every return of the report is
// never nil (see Rules), so that the undo never runs on success, and if at
// each of them:
//
//   - the registering call has run on every path there, and Register's
//     error (or, for a method, the callee's) was tested and found nil:
//     elsewhere the collector registered under the same descriptors is
//     someone else's, which Unregister would remove;
//   - every name the undo uses denotes what it did at the registration: a
//     variable assigned only where it is declared (or, for a parameter or a
//     package variable, not in the function), a field assigned nowhere in
//     the function and changed by no call that may run before the return
//     (a function of the package changes the fields its body stores into,
//     any other call any field of what it is given), and the same package;
//   - the registerer has an Unregister method.
//
// The registerer given to promauto.With may be nil, which registers
// nowhere: its undo is guarded by a test of it. Scopes get no fix: close
// them with a deferred lifecycle.CloseOnError. Nor do collectors that
// describe nothing, which Unregister leaves in place. Run the command with
// -fix to apply the fixes.
//
// # Suppressing a report
//
// Staticcheck's directives silence a report, each with a reason after the
// check's name (metricleak, alone or in a comma-separated list of checks):
//
//	//lint:ignore metricleak the process exits when this fails
//	return err
//
// on the line just before the reported return silences that report, the
// related returns it lists included, and
//
//	//lint:file-ignore metricleak these tests leak on purpose
//
// anywhere in a file silences every report in the file. A directive without
// a reason is not honoured, and is itself reported.
//
// # Internal errors
//
// A panic while analysing one function is reported as an internal error at
// that function ("internal error: metricleak failed on F and skipped it"),
// and the analysis goes on with the others. The function gets no other
// report; if the panic came while its facts were computed, it gets no
// facts either, and its callers see no registration through it.
//
// # Flags
//
// -commands checks packages main too.
//
// # Limitations
//
// The analysis follows values within one function and facts about callees
// it can name statically. A callee reached through an interface or a
// function value is unknown: passing an owner to it is neither undoing nor
// handing it on, registrations made through it are not seen, and its error
// may be anything. Facts are not path-sensitive: a callee that registers
// only on some paths is taken to register always, and one that keeps an
// argument, or starts a goroutine holding it, hands it on even if it then
// fails. Facts are exported for the functions and methods with exported
// names, the only ones another package can call. What a callee leaves
// behind when it fails is reported in the callee alone, so a leaking
// callee of another module is reported only where that module is checked,
// and a callee that returns its owner together with an error that may be
// nil (return t, t.start()) is reported nowhere: it hands the owner back,
// and its caller's branch on that error is taken for one on which nothing
// was registered. So is one whose error is another registration's only
// through a variable kept in memory (a named result of a function that
// defers a call, a variable a closure captures), through a phi before the
// registration, or through errors.Join of a slice other than a literal
// (errors.Join(errs...) after errs = append(errs, err)); and one whose
// failure merges with the error in more ways than the analysis follows
// (thousands of combinations of phis), or in a function where it has
// followed failures through tens of thousands of blocks already (a chain
// of a hundred registrations, each after the last succeeded). One whose
// error is never nil there (see Rules) hands nothing back, as Go's
// convention has its caller ignore the other results, and is reported.
// A function that hands back what it registered inside a value that
// another function makes (return wrap(c), where wrap stores c in a struct
// it returns) is taken to hand it to nobody: its callers are told that
// nothing they hold can unregister it, though a method of that value may.
// A named error result that a deferred call can read stays in memory, and
// any load of it is taken for the registering call's own error once that
// error was stored in it.
//
// A registerer that is an interface parameter of an exported function, or
// of any function used as a value, is taken not to be a scope, even if the
// caller passes one; declare the parameter as *registry.Scope to say that
// the caller owns what is registered. Collectors held in a package
// variable, or in a field of the receiver, are taken to be owned by the
// program or the receiver, so registering them and failing is not
// reported, though a retry may then fail with a duplicate registration; so
// are those of an array or slice literal made of them in the function, as
// a loop over one registers them, and those a function shares (see
// Rules). A helper that returns package variables on some paths and new
// collectors on others shares nothing: what it returns is taken to be new.
// A literal, or a copy of an argument, given to a call is taken not to be
// written by it. A callee that hands back a value owning some of what it
// registers, and leaves the rest with its caller's registerer, is taken to
// hand back all of it.
//
// A registry made in the call and kept in a field is followed through the
// object it is stored in, not through the values of the object's other
// fields: a field that leads back to the object (s.self.reg = other) may
// set it unseen, with or without a closure; and a field promoted from an
// embedded struct, which each access reaches anew, is not recognized as
// the one stored into, so a registry kept there counts as one from
// elsewhere.
//
// Undoing is not checked for its conditions or its registerer: a deferred
// cleanup counts whatever its condition, even one that acts only when the
// function succeeds, and Unregister on any registerer counts, even on the
// parent of a prefixing or labelling wrapper the collector was registered
// through, where client_golang finds nothing to remove.
//
// Whether the error on a path is nil is judged from constants, from
// functions that never fail, from the check of the registering call's own
// error, and from a test of the returned error itself that every path to the
// return passes on its nil branch (the return after
// "if err != nil { return nil, err }"); a return of an error variable that
// is nil on that path, but not visibly so, may be reported. A function that
// calls itself, or whose named error result a deferred call may set, is
// taken to fail sometimes.
//
// A collector held in an interface, one whose Describe describes nothing
// only on some paths, and whatever a callee registers (its fact does not
// say which collectors describe nothing) are taken to describe something,
// and get the Unregister advice.
//
// The body of a loop over a function iterator (for x := range seq) is a
// function of its own once built: what it registers, and the returns in
// it, are not checked.
//
// A //lint:ignore on a related return, rather than on the reported one,
// silences nothing.
package metricleak
