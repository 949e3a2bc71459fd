package metricleak

import (
	"go/token"

	"golang.org/x/tools/go/ssa"
)

// neverFailsFact is exported for a function whose error result is nil on
// every return: a constant nil, the error of a call to a function that
// never fails, or an error tested nil before the return (givesNil). A
// caller's branch on that error is never taken.
type neverFailsFact struct{}

// AFact marks neverFailsFact as an analysis fact.
func (*neverFailsFact) AFact() {}

func (*neverFailsFact) String() string { return "never fails" }

// neverFails reports whether fn never returns a non-nil error: it has a
// neverFailsFact, or, in this package, every return of its body gives a
// nil error. A function that calls itself, directly or not, may fail, and
// so may one whose named error result a deferred call can set.
func (c *checker) neverFails(fn *ssa.Function) bool {
	return c.decide(c.neverFail, fn, new(neverFailsFact), c.bodyNeverFails)
}

func (c *checker) bodyNeverFails(fn *ssa.Function) bool {
	i := errorResult(fn.Signature.Results())
	rets := returnsIn(fn)
	if i < 0 || len(rets) == 0 {
		return false
	}
	for _, ret := range rets {
		local := resultLocal(ret.Results[i])
		switch {
		case local == nil:
			if !c.givesNil(ret, i) {
				return false
			}
		case fn.Signature.Results().At(i).Name() != "":
			return false // a named result, which a deferred call may set
		case !c.storesNil(local):
			return false
		}
	}
	return true
}

// resultLocal returns the local that v, a returned value, is loaded from:
// where SSA keeps a result when its function defers calls. It is nil for
// any other v.
func resultLocal(v ssa.Value) *ssa.Alloc {
	if load, ok := v.(*ssa.UnOp); ok && load.Op == token.MUL {
		if a, ok := load.X.(*ssa.Alloc); ok && !a.Heap {
			return a
		}
	}
	return nil
}

// storesNil reports whether every value stored at addr, the memory that SSA
// keeps an unnamed error result in when its function defers calls, is nil.
// Only the function's returns store there, and a deferred call that
// recovers returns what was stored last, or nil.
func (c *checker) storesNil(addr *ssa.Alloc) bool {
	for _, ref := range referrers(addr) {
		switch x := ref.(type) {
		case *ssa.Store:
			if x.Addr != ssa.Value(addr) || !c.nilError(x.Val) && !testedNil(x.Val, x.Block()) {
				return false
			}
		case *ssa.UnOp:
		default:
			return false
		}
	}
	return true
}

// nilError reports whether the error v is nil wherever it is defined: the
// constant nil, the error of a call to a function that never fails, or a
// merge of such values.
func (c *checker) nilError(v ssa.Value) bool {
	if known, ok := c.nilErrs[v]; ok {
		return known
	}
	known := c.nilErrorSeen(v, map[ssa.Value]bool{})
	c.nilErrs[v] = known
	return known
}

func (c *checker) nilErrorSeen(v ssa.Value, seen map[ssa.Value]bool) bool {
	if seen[v] {
		return true
	}
	seen[v] = true
	switch x := v.(type) {
	case *ssa.Const:
		return x.IsNil()
	case *ssa.ChangeInterface:
		return c.nilErrorSeen(x.X, seen)
	case *ssa.Phi:
		for _, e := range x.Edges {
			if !c.nilErrorSeen(e, seen) {
				return false
			}
		}
		return true
	case *ssa.Call:
		return errorResult(x.Type()) == 0 && c.callNeverFails(x)
	case *ssa.Extract:
		call, ok := x.Tuple.(*ssa.Call)
		return ok && errorResult(call.Type()) == x.Index && c.callNeverFails(call)
	}
	return false
}

// callNeverFails reports whether call calls, statically, a function that
// never fails.
func (c *checker) callNeverFails(call *ssa.Call) bool {
	callee := call.Common().StaticCallee()
	return callee != nil && c.neverFails(callee)
}
