package metricleak

import (
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// An effect is what an instruction does to one registration.
type effect int

const (
	none effect = iota
	// undoes: the instruction undoes the registration where it runs.
	undoes
	// defersUndo: the instruction defers a call that undoes the
	// registration, which runs at every return after it.
	defersUndo
	// handsOn: the instruction hands the registration on: it sends its
	// owner on a channel, or starts a goroutine with it. That covers every
	// return after it too.
	handsOn
	// keeps: the instruction hands the registration on by storing its
	// owner where it outlives the call, directly or through a call. That
	// covers every return after it too, and unlike handsOn it means that
	// the function's caller is not given the registration either.
	keeps
)

// effects returns the instructions of fn that undo or hand on the
// registration that o describes.
func (c *checker) effects(fn *ssa.Function, o *owners) map[ssa.Instruction]effect {
	eff := map[ssa.Instruction]effect{}
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			if e := c.effectOf(instr, o); e != none {
				eff[instr] = e
			}
		}
	}
	for instr, e := range eff {
		if e != undoes {
			continue
		}
		for _, entry := range loopEntries(instr, o) {
			if eff[entry] == none {
				eff[entry] = undoes
			}
		}
	}
	return eff
}

// loopEntries returns, for an undo of an element of an owned slice inside
// the loop over that slice (for _, c := range cs[:i] { reg.Unregister(c) }),
// the jumps that enter the loop: the loop undoes every element, and so
// the whole registration, even though a path may seem to skip it. It
// returns nil for any other instruction.
func loopEntries(instr ssa.Instruction, o *owners) []ssa.Instruction {
	call, ok := instr.(*ssa.Call)
	if !ok {
		return nil
	}
	_, args := receiverAndArgs(call.Common())
	if len(args) != 1 {
		return nil
	}
	load, ok := strip(args[0]).(*ssa.UnOp)
	if !ok || load.Op != token.MUL {
		return nil
	}
	elem, ok := load.X.(*ssa.IndexAddr)
	if !ok || !o.owns(elem.X) {
		return nil
	}
	// The loop's header: the nearest block above the element's that a
	// block it dominates jumps back to, and that the slice is made above.
	for h := elem.Block(); h != nil; h = h.Idom() {
		var entries []ssa.Instruction
		back := false
		for _, p := range h.Preds {
			if h.Dominates(p) {
				back = true
			} else if len(p.Instrs) > 0 {
				entries = append(entries, p.Instrs[len(p.Instrs)-1])
			}
		}
		if back {
			if made, ok := elem.X.(ssa.Instruction); ok && (made.Block() == h || !made.Block().Dominates(h)) {
				return nil
			}
			return entries
		}
	}
	return nil
}

func (c *checker) effectOf(instr ssa.Instruction, o *owners) effect {
	if h, _ := stored(instr, o); h != nil && outlives(h) {
		return keeps
	}
	switch x := instr.(type) {
	case *ssa.Send:
		if o.owns(x.X) {
			return handsOn
		}
	case *ssa.Go:
		if o.owns(x.Call.Value) || anyOwned(o, x.Call.Args) {
			return handsOn
		}
	case *ssa.Defer:
		if c.undoes(&x.Call, o, 0) {
			return defersUndo
		}
		// A deferred keeper keeps at every return after it.
		if c.callKeeps(&x.Call, o) {
			return keeps
		}
	case *ssa.Call:
		if c.undoes(&x.Call, o, 0) {
			return undoes
		}
		if holder := storesInto(x, o); holder != nil && outlives(holder) {
			return keeps
		}
		if c.callKeeps(&x.Call, o) {
			return keeps
		}
	}
	return none
}

// callKeeps reports whether a call keeps an owner where it outlives the
// function: a callee that keeps an argument there (see keptIn), or a
// closure that stores what it captured there.
func (c *checker) callKeeps(common *ssa.CallCommon, o *owners) bool {
	for _, holder := range c.keptIn(common, o) {
		if holder == nil || outlives(holder) {
			return true
		}
	}
	mc, ok := common.Value.(*ssa.MakeClosure)
	if !ok {
		return false
	}
	fn, inner := capturedBy(mc, o)
	if fn == nil {
		return false
	}
	// Where the closure stores: a package variable, or what it captured of
	// something that outlives the function.
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			h, _ := stored(instr, inner)
			if h == nil {
				continue
			}
			if v := inner.bound(h); v != nil {
				h = root(v)
			}
			if outlives(h) {
				return true
			}
		}
	}
	return false
}

func anyOwned(o ownerSet, vs []ssa.Value) bool {
	for _, v := range vs {
		if o.owns(v) {
			return true
		}
	}
	return false
}

// undoes reports whether a call undoes the registration that o describes:
// it unregisters an owned collector, closes an owned scope, stack or slot,
// calls a method with an unregistersFact on an owned value, calls a closure
// that does one of these with what it captured, or calls a cleanup handed
// back with the registration. Methods of an interface are judged by name.
func (c *checker) undoes(common *ssa.CallCommon, o ownerSet, depth int) bool {
	fn := calleeFunc(common)
	recv, args := receiverAndArgs(common)
	switch {
	case registererMethod(fn, "Unregister"):
		return len(args) == 1 && o.owns(args[0])
	case isCloser(fn):
		return recv != nil && o.owns(recv)
	case isFunc(fn, lifecyclePath, "CloseOnError"):
		return len(args) == 2 && o.owns(args[1])
	case common.IsInvoke():
		return o.ownsDirectly(recv) && fallbackName(fn.Name())
	}
	if mc, ok := common.Value.(*ssa.MakeClosure); ok {
		return c.closureUndoes(mc, o, depth)
	}
	if callee := common.StaticCallee(); callee != nil {
		return anyOwned(o, common.Args) && c.unregisters(callee)
	}
	if _, builtin := common.Value.(*ssa.Builtin); builtin {
		return false
	}
	return o.undoesWhenCalled(common.Value)
}

