package metricleak

import (
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// addRegisterer notes the registerer r went through. It returns false when
// the registration cannot leak: the registerer is nil, or a registry the
// function made itself, which goes away with everything in it. A scope, or
// any registerer the function made (a wrapper that can unregister all it
// registered, say), owns what goes through it, like the collectors do.
func (c *checker) addRegisterer(r *registration) bool {
	if r.registerer == nil {
		return true
	}
	chain := registererChain(r.registerer)
	bottom := chain[len(chain)-1]
	if isNil(bottom) || isPrivateRegistry(bottom) {
		return false
	}
	r.registerer = bottom
	fn := r.call.Parent()
	for _, v := range chain {
		switch {
		case isScope(v) || c.isScopeParam(fn, root(v)):
			r.scope = true
			r.seeds = append(r.seeds, scopeRoots(root(v))...)
		case !outlives(root(v)) && isRegistererType(root(v).Type()):
			// Made here, not loaded from a local that holds options.
			r.seeds = append(r.seeds, root(v))
		}
	}
	return true
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

// isPrivateRegistry reports whether v is a registry made by
// prometheus.NewRegistry or NewPedanticRegistry in the function itself.
func isPrivateRegistry(v ssa.Value) bool {
	call, ok := v.(*ssa.Call)
	if !ok {
		return false
	}
	fn := calleeFunc(call.Common())
	return isFunc(fn, prometheusPath, "NewRegistry") || isFunc(fn, prometheusPath, "NewPedanticRegistry")
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
