package metricleak

import (
	"fmt"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// sharesFact is exported for a function that makes nothing of some of its
// results: on every return, each of them is a package variable, part of
// one, an array or slice literal of such values, one of the function's
// parameters, or a result of the same kind of another call. A getter of
// package variables (one, or several in a fresh slice) and a method that
// returns its receiver are such functions. What its caller registers of
// that result is the program's if the parameters it may be are.
type sharesFact struct {
	Results []sharedResult
}

// A sharedResult is a result of a function with a sharesFact, and the
// parameters (the receiver first) it may be, or be part of; none if it is
// only ever package variables.
type sharedResult struct {
	Result int
	Params []int
}

// AFact marks sharesFact as an analysis fact.
func (*sharesFact) AFact() {}

func (f *sharesFact) String() string {
	parts := make([]string, len(f.Results))
	for i, r := range f.Results {
		parts[i] = fmt.Sprint(r.Result)
		if len(r.Params) > 0 {
			parts[i] += "<" + strings.Trim(fmt.Sprint(r.Params), "[]")
		}
	}
	return "shares " + strings.Join(parts, " ")
}

// sharesOf returns the sharesFact of fn: imported for a function of another
// package, or, for one of this package, what its body says. A function
// already being answered for, as one that calls itself, shares nothing.
func (c *checker) sharesOf(fn *ssa.Function) *sharesFact {
	fn = c.declared(fn)
	if f, ok := c.shares[fn]; ok {
		return f
	}
	c.shares[fn] = nil
	var f *sharesFact
	if fn.Pkg != c.pkg {
		if obj, ok := fn.Object().(*types.Func); ok {
			f = new(sharesFact)
			if !c.pass.ImportObjectFact(obj, f) {
				f = nil
			}
		}
	} else {
		f = c.bodyShares(fn)
	}
	c.shares[fn] = f
	return f
}

// bodyShares is the sharesFact that fn's body deserves, or nil.
func (c *checker) bodyShares(fn *ssa.Function) *sharesFact {
	rets := returnsIn(fn)
	if len(rets) == 0 {
		return nil
	}
	var f *sharesFact
	for i := range fn.Signature.Results().Len() {
		if !mayHoldCollector(fn.Signature.Results().At(i).Type()) {
			continue
		}
		var params []int
		all := true
		for _, ret := range rets {
			ps, ok := c.sharedFrom(ret.Results[i], false, map[ssa.Value]bool{})
			if !ok {
				all = false
				break
			}
			params = append(params, ps...)
		}
		if all {
			if f == nil {
				f = new(sharesFact)
			}
			slices.Sort(params)
			f.Results = append(f.Results, sharedResult{Result: i, Params: slices.Compact(params)})
		}
	}
	return f
}

// mayHoldCollector reports whether a value of type t can be, or refer to, a
// collector: a pointer, an interface other than error, a slice, an array or
// a map. A struct returned by value is a copy that fn made.
func mayHoldCollector(t types.Type) bool {
	switch t.Underlying().(type) {
	case *types.Pointer, *types.Slice, *types.Array, *types.Map:
		return true
	case *types.Interface:
		return !isErrorType(t)
	}
	return false
}

// sharedFrom reports whether v is made only of values that outlive the
// call of the function it is a value of, fn: package variables, parts of
// them, array or slice literals of them, fn's parameters (or its copies of
// them), nil, values that phis merge, results of calls that share them
// (see sharesFact) of operands that are, and, if captured is set,
// variables fn captured. It returns the parameters of fn that v may be, or
// be part of. seen holds the values already followed: one met again (a
// loop's phi) adds nothing, and each is followed once.
func (c *checker) sharedFrom(v ssa.Value, captured bool, seen map[ssa.Value]bool) (params []int, ok bool) {
	if seen[v] {
		return nil, true
	}
	seen[v] = true
	all := func(vs []ssa.Value) ([]int, bool) {
		var out []int
		for _, e := range vs {
			ps, ok := c.sharedFrom(e, captured, seen)
			if !ok {
				return nil, false
			}
			out = append(out, ps...)
		}
		return out, true
	}
	switch h := root(v).(type) {
	case *ssa.Const:
		return nil, h.IsNil()
	case *ssa.Global:
		return nil, true
	case *ssa.FreeVar:
		return nil, captured
	case *ssa.Parameter:
		return []int{paramIndex(h.Parent(), h)}, true
	case *ssa.Alloc:
		if p := spilled(h); p != nil {
			return []int{paramIndex(p.Parent(), p)}, true
		}
		if elems := literal(h); elems != nil {
			return all(elems)
		}
	case *ssa.Phi:
		return all(h.Edges)
	default:
		if args, ok := c.sharedArgs(h); ok {
			return all(args)
		}
	}
	return nil, false
}

// sharedArgs reports whether v is a result of a call whose callee's
// sharesFact lists it, and returns the call's operands that the result may
// be, or be part of: the program's if they are.
func (c *checker) sharedArgs(v ssa.Value) ([]ssa.Value, bool) {
	index := 0
	if x, ok := v.(*ssa.Extract); ok {
		index, v = x.Index, x.Tuple
	}
	call, ok := v.(*ssa.Call)
	if !ok {
		return nil, false
	}
	callee := call.Common().StaticCallee()
	if callee == nil {
		return nil, false
	}
	f := c.sharesOf(callee)
	if f == nil {
		return nil, false
	}
	args := factArgs(call.Common())
	for _, r := range f.Results {
		if r.Result != index {
			continue
		}
		var out []ssa.Value
		for _, j := range r.Params {
			if j >= len(args) || args[j] == nil {
				return nil, false
			}
			out = append(out, args[j])
		}
		return out, true
	}
	return nil, false
}
