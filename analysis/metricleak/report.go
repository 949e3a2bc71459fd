package metricleak

import (
	"fmt"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"
)

// message describes the registrations that one return leaves behind, for
// example:
//
//	service_cache_size registered at api.go:31 (via kube.NewAPI) stays
//	registered when this returns an error: close its scope, or call
//	(*API).UnregisterGauges, before returning
func (c *checker) message(regs []*registration) string {
	first := regs[0]
	var names []string
	sites := []string{first.siteString(c.pass.Fset)}
	for _, r := range regs {
		names = appendNew(names, r.metrics...)
		sites = appendNew(sites, r.siteString(c.pass.Fset))
	}
	var b strings.Builder
	b.WriteString(nameList(names))
	fmt.Fprintf(&b, " registered at %s", sites[0])
	if first.via != nil {
		fmt.Fprintf(&b, " (via %s)", c.funcName(first.via))
	}
	if n := len(sites) - 1; n > 0 {
		fmt.Fprintf(&b, " and %d other %s", n, plural(n, "place", "places"))
	}
	one := len(names) == 1
	fmt.Fprintf(&b, " %s registered when this returns an error: ", pick(one, "stays", "stay"))
	switch m := c.undoMethod(first); {
	case first.scope:
		b.WriteString("close its scope before returning")
	case m != "":
		fmt.Fprintf(&b, "close its scope, or call %s, before returning", m)
	default:
		fmt.Fprintf(&b, "close its scope, or unregister %s, before returning", pick(one, "it", "them"))
	}
	return b.String()
}

// nameList lists up to three names, and how many more there are.
func nameList(names []string) string {
	switch len(names) {
	case 0:
		return "metrics"
	case 1:
		return names[0]
	case 2:
		return names[0] + " and " + names[1]
	case 3:
		return names[0] + ", " + names[1] + " and " + names[2]
	}
	return fmt.Sprintf("%s, %s, %s and %d more", names[0], names[1], names[2], len(names)-3)
}

func pick(one bool, singular, plural string) string {
	if one {
		return singular
	}
	return plural
}

func plural(n int, singular, plural string) string { return pick(n == 1, singular, plural) }

// undoMethod names a method of the value a callee handed back that undoes
// its registrations, as "(*API).UnregisterGauges"; "" if there is none.
func (c *checker) undoMethod(r *registration) string {
	if r.owner == nil {
		return ""
	}
	t := r.owner
	if _, isPtr := t.Underlying().(*types.Pointer); !isPtr && !types.IsInterface(t) {
		t = types.NewPointer(t)
	}
	_, isIface := t.Underlying().(*types.Interface)
	ms := types.NewMethodSet(t)
	for i := range ms.Len() {
		m, ok := ms.At(i).Obj().(*types.Func)
		if !ok {
			continue
		}
		if isIface && fallbackName(m.Name()) || !isIface && c.methodUnregisters(m) {
			return methodName(t, m)
		}
	}
	return ""
}

// methodUnregisters reports whether method m has an unregistersFact, or
// would get one in this package.
func (c *checker) methodUnregisters(m *types.Func) bool {
	if m.Pkg() == c.pass.Pkg {
		if fn := c.pkg.Prog.FuncValue(m); fn != nil {
			return c.unregisters(fn)
		}
		return false
	}
	return c.pass.ImportObjectFact(m, new(unregistersFact))
}

// methodName formats m as a method expression of t with unqualified type
// names: "(*API).UnregisterGauges", or "Interface.Close".
func methodName(t types.Type, m *types.Func) string {
	unqualified := func(*types.Package) string { return "" }
	if recv := m.Signature().Recv(); recv != nil && !types.IsInterface(recv.Type()) {
		t = recv.Type()
	}
	s := types.TypeString(t, unqualified)
	if strings.HasPrefix(s, "*") {
		s = "(" + s + ")"
	}
	return s + "." + m.Name()
}

// funcName names a function as "kube.NewAPI" or "(*kube.Client).Connect",
// leaving out the package when it is the one being checked.
func (c *checker) funcName(fn *types.Func) string {
	q := func(p *types.Package) string {
		if p == c.pass.Pkg {
			return ""
		}
		return p.Name()
	}
	if recv := fn.Signature().Recv(); recv != nil {
		s := types.TypeString(recv.Type(), q)
		if strings.HasPrefix(s, "*") {
			s = "(" + s + ")"
		}
		return s + "." + fn.Name()
	}
	if p := q(fn.Pkg()); p != "" {
		return p + "." + fn.Name()
	}
	return fn.Name()
}

// shortPos formats pos as "file.go:line".
func shortPos(fset *token.FileSet, pos token.Pos) string {
	p := fset.Position(pos)
	return fmt.Sprintf("%s:%d", filepath.Base(p.Filename), p.Line)
}
