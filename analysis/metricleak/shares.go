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
		if !filledOnce(h) {
			break
		}
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

// filledOnce reports whether a, a function's copy of a parameter or an
// array that a literal fills, holds only what filled it: the parameter, or
// one value for each element. Nothing else may store into it, into a part
// of it or through a slice of it, copy into it, or capture it in a closure
// that does. A call given a slice of it is taken not to write into it.
func filledOnce(a *ssa.Alloc) bool {
	p := spilled(a)
	filled := map[int64]bool{}
	var clean func(v ssa.Value) bool
	clean = func(v ssa.Value) bool {
		for _, ref := range referrers(v) {
			switch x := ref.(type) {
			case *ssa.Store:
				if x.Addr != v {
					continue
				}
				ia, _ := v.(*ssa.IndexAddr)
				var k *ssa.Const
				if ia != nil {
					k, _ = ia.Index.(*ssa.Const)
				}
				switch {
				case v == a && p != nil && x.Val == p: // the parameter's copy
				case ia != nil && ia.X == a && k != nil && !filled[k.Int64()]: // the literal's element
					filled[k.Int64()] = true
				default:
					return false
				}
			case *ssa.FieldAddr, *ssa.IndexAddr, *ssa.Slice:
				if !clean(x.(ssa.Value)) {
					return false
				}
			case *ssa.MakeClosure:
				if !onlyReads(x, v, 0) {
					return false
				}
			case *ssa.Call:
				if b, ok := x.Call.Value.(*ssa.Builtin); ok && b.Name() == "copy" && x.Call.Args[0] == v {
					return false
				}
			}
		}
		return true
	}
	return clean(a)
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
