package metricleak

import (
	"go/token"
	"go/types"
	"maps"
	"slices"

	"golang.org/x/tools/go/ssa"
)

// summarize computes the registersFact and keepsFact of each function of
// the package, repeating until none changes so that a function calling
// another of the package, declared later, sees its facts; then exports
// them, with the unregistersFact, neverFailsFact, makesRegistryFact and
// sharesFact, for the functions that other packages can call.
func (c *checker) summarize(funcs []*ssa.Function) {
	for range 8 {
		changed := false
		for _, fn := range funcs {
			c.guard(fn, func() {
				if k := c.keepsSummary(fn); !k.equal(c.keeps[fn]) {
					c.keeps[fn] = k
					changed = true
				}
				if f := c.summary(fn); !f.equal(c.registers[fn]) {
					c.registers[fn] = f
					changed = true
				}
			})
		}
		if !changed {
			break
		}
	}
	for _, fn := range funcs {
		obj, ok := fn.Object().(*types.Func)
		if !ok || fn.Parent() != nil || !obj.Exported() {
			continue
		}
		c.guard(fn, func() {
			if f := c.registers[fn]; f != nil {
				c.pass.ExportObjectFact(obj, f)
			}
			if c.unregisters(fn) {
				c.pass.ExportObjectFact(obj, new(unregistersFact))
			}
			if k := c.keeps[fn]; k != nil {
				c.pass.ExportObjectFact(obj, k)
			}
			if c.neverFails(fn) {
				c.pass.ExportObjectFact(obj, new(neverFailsFact))
			}
			if c.makesRegistry(fn) {
				c.pass.ExportObjectFact(obj, new(makesRegistryFact))
			}
			if f := c.sharesOf(fn); f != nil {
				c.pass.ExportObjectFact(obj, f)
			}
			if obj.Signature().Recv() != nil && (obj.Name() == "Describe" || registererMethod(obj, "Register") || registererMethod(obj, "MustRegister")) && doesNothing(fn) {
				c.pass.ExportObjectFact(obj, new(doesNothingFact))
			}
		})
	}
}

// summary returns the registersFact fn deserves, or nil: some registration
// in fn reaches a return that hands its owner back through a result, without
// being undone or handed on elsewhere on the way, or reaches any return,
// without being undone, handed on or a deferred undo on the way, and went
// through a registerer parameter. A deferred undo does not count against a
// return that hands the owner back: it must be one that runs only on
// failure, like lifecycle.CloseOnError. An owner that fn also stores where
// it outlives the call, as a get-or-create method keeps what it creates in
// a map of its receiver, is handed on there: the caller does not own it.
// One that fn sends on a channel, or gives a goroutine, the caller owns
// still.
func (c *checker) summary(fn *ssa.Function) *registersFact {
	var f *registersFact
	onError := -1 // the result that hands the collectors back with an error that is never nil
	for _, r := range c.registrations(fn) {
		o := c.ownersOf(fn, r.seeds)
		eff := c.effects(fn, o)
		if coveredBefore(r, eff, keeps) {
			continue
		}
		cut := func(instr ssa.Instruction) bool { return eff[instr] == undoes || eff[instr] == keeps }
		cutOrDeferred := func(instr ssa.Instruction) bool { return cut(instr) || eff[instr] == defersUndo }
		regParam := paramIndex(fn, r.registerer)
		if r.registerer == nil && r.via == nil && r.collector != nil && collectorParams(fn, r.collector, 0) != nil {
			// A collector its caller gave it, into the default
			// registerer: the caller owns that registration.
			regParam = defaultRegisterer
		}
		if coveredBefore(r, eff, defersUndo) {
			regParam = -1
		}
		for _, ret := range returnsIn(fn) {
			res := returnsOwned(ret, o)
			switch {
			case res >= 0 && c.reaches(r, ret, false, nil, cut):
			case regParam != -1 && c.reaches(r, ret, false, nil, cutOrDeferred):
				res = -1
			default:
				continue
			}
			if f == nil {
				f = &registersFact{Result: -1, Registerer: -1, Site: r.siteString(c.pass)}
			}
			if res >= 0 && (f.Result < 0 || res < f.Result) {
				f.Result = res
			}
			if regParam != -1 && f.Registerer == -1 {
				f.Registerer = regParam
			}
			if regParam >= 0 && regParam == f.Registerer && r.opaque {
				f.Opaque = true
			}
			if res >= 0 && c.surelyFails(ret) && resultOfCollectors(ret, res) && (onError < 0 || res < onError) {
				onError = res
			}
			callers := false // r registers a collector its caller gave it, which the caller names
			if res < 0 && regParam == f.Registerer && r.collector != nil {
				if js := collectorParams(fn, r.collector, 0); js != nil {
					callers = true
					for _, j := range js {
						if !slices.Contains(f.Collectors, j) {
							f.Collectors = append(f.Collectors, j)
						}
					}
					slices.Sort(f.Collectors)
				}
			}
			if res < 0 && regParam >= 0 && regParam == f.Registerer && !callers && !c.handedAtOnce(r) && !c.surelyFails(ret) &&
				c.leftAt(r, ret, eff, false, nil) {
				// Left with the caller's registerer on success, and
				// handed to nobody: not sent on a channel, given to a
				// goroutine or kept anywhere on the way.
				f.Own = true
			}
			if len(f.Metrics) == 0 && len(r.metrics) > 0 {
				f.Site = r.siteString(c.pass) // where the names it lists were registered, as a message names it
			}
			f.Metrics = appendNew(f.Metrics, r.metrics...)
			f.Unnamed = f.Unnamed || r.unnamed && !callers
		}
	}
	if f != nil && onError >= 0 {
		// The caller owns what that result holds, also when the call
		// fails: it is the owner the fact names.
		f.Result, f.OnError = onError, true
	}
	return f
}

