package metricleak

import (
	"go/token"
	"strings"

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

// neverNil reports whether v, an error, is one that is never nil: a value
// of a concrete type, or a new error from errors.New or fmt.Errorf.
func neverNil(v ssa.Value) bool {
	switch x := v.(type) {
	case *ssa.MakeInterface:
		return true
	case *ssa.Call:
		fn := calleeFunc(x.Common())
		return isFunc(fn, "errors", "New") || isFunc(fn, "fmt", "Errorf")
	}
	return false
}

// sentinel reports whether g, a package variable of type error, is never nil
// once its package is initialized: one of this package's that its
// declaration gives an error that is never nil, as every other store does,
// or, by Go's convention, another package's exported ErrXxx that this
// package sets to nothing that may be nil.
func (c *checker) sentinel(g *ssa.Global) bool {
	if !isErrorType(typeDeref(g.Type())) {
		return false
	}
	never, seen := c.sentinels[g]
	if g.Pkg != c.pkg {
		return token.IsExported(g.Name()) && strings.HasPrefix(g.Name(), "Err") && (never || !seen)
	}
	return never
}

// sentinels returns, for the package variables that the functions of init's
// package store into or give the address of, whether each is a sentinel as
// far as these functions go: init, the package initializer, which runs the
// variables' declarations, stores in it an error that is never nil, so does
// every other store, and its address goes nowhere else.
func sentinels(init *ssa.Function, funcs []*ssa.Function) map[*ssa.Global]bool {
	declared, spoilt := map[*ssa.Global]bool{}, map[*ssa.Global]bool{}
	spoil := func(v ssa.Value) {
		if g, ok := v.(*ssa.Global); ok {
			spoilt[g] = true
		}
	}
	var ops []*ssa.Value
	for _, fn := range funcs {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				switch x := instr.(type) {
				case *ssa.Store:
					if g, ok := x.Addr.(*ssa.Global); ok {
						switch {
						case !neverNil(x.Val):
							spoilt[g] = true
						case fn == init:
							declared[g] = true
						}
						spoil(x.Val) // the address of another
						continue
					}
				case *ssa.UnOp:
					if x.Op == token.MUL {
						continue // a load
					}
				}
				ops = instr.Operands(ops[:0])
				for _, op := range ops {
					spoil(*op) // its address is given away: stored through, perhaps
				}
			}
		}
	}
	out := map[*ssa.Global]bool{}
	for g := range spoilt {
		out[g] = false
	}
	for g := range declared {
		out[g] = !spoilt[g]
	}
	return out
}