// isCloser reports whether fn is the Close method of a promscope scope,
// lifecycle.Stack or lifecycle.Slot.
func isCloser(fn *types.Func) bool {
	return isMethod(fn, registryPath, "Scope", "Close") ||
		isMethod(fn, lifecyclePath, "Stack", "Close") ||
		isMethod(fn, lifecyclePath, "Slot", "Close")
}

// fallbackName reports whether a method of this name, whose body cannot be
// seen, is taken to undo what its receiver registered.
func fallbackName(name string) bool {
	switch name {
	case "Close", "Stop", "Shutdown", "Cleanup":
		return true
	}
	return strings.HasPrefix(name, "Unregister")
}

// captured is the ownerSet inside a closure: a free variable carries the
// registration if the value bound to it does.
type captured struct {
	outer    ownerSet
	bindings map[*ssa.FreeVar]ssa.Value
}

// capturedBy returns the function that mc makes a closure of and the
// ownerSet inside it, or nil, nil if mc captures no owner of o.
func capturedBy(mc *ssa.MakeClosure, o ownerSet) (*ssa.Function, *captured) {
	fn, ok := mc.Fn.(*ssa.Function)
	if !ok || !anyOwned(o, mc.Bindings) {
		return nil, nil
	}
	inner := &captured{outer: o, bindings: map[*ssa.FreeVar]ssa.Value{}}
	for i, fv := range fn.FreeVars {
		inner.bindings[fv] = mc.Bindings[i]
	}
	return fn, inner
}

func (k *captured) bound(v ssa.Value) ssa.Value {
	if fv, ok := v.(*ssa.FreeVar); ok {
		return k.bindings[fv]
	}
	return nil
}

func (k *captured) owns(v ssa.Value) bool {
	if !canCarry(v) {
		return false
	}
	b := k.bound(root(v))
	return b != nil && k.outer.owns(b)
}

func (k *captured) ownsDirectly(v ssa.Value) bool {
	b := k.bound(strip(v))
	return b != nil && k.outer.ownsDirectly(b)
}

func (k *captured) undoesWhenCalled(v ssa.Value) bool {
	b := k.bound(root(v))
	return b != nil && k.outer.undoesWhenCalled(b)
}

// closureUndoes reports whether calling the closure undoes the registration
// that o describes through what the closure captured. A bound method value
// such as api.UnregisterGauges is such a closure too.
func (c *checker) closureUndoes(mc *ssa.MakeClosure, o ownerSet, depth int) bool {
	fn, inner := capturedBy(mc, o)
	if fn == nil || depth > 3 {
		return false
	}
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			switch x := instr.(type) {
			case *ssa.Call:
				if c.undoes(&x.Call, inner, depth+1) {
					return true
				}
			case *ssa.Defer:
				if c.undoes(&x.Call, inner, depth+1) {
					return true
				}
			}
		}
	}
	return false
}

// isUndoFunc reports whether v is a function value whose call undoes the
// registration that o describes.
func (c *checker) isUndoFunc(v ssa.Value, o ownerSet) bool {
	if !isFuncType(v.Type()) {
		return false
	}
	if mc, ok := strip(v).(*ssa.MakeClosure); ok {
		return c.closureUndoes(mc, o, 0)
	}
	return o.undoesWhenCalled(v)
}

// unregisters reports whether calling fn undoes registrations: it has an
// unregistersFact, or, in this package, its body unregisters a collector,
// closes a scope, stack or slot, or calls a function that unregisters.
func (c *checker) unregisters(fn *ssa.Function) bool {
	return c.decide(c.unreg, fn, new(unregistersFact), c.bodyUnregisters)
}

func (c *checker) bodyUnregisters(fn *ssa.Function) bool {
	if len(c.registrations(fn)) > 0 {
		return false // it registers anew (a refresh), or in place of what it took back
	}
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			ci, ok := instr.(ssa.CallInstruction)
			if ok && c.undoes(ci.Common(), given{}, 0) {
				return true
			}
		}
	}
	return false
}

// given is the ownerSet of what a function was given: its parameters, what
// it captured, and what they hold. Only undoing those makes a function one
// that unregisters: a method that unregisters what its receiver holds
// undoes registrations; a constructor that unregisters its own on an error
// path does not undo its arguments', nor does a method that unregisters a
// package variable undo what its receiver registered.
type given struct{}

func (given) owns(v ssa.Value) bool             { return canCarry(v) && isGiven(root(v)) }
func (given) ownsDirectly(v ssa.Value) bool     { return isGiven(strip(v)) }
func (given) undoesWhenCalled(v ssa.Value) bool { return false }

// isGiven reports whether a root value is a parameter or a captured
// variable.
func isGiven(v ssa.Value) bool {
	switch v.(type) {
	case *ssa.Parameter, *ssa.FreeVar:
		return true
	}
	return false
}
