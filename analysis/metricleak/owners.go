package metricleak

import (
	"go/token"
	"go/types"
	"slices"

	"golang.org/x/tools/go/ssa"
)

// An ownerSet answers, for one registration, which values carry it. Handing
// such a value on hands the registration on; passing it to an undoing call
// undoes the registration.
type ownerSet interface {
	// owns reports whether v, or the object v is part of, carries the
	// registration.
	owns(v ssa.Value) bool
	// ownsDirectly is owns without looking through fields: a method named
	// Close on the registration's owner undoes it, one on a field of the
	// owner does not.
	ownsDirectly(v ssa.Value) bool
	// undoesWhenCalled reports whether calling the function value v undoes
	// the registration: a method value of the owner that unregisters, or a
	// cleanup function handed back with it.
	undoesWhenCalled(v ssa.Value) bool
}

// owners is the ownerSet of a registration within the function that made it.
// It is flow-insensitive: a value that carries the registration anywhere in
// the function carries it everywhere.
type owners struct {
	roots   map[ssa.Value]bool
	undoFns map[ssa.Value]bool // roots that hold a function undoing the registration
}

func (o *owners) owns(v ssa.Value) bool         { return canCarry(v) && o.roots[root(v)] }
func (o *owners) ownsDirectly(v ssa.Value) bool { return canCarry(v) && o.roots[strip(v)] }

func (o *owners) undoesWhenCalled(v ssa.Value) bool {
	r := root(v)
	if o.undoFns[r] {
		return true
	}
	// A function value that carries the registration itself, rather than
	// being loaded from an object that does, is a cleanup handed back by
	// the callee that registered.
	return o.roots[r] && r == strip(v)
}

// ownersOf follows the seeds of a registration through fn: into the objects
// they are stored in, the closures that capture them, the phis that merge
// them, the lifecycle stacks they are pushed on, and the arguments of calls
// that keep them there. A seed that is an element of an array or slice
// literal, as a loop over one registers it, has for owner too the object
// that all the literal's elements are parts of, if there is one: the struct
// whose fields the literal lists.
func (c *checker) ownersOf(fn *ssa.Function, seeds []ssa.Value) *owners {
	o := &owners{roots: map[ssa.Value]bool{}, undoFns: map[ssa.Value]bool{}}
	for _, s := range seeds {
		o.roots[root(s)] = true
		if h := commonRoot(literal(s)); h != nil && !outlives(h) {
			o.roots[h] = true
		}
	}
	for changed := true; changed; {
		changed = false
		// An owner stored where it outlives the call is handed on there
		// (see effectOf); what outlives the call does not itself become
		// an owner, or everything reachable from a parameter would.
		add := func(v ssa.Value) {
			if v != nil && !o.roots[v] && !outlives(v) {
				o.roots[v] = true
				changed = true
			}
		}
		// A holder of undo functions: one stored in it, or a holder of
		// them stored in it whole (a slice of cleanups appended to).
		addUndo := func(holder, fnValue ssa.Value) {
			if !o.undoFns[holder] && (o.undoFns[root(fnValue)] || c.isUndoFunc(fnValue, o)) {
				o.undoFns[holder] = true
				changed = true
			}
		}
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				if holder, val := stored(instr, o); holder != nil {
					add(holder)
					addUndo(holder, val)
				}
				switch x := instr.(type) {
				case *ssa.Phi:
					for _, e := range x.Edges {
						if o.owns(e) {
							add(x)
						}
					}
				case *ssa.MakeClosure:
					for _, b := range x.Bindings {
						if o.owns(b) {
							add(x)
						}
					}
				case *ssa.Call, *ssa.Defer:
					// A call, deferred or not, may keep an owner in
					// another argument.
					for _, holder := range c.keptIn(x.(ssa.CallInstruction).Common(), o) {
						add(holder)
					}
					call, ok := x.(*ssa.Call)
					if !ok {
						break
					}
					if holder := storesInto(call, o); holder != nil {
						add(holder)
						if b, ok := call.Call.Value.(*ssa.Builtin); ok && b.Name() == "append" {
							addUndo(call, call.Call.Args[0])
							elems, _ := varargs(call.Call.Args[1])
							for _, e := range elems {
								addUndo(call, e)
							}
						}
					}
				}
			}
		}
	}
	return o
}

// stored returns, for a store of an owned value into memory (a Store, or a
// map update whose key or value is owned), the root of what it stores into
// and the value stored; nil, nil for any other instruction.
func stored(instr ssa.Instruction, o ownerSet) (holder, val ssa.Value) {
	switch x := instr.(type) {
	case *ssa.Store:
		if o.owns(x.Val) {
			return root(x.Addr), x.Val
		}
	case *ssa.MapUpdate:
		if o.owns(x.Value) || o.owns(x.Key) {
			return root(x.Map), x.Value
		}
	}
	return nil, nil
}

