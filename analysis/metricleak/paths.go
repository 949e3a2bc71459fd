package metricleak

import (
	"cmp"
	"go/token"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// leaks reports whether registration r, one of regs, stays behind when fn
// returns at ret: ret does not hand its owner back, nothing before r hands
// it on or defers its undoing, and some path from r to ret has no
// instruction that undoes or hands it on. A return whose error is never
// nil hands nothing back: by Go's convention its caller ignores the other
// results (return t, err); but the collectors themselves it hands back all
// the same (see collectorValues). A return whose error may be nil hands
// its owner back, but not on a path where that error is another
// registration's, which failed (see mayFail): then the caller ignores
// the other results.
func (c *checker) leaks(r *registration, regs []*registration, ret *ssa.Return, o *owners, eff map[ssa.Instruction]effect) bool {
	res := returnsOwned(ret, o)
	switch {
	case res < 0:
		return c.leftAt(r, ret, eff, true, nil)
	case resultOfCollectors(ret, res):
		return false
	case c.surelyFails(ret):
		return c.leftAt(r, ret, eff, true, nil)
	case !c.leftAt(r, ret, eff, true, nil):
		return false // no path, even before one assumes a failure on it
	}
	return slices.ContainsFunc(regs, func(q *registration) bool {
		return c.mayFail(q, r, ret) && c.leftAt(r, ret, eff, true, q)
	})
}

// mayFail reports whether ret's error may give the failure of q in a run
// where r is registered there: ret's error may be made of q's (see
// givesOf), q's error is not tested nil wherever r's call runs, and q is
// not made by r's call (a call that failed registered nothing) unless
// that call is in a loop, where a later turn may fail.
func (c *checker) mayFail(q, r *registration, ret *ssa.Return) bool {
	switch {
	case q.err == nil || c.nilError(q.err) || !c.gives(ret, q.err):
		return false
	case q.call == r.call:
		return c.inLoop(r.call)
	}
	return !testedNil(q.err, r.call.Block())
}

// gives reports whether ret's error may be made of err (see givesOf).
func (c *checker) gives(ret *ssa.Return, err ssa.Value) bool {
	return c.givesOf(ret)[err]
}

// givesOf returns the values ret's error may be made of: the error, the
// errors listed in a call to errors.Join that it is (see joinedErrors),
// the edges of a phi that it is, and theirs in turn. A variable kept in
// memory (a named result of a function that defers a call, or one a
// closure captures) may be set anywhere: what a load of it gives is not
// followed.
func (c *checker) givesOf(ret *ssa.Return) map[ssa.Value]bool {
	if vs, ok := c.givesMemo[ret]; ok {
		return vs
	}
	vs := map[ssa.Value]bool{}
	if i := errorResult(ret.Parent().Signature.Results()); i >= 0 && !resetByDefer(ret, i) {
		work := []ssa.Value{returned(ret, i)}
		for len(work) > 0 {
			v := work[len(work)-1]
			work = work[:len(work)-1]
			if vs[v] {
				continue
			}
			vs[v] = true
			if phi, ok := v.(*ssa.Phi); ok {
				work = append(work, phi.Edges...)
			} else {
				work = append(work, joinedErrors(v)...)
			}
		}
	}
	c.givesMemo[ret] = vs
	return vs
}

// joinedErrors returns the errors that v, a call to errors.Join, lists
// (errors.Join(a, b)), or none: a slice it cannot follow
// (errors.Join(errs...)) lists nothing it knows of, and v itself is not
// taken apart if it is no such call.
func joinedErrors(v ssa.Value) []ssa.Value {
	call, ok := v.(*ssa.Call)
	if !ok || !isFunc(calleeFunc(call.Common()), "errors", "Join") || len(call.Call.Args) != 1 {
		return nil
	}
	args, spread := varargs(call.Call.Args[0])
	if spread {
		return nil
	}
	return args
}

// includes reports whether the error v is not nil when one of errs is
// not: it is one of them, or errors.Join of errors that include one. A
// load of a variable is none of them: the variable may have been set
// since (see givesOf).
func includes(v ssa.Value, errs []ssa.Value) bool {
	if len(errs) == 0 {
		return false
	}
	if slices.Contains(errs, v) {
		return true
	}
	return slices.ContainsFunc(joinedErrors(v), func(p ssa.Value) bool { return includes(p, errs) })
}

// leftAt reports whether r reaches ret as it was made: nothing before r
// hands it on or defers its undoing, and some path from r to ret (one on
// which ret may give an error, with failing, and on which failed failed,
// if it is not nil: see reaches) has no instruction that undoes, keeps or
// hands it on.
func (c *checker) leftAt(r *registration, ret *ssa.Return, eff map[ssa.Instruction]effect, failing bool, failed *registration) bool {
	if coveredBefore(r, eff, defersUndo, handsOn, keeps) {
		return false
	}
	return c.reaches(r, ret, failing, failed, func(instr ssa.Instruction) bool { return eff[instr] != none })
}

// returnsError reports whether ret returns one of errs, the values that
// hold the error of r's own call on the path to ret, as in
// return reg.Register(c): where that error is non-nil, r's call failed.
func returnsError(ret *ssa.Return, errs []ssa.Value) bool {
	i := errorResult(ret.Parent().Signature.Results())
	return i >= 0 && holdsAny(returned(ret, i), errs)
}

// coveredBefore reports whether an instruction with one of the effects
// runs before r's call on every path to it.
func coveredBefore(r *registration, eff map[ssa.Instruction]effect, kinds ...effect) bool {
	for instr, e := range eff {
		if slices.Contains(kinds, e) && before(instr, r.call) {
			return true
		}
	}
	return false
}

// reaches reports whether a path leads from r's call to target without
// passing an instruction for which cut is true. A path on which r's call
// returned an error is no path: the call registered nothing there, or its
// callee left behind what it registered, which is reported where it did
// so. That holds until the path passes r's call again, as in a loop that
// registers one collector after another, and it follows the error into the
// phis that merge it with other calls' errors on the way (cortex's
// kv.createClient assigns err in each case of a switch and tests it once
// after). With failing set, only a path on which the target may return an
// error counts: not one where it returns the error of r's call, which is
// nil if anything was registered, nor one that found the error it returns
// nil. With failed set, a registration, only a path on which its call (the
// last time the path passed it; for r, a later time than the first)
// failed, and the target returns that error, alone or joined with others,
// counts. A branch that cannot be taken, because it tests an error known
// to be nil, or tests for nil a value known not to be nil where the
// registration was made (see notNil) or on the path, is no path either.
func (c *checker) reaches(r *registration, target *ssa.Return, failing bool, failed *registration, cut func(ssa.Instruction) bool) bool {
	// gives is the error target returns; tested holds it when a branch
	// that tests it tells what the target returns: no loop remakes it.
	var gives ssa.Value
	var tested []ssa.Value
	if i := errorResult(target.Parent().Signature.Results()); i >= 0 && !resetByDefer(target, i) {
		gives = returned(target, i)
		if instr, ok := gives.(ssa.Instruction); failing && !isLoad(gives) && (!ok || !c.inLoop(instr)) {
			tested = []ssa.Value{gives}
		}
	}
	type state struct {
		b           *ssa.BasicBlock
		again       bool
		errs, fails string // the phis among errs and fails, by name
	}
	seen := map[state]bool{}
	// errs hold the error of r's call, nil where a path passes; fails
	// that of failed's, not nil.
	var walk func(b *ssa.BasicBlock, from int, again bool, errs, fails []ssa.Value) bool
	walk = func(b *ssa.BasicBlock, from int, again bool, errs, fails []ssa.Value) bool {
		for _, instr := range b.Instrs[from:] {
			if instr == target {
				if failed != nil && (gives == nil || !includes(gives, fails)) {
					return false
				}
				return again || !failing || !returnsError(target, errs)
			}
			if cut(instr) {
				return false
			}
			if instr == r.call {
				again = true
				errs = nil
			}
			if failed != nil && instr == failed.call {
				fails = []ssa.Value{failed.err}
			}
		}
		notNil := func(v ssa.Value) bool {
			return r.notNil(v) || includes(v, tested) || includes(v, fails)
		}
		for _, succ := range c.successors(b, errs, notNil) {
			next, nextFails := carried(b, succ, errs, holdsAny), carried(b, succ, fails, includes)
			s := state{succ, again, phiNames(next), phiNames(nextFails)}
			if !seen[s] {
				if failed != nil {
					if len(seen) >= maxFailedStates || c.failBudget <= 0 {
						return false // too many merges, or walks, of failures to follow
					}
					c.failBudget--
				}
				seen[s] = true
				if walk(succ, 0, again, next, nextFails) {
					return true
				}
			}
		}
		return false
	}
	var errs, fails []ssa.Value
	if r.err != nil {
		errs = []ssa.Value{r.err}
	}
	if failed != nil && failed.call != r.call {
		fails = []ssa.Value{failed.err}
	}
	b := r.call.Block()
	return walk(b, index(b, r.call)+1, false, errs, fails)
}

// maxFailedStates bounds a walk that follows a failed registration's
// error (see reaches): each set of phis that may hold it is a state of its
// own, and independent merges multiply them. maxFailedWork bounds the
// states of all such walks in one function, which tries each failure that
// may leave each registration at each return. A walk that reaches either
// bound finds no path.
const (
	maxFailedStates = 4096
	maxFailedWork   = 1 << 16
)

// isLoad reports whether v is a load of a variable kept in memory.
func isLoad(v ssa.Value) bool {
	load, ok := v.(*ssa.UnOp)
	return ok && load.Op == token.MUL
}

// inLoop reports whether instr is in a loop: it may run again after it
// ran. A value it makes, a later turn makes anew.
func (c *checker) inLoop(instr ssa.Instruction) bool {
	if in, ok := c.loops[instr]; ok {
		return in
	}
	in := instr.Block() != nil && flowsTo(instr, instr)
	c.loops[instr] = in
	return in
}

// carried returns the values that hold an error on entering block to from
// block from, given errs, those that hold it in from: the same, but for the
// phis of to, each of which holds it if its value for that edge does, as
// holds says.
func carried(from, to *ssa.BasicBlock, errs []ssa.Value, holds func(ssa.Value, []ssa.Value) bool) []ssa.Value {
	if len(errs) == 0 {
		return nil
	}
	k := slices.Index(to.Preds, from)
	var next []ssa.Value
	for _, v := range errs {
		if phi, ok := v.(*ssa.Phi); !ok || phi.Block() != to {
			next = append(next, v)
		}
	}
	for _, instr := range to.Instrs {
		phi, ok := instr.(*ssa.Phi)
		if !ok {
			break
		}
		if k >= 0 && k < len(phi.Edges) && holds(phi.Edges[k], errs) {
			next = append(next, phi)
		}
	}
	return next
}

// phiNames names the phis among vs, in order: with the block, they tell
// apart the states of a walk.
func phiNames(vs []ssa.Value) string {
	var b strings.Builder
	for _, v := range vs {
		if phi, ok := v.(*ssa.Phi); ok {
			b.WriteString(phi.Name())
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// successors returns the blocks b may continue with. When b ends by testing
// an error against nil, and the error is known to be nil, only the branch
// where it is nil is taken; so too when the error is one of errs, which
// hold the error of a registering call on a path that has not passed the
// call again. When b tests against nil a value for which notNil is true,
// only the branch where it is not nil is taken.
func (c *checker) successors(b *ssa.BasicBlock, errs []ssa.Value, notNil func(ssa.Value) bool) []*ssa.BasicBlock {
	if len(b.Succs) != 2 || len(b.Instrs) == 0 {
		return b.Succs
	}
	branch, ok := b.Instrs[len(b.Instrs)-1].(*ssa.If)
	if !ok {
		return b.Succs
	}
	if err := matchedError(branch.Cond); err != nil && holdsAny(err, errs) {
		return b.Succs[1:] // if errors.As(err, &t): err is not nil on the true branch
	}
	cmp, ok := branch.Cond.(*ssa.BinOp)
	if !ok || (cmp.Op != token.EQL && cmp.Op != token.NEQ) {
		return b.Succs
	}
	x, y := cmp.X, cmp.Y
	if isNil(x) {
		x, y = y, x
	}
	if !isNil(y) {
		return b.Succs
	}
	if notNil(x) {
		if cmp.Op == token.EQL {
			return b.Succs[1:] // if c == nil: the false branch
		}
		return b.Succs[:1] // if c != nil: the true branch
	}
	known := isErrorType(x.Type()) && c.nilError(x)
	if !known && !holdsAny(x, errs) {
		return b.Succs
	}
	if cmp.Op == token.EQL {
		return b.Succs[:1] // if err == nil: the true branch
	}
	return b.Succs[1:] // if err != nil: the false branch
}

// matchedError returns the error that cond, a branch's condition, finds to
// match something (see errorsMatch): the result of errors.As or errors.Is,
// or the found result of errors.AsType. It returns nil for any other
// condition.
func matchedError(cond ssa.Value) ssa.Value {
	var call *ssa.Call
	switch x := cond.(type) {
	case *ssa.Call:
		call = x
	case *ssa.Extract:
		if x.Index == 1 {
			call, _ = x.Tuple.(*ssa.Call) // only errors.AsType of the three gives a tuple
		}
	}
	if call == nil {
		return nil
	}
	err, _ := errorsMatch(call)
	return err
}

// holdsAny reports whether v is one of errs, in the sense of sameError.
func holdsAny(v ssa.Value, errs []ssa.Value) bool {
	return slices.ContainsFunc(errs, func(err ssa.Value) bool { return sameError(v, err) })
}

// sameError reports whether v is err, or a load of a variable err was
// stored in (a named result whose address is taken stays in memory).
func sameError(v, err ssa.Value) bool {
	if v == err {
		return true
	}
	load, ok := v.(*ssa.UnOp)
	if !ok || load.Op != token.MUL {
		return false
	}
	for _, ref := range referrers(err) {
		if st, ok := ref.(*ssa.Store); ok && st.Val == err && st.Addr == load.X {
			return true
		}
	}
	return false
}

// before reports whether a runs before b on every path to b.
func before(a, b ssa.Instruction) bool {
	if a.Block() == b.Block() {
		return index(a.Block(), a) < index(b.Block(), b)
	}
	return a.Block().Dominates(b.Block())
}

// runsBetween reports whether some run of the function can execute u after
// from and before to, going round loops as often as it likes.
func runsBetween(from, u, to ssa.Instruction) bool {
	return flowsTo(from, u) && flowsTo(u, to)
}

// flowsTo reports whether b can execute after a in some run of their
// function: later in a's block, or in a block reached from a's, a's own
// included, round a loop.
func flowsTo(a, b ssa.Instruction) bool {
	if a.Block() == b.Block() && index(a.Block(), a) < index(b.Block(), b) {
		return true
	}
	seen := map[*ssa.BasicBlock]bool{}
	work := slices.Clone(a.Block().Succs)
	for len(work) > 0 {
		blk := work[len(work)-1]
		work = work[:len(work)-1]
		if seen[blk] {
			continue
		}
		if blk == b.Block() {
			return true
		}
		seen[blk] = true
		work = append(work, blk.Succs...)
	}
	return false
}

func index(b *ssa.BasicBlock, instr ssa.Instruction) int {
	for i, in := range b.Instrs {
		if in == instr {
			return i
		}
	}
	return -1
}

// returnsIn lists fn's return instructions.
func returnsIn(fn *ssa.Function) []*ssa.Return {
	var rets []*ssa.Return
	for _, b := range fn.Blocks {
		if len(b.Instrs) == 0 {
			continue
		}
		if ret, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return); ok {
			rets = append(rets, ret)
		}
	}
	return rets
}

// errorReturns lists the returns of fn that may return a non-nil error, in
// source order.
func (c *checker) errorReturns(fn *ssa.Function) []*ssa.Return {
	i := errorResult(fn.Signature.Results())
	if i < 0 {
		return nil
	}
	var rets []*ssa.Return
	for _, ret := range returnsIn(fn) {
		if !c.givesNil(ret, i) {
			rets = append(rets, ret)
		}
	}
	slices.SortFunc(rets, func(a, b *ssa.Return) int { return cmp.Compare(a.Pos(), b.Pos()) })
	return rets
}

// givesNil reports whether result i of ret, an error, is nil: known nil
// wherever it is defined, or tested before ret on every path to it.
func (c *checker) givesNil(ret *ssa.Return, i int) bool {
	v := returned(ret, i)
	return c.nilError(v) || testedNil(v, ret.Block())
}

// testedNil reports whether err is nil wherever block runs because an
// earlier branch tested it: block is reached only through the branch of an
// "if err != nil" or "if err == nil" on which err is nil, as the return
// after "if err != nil { return nil, err }" is.
func testedNil(err ssa.Value, block *ssa.BasicBlock) bool {
	for _, ref := range referrers(err) {
		cmp, ok := ref.(*ssa.BinOp)
		if !ok || (cmp.Op != token.EQL && cmp.Op != token.NEQ) {
			continue
		}
		x, y := cmp.X, cmp.Y
		if x != err {
			x, y = y, x
		}
		if x != err || !isNil(y) {
			continue
		}
		for _, use := range referrers(cmp) {
			branch, ok := use.(*ssa.If)
			if !ok || branch.Cond != cmp || len(branch.Block().Succs) != 2 {
				continue
			}
			isNilBranch := branch.Block().Succs[1] // if err != nil: the false branch
			if cmp.Op == token.EQL {
				isNilBranch = branch.Block().Succs[0]
			}
			if len(isNilBranch.Preds) == 1 && isNilBranch.Dominates(block) {
				return true
			}
		}
	}
	return false
}

// returned is result i as the return statement gave it. A named result that
// stays in memory (because a deferred call takes its address) is stored
// just before the deferred calls run and reloaded for the return; the stored
// value is the one the statement gave.
func returned(ret *ssa.Return, i int) ssa.Value {
	v := ret.Results[i]
	load, ok := v.(*ssa.UnOp)
	if !ok || load.Op != token.MUL {
		return v
	}
	instrs := ret.Block().Instrs
	for j := index(ret.Block(), ret) - 1; j >= 0; j-- {
		if st, ok := instrs[j].(*ssa.Store); ok && st.Addr == load.X {
			return st.Val
		}
	}
	return v
}

// resetByDefer reports whether result i of ret is reloaded, after the deferred
// calls ran, from a variable that they may have changed: one captured by a
// closure that may set it, or whose address a call was given (defer func()
// { err = nil }()).
func resetByDefer(ret *ssa.Return, i int) bool {
	load, ok := ret.Results[i].(*ssa.UnOp)
	if !ok || load.Op != token.MUL {
		return false
	}
	for _, ref := range referrers(load.X) {
		switch r := ref.(type) {
		case *ssa.Store:
			if r.Addr == load.X {
				continue
			}
		case *ssa.UnOp:
			if r.Op == token.MUL {
				continue
			}
		case *ssa.MakeClosure:
			if onlyReads(r, load.X, 0) {
				continue // a deferred closure that logs the error, say
			}
		case *ssa.DebugRef:
			continue
		}
		return true
	}
	return false
}

// resultOfCollectors reports whether result i of ret's function holds
// registered collectors themselves (see collectorValues).
func resultOfCollectors(ret *ssa.Return, i int) bool {
	return collectorValues(ret.Parent().Signature.Results().At(i).Type())
}

// collectorValues reports whether t is a type of client_golang's prometheus
// package (Collector, Gauge, *CounterVec and the like), or a slice, array or
// pointer of one. A function that returns such a value with an error that
// is never nil can mean only that its caller take them back: it hands them
// back, against Go's convention for the other results of a failure.
func collectorValues(t types.Type) bool {
	for range 4 {
		switch u := types.Unalias(t).(type) {
		case *types.Pointer:
			t = u.Elem()
		case *types.Slice:
			t = u.Elem()
		case *types.Array:
			t = u.Elem()
		case *types.Named:
			p := u.Obj().Pkg()
			return p != nil && p.Path() == prometheusPath
		default:
			return false
		}
	}
	return false
}

// returnsOwned returns the index of the first result of ret that carries
// the registration o describes, not counting error results; -1 if none.
func returnsOwned(ret *ssa.Return, o ownerSet) int {
	for i := range ret.Results {
		v := returned(ret, i)
		if !isErrorType(v.Type()) && !isNil(v) && o.owns(v) {
			return i
		}
	}
	return -1
}
