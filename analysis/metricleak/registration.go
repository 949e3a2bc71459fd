package metricleak

import (
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ssa"
)

// A registration is one call that registers metrics in the function being
// checked: a Register or MustRegister call, a promauto constructor, or a call
// to a function with a registersFact.
type registration struct {
	call *ssa.Call
	// err is the call's failure result (an error or a []error), or nil:
	// where it is non-nil the call failed, and registered nothing, or its
	// callee left behind what it registered, which is the callee's leak.
	err ssa.Value
	// seeds are the values that own what was registered: the collectors, a
	// value handed back by the callee, and a scope registered through.
	seeds []ssa.Value
	// registerer is the root of the registerer used, nil for the default
	// registry or an unknown one.
	registerer ssa.Value
	// scope is set when the registration went through a promscope scope.
	scope bool
	// metrics are the fully-qualified names, where constant; unnamed is
	// set when some of what was registered has no constant name.
	metrics []string
	unnamed bool
	// site is where a callee registered, for a registration through a fact;
	// empty when the registration is the call itself.
	site string
	// via is the callee with the registersFact, and owner the type of the
	// value it handed back, result i of the call; nil, nil and -1 for a
	// direct registration.
	via    *types.Func
	owner  types.Type
	result int
	// arg is the index of the collector among the arguments of a
	// MustRegister call, or -1.
	arg int
	// opaque is set when the registration went through a call, other than
	// client_golang's wrappers, that takes a registerer and returns one,
	// here or in the callee: a nil or made registry below it says nothing
	// of where the metrics went.
	opaque bool
	// unowned is set for a call to a function that registers collectors
	// of its own through the registerer the call gives it and hands them
	// to nobody (registersFact.Own), when that registerer is no scope and
	// has no method that unregisters: nothing in the caller can
	// unregister them.
	unowned bool
	// collector is the collector given to Register or MustRegister, or
	// nil: where it describes nothing, Unregister cannot take it back (see
	// unchecked).
	collector ssa.Value
}

// registrations lists the registrations in fn, in block order.
func (c *checker) registrations(fn *ssa.Function) []*registration {
	var regs []*registration
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			call, ok := instr.(*ssa.Call)
			if !ok {
				continue
			}
			regs = append(regs, c.registrationsAt(call)...)
		}
	}
	return regs
}

// registrationsAt returns the registrations that call makes: one for each
// collector given to MustRegister, at most one for other calls.
func (c *checker) registrationsAt(call *ssa.Call) []*registration {
	fn := calleeFunc(call.Common())
	recv, args := receiverAndArgs(call.Common())
	if registererMethod(fn, "MustRegister") && len(args) == 1 {
		var regs []*registration
		cols, spread := varargs(args[0])
		for i, col := range cols {
			r := &registration{call: call, registerer: recv, result: -1, arg: i}
			if spread {
				r.arg = -1
			}
			r.addCollectors([]ssa.Value{col})
			r.collector = col
			if c.addRegisterer(r) {
				regs = append(regs, r)
			}
		}
		return regs
	}
	regs := c.callersCollectors(call)
	if r := c.registrationAt(call); r != nil {
		regs = append(regs, r)
	}
	return regs
}

// callersCollectors returns the registrations of a call to a function whose
// registersFact says it registered collectors that the call passes it
// (Collectors): one for each collector, or for each slice or array of them
// that cannot be followed, as for MustRegister. It returns nil for other
// calls, and where the registrations go through a scope, which throughFact
// handles, as it does the registrations of an owner the callee hands back.
func (c *checker) callersCollectors(call *ssa.Call) []*registration {
	common := call.Common()
	callee := common.StaticCallee()
	if callee == nil {
		return nil
	}
	fact := c.registersOf(callee)
	args := factArgs(common)
	if fact == nil || len(fact.Collectors) == 0 {
		return nil
	}
	var reg ssa.Value // the default registerer
	if fact.Registerer != defaultRegisterer {
		if fact.Registerer < 0 || fact.Registerer >= len(args) || args[fact.Registerer] == nil || isScope(args[fact.Registerer]) {
			return nil
		}
		reg = args[fact.Registerer]
	}
	var regs []*registration
	for _, j := range fact.Collectors {
		if j >= len(args) || args[j] == nil {
			continue
		}
		cols := []ssa.Value{args[j]}
		switch args[j].Type().Underlying().(type) {
		case *types.Slice, *types.Array:
			cols, _ = varargs(args[j])
		}
		for _, col := range cols {
			if isNil(col) {
				continue
			}
			r := &registration{call: call, registerer: reg, result: -1, arg: -1,
				via: calleeFunc(common), site: fact.Site, err: result(call, failureResult(call.Type())), opaque: fact.Opaque}
			r.addCollectors([]ssa.Value{col})
			r.collector = col
			if c.addRegisterer(r) {
				regs = append(regs, r)
			}
		}
	}
	return regs
}

