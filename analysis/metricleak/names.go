package metricleak

import (
	"go/constant"
	"go/token"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// metricName returns the fully-qualified name of the metric a collector
// value was made with, when it comes straight from a prometheus or promauto
// constructor with constant options; otherwise "".
func metricName(v ssa.Value) string {
	for range 4 {
		w := storedIn(v)
		if w == nil {
			break
		}
		v = w
	}
	call, ok := root(v).(*ssa.Call)
	if !ok {
		return ""
	}
	fn := calleeFunc(call.Common())
	if fn == nil {
		return ""
	}
	if path := pkgPath(fn.Pkg()); path != prometheusPath && path != promautoPath {
		return madeBy(call)
	}
	if !strings.HasPrefix(fn.Name(), "New") {
		return ""
	}
	_, args := receiverAndArgs(call.Common())
	if len(args) == 0 {
		return ""
	}
	return optsName(args[0])
}

// optsName builds the name in an Opts literal from its Namespace, Subsystem
// and Name fields, the way prometheus.BuildFQName does. Any of them set to a
// value that is not constant makes the name unknown.
func optsName(opts ssa.Value) string {
	alloc, ok := root(opts).(*ssa.Alloc)
	if !ok {
		return ""
	}
	fields := map[string]string{}
	for _, ref := range referrers(alloc) {
		fa, ok := ref.(*ssa.FieldAddr)
		if !ok {
			continue
		}
		st, ok := types.Unalias(typeDeref(fa.X.Type())).Underlying().(*types.Struct)
		if !ok {
			continue
		}
		name := st.Field(fa.Field).Name()
		for _, use := range referrers(fa) {
			store, ok := use.(*ssa.Store)
			if !ok || store.Addr != fa {
				continue
			}
			k, ok := constString(store.Val)
			if !ok {
				k = "\x00" // set, but not to a constant
			}
			fields[name] = k
		}
	}
	var parts []string
	for _, f := range []string{"Namespace", "Subsystem", "Name"} {
		s := fields[f]
		if strings.Contains(s, "\x00") {
			return ""
		}
		if s != "" {
			parts = append(parts, s)
		}
	}
	if fields["Name"] == "" {
		return ""
	}
	return strings.Join(parts, "_")
}

// constString returns the value of v, a string constant; ok is false if v
// is no constant string.
func constString(v ssa.Value) (s string, ok bool) {
	k, ok := v.(*ssa.Const)
	if !ok || k.Value == nil || k.Value.Kind() != constant.String {
		return "", false
	}
	return constant.StringVal(k.Value), true
}

// typeDeref returns the element type of a pointer, or t itself.
func typeDeref(t types.Type) types.Type {
	if p, ok := types.Unalias(t).Underlying().(*types.Pointer); ok {
		return p.Elem()
	}
	return t
}

// storedIn returns, for a load of a field of an object, the value the
// function stored in that field, if it stored one value there; nil
// otherwise.
func storedIn(v ssa.Value) ssa.Value {
	if fa := loadedField(v); fa != nil {
		return fieldValue(fa.X, fa.Field, false)
	}
	return nil
}

// loadedField returns the field address v is loaded from, or nil.
func loadedField(v ssa.Value) *ssa.FieldAddr {
	load, ok := strip(v).(*ssa.UnOp)
	if !ok || load.Op != token.MUL {
		return nil
	}
	fa, _ := load.X.(*ssa.FieldAddr)
	return fa
}

// fieldValue returns the one value that the function stores in field i of
// the object at addr, or nil if it stores none or several. An object copied
// whole from another (m := tmp; newer SSA builders also build a composite
// literal in an object of its own and copy it) is looked into too, and a
// whole store of anything else leaves the field unknown. With sure set, it
// returns nil also unless each of those objects is one the function made
// and kept to itself (see unshared), so that only the function's own
// stores can have set the field.
func fieldValue(addr ssa.Value, i int, sure bool) ssa.Value {
	var val ssa.Value
	for range 4 {
		if _, made := addr.(*ssa.Alloc); sure && (!made || !unshared(addr)) {
			return nil
		}
		var from ssa.Value      // what addr is a copy of
		var copied *ssa.Store   // the copy
		var stores []*ssa.Store // into the field
		for _, ref := range referrers(addr) {
			switch x := ref.(type) {
			case *ssa.FieldAddr:
				if x.Field != i {
					continue
				}
				for _, use := range referrers(x) {
					if st, ok := use.(*ssa.Store); ok && st.Addr == x {
						if val != nil && val != st.Val {
							return nil
						}
						val = st.Val
						stores = append(stores, st)
					}
				}
			case *ssa.Store:
				if x.Addr != addr {
					continue
				}
				load, ok := x.Val.(*ssa.UnOp)
				if !ok || load.Op != token.MUL || from != nil {
					return nil
				}
				from, copied = load.X, x
			}
		}
		if from == nil {
			return val
		}
		if val != nil {
			// Stored in after the copy (m := T{...}; m.f = v, as newer
			// SSA builders lay it out), or copied over.
			if !slices.ContainsFunc(stores, func(st *ssa.Store) bool { return !before(copied, st) }) {
				return val
			}
			return nil
		}
		addr = from
	}
	return nil
}

// madeBy names the metric a helper of the package returns, for a helper
// with a single return statement: func requests() prometheus.Counter
// { return prometheus.NewCounter(...) }.
func madeBy(call *ssa.Call) string {
	callee := call.Common().StaticCallee()
	if callee == nil || callee.Pkg != call.Parent().Pkg || callee == call.Parent() {
		return ""
	}
	rets := returnsIn(callee)
	if len(rets) != 1 || len(rets[0].Results) != 1 {
		return ""
	}
	res, ok := root(rets[0].Results[0]).(*ssa.Call)
	if !ok || res.Common().StaticCallee() == callee {
		return ""
	}
	if fn := calleeFunc(res.Common()); fn == nil || pkgPath(fn.Pkg()) != prometheusPath && pkgPath(fn.Pkg()) != promautoPath {
		return ""
	}
	return metricName(res)
}

// unshared reports whether the function only reads and writes the object at
// addr through its fields, copies it or returns it: no call, closure or
// other object gets hold of it or of a field's address, so nothing else
// can change its fields while the function runs.
func unshared(addr ssa.Value) bool {
	for _, ref := range referrers(addr) {
		switch x := ref.(type) {
		case *ssa.FieldAddr:
			for _, use := range referrers(x) {
				if !accesses(use, x, true) {
					return false
				}
			}
		case *ssa.Return:
		default:
			if !accesses(ref, addr, true) {
				return false
			}
		}
	}
	return true
}

// accesses reports whether instr loads from addr, stores to it (if store
// is set), or only marks it for debugging.
func accesses(instr ssa.Instruction, addr ssa.Value, store bool) bool {
	switch x := instr.(type) {
	case *ssa.UnOp:
		return x.Op == token.MUL && x.X == addr
	case *ssa.Store:
		return store && x.Addr == addr
	case *ssa.DebugRef:
		return true
	}
	return false
}
