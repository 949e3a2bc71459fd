package metricleak

import (
	"go/token"
	"go/types"
	"slices"

	"golang.org/x/tools/go/ssa"
)

// addRegisterer notes the registerer r went through. It returns false when
// the registration cannot leak: the registerer is nil, or a registry made
// in this call (see madeRegistry), which goes away with everything in it,
// and which the next call makes anew. A scope, or
// any registerer the function made (a wrapper that can unregister all it
// registered, say), owns what goes through it, like the collectors do.
func (c *checker) addRegisterer(r *registration) bool {
	if r.registerer == nil {
		return true
	}
	chain := registererChain(r.registerer)
	bottom := chain[len(chain)-1]
	r.opaque = r.opaque || !wrappersOnly(chain)
	if !r.opaque && slices.ContainsFunc(chain, c.private) {
		return false
	}
	r.prefix(chain)
	r.registerer = bottom
	fn := r.call.Parent()
	for _, v := range chain {
		switch {
		case isScope(v) || c.isScopeParam(fn, root(v)):
			r.scope = true
			r.seeds = append(r.seeds, scopeRoots(root(v))...)
		case !c.outlivesCall(v) && isRegistererType(root(v).Type()):
			// Made here, not loaded from a local that holds options,
			// nor one that a getter shares.
			r.seeds = append(r.seeds, root(v))
		}
	}
	return true
}

// prefix renames r's metrics as the registry sees them, with the prefixes
// of client_golang's WrapRegistererWithPrefix calls on chain, which each
// put theirs before what they are given. Where a prefix is not a constant,
// the names are left as the code writes them, which finds them.
func (r *registration) prefix(chain []ssa.Value) {
	var prefix string
	for _, v := range chain {
		call, ok := root(v).(*ssa.Call)
		if !ok || !isFunc(calleeFunc(call.Common()), prometheusPath, "WrapRegistererWithPrefix") || len(call.Call.Args) != 2 {
			continue
		}
		k, ok := constString(call.Call.Args[0])
		if !ok {
			return
		}
		prefix = k + prefix
	}
	if prefix == "" {
		return
	}
	names := make([]string, len(r.metrics)) // r.metrics may be a fact's
	for i, name := range r.metrics {
		names[i] = prefix + name
	}
	r.metrics = names
}

// private reports whether a registerer on a chain is nil or a registry
// made in the call. Only through client_golang's own wrappers (see
// wrappersOnly) does that say where the registrations went: any other call
// that takes a registerer and returns one may return something else
// entirely, such as the default registerer when it is given nil.
func (c *checker) private(v ssa.Value) bool {
	return isNil(v) || isNil(root(v)) || c.madeRegistry(v) || c.madeRegistry(root(v)) || c.registersNowhere(v)
}

// registersNowhere reports whether v is a registerer of a type, not one of
// client_golang's, whose Register method does nothing but return nil and
// whose MustRegister does nothing: a no-op registerer of a project's own,
// such as tests use, into which nothing is registered.
func (c *checker) registersNowhere(v ssa.Value) bool {
	return isRegistererType(v.Type()) && c.methodDoesNothing(v, "Register") && c.methodDoesNothing(v, "MustRegister")
}

// wrappersOnly reports whether the calls that a registerer chain passes
// through, from each to the registerer given to it, are all client_golang's
// own wrappers.
func wrappersOnly(chain []ssa.Value) bool {
	for i := range len(chain) - 1 {
		call, ok := root(chain[i]).(*ssa.Call)
		if ok && slices.Contains(call.Call.Args, chain[i+1]) && !isWrapper(call) {
			return false
		}
	}
	return true
}

// isWrapper reports whether call is prometheus.WrapRegistererWith or
// WrapRegistererWithPrefix.
func isWrapper(call *ssa.Call) bool {
	fn := calleeFunc(call.Common())
	return isFunc(fn, prometheusPath, "WrapRegistererWith") || isFunc(fn, prometheusPath, "WrapRegistererWithPrefix")
}

// factoryRegisterer traces a promauto.Factory back to promauto.With(r) and
// returns r; known is false when the factory came from elsewhere.
func factoryRegisterer(factory ssa.Value) (reg ssa.Value, known bool) {
	call, ok := root(factory).(*ssa.Call)
	if !ok || !isFunc(calleeFunc(call.Common()), promautoPath, "With") || len(call.Call.Args) != 1 {
		return nil, false
	}
	return call.Call.Args[0], true
}