// registrationAt returns the registration that call makes, or nil.
func (c *checker) registrationAt(call *ssa.Call) *registration {
	common := call.Common()
	fn := calleeFunc(common)
	recv, args := receiverAndArgs(common)
	r := &registration{call: call, result: -1, arg: -1}
	switch {
	case fn == nil:
		return nil
	case registererMethod(fn, "Register") && len(args) == 1:
		if toleratesDuplicate(call) {
			return nil
		}
		r.err = call
		r.addCollectors(args[:1])
		r.collector = args[0]
		r.registerer = recv
	case isFunc(fn, promautoPath, fn.Name()) && strings.HasPrefix(fn.Name(), "New"):
		r.addCollectors([]ssa.Value{call})
	case isMethod(fn, promautoPath, "Factory", fn.Name()) && strings.HasPrefix(fn.Name(), "New"):
		reg, known := factoryRegisterer(recv)
		if known && isNil(reg) {
			return nil // promauto.With(nil) registers nowhere
		}
		r.addCollectors([]ssa.Value{call})
		r.registerer = reg
	default:
		if !c.throughFact(r, common) {
			return nil
		}
	}
	if !c.addRegisterer(r) {
		return nil
	}
	// A scope, or a registerer the function made with a method that
	// unregisters (all that went through it, say), can take back what
	// the callee registered through it.
	r.unowned = r.unowned && !r.scope && !slices.ContainsFunc(r.seeds, func(v ssa.Value) bool { return c.undoMethodOf(v.Type()) != nil })
	return r
}

// throughFact fills r for a call to a function with a registersFact, and
// reports whether there is one.
func (c *checker) throughFact(r *registration, common *ssa.CallCommon) bool {
	callee := common.StaticCallee()
	if callee == nil {
		return false
	}
	fact := c.registersOf(callee)
	if fact == nil {
		return false
	}
	if args := factArgs(common); fact.Registerer >= 0 && fact.Registerer < len(args) {
		r.registerer = args[fact.Registerer]
	}
	if fact.Result < 0 && !fact.Own && (r.registerer == nil || !isScope(r.registerer)) {
		// It registers only collectors its caller gave it (see
		// callersCollectors), or none through what its caller gave it.
		return false
	}
	r.via = calleeFunc(common)
	r.unowned = fact.Result < 0
	r.opaque = fact.Opaque
	r.metrics = fact.Metrics
	r.unnamed = fact.Unnamed
	r.site = fact.Site
	if !fact.OnError {
		// Where the call failed, the callee registered nothing, or left
		// behind what it registered; one that hands the collectors back
		// with its error leaves them to the caller.
		r.err = result(r.call, failureResult(r.call.Type()))
	}
	if fact.Result >= 0 {
		if v := result(r.call, fact.Result); v != nil {
			r.seeds = append(r.seeds, v)
			r.owner = v.Type()
			r.result = fact.Result
		}
	}
	return true
}

// holds reports whether v is a value r registered, or handed back, itself:
// a seed, or a phi that merges one, converted or not. Where r was made, v
// is not nil.
func (r *registration) holds(v ssa.Value) bool {
	v = strip(v)
	vals := []ssa.Value{v}
	if phi, ok := v.(*ssa.Phi); ok {
		vals = phi.Edges
	}
	for _, s := range r.seeds {
		if slices.ContainsFunc(vals, func(e ssa.Value) bool { return strip(e) == strip(s) }) {
			return true
		}
	}
	return false
}

