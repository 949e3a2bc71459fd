package metricleak

import (
	"fmt"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ssa"
)

// decide answers a yes-or-no question about a function that a fact carries
// across packages (it never fails, it unregisters, it makes a registry):
// for a function of another package, whether it has the fact; for one of
// this package, or one with no object of its own (a wrapper the SSA
// builder made), what body says of it. A question about a function already
// being answered, as for one that calls itself, is no; memo keeps the
// answers.
func (c *checker) decide(memo map[*ssa.Function]bool, fn *ssa.Function, fact analysis.Fact, body func(*ssa.Function) bool) bool {
	if o := fn.Origin(); o != nil {
		fn = o
	}
	if v, ok := memo[fn]; ok {
		return v
	}
	memo[fn] = false
	var v bool
	if fn.Pkg != c.pkg && fn.Object() != nil {
		v = c.pass.ImportObjectFact(fn.Object(), fact)
	} else {
		v = body(fn)
	}
	memo[fn] = v
	return v
}

// registersFact is exported for a function that registers metrics and hands
// them to its caller: through the result that owns them, or through the
// registerer its caller passed in. A call to such a function is a
// registration in the caller, as if the caller had registered the metrics
// itself.
type registersFact struct {
	// Result is the index of the result that owns the registrations (the
	// collector itself, or a value holding it), or -1 if none does.
	Result int
	// Registerer is the index of the parameter, the receiver first, that
	// the registrations go through, defaultRegisterer if they go into the
	// default registerer (prometheus.Register and MustRegister), or -1 if
	// they go elsewhere.
	Registerer int
	// Collectors are the indexes of the parameters that hold collectors
	// the function registered through Registerer and left registered: a
	// collector, a slice of them, or a value they are part of. The caller
	// owns those registrations, as if it had registered what it passed.
	// Only these go into the default registerer: the function's own
	// collectors registered there are its own leak, if any.
	Collectors []int
	// OnError is set when the function hands the collectors themselves
	// back through Result also with an error that is never nil: its
	// caller must take them back when the call fails too.
	OnError bool
	// Own is set when some of those registrations are of collectors the
	// function made itself and handed to nobody (Result is -1): nothing
	// the caller holds can unregister them, and only what it gives as
	// Registerer can take them back, if that is a scope or another
	// registerer with a method that unregisters.
	Own bool
	// Opaque is set when some of those registrations went from Registerer
	// through a call, other than client_golang's wrappers, that takes a
	// registerer and returns one: a nil or made registry given as
	// Registerer then says nothing of where they went.
	Opaque bool
	// Metrics are the fully-qualified names of the metrics registered,
	// where constant; Unnamed is set when some of them have no constant
	// name.
	Metrics []string
	Unnamed bool
	// Site is where the first registration is, as "path/file.go:line",
	// with the import path of the package that holds the file.
	Site string
}

// defaultRegisterer is registersFact.Registerer for the default registerer.
const defaultRegisterer = -2

// AFact marks registersFact as an analysis fact.
func (*registersFact) AFact() {}

func (f *registersFact) String() string {
	names := "metrics"
	if len(f.Metrics) > 0 {
		names = strings.Join(f.Metrics, ",")
	}
	cols := ""
	if len(f.Collectors) > 0 {
		cols = fmt.Sprintf(", collectors %v", f.Collectors)
	}
	if f.Unnamed && len(f.Metrics) > 0 {
		cols += ", and unnamed ones"
	}
	if f.OnError {
		cols += ", on error"
	}
	if f.Own {
		cols += ", own"
	}
	if f.Opaque {
		cols += ", opaque"
	}
	reg := fmt.Sprint(f.Registerer)
	if f.Registerer == defaultRegisterer {
		reg = "default"
	}
	return fmt.Sprintf("registers %s at %s (result %d, registerer %s%s)", names, f.Site, f.Result, reg, cols)
}

// equal reports whether f and g say the same; the fixpoint over a package's
// functions stops when no fact changes.
func (f *registersFact) equal(g *registersFact) bool {
	if f == nil || g == nil {
		return f == g
	}
	return f.Result == g.Result && f.Registerer == g.Registerer && f.Site == g.Site &&
		slices.Equal(f.Metrics, g.Metrics) && f.Unnamed == g.Unnamed && slices.Equal(f.Collectors, g.Collectors) && f.OnError == g.OnError && f.Own == g.Own && f.Opaque == g.Opaque
}

// equal reports whether f and g say the same.
func (f *keepsFact) equal(g *keepsFact) bool {
	if f == nil || g == nil {
		return f == g
	}
	return slices.Equal(f.Flows, g.Flows)
}

// unregistersFact is exported for a function that undoes registrations and
// makes none: it unregisters a collector it was given (a parameter, the
// receiver or what they hold), closes such a scope or a lifecycle stack or
// slot, or calls a function that does. Calling it with the owner of a
// registration, as receiver or argument, undoes that registration. This is
// how a method like (*API).UnregisterGauges is recognised whatever its name.
type unregistersFact struct{}

// AFact marks unregistersFact as an analysis fact.
func (*unregistersFact) AFact() {}

func (*unregistersFact) String() string { return "unregisters" }

// keepsFact is exported for a function that keeps an argument where it
// outlives the call: in another argument (typically the receiver, as a
// setter does) or in a package variable, a channel or a goroutine. Passing
// the owner of a registration to such a function hands the registration on,
// or makes the argument it is kept in an owner too.
type keepsFact struct {
	Flows []flow
}

// A flow says that argument From (the receiver first) is kept in argument
// To, or, with To -1, somewhere that outlives every argument.
type flow struct{ From, To int }

// AFact marks keepsFact as an analysis fact.
func (*keepsFact) AFact() {}

func (f *keepsFact) String() string {
	parts := make([]string, len(f.Flows))
	for i, fl := range f.Flows {
		parts[i] = fmt.Sprintf("%d>%d", fl.From, fl.To)
	}
	return "keeps " + strings.Join(parts, " ")
}

// doesNothingFact is exported for a Describe, Register or MustRegister
// method that does nothing but return, with nil for an error: a collector
// whose Describe does nothing is unchecked, and a prometheus.Registry cannot
// unregister it; a registerer whose Register and MustRegister both do
// nothing, a no-op of a project's own for tests, registers nowhere.
type doesNothingFact struct{}

// AFact marks doesNothingFact as an analysis fact.
func (*doesNothingFact) AFact() {}

func (*doesNothingFact) String() string { return "does nothing" }