// registererChain follows a registerer through wrappers, such as
// prometheus.WrapRegistererWith: calls that take one registerer and return
// another. It returns the registerer given and each one it wraps, down to
// the one at the bottom, each as the value the call was given (so that a
// scope converted to an interface is still seen as one). It stops at a
// scope: what a scope wraps is its parent, which does not own what was
// registered through the scope the way the scope does.
func registererChain(v ssa.Value) []ssa.Value {
	chain := []ssa.Value{v}
	for range 16 {
		if isScope(v) || isScope(root(v)) {
			break
		}
		call, ok := root(v).(*ssa.Call)
		if !ok || !isRegistererType(call.Type()) || call.Call.IsInvoke() {
			break
		}
		var inner ssa.Value
		for _, arg := range call.Call.Args {
			if isRegistererType(arg.Type()) {
				if inner != nil {
					inner = nil
					break
				}
				inner = arg
			}
		}
		if inner == nil {
			break
		}
		v = inner
		chain = append(chain, v)
	}
	if r := root(v); r != v {
		chain = append(chain, r)
	}
	return chain
}

// isRegistererType reports whether t has a Register method of the shape of
// prometheus.Registerer's.
func isRegistererType(t types.Type) bool {
	obj, _, _ := types.LookupFieldOrMethod(t, true, nil, "Register")
	fn, ok := obj.(*types.Func)
	return ok && registererMethod(fn, "Register")
}

// madeRegistry reports whether v is a registry made in this call, or one of
// client_golang's wrappers of one, which passes everything to it: made by
// prometheus.NewRegistry or NewPedanticRegistry, by a callee that returns
// a registry it made (see makesRegistry), or held in a field of an object
// the function made and keeps to itself, which stores only that registry
// there, or in a field that the function fills with it, once, before it
// reads it (a method that makes its receiver a registry and registers
// there: a call again makes another).
func (c *checker) madeRegistry(v ssa.Value) bool {
	for range 8 {
		v = strip(v)
		if x, ok := v.(*ssa.Extract); ok && x.Index == 0 {
			v = x.Tuple
		}
		if call, ok := v.(*ssa.Call); ok {
			fn := calleeFunc(call.Common())
			if isFunc(fn, prometheusPath, "NewRegistry") || isFunc(fn, prometheusPath, "NewPedanticRegistry") {
				return true
			}
			if isWrapper(call) && len(call.Call.Args) == 2 {
				v = call.Call.Args[1]
				continue
			}
			callee := call.Common().StaticCallee()
			return callee != nil && c.makesRegistry(callee)
		}
		fa := loadedField(v)
		if fa == nil {
			return false
		}
		next := fieldValue(fa.X, fa.Field, true)
		if next == nil {
			next = storedBefore(fa, v.(ssa.Instruction))
		}
		if v = next; v == nil {
			return false
		}
	}
	return false
}

// storedBefore returns the value that the function stores, once, in the
// field of the object that fa addresses, if the store comes before load,
// which reads the field, and nothing that could store another comes
// between: no call the object, or the field's address, is given to after
// the store and before the load on any path, round loops included, and no
// closure, goroutine or other object that gets it before the load. It
// returns nil otherwise. The object may be a variable that closures
// capture, which each access loads anew.
func storedBefore(fa *ssa.FieldAddr, load ssa.Instruction) ssa.Value {
	base := strip(fa.X)
	object := func(v ssa.Value) bool {
		if strip(v) == base {
			return true // the object, a composite literal's too
		}
		a, ok := v.(*ssa.Alloc)
		return ok && assignedOnce(a) == base // the variable that holds it
	}
	var st *ssa.Store
	var uses []ssa.Instruction // what else the object, or the field's address, is given to
	for _, b := range fa.Parent().Blocks {
		for _, instr := range b.Instrs {
			switch x := instr.(type) {
			case *ssa.FieldAddr:
				if x.Field != fa.Field || !object(x.X) {
					continue // another field: its address cannot reach this one
				}
				for _, use := range referrers(x) {
					switch u := use.(type) {
					case *ssa.Store:
						switch {
						case u.Addr != x:
							uses = append(uses, u)
						case st != nil:
							return nil
						default:
							st = u
						}
					case *ssa.UnOp:
					default:
						uses = append(uses, u)
					}
				}
				continue
			case *ssa.UnOp:
				continue // a load
			case *ssa.Store:
				if _, cell := x.Addr.(*ssa.Alloc); cell && strip(x.Addr) != base && object(x.Addr) {
					continue // the variable is given the object
				}
			case *ssa.MakeClosure:
				if leavesField(x, object, fa.Field) {
					continue // wherever the closure goes, it cannot set the field
				}
			}
			for _, op := range instr.Operands(nil) {
				if *op != nil && object(*op) {
					uses = append(uses, instr)
					break
				}
			}
		}
	}
	if st == nil || !before(st, load) {
		return nil
	}
	for _, u := range uses {
		// A call is harmless where no run of the function makes it
		// between the store and the load; anything else that gets the
		// object, where no run meets it before the load. A loop may
		// meet a use after the load before the load of its next pass.
		if _, call := u.(*ssa.Call); call && runsBetween(st, u, load) || !call && flowsTo(u, load) {
			return nil
		}
	}
	return st.Val
}