// keepsSummary returns the keepsFact fn deserves, or nil: for each
// parameter, where fn itself stores it (or what holds it) so that it
// outlives the call, by itself or through a setter of the standard
// library's concurrent containers (see stdHolder). Other calls fn makes are
// not followed: a keepsFact says what a setter does, and following calls
// through buffer pools and the like (fmt keeps its operands in a pooled
// printer) would say it of everything.
func (c *checker) keepsSummary(fn *ssa.Function) *keepsFact {
	var f *keepsFact
	for i, p := range fn.Params {
		o := c.ownersOf(fn, []ssa.Value{p})
		to := map[int]bool{}
		holder := func(h ssa.Value) {
			switch h.(type) {
			case nil, *ssa.Global, *ssa.FreeVar:
				to[-1] = true
			case *ssa.Parameter:
				if j := paramIndex(fn, h); j != i {
					to[j] = true
				}
			}
		}
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				if h, _ := stored(instr, o); h != nil {
					holder(h)
				}
				switch x := instr.(type) {
				case *ssa.Send:
					if o.owns(x.X) {
						holder(nil)
					}
				case *ssa.Go:
					if o.owns(x.Call.Value) || anyOwned(o, x.Call.Args) {
						holder(nil)
					}
				case *ssa.Call:
					if h := storesInto(x, o); h != nil {
						holder(h)
					}
					if h := stdHolder(&x.Call, o); h != nil {
						holder(h)
					}
				}
			}
		}
		for _, j := range slices.Sorted(maps.Keys(to)) {
			if f == nil {
				f = new(keepsFact)
			}
			f.Flows = append(f.Flows, flow{From: i, To: j})
		}
	}
	return f
}

// keepsOf returns the keepsFact of a callee: from this package's
// summaries, or imported.
func (c *checker) keepsOf(fn *ssa.Function) *keepsFact {
	fn = c.declared(fn)
	if fn.Pkg == c.pkg {
		return c.keeps[fn]
	}
	obj, ok := fn.Object().(*types.Func)
	if !ok {
		return nil
	}
	f := new(keepsFact)
	if !c.pass.ImportObjectFact(obj, f) {
		return nil
	}
	return f
}

// registersOf returns the registersFact of a callee: from this package's
// summaries, or imported.
func (c *checker) registersOf(fn *ssa.Function) *registersFact {
	fn = c.declared(fn)
	if fn.Pkg == c.pkg {
		return c.registers[fn]
	}
	obj, ok := fn.Object().(*types.Func)
	if !ok {
		return nil
	}
	f := new(registersFact)
	if !c.pass.ImportObjectFact(obj, f) {
		return nil
	}
	return f
}

// declared returns the function that fn is an instance or a wrapper of, as
// declared: a bound method value's wrapper, say, has no facts of its own,
// and the method it calls, if of this package, has none exported yet while
// the package's facts are computed.
func (c *checker) declared(fn *ssa.Function) *ssa.Function {
	if o := fn.Origin(); o != nil {
		fn = o
	}
	if obj, ok := fn.Object().(*types.Func); ok && fn.Pkg != c.pkg && obj.Pkg() == c.pass.Pkg {
		if d := c.pkg.Prog.FuncValue(obj); d != nil {
			return d
		}
	}
	return fn
}

// collectorParams returns the indexes of the parameters of fn that the
// collector col is, or is an element or a field of: one, or, for an element
// of an array or slice literal (as a loop over one registers it), those of
// all its elements. It returns nil if there is none, if an element is not
// one, or if a conversion on the way made a collector of another type from
// it (a helper that registers descList(ds) registers no collector of its
// caller's). depth bounds the nesting of literals followed.
func collectorParams(fn *ssa.Function, col ssa.Value, depth int) []int {
	if elems := literal(col); elems != nil && depth < 4 {
		var out []int
		for _, e := range elems {
			js := collectorParams(fn, e, depth+1)
			if js == nil {
				return nil
			}
			out = append(out, js...)
		}
		return out
	}
	if j := collectorParam(fn, col); j >= 0 {
		return []int{j}
	}
	return nil
}

// collectorParam is collectorParams for a collector that is no element of a
// literal: the index of the parameter, or -1.
func collectorParam(fn *ssa.Function, col ssa.Value) int {
	for range 16 {
		switch x := col.(type) {
		case *ssa.MakeInterface:
			col = x.X
		case *ssa.ChangeInterface:
			col = x.X
		case *ssa.ChangeType:
			if _, ok := x.X.Type().(*types.TypeParam); !ok {
				return -1
			}
			col = x.X // a type parameter's value as its constraint
		case *ssa.UnOp:
			if x.Op != token.MUL {
				return -1
			}
			col = x.X
		case *ssa.FieldAddr, *ssa.Field, *ssa.IndexAddr, *ssa.Index, *ssa.Slice:
			col = partOf(col)
		case *ssa.Alloc:
			p := spilled(x)
			if p == nil {
				return -1
			}
			col = p
		case *ssa.Parameter:
			return paramIndex(fn, x)
		default:
			return -1
		}
	}
	return -1
}

// paramIndex is the index of v among fn's parameters (the receiver first),
// or -1.
func paramIndex(fn *ssa.Function, v ssa.Value) int {
	for i, p := range fn.Params {
		if p == v {
			return i
		}
	}
	return -1
}
