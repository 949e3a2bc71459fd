package metricleak

import (
	"golang.org/x/tools/go/ssa"
)

// uses says how a function of the package is used by the others.
type uses struct {
	// sites are the calls that name it statically.
	sites []ssa.CallInstruction
	// escapes is set when it is used otherwise: as a value, which may be
	// called from anywhere.
	escapes bool
}

// callSites finds, for each function of the package, its static calls and
// whether it is used as a value too, in funcs and in the package's
// initialization of its variables.
func callSites(funcs []*ssa.Function) map[*ssa.Function]*uses {
	all := map[*ssa.Function]*uses{}
	get := func(fn *ssa.Function) *uses {
		if o := fn.Origin(); o != nil {
			fn = o
		}
		u := all[fn]
		if u == nil {
			u = new(uses)
			all[fn] = u
		}
		return u
	}
	var ops []*ssa.Value
	for _, fn := range funcs {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				var callee *ssa.Value
				if ci, ok := instr.(ssa.CallInstruction); ok && !ci.Common().IsInvoke() {
					callee = &ci.Common().Value
				}
				ops = instr.Operands(ops[:0])
				for _, op := range ops {
					f, ok := (*op).(*ssa.Function)
					if !ok {
						continue
					}
					if op == callee {
						u := get(f)
						u.sites = append(u.sites, instr.(ssa.CallInstruction))
					} else {
						get(f).escapes = true
					}
				}
			}
		}
	}
	return all
}

type scopeKey struct {
	fn    *ssa.Function
	param int
}

// scopeParam reports whether parameter i of fn, a registerer, is a
// promscope scope wherever fn is called: fn is an unexported function of
// the package, not a method or a closure, used only in calls, and each call
// passes a scope there, or a registerer that wraps one, or a parameter of
// its own that is such a scope. What fn registers through that parameter is
// then the caller's, as if the parameter were declared a *registry.Scope:
// this is the constructor that a lifecycle.Slot's build function calls.
func (c *checker) scopeParam(fn *ssa.Function, i int) bool {
	if o := fn.Origin(); o != nil {
		fn = o
	}
	if fn.Pkg != c.pkg || fn.Parent() != nil || fn.Signature.Recv() != nil || fn.Object() == nil || fn.Object().Exported() {
		return false
	}
	k := scopeKey{fn, i}
	if v, ok := c.scopes[k]; ok {
		return v
	}
	if c.scopes == nil {
		c.scopes = map[scopeKey]bool{}
	}
	c.scopes[k] = false // a recursive call proves nothing
	v := c.scopeAtEveryCall(fn, i)
	c.scopes[k] = v
	return v
}

func (c *checker) scopeAtEveryCall(fn *ssa.Function, i int) bool {
	u := c.calls[fn]
	if u == nil || u.escapes || len(u.sites) == 0 {
		return false
	}
	for _, site := range u.sites {
		args := site.Common().Args
		if i >= len(args) || !c.isScopeArg(site.Parent(), args[i]) {
			return false
		}
	}
	return true
}

// isScopeArg reports whether v, a registerer passed by a call in caller, is
// a scope, wraps one, or is a parameter of caller that is always one.
func (c *checker) isScopeArg(caller *ssa.Function, v ssa.Value) bool {
	for _, w := range registererChain(v) {
		if isScope(w) {
			return true
		}
		if j := paramIndex(caller, root(w)); j >= 0 && c.scopeParam(caller, j) {
			return true
		}
	}
	return false
}