// storesInto returns the root of the value a call stores an owned value
// into: the result of append, the destination of copy, or the lifecycle.Stack
// an owned closer or cleanup is pushed on. It returns nil for other calls.
func storesInto(call *ssa.Call, o ownerSet) ssa.Value {
	common := call.Common()
	if b, ok := common.Value.(*ssa.Builtin); ok {
		if len(common.Args) < 2 || !o.owns(common.Args[0]) && !o.owns(common.Args[1]) {
			return nil
		}
		switch b.Name() {
		case "append":
			return call
		case "copy":
			return root(common.Args[0])
		}
		return nil
	}
	fn := calleeFunc(common)
	if !isMethod(fn, lifecyclePath, "Stack", "Push") && !isMethod(fn, lifecyclePath, "Stack", "PushFunc") {
		return nil
	}
	recv, args := receiverAndArgs(common)
	if len(args) == 1 && o.owns(args[0]) {
		return root(recv)
	}
	return nil
}

// commonRoot returns the root that all of vs share, or nil if they have
// none, or differ.
func commonRoot(vs []ssa.Value) ssa.Value {
	var h ssa.Value
	for _, v := range vs {
		r := root(v)
		if h != nil && r != h {
			return nil
		}
		h = r
	}
	return h
}

// outlives reports whether a root value lives on after the function returns:
// a parameter, a captured variable or a package variable.
func outlives(v ssa.Value) bool {
	switch v.(type) {
	case *ssa.Parameter, *ssa.FreeVar, *ssa.Global:
		return true
	}
	return false
}

// root returns the value that v is part of or was converted from: the
// object for a field or element, the variable for a load, the operand of a
// conversion. Values merged by a phi, results of calls and allocations are
// their own roots.
func root(v ssa.Value) ssa.Value {
	for range 64 {
		switch x := v.(type) {
		case *ssa.UnOp:
			if x.Op != token.MUL {
				return v
			}
			v = x.X
		case *ssa.FieldAddr, *ssa.Field, *ssa.IndexAddr, *ssa.Index, *ssa.Slice:
			v = partOf(v)
		case *ssa.Lookup:
			v = x.X
		case *ssa.SliceToArrayPointer:
			v = x.X
		case *ssa.TypeAssert:
			v = x.X
		case *ssa.Alloc:
			w := assignedOnce(x)
			if w == nil {
				return v
			}
			v = w
		case *ssa.Extract:
			switch t := x.Tuple.(type) {
			case *ssa.TypeAssert:
				v = t.X
			case *ssa.Lookup:
				v = t.X
			default:
				return v
			}
		default:
			if w := converted(v); w != nil {
				v = w
				continue
			}
			return v
		}
	}
	return v
}

// partOf returns the value that v is a field, an element or a slice of, or
// their address: the struct, array, slice or pointer it was taken from.
func partOf(v ssa.Value) ssa.Value {
	switch x := v.(type) {
	case *ssa.FieldAddr:
		return x.X
	case *ssa.Field:
		return x.X
	case *ssa.IndexAddr:
		return x.X
	case *ssa.Index:
		return x.X
	case *ssa.Slice:
		return x.X
	}
	return nil
}

// strip returns the value v was converted from, looking through loads of
// local and captured variables but not through fields.
func strip(v ssa.Value) ssa.Value {
	for range 64 {
		if w := converted(v); w != nil {
			v = w
			continue
		}
		load, ok := v.(*ssa.UnOp)
		if !ok || load.Op != token.MUL {
			return v
		}
		switch x := load.X.(type) {
		case *ssa.Alloc:
			v = x
			if w := assignedOnce(x); w != nil {
				v = w
			}
		case *ssa.FreeVar:
			v = x
		default:
			return v
		}
	}
	return v
}

// spilled returns the parameter that a is the local copy of, or nil: the
// SSA builder copies a parameter whose parts are addressed (an array
// parameter that is sliced, say) into a variable at the function's entry,
// and stores nothing else into it whole. What the copy holds is the
// caller's; what is stored into it stays in the function, like the copy.
func spilled(a *ssa.Alloc) *ssa.Parameter {
	var p *ssa.Parameter
	for _, ref := range referrers(a) {
		st, ok := ref.(*ssa.Store)
		if !ok || st.Addr != a {
			continue
		}
		q, ok := st.Val.(*ssa.Parameter)
		if !ok || p != nil || st.Block() != a.Parent().Blocks[0] {
			return nil
		}
		p = q
	}
	return p
}

// assignedOnce returns the value stored in a variable that is stored to
// once and otherwise only loaded, or nil. Such a variable stays in memory
// because a closure captures it (a parameter or a local the closure reads);
// it is the value it holds, unless a closure assigns it too.
func assignedOnce(a *ssa.Alloc) ssa.Value {
	var val ssa.Value
	for _, ref := range referrers(a) {
		switch x := ref.(type) {
		case *ssa.Store:
			if x.Addr != a || val != nil {
				return nil
			}
			val = x.Val
		case *ssa.UnOp:
			if x.Op != token.MUL {
				return nil
			}
		case *ssa.MakeClosure:
			if onlyReads(x, a, 0) {
				continue
			}
			return nil
		case *ssa.DebugRef:
		default:
			return nil
		}
	}
	return val
}

