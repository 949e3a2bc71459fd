package metricleak

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/printer"
	"go/token"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ast/astutil"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/types/typeutil"
)

// suggestFix returns a fix for the leak l in fn, or nil. The fix inserts,
// before each return that leaves the registrations behind, the calls that
// undo them:
//
//	if err := connect(); err != nil {
//		remoteAPI.UnregisterGauges()
//		return nil, err
//	}
//
// It is offered only for the plain cases, where every undo is known and can
// be written, and every one of those returns surely gives an error, so that
// the inserted calls never run on success:
//
//   - a collector given to Register or MustRegister, held in a variable,
//     is unregistered from the registerer it went through, also held in a
//     variable, where Register is known to have succeeded: reg.Unregister(c);
//   - a collector made by promauto, assigned to a variable, is unregistered
//     from the registerer given to promauto.With, if that is not nil, or
//     from the default registry with prometheus.Unregister;
//   - a value a callee handed back with its registrations, assigned to a
//     variable, has a method without arguments that an unregistersFact
//     says undoes them, called where the callee is known to have succeeded:
//     api.UnregisterGauges().
//
// A return surely gives an error when it returns an error it has just
// tested against nil, a new error made by errors.New or fmt.Errorf, a
// value of a concrete type, or a package's error variable.
//
// Inserting before the returns, rather than deferring an undo guarded on
// the error right after the registration, is how a maintainer fixes this by
// hand (as linkerd2 did): the undo sits beside the failure it handles, and
// neither the signature (a deferred guard needs a named error result) nor
// the meaning of a shadowed err changes.
func (c *checker) suggestFix(fn *ssa.Function, l *leak) *analysis.SuggestedFix {
	f := c.fileOf(fn.Pos())
	if f == nil || scopeRegistration(l) {
		return nil
	}
	tf := c.pass.Fset.File(f.Pos())
	if c.pass.ReadFile == nil || tf == nil {
		return nil
	}
	src, err := c.pass.ReadFile(tf.Name())
	if err != nil || len(src) != tf.Size() {
		return nil // not the file that was parsed
	}
	counts := c.assignments(outermost(fn).Syntax(), l.rets[len(l.rets)-1].Pos())
	var undos []*undo
	for _, r := range slices.Backward(l.regs) {
		u := c.undoOf(f, counts, r)
		if u == nil {
			return nil
		}
		u.call = r.call
		if !slices.ContainsFunc(undos, func(v *undo) bool { return v.text == u.text }) {
			undos = append(undos, u)
		}
	}
	fix := &analysis.SuggestedFix{}
	for _, ret := range l.rets {
		if !ret.Pos().IsValid() || !c.surelyFails(ret) {
			return nil
		}
		for _, u := range undos {
			if !u.usableAt(c.pass.TypesInfo, f, ret) {
				return nil
			}
		}
		pos := ret.Pos()
		lineStart := tf.LineStart(tf.Line(pos))
		indent := string(src[tf.Offset(lineStart):tf.Offset(pos)])
		if len(strings.TrimSpace(indent)) != 0 {
			return nil // the return shares its line, which gofmt never leaves so
		}
		var b strings.Builder
		for _, u := range undos {
			if u.guard != "" {
				fmt.Fprintf(&b, "if %s != nil {\n%s\t%s\n%s}\n%s", u.guard, indent, u.text, indent, indent)
			} else {
				b.WriteString(u.text + "\n" + indent)
			}
		}
		fix.TextEdits = append(fix.TextEdits, analysis.TextEdit{Pos: pos, End: pos, NewText: []byte(b.String())})
	}
	var calls []string
	for _, u := range undos {
		calls = append(calls, u.text)
	}
	fix.Message = fmt.Sprintf("Call %s before returning", strings.Join(calls, " and "))
	return fix
}

// scopeRegistration reports whether some registration of l went through a
// promscope scope: closing the scope is the fix, best done by a deferred
// lifecycle.CloseOnError, which the message says.
func scopeRegistration(l *leak) bool {
	return slices.ContainsFunc(l.regs, func(r *registration) bool { return r.scope })
}