// notNil reports whether v is known not to be nil where r was made: a value
// r registered or handed back (see holds), or the registerer r went
// through itself, behind client_golang's wrappers alone, when r is the
// registering call itself. Through a nil registerer promauto.With and
// client_golang's wrappers register nowhere, and a method called on a nil
// interface panics; so if reg != nil { reg.Unregister(c) }, the undo that
// -fix writes for promauto.With(reg), is no path around the undo. A
// callee's fact says nothing of what the callee does with a nil
// registerer (it may register into the default one instead).
func (r *registration) notNil(v ssa.Value) bool {
	if r.holds(v) {
		return true
	}
	return r.via == nil && !r.opaque && r.registerer != nil && strip(v) == strip(r.registerer)
}

// addCollectors makes the registered collectors seeds and names them: an
// element of an array or slice literal, as a loop over one registers it, by
// the names of all the literal's elements.
func (r *registration) addCollectors(cs []ssa.Value) {
	for _, v := range cs {
		if isNil(v) {
			continue
		}
		r.seeds = append(r.seeds, v)
		named := []ssa.Value{v}
		if elems := literal(v); elems != nil {
			named = elems
		}
		for _, e := range named {
			if name := metricName(e); name != "" {
				r.metrics = append(r.metrics, name)
			} else {
				r.unnamed = true
			}
		}
	}
}

// handedAtOnce reports whether a seed outlives the call from the start: the
// collector or the scope came from the caller or a package variable, so the
// caller (or nobody) owns the registration.
func (c *checker) handedAtOnce(r *registration) bool {
	return slices.ContainsFunc(r.seeds, c.outlivesCall)
}

// outlivesCall reports whether v is made only of values that outlive the
// call of the function it is a value of (see sharedFrom), captured
// variables included.
func (c *checker) outlivesCall(v ssa.Value) bool {
	_, ok := c.sharedFrom(v, true, map[ssa.Value]bool{})
	return ok
}

// literal returns the elements of the array or slice literal that v is an
// element or a slice of, in order: the values stored into the array the
// function fills element by element. It returns nil for anything else.
func literal(v ssa.Value) []ssa.Value {
	a, ok := root(v).(*ssa.Alloc)
	if !ok {
		return nil
	}
	if p, ok := a.Type().Underlying().(*types.Pointer); !ok || !isArray(p.Elem()) {
		return nil
	}
	elems, spread := varargs(a)
	if spread {
		return nil
	}
	return elems
}

func isArray(t types.Type) bool {
	_, ok := t.Underlying().(*types.Array)
	return ok
}

// siteString is where the metrics were registered, as
// "path/file.go:line" (see sitePos).
func (r *registration) siteString(pass *analysis.Pass) string {
	if r.site != "" {
		return r.site
	}
	return sitePos(pass, r.call.Pos())
}

// varargs returns the values passed in a variadic slice, in order: the
// elements stored into the array the compiler made for f(a, b). For
// f(s...), or a slice it cannot follow, it returns the slice itself, and
// spread.
func varargs(slice ssa.Value) (vals []ssa.Value, spread bool) {
	alloc, ok := root(slice).(*ssa.Alloc)
	if !ok {
		return []ssa.Value{slice}, true
	}
	byIndex := map[int64]ssa.Value{}
	for _, ref := range referrers(alloc) {
		ia, ok := ref.(*ssa.IndexAddr)
		if !ok {
			continue
		}
		k, ok := ia.Index.(*ssa.Const)
		if !ok {
			return []ssa.Value{slice}, true
		}
		for _, use := range referrers(ia) {
			if st, ok := use.(*ssa.Store); ok && st.Addr == ia {
				byIndex[k.Int64()] = st.Val
			}
		}
	}
	for i := range int64(len(byIndex)) {
		v, ok := byIndex[i]
		if !ok {
			return []ssa.Value{slice}, true
		}
		vals = append(vals, v)
	}
	if len(vals) == 0 {
		return []ssa.Value{slice}, true
	}
	return vals, false
}

