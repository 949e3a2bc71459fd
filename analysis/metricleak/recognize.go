package metricleak

import (
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// The packages whose functions the analyzer knows by name. It never imports
// them: it recognises their functions through go/types, so that it works on
// code that vendors them or pins any version.
const (
	prometheusPath = "github.com/prometheus/client_golang/prometheus"
	promautoPath   = prometheusPath + "/promauto"
	registryPath   = "github.com/promscope/promscope/registry"
	lifecyclePath  = "github.com/promscope/promscope/lifecycle"
)

// errorsMatch recognises a call that tests an error for a match, which can
// hold only of an error that is not nil: errors.As(err, target),
// errors.AsType[T](err), and errors.Is(err, target) with a target that is not
// the constant nil. It returns err, and for As and AsType the type looked
// for; nil, nil for any other call.
func errorsMatch(call *ssa.Call) (err ssa.Value, want types.Type) {
	fn, args := calleeFunc(call.Common()), call.Call.Args
	switch {
	case isFunc(fn, "errors", "As") && len(args) == 2:
		return args[0], typeDeref(root(args[1]).Type())
	case isFunc(fn, "errors", "AsType") && len(args) == 1 && call.Call.Signature().Results().Len() == 2:
		// Go 1.26: its first result is the type it looks for.
		return args[0], call.Call.Signature().Results().At(0).Type()
	case isFunc(fn, "errors", "Is") && len(args) == 2 && !isNil(args[1]):
		return args[0], nil
	}
	return nil, nil
}

// pkgPath is the import path of p without a vendor prefix.
func pkgPath(p *types.Package) string {
	if p == nil {
		return ""
	}
	path := p.Path()
	if i := strings.LastIndex(path, "/vendor/"); i >= 0 {
		return path[i+len("/vendor/"):]
	}
	return strings.TrimPrefix(path, "vendor/")
}

// isNamed reports whether t, or the type t points to, is the named type
// path.name.
func isNamed(t types.Type, path, name string) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	if !ok {
		return false
	}
	obj := n.Obj()
	return obj.Name() == name && pkgPath(obj.Pkg()) == path
}

// isFunc reports whether fn is the package-level function path.name.
func isFunc(fn *types.Func, path, name string) bool {
	return fn != nil && fn.Name() == name && pkgPath(fn.Pkg()) == path &&
		fn.Signature().Recv() == nil
}

// isMethod reports whether fn is the method name of the type path.typeName
// (or a pointer to it).
func isMethod(fn *types.Func, path, typeName, name string) bool {
	if fn == nil || fn.Name() != name {
		return false
	}
	recv := fn.Signature().Recv()
	return recv != nil && isNamed(recv.Type(), path, typeName)
}

// isCollector reports whether t is prometheus.Collector.
func isCollector(t types.Type) bool { return isNamed(t, prometheusPath, "Collector") }

// registererMethod reports whether fn has the shape of the method name of
// prometheus.Registerer: Register(Collector) error, MustRegister(...Collector)
// or Unregister(Collector) bool. Any type with such a method is a registerer
// here, which covers *prometheus.Registry, *registry.Scope, wrappers and the
// interface itself. The package-level functions of the same names in the
// prometheus package act on the default registry and match too.
func registererMethod(fn *types.Func, name string) bool {
	if fn == nil || fn.Name() != name {
		return false
	}
	sig := fn.Signature()
	if sig.Recv() == nil && pkgPath(fn.Pkg()) != prometheusPath {
		return false
	}
	if sig.Params().Len() != 1 {
		return false
	}
	param := sig.Params().At(0).Type()
	if name == "MustRegister" {
		s, ok := param.(*types.Slice)
		return ok && sig.Variadic() && isCollector(s.Elem())
	}
	return isCollector(param)
}

// calleeFunc is the function or method a call calls, when it is known
// statically or is an interface method.
func calleeFunc(call *ssa.CallCommon) *types.Func {
	if call.IsInvoke() {
		return call.Method
	}
	if fn := call.StaticCallee(); fn != nil {
		if o := fn.Origin(); o != nil {
			fn = o
		}
		if obj, ok := fn.Object().(*types.Func); ok {
			return obj
		}
	}
	return nil
}

// factArgs returns the operands of a static call as a fact counts the
// callee's parameters, the receiver first. A bound method value (x.M taken
// as a value) is a wrapper that holds its receiver: the receiver is the
// value bound where the wrapper is made, or nil where that cannot be seen.
func factArgs(common *ssa.CallCommon) []ssa.Value {
	callee := common.StaticCallee()
	if callee == nil || callee.Signature.Recv() != nil || len(callee.FreeVars) != 1 {
		return common.Args
	}
	if m, ok := callee.Object().(*types.Func); !ok || m.Signature().Recv() == nil {
		return common.Args
	}
	var recv ssa.Value
	if mc, ok := common.Value.(*ssa.MakeClosure); ok && len(mc.Bindings) == 1 {
		recv = mc.Bindings[0]
	}
	return append([]ssa.Value{recv}, common.Args...)
}

// receiverAndArgs splits a call's operands into the receiver (nil for a
// function, or for a bound method value whose receiver cannot be seen) and
// the arguments.
func receiverAndArgs(call *ssa.CallCommon) (ssa.Value, []ssa.Value) {
	if call.IsInvoke() {
		return call.Value, call.Args
	}
	if fn := calleeFunc(call); fn != nil && fn.Signature().Recv() != nil {
		if args := factArgs(call); len(args) > 0 {
			return args[0], args[1:]
		}
	}
	return nil, call.Args
}

// isScope reports whether v is a promscope scope, judged by its static type
// or, for an interface value, by the type it was made from.
func isScope(v ssa.Value) bool {
	for {
		if isNamed(v.Type(), registryPath, "Scope") {
			return true
		}
		switch x := v.(type) {
		case *ssa.MakeInterface:
			v = x.X
		case *ssa.ChangeInterface:
			v = x.X
		default:
			return false
		}
	}
}

// isNil reports whether v is the constant nil, or merges only nils.
func isNil(v ssa.Value) bool {
	return isNilSeen(v, map[ssa.Value]bool{})
}

func isNilSeen(v ssa.Value, seen map[ssa.Value]bool) bool {
	if seen[v] {
		return true
	}
	seen[v] = true
	switch x := v.(type) {
	case *ssa.Const:
		return x.IsNil()
	case *ssa.ChangeInterface:
		return isNilSeen(x.X, seen)
	case *ssa.Phi:
		for _, e := range x.Edges {
			if !isNilSeen(e, seen) {
				return false
			}
		}
		return true
	}
	return false
}

// isErrorType reports whether t is the predeclared error type.
func isErrorType(t types.Type) bool {
	return types.Identical(t, types.Universe.Lookup("error").Type())
}