// An undo is a call that undoes one registration, as source text, and the
// variables and package it names, each of which its name must still denote,
// holding the same value, where the call is inserted.
type undo struct {
	text  string
	names []types.Object
	// succeeded, if set, is the error of the registering call, which must
	// be known nil where the undo is inserted: a callee that failed handed
	// back no value to call the method on, and where Register failed the
	// collector registered under the same descriptors is someone else's.
	succeeded ssa.Value
	// call is the registering call, which must have run on every path to
	// where the undo is inserted: elsewhere what is unregistered may be
	// someone else's collector with the same descriptors.
	call ssa.Instruction
	// guard, if set, is the registerer, which may be nil (promauto.With
	// takes nil to register nowhere): the undo runs only if it is not.
	guard string
}

// usableAt reports whether the registering call has run on every path to
// ret, and succeeded there if it must be known to, and each name u uses
// denotes there the same object as where the registration was made.
func (u *undo) usableAt(info *types.Info, f *ast.File, ret *ssa.Return) bool {
	scope := info.Scopes[f].Innermost(ret.Pos())
	if scope == nil || !before(u.call, ret) {
		return false
	}
	if u.succeeded != nil && !testedAt(ret.Block(), u.succeeded, token.EQL) {
		return false
	}
	for _, obj := range u.names {
		if _, found := scope.LookupParent(obj.Name(), ret.Pos()); found != obj {
			return false
		}
	}
	return true
}

// undoOf returns the call that undoes r, or nil if there is no plain one.
func (c *checker) undoOf(f *ast.File, counts map[types.Object]int, r *registration) *undo {
	call := callAt(f, r.call.Pos())
	if call == nil {
		return nil
	}
	fn := calleeFunc(r.call.Common())
	sel, _ := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	switch {
	case c.unchecked(r):
		return nil // Unregister cannot take it back
	case r.via != nil:
		return c.methodUndo(f, counts, r, call)
	case sel == nil:
		return nil
	case registererMethod(fn, "Register") || registererMethod(fn, "MustRegister"):
		var col ast.Expr
		switch {
		case call.Ellipsis.IsValid():
			return nil
		case registererMethod(fn, "Register") && len(call.Args) == 1:
			col = call.Args[0]
		case r.arg >= 0 && r.arg < len(call.Args):
			col = call.Args[r.arg]
		default:
			return nil
		}
		if !stable(c.pass.TypesInfo, counts, col) {
			return nil
		}
		u := c.unregisterCall(counts, sel.X, col)
		if u != nil && registererMethod(fn, "Register") {
			// Where Register failed, the collector registered under
			// the same descriptors is someone else's.
			u.succeeded = r.err
		}
		return u
	case isFunc(fn, promautoPath, fn.Name()):
		pkg := c.importName(f, prometheusPath)
		if pkg == nil {
			return nil
		}
		col := assignedTo(f, call, 0)
		if col == nil || !stableAssigned(c.pass.TypesInfo, counts, col) {
			return nil
		}
		return c.unregisterOn(pkg.Name(), []types.Object{pkg}, col)
	case isMethod(fn, promautoPath, "Factory", fn.Name()):
		reg := c.factoryArg(f, counts, sel.X)
		col := assignedTo(f, call, 0)
		if reg == nil || col == nil || !stableAssigned(c.pass.TypesInfo, counts, col) {
			return nil
		}
		u := c.unregisterCall(counts, reg, col)
		if u != nil && !packageVar(c.pass.TypesInfo, reg) {
			u.guard, _ = exprText(c.pass, reg)
		}
		return u
	}
	return nil
}

// methodUndo returns the call of the undo method of the value a callee
// handed back, where the callee's failure has been ruled out.
func (c *checker) methodUndo(f *ast.File, counts map[types.Object]int, r *registration, call *ast.CallExpr) *undo {
	m := c.undoMethod(r)
	if m == nil || r.result < 0 {
		return nil
	}
	owner := assignedTo(f, call, r.result)
	if owner == nil || !stableAssigned(c.pass.TypesInfo, counts, owner) {
		return nil
	}
	if failureResult(r.call.Type()) >= 0 && r.err == nil {
		return nil // its failure is not checked
	}
	id, names := exprText(c.pass, owner)
	return &undo{text: id + "." + m.Name() + "()", names: names, succeeded: r.err}
}