// boundTo returns the free variables of the function that mc makes a
// closure of to which mc binds a value that bound accepts; ok is false if
// the function is not known.
func boundTo(mc *ssa.MakeClosure, bound func(ssa.Value) bool) (fvs []*ssa.FreeVar, ok bool) {
	fn, ok := mc.Fn.(*ssa.Function)
	if !ok || len(fn.FreeVars) != len(mc.Bindings) {
		return nil, false
	}
	for i, b := range mc.Bindings {
		if bound(b) {
			fvs = append(fvs, fn.FreeVars[i])
		}
	}
	return fvs, true
}

// is returns a function that reports whether its argument is v.
func is(v ssa.Value) func(ssa.Value) bool { return func(x ssa.Value) bool { return x == v } }

// onlyReads reports whether the closure that mc makes, and the closures it
// makes in turn, only read the variable v that mc binds.
func onlyReads(mc *ssa.MakeClosure, v ssa.Value, depth int) bool {
	fvs, ok := boundTo(mc, is(v))
	if !ok || depth > 8 {
		return false
	}
	for _, fv := range fvs {
		for _, ref := range referrers(fv) {
			if inner, ok := ref.(*ssa.MakeClosure); ok {
				if !onlyReads(inner, fv, depth+1) {
					return false
				}
			} else if !accesses(ref, fv, false) {
				return false
			}
		}
	}
	return true
}

// converted returns the operand of a conversion, or nil.
func converted(v ssa.Value) ssa.Value {
	switch x := v.(type) {
	case *ssa.MakeInterface:
		return x.X
	case *ssa.ChangeInterface:
		return x.X
	case *ssa.ChangeType:
		return x.X
	case *ssa.Convert:
		return x.X
	case *ssa.MultiConvert:
		return x.X
	}
	return nil
}

// isFuncType reports whether t is a function type.
func isFuncType(t types.Type) bool {
	_, ok := t.Underlying().(*types.Signature)
	return ok
}

// keptIn returns the roots of the arguments of a call that keep an owned
// argument, by the callee's keepsFact or, for the standard library's
// concurrent containers, in the receiver (see stdHolder); nil for the
// global holder (To -1).
func (c *checker) keptIn(common *ssa.CallCommon, o ownerSet) []ssa.Value {
	if h := stdHolder(common, o); h != nil {
		return []ssa.Value{h}
	}
	callee := common.StaticCallee()
	if callee == nil {
		return nil
	}
	f := c.keepsOf(callee)
	if f == nil {
		return nil
	}
	args := factArgs(common)
	var holders []ssa.Value
	for _, fl := range f.Flows {
		if fl.From >= len(args) || fl.To >= len(args) || args[fl.From] == nil || !o.owns(args[fl.From]) {
			continue
		}
		switch {
		case fl.To < 0:
			holders = append(holders, nil)
		case args[fl.To] != nil:
			holders = append(holders, root(args[fl.To]))
		}
	}
	return holders
}

// stdHolder returns the root of the receiver of a call to a setter of the
// standard library's concurrent containers (sync.Map, atomic.Value,
// atomic.Pointer) that keeps an owned argument there, or nil. Their bodies
// keep values through unsafe pointers, which no keepsFact can follow.
func stdHolder(common *ssa.CallCommon, o ownerSet) ssa.Value {
	fn := calleeFunc(common)
	if fn == nil || common.IsInvoke() {
		return nil
	}
	switch fn.Name() {
	case "Store", "Swap", "LoadOrStore", "CompareAndSwap":
	default:
		return nil
	}
	if !isMethod(fn, "sync", "Map", fn.Name()) && !isMethod(fn, "sync/atomic", "Value", fn.Name()) && !isMethod(fn, "sync/atomic", "Pointer", fn.Name()) {
		return nil
	}
	recv, args := receiverAndArgs(common)
	if fn.Name() == "CompareAndSwap" && len(args) > 0 {
		args = args[len(args)-1:] // the new value; the old one is not kept
	}
	if recv == nil || !slices.ContainsFunc(args, o.owns) {
		return nil
	}
	return root(recv)
}

// canCarry reports whether v can carry an owner: neither v nor the value
// it was converted from (a string passed as an any, say) is a value without
// pointers.
func canCarry(v ssa.Value) bool {
	for v != nil {
		if !mayHoldPointer(v.Type()) {
			return false
		}
		v = converted(v)
	}
	return true
}

// mayHoldPointer reports whether a value of type t can refer to another
// value: a string or number read from an owner does not carry it.
func mayHoldPointer(t types.Type) bool {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		return u.Kind() == types.UnsafePointer
	case *types.Struct:
		for f := range u.Fields() {
			if mayHoldPointer(f.Type()) {
				return true
			}
		}
		return false
	case *types.Array:
		return mayHoldPointer(u.Elem())
	}
	return true
}