// leavesField reports whether the closure that mc makes, and those it makes
// in turn, use each object it captures (object tells which values are the
// object) only to read the field, or to reach the object's other fields,
// whose addresses cannot reach the field.
func leavesField(mc *ssa.MakeClosure, object func(ssa.Value) bool, field int) bool {
	var uses func(v ssa.Value, depth int) bool
	// captured reports whether uses holds of each free variable that the
	// closure c binds to a value that bound accepts.
	captured := func(c *ssa.MakeClosure, bound func(ssa.Value) bool, depth int) bool {
		fvs, ok := boundTo(c, bound)
		if !ok {
			return false
		}
		for _, fv := range fvs {
			if !uses(fv, depth) {
				return false
			}
		}
		return true
	}
	uses = func(v ssa.Value, depth int) bool {
		if depth > 8 {
			return false
		}
		for _, ref := range referrers(v) {
			switch x := ref.(type) {
			case *ssa.FieldAddr:
				if x.Field != field {
					continue
				}
				for _, use := range referrers(x) {
					if load, ok := use.(*ssa.UnOp); !ok || load.Op != token.MUL {
						return false
					}
				}
			case *ssa.UnOp:
				if x.Op != token.MUL || !uses(x, depth+1) {
					return false // the variable that holds the object, loaded
				}
			case *ssa.MakeClosure:
				if !captured(x, is(v), depth+1) {
					return false
				}
			case *ssa.DebugRef:
			default:
				return false
			}
		}
		return true
	}
	return captured(mc, object, 0)
}

// makesRegistryFact is exported for a function whose first result is, on
// every return, a registry it made (see madeRegistry): each call gives a
// new one, so what its caller registers there goes away with it.
type makesRegistryFact struct{}

// AFact marks makesRegistryFact as an analysis fact.
func (*makesRegistryFact) AFact() {}

func (*makesRegistryFact) String() string { return "makes a registry" }

// makesRegistry reports whether fn returns a registry it made as its first
// result: it has a makesRegistryFact, or, in this package, every return of
// its body gives one. A function that calls itself, directly or not, is
// taken not to.
func (c *checker) makesRegistry(fn *ssa.Function) bool {
	return c.decide(c.makesReg, fn, new(makesRegistryFact), c.bodyMakesRegistry)
}

func (c *checker) bodyMakesRegistry(fn *ssa.Function) bool {
	res := fn.Signature.Results()
	rets := returnsIn(fn)
	if res.Len() == 0 || !isRegistererType(res.At(0).Type()) || len(rets) == 0 {
		return false
	}
	for _, ret := range rets {
		if !c.madeRegistry(ret.Results[0]) {
			return false
		}
	}
	return true
}

// scopeRoots returns the scope s and, for a child scope, the parents it
// was made from in this function: closing any of them removes what was
// registered through s. A parent that came from the caller is left out, as
// the child's registrations stay in it until the caller closes it.
func scopeRoots(s ssa.Value) []ssa.Value {
	roots := []ssa.Value{s}
	for range 16 {
		call, ok := s.(*ssa.Call)
		if !ok || !isMethod(calleeFunc(call.Common()), registryPath, "Scope", "Child") {
			break
		}
		chain := registererChain(call.Call.Args[0])
		parent := root(chain[len(chain)-1])
		if outlives(parent) {
			break
		}
		roots = append(roots, parent)
		s = parent
	}
	return roots
}

// isScopeParam reports whether v is a parameter of fn that is a scope at
// every call (see scopeParam).
func (c *checker) isScopeParam(fn *ssa.Function, v ssa.Value) bool {
	i := paramIndex(fn, v)
	return i >= 0 && c.scopeParam(fn, i)
}