// unregisterCall returns the undo recv.Unregister(col), recv being a
// package name (the default registry) or a stable expression of a type
// with an Unregister method; nil if it is neither. The caller has checked
// col.
func (c *checker) unregisterCall(counts map[types.Object]int, recv ast.Expr, col ast.Expr) *undo {
	id, _ := ast.Unparen(recv).(*ast.Ident)
	_, isPkg := c.pass.TypesInfo.ObjectOf(id).(*types.PkgName) // not a package's variable, pkg.Var
	if !isPkg && !stable(c.pass.TypesInfo, counts, recv) {
		return nil
	}
	if !isPkg && !hasMethod(c.pass.TypesInfo.TypeOf(recv), "Unregister") {
		return nil // a type with Register or MustRegister only
	}
	text, names := exprText(c.pass, recv)
	return c.unregisterOn(text, names, col)
}

// unregisterOn returns the undo recv.Unregister(col), given the text of
// recv and the names it uses.
func (c *checker) unregisterOn(recv string, names []types.Object, col ast.Expr) *undo {
	colText, colNames := exprText(c.pass, col)
	return &undo{text: recv + ".Unregister(" + colText + ")", names: append(names, colNames...)}
}

// factoryArg returns the registerer given to promauto.With for the factory
// x: promauto.With(reg) itself, or a variable assigned it once.
func (c *checker) factoryArg(f *ast.File, counts map[types.Object]int, x ast.Expr) ast.Expr {
	x = ast.Unparen(x)
	if id, ok := x.(*ast.Ident); ok {
		obj := c.pass.TypesInfo.Uses[id]
		if obj == nil || counts[obj] != 1 {
			return nil
		}
		x = definition(f, c.pass.TypesInfo, obj)
		if x == nil {
			return nil
		}
	}
	with, ok := x.(*ast.CallExpr)
	if !ok || len(with.Args) != 1 {
		return nil
	}
	if fn, ok := typeutil.Callee(c.pass.TypesInfo, with).(*types.Func); !ok || !isFunc(fn, promautoPath, "With") {
		return nil
	}
	return with.Args[0]
}

// surelyFails reports whether the error ret returns is never nil.
func (c *checker) surelyFails(ret *ssa.Return) bool {
	i := errorResult(ret.Parent().Signature.Results())
	if i < 0 || resetByDefer(ret, i) {
		return false
	}
	v := returned(ret, i)
	if x, ok := v.(*ssa.UnOp); ok && x.Op == token.MUL {
		if g, ok := x.X.(*ssa.Global); ok {
			return c.sentinel(g)
		}
	}
	return neverNil(v) || testedAt(ret.Block(), v, token.NEQ)
}

// testedAt reports whether every path to b passes a branch on v compared
// with nil where the comparison op holds: a block that dominates b has a
// single predecessor, which ends in that branch and enters it by the edge
// where op holds.
func testedAt(b *ssa.BasicBlock, v ssa.Value, op token.Token) bool {
	for a := b; a != nil && a.Idom() != nil; a = a.Idom() {
		p := a.Idom()
		if len(a.Preds) != 1 || a.Preds[0] != p || len(p.Instrs) == 0 {
			continue
		}
		branch, ok := p.Instrs[len(p.Instrs)-1].(*ssa.If)
		if !ok {
			continue
		}
		cmp, ok := branch.Cond.(*ssa.BinOp)
		if !ok || cmp.Op != token.EQL && cmp.Op != token.NEQ {
			continue
		}
		x, y := cmp.X, cmp.Y
		if isNil(x) {
			x, y = y, x
		}
		if x != v || !isNil(y) {
			continue
		}
		taken := p.Succs[0] == a // the true branch
		if taken == (cmp.Op == op) {
			return true
		}
	}
	return false
}

// fileOf returns the file of the package that holds pos.
func (c *checker) fileOf(pos token.Pos) *ast.File {
	for _, f := range c.pass.Files {
		if f.FileStart <= pos && pos <= f.FileEnd {
			return f
		}
	}
	return nil
}