// result returns the value of result i of call: the call itself for a single
// result, or its Extract; nil if the result is not used or i is out of range.
func result(call *ssa.Call, i int) ssa.Value {
	tuple, ok := call.Type().(*types.Tuple)
	if !ok {
		if i == 0 {
			return call
		}
		return nil
	}
	if i < 0 || i >= tuple.Len() {
		return nil
	}
	for _, ref := range referrers(call) {
		if ex, ok := ref.(*ssa.Extract); ok && ex.Index == i {
			return ex
		}
	}
	return nil
}

// errorResult is the index of the error in a result type, or -1.
func errorResult(t types.Type) int {
	tuple, ok := t.(*types.Tuple)
	if !ok {
		if isErrorType(t) {
			return 0
		}
		return -1
	}
	for i := tuple.Len() - 1; i >= 0; i-- {
		if isErrorType(tuple.At(i).Type()) {
			return i
		}
	}
	return -1
}

// failureResult is the index of the result that reports a callee's
// failure: an error, or a []error (rule loaders return every error they
// found); -1 if there is none. Where it is non-nil, the callee failed and
// handed nothing back.
func failureResult(t types.Type) int {
	if i := errorResult(t); i >= 0 {
		return i
	}
	tuple, ok := t.(*types.Tuple)
	if !ok {
		return -1
	}
	for i := tuple.Len() - 1; i >= 0; i-- {
		if s, ok := tuple.At(i).Type().(*types.Slice); ok && isErrorType(s.Elem()) {
			return i
		}
	}
	return -1
}

// toleratesDuplicate reports whether the error of a Register call is tested
// for prometheus.AlreadyRegisteredError, by a type assertion, errors.As or
// errors.AsType.
// Such a registration is idempotent by design (the classic pattern reuses
// ExistingCollector), so registering again after a failure is no error.
func toleratesDuplicate(register *ssa.Call) bool {
	for _, ref := range referrers(register) {
		switch x := ref.(type) {
		case *ssa.TypeAssert:
			if isNamed(x.AssertedType, prometheusPath, "AlreadyRegisteredError") {
				return true
			}
		case *ssa.Call:
			if _, want := errorsMatch(x); want != nil && isNamed(want, prometheusPath, "AlreadyRegisteredError") {
				return true
			}
		}
	}
	return false
}

// unchecked reports whether r registered, through Register or MustRegister,
// a collector that describes nothing. It is asked only of the registrations
// a report is about.
func (c *checker) unchecked(r *registration) bool {
	return r.collector != nil && c.describesNothing(r.collector)
}

// describesNothing reports whether the collector v is of a type, not one of
// client_golang's, whose Describe method describes nothing.
func (c *checker) describesNothing(v ssa.Value) bool { return c.methodDoesNothing(v, "Describe") }

// methodDoesNothing reports whether v is of a type, not one of
// client_golang's, whose method name does nothing but return (see
// doesNothing): its body, or the doesNothingFact of a method of another
// package, says so.
func (c *checker) methodDoesNothing(v ssa.Value, name string) bool {
	if mi, ok := v.(*ssa.MakeInterface); ok {
		v = mi.X
	}
	t := v.Type()
	if types.IsInterface(t) {
		return false
	}
	obj, _, _ := types.LookupFieldOrMethod(t, true, nil, name)
	m, ok := obj.(*types.Func)
	if !ok || m.Pkg() == nil || pkgPath(m.Pkg()) == prometheusPath {
		return false
	}
	m = m.Origin() // the method a generic type declares, which facts are on
	if m.Pkg() != c.pass.Pkg {
		return c.pass.ImportObjectFact(m, new(doesNothingFact))
	}
	fn := c.pkg.Prog.FuncValue(m)
	return fn != nil && doesNothing(fn)
}

// doesNothing reports whether the body of fn does nothing but return, with
// nil for any result.
func doesNothing(fn *ssa.Function) bool {
	if len(fn.Blocks) == 0 {
		return false
	}
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			switch x := instr.(type) {
			case *ssa.DebugRef:
			case *ssa.Return:
				for _, r := range x.Results {
					if !isNil(r) {
						return false
					}
				}
			default:
				return false
			}
		}
	}
	return true
}