// callAt returns the call expression whose opening parenthesis is at lparen.
func callAt(f *ast.File, lparen token.Pos) *ast.CallExpr {
	path, _ := astutil.PathEnclosingInterval(f, lparen, lparen)
	for _, n := range path {
		if call, ok := n.(*ast.CallExpr); ok && call.Lparen == lparen {
			return call
		}
	}
	return nil
}

// assignedTo returns the variable that result i of call is assigned to, in
// an assignment or declaration of which call is the only value; nil if
// there is none, or it is the blank identifier.
func assignedTo(f *ast.File, call *ast.CallExpr, i int) ast.Expr {
	path, _ := astutil.PathEnclosingInterval(f, call.Pos(), call.End())
	for len(path) > 0 && path[0] != call {
		path = path[1:]
	}
	if len(path) < 2 {
		return nil
	}
	var lhs []ast.Expr
	switch parent := path[1].(type) {
	case *ast.AssignStmt:
		if len(parent.Rhs) != 1 || parent.Rhs[0] != call {
			return nil
		}
		lhs = parent.Lhs
	case *ast.ValueSpec:
		if len(parent.Values) != 1 || parent.Values[0] != call {
			return nil
		}
		for _, n := range parent.Names {
			lhs = append(lhs, n)
		}
	default:
		return nil
	}
	if i >= len(lhs) {
		return nil
	}
	if id, ok := lhs[i].(*ast.Ident); ok && id.Name == "_" {
		return nil
	}
	return lhs[i]
}

// definition returns the value a local variable was declared with, or nil.
func definition(f *ast.File, info *types.Info, obj types.Object) ast.Expr {
	path, _ := astutil.PathEnclosingInterval(f, obj.Pos(), obj.Pos())
	for _, n := range path {
		switch d := n.(type) {
		case *ast.AssignStmt:
			if len(d.Lhs) == len(d.Rhs) {
				for i, l := range d.Lhs {
					if id, ok := l.(*ast.Ident); ok && info.Defs[id] == obj {
						return d.Rhs[i]
					}
				}
			}
			return nil
		case *ast.ValueSpec:
			if len(d.Names) == len(d.Values) {
				for i, id := range d.Names {
					if info.Defs[id] == obj {
						return d.Values[i]
					}
				}
			}
			return nil
		}
	}
	return nil
}

// stable reports whether x is a variable, or a field of one, whose value
// is the same wherever it can be named: a parameter never assigned, a local
// variable assigned only where it is declared, or a package variable; the
// fields on the way must not be assigned in the function either.
func stable(info *types.Info, counts map[types.Object]int, x ast.Expr) bool {
	for {
		switch e := ast.Unparen(x).(type) {
		case *ast.Ident:
			v, ok := info.ObjectOf(e).(*types.Var)
			switch {
			case !ok:
				return false
			case isPackageVar(v):
				return counts[v] == 0
			case v.Kind() == types.ParamVar || v.Kind() == types.RecvVar:
				return counts[v] == 0
			}
			return counts[v] == 1
		case *ast.SelectorExpr:
			if sel := info.Selections[e]; sel != nil {
				if sel.Kind() != types.FieldVal || counts[sel.Obj()] != 0 {
					return false
				}
				x = e.X
				continue
			}
			// A qualified identifier, pkg.Var.
			v, ok := info.Uses[e.Sel].(*types.Var)
			return ok && counts[v] == 0
		default:
			return false
		}
	}
}

// stableAssigned is stable for x, the variable or field that the
// registering call's result is assigned to: that assignment is allowed.
func stableAssigned(info *types.Info, counts map[types.Object]int, x ast.Expr) bool {
	if e, ok := ast.Unparen(x).(*ast.SelectorExpr); ok {
		if sel := info.Selections[e]; sel != nil && sel.Kind() == types.FieldVal {
			return counts[sel.Obj()] == 1 && stable(info, counts, e.X)
		}
	}
	return stable(info, counts, x)
}

// assignments counts, for each variable and field, the statements of body
// that assign it, a declaration with a value counting as one; a variable
// whose address is taken counts as assigned many times, and so does each
// field of what a call is given (its arguments and a method's receiver),
// which the call may change; for a callee of this package whose body shows
// which fields it changes, just those (see fieldsChanged). A call after
// until, the last return to insert an undo at, and in no loop, runs after
// the undos and is not counted.
func (c *checker) assignments(body ast.Node, until token.Pos) map[types.Object]int {
	info := c.pass.TypesInfo
	counts := map[types.Object]int{}
	lhs := func(x ast.Expr, n int) {
		switch e := ast.Unparen(x).(type) {
		case *ast.Ident:
			if obj := info.ObjectOf(e); obj != nil {
				counts[obj] += n
			}
		case *ast.SelectorExpr:
			if obj := info.ObjectOf(e.Sel); obj != nil {
				counts[obj] += n
			}
		}
	}
	if body == nil {
		return counts
	}
	ast.PreorderStack(body, nil, func(n ast.Node, stack []ast.Node) bool {
		switch s := n.(type) {
		case *ast.AssignStmt:
			for _, l := range s.Lhs {
				lhs(l, 1)
			}
		case *ast.IncDecStmt:
			lhs(s.X, 1)
		case *ast.RangeStmt:
			if s.Key != nil {
				lhs(s.Key, 2)
			}
			if s.Value != nil {
				lhs(s.Value, 2)
			}
		case *ast.ValueSpec:
			for _, id := range s.Names {
				lhs(id, 1)
			}
		case *ast.UnaryExpr:
			if s.Op == token.AND {
				lhs(s.X, 2)
			}
		case *ast.CallExpr:
			if s.Pos() > until && !slices.ContainsFunc(stack, isLoop) || info.Types[s.Fun].IsType() {
				break // after the undos, or a conversion
			}
			callee := typeutil.Callee(info, s)
			if b, ok := callee.(*types.Builtin); ok && b.Name() != "copy" && b.Name() != "clear" {
				break // len, append and the like change no field
			}
			given := s.Args
			if sel, ok := ast.Unparen(s.Fun).(*ast.SelectorExpr); ok && info.Selections[sel] != nil && info.Selections[sel].Kind() == types.MethodVal {
				given = append([]ast.Expr{sel.X}, given...)
			}
			fields, passed, reached, known := c.fieldsChanged(callee)
			for _, f := range fields {
				counts[f] += 2
			}
			for _, t := range reached {
				changeable(t, counts, map[types.Type]bool{})
			}
			last := -1 // the variadic parameter, which takes the arguments from there on
			if fn, ok := callee.(*types.Func); ok && fn.Signature().Variadic() {
				last = fn.Signature().Params().Len() - 1
				if fn.Signature().Recv() != nil {
					last++
				}
			}
			for i, x := range given {
				if last >= 0 && i > last {
					i = last
				}
				if !known || passed[i] {
					changeable(info.TypeOf(x), counts, map[types.Type]bool{})
				}
			}
		}
		return true
	})
	return counts
}

// isLoop reports whether n is a for or range statement.
func isLoop(n ast.Node) bool {
	switch n.(type) {
	case *ast.ForStmt, *ast.RangeStmt:
		return true
	}
	return false
}

// fieldsChanged returns, for obj, a function or method of this package, the
// fields it stores into through what it was given (its parameters, and
// the objects it reaches from them), the indexes of its parameters (the
// receiver first) that it stores into whole or passes on to a call, which
// could change any of their fields, and the types of the values it reads
// from them and passes on, whose fields such a call could change; ok is
// false if obj is no such function.
func (c *checker) fieldsChanged(obj types.Object) (fields []*types.Var, passed map[int]bool, reached []types.Type, ok bool) {
	fn, isFunc := obj.(*types.Func)
	if !isFunc || fn.Pkg() != c.pass.Pkg {
		return nil, nil, nil, false
	}
	body := c.pkg.Prog.FuncValue(fn)
	if body == nil || len(body.Blocks) == 0 {
		return nil, nil, nil, false
	}
	passed = map[int]bool{}
	pass := func(v ssa.Value) {
		if p := givenAddr(v); p != nil {
			passed[paramIndex(body, p)] = true
		} else if isGiven(root(v)) {
			reached = append(reached, v.Type())
		}
	}
	for _, b := range body.Blocks {
		for _, instr := range b.Instrs {
			switch x := instr.(type) {
			case *ssa.Store:
				if _, local := x.Addr.(*ssa.Alloc); local || !isGiven(root(x.Addr)) {
					continue // a variable of its own, such as one a closure captures
				}
				fa, _ := x.Addr.(*ssa.FieldAddr)
				var st *types.Struct
				if fa != nil {
					st, _ = typeDeref(fa.X.Type()).Underlying().(*types.Struct)
				}
				if st != nil {
					fields = append(fields, st.Field(fa.Field))
				} else {
					pass(x.Addr) // a whole store through what it was given
				}
			case ssa.CallInstruction:
				for _, a := range x.Common().Args {
					pass(a)
				}
				if x.Common().IsInvoke() {
					pass(x.Common().Value)
				}
			}
		}
	}
	return fields, passed, reached, true
}

// givenAddr returns the parameter that v is, or whose part's address v is,
// as opposed to a value read from one; nil if there is none.
func givenAddr(v ssa.Value) *ssa.Parameter {
	for range 16 {
		if w := converted(v); w != nil {
			v = w
			continue
		}
		switch x := v.(type) {
		case *ssa.FieldAddr:
			v = x.X
		case *ssa.IndexAddr:
			v = x.X
		case *ssa.Parameter:
			return x
		default:
			return nil
		}
	}
	return nil
}

// changeable counts each field of a value of type t, and of the values it
// holds or points to, as assigned many times.
func changeable(t types.Type, counts map[types.Object]int, seen map[types.Type]bool) {
	if t == nil || seen[t] {
		return
	}
	seen[t] = true
	switch u := t.Underlying().(type) {
	case *types.Pointer:
		changeable(u.Elem(), counts, seen)
	case *types.Struct:
		for f := range u.Fields() {
			counts[f] += 2
			changeable(f.Type(), counts, seen)
		}
	}
}

// packageVar reports whether x is a package variable, such as
// prometheus.DefaultRegisterer.
func packageVar(info *types.Info, x ast.Expr) bool {
	var id *ast.Ident
	switch e := ast.Unparen(x).(type) {
	case *ast.Ident:
		id = e
	case *ast.SelectorExpr:
		id = e.Sel
	}
	v, ok := info.ObjectOf(id).(*types.Var)
	return ok && isPackageVar(v)
}

// isPackageVar reports whether v is declared at package level.
func isPackageVar(v *types.Var) bool {
	return v.Parent() != nil && v.Parent() == v.Pkg().Scope()
}

// hasMethod reports whether values of type t have the method name.
func hasMethod(t types.Type, name string) bool {
	if t == nil {
		return false
	}
	obj, _, _ := types.LookupFieldOrMethod(t, true, nil, name)
	_, ok := obj.(*types.Func)
	return ok
}

// exprText returns the source text of x, a name or a selector chain, and
// the variable or package its first name denotes, if any.
func exprText(pass *analysis.Pass, x ast.Expr) (string, []types.Object) {
	var b bytes.Buffer
	_ = printer.Fprint(&b, pass.Fset, x)
	switch obj := pass.TypesInfo.ObjectOf(identOf(x)).(type) {
	case *types.Var, *types.PkgName:
		return b.String(), []types.Object{obj}
	}
	return b.String(), nil
}

// identOf returns the name a selector chain starts with, or nil.
func identOf(x ast.Expr) *ast.Ident {
	for {
		switch e := ast.Unparen(x).(type) {
		case *ast.SelectorExpr:
			x = e.X
		case *ast.Ident:
			return e
		default:
			return nil
		}
	}
}

// importName returns the name under which f imports path, or nil.
func (c *checker) importName(f *ast.File, path string) *types.PkgName {
	for _, spec := range f.Imports {
		if pn := c.pass.TypesInfo.PkgNameOf(spec); pn != nil && pkgPath(pn.Imported()) == path {
			if pn.Name() == "_" || pn.Name() == "." {
				return nil
			}
			return pn
		}
	}
	return nil
}

// outermost returns the function fn is a closure within, or fn.
func outermost(fn *ssa.Function) *ssa.Function {
	for fn.Parent() != nil {
		fn = fn.Parent()
	}
	return fn
}
