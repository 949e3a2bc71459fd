package metricleak

import (
	"fmt"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ssa"
)

// reportLeak reports the registrations of l at the first return that
// leaves them behind, with the other returns that do, and the calls that
// made the registrations of the "other places" the message counts, as
// related positions.
func (c *checker) reportLeak(fn *ssa.Function, l *leak) {
	places := c.places(l)
	d := analysis.Diagnostic{Pos: l.rets[0].Pos(), Message: c.message(l, places)}
	if !d.Pos.IsValid() {
		d.Pos = fnPos(fn)
	}
	for _, r := range places[1:] {
		if !r.call.Pos().IsValid() {
			continue
		}
		msg := "also registered here, at " + c.displaySite(r.siteString(c.pass))
		if r.via != nil {
			msg += " (via " + c.funcName(r.via) + ")"
		}
		d.Related = append(d.Related, analysis.RelatedInformation{Pos: r.call.Pos(), Message: msg})
	}
	for _, ret := range l.rets[1:] {
		if !ret.Pos().IsValid() {
			continue
		}
		d.Related = append(d.Related, analysis.RelatedInformation{
			Pos:     ret.Pos(),
			Message: "this return leaves the same registrations behind",
		})
	}
	if fix := c.suggestFix(fn, l); fix != nil {
		d.SuggestedFixes = []analysis.SuggestedFix{*fix}
	}
	c.report(d)
}

// message describes the registrations that a function's returns leave
// behind, at places (c.places(l)), for example:
//
//	service_cache_size and endpoints_cache_size registered at
//	kube/api.go:31 (via kube.NewAPI) stay registered when this or 1 other
//	return gives an error: unregister them, or call
//	(*API).UnregisterGauges, before returning
func (c *checker) message(l *leak, places []*registration) string {
	first := places[0]
	var names []string
	unnamed := false
	for _, r := range l.regs {
		names = appendNew(names, r.metrics...)
		unnamed = unnamed || r.unnamed
	}
	var b strings.Builder
	b.WriteString(nameList(names, unnamed))
	fmt.Fprintf(&b, " registered at %s", c.displaySite(first.siteString(c.pass)))
	if first.via != nil {
		fmt.Fprintf(&b, " (via %s)", c.funcName(first.via))
	}
	if n := len(places) - 1; n > 0 {
		fmt.Fprintf(&b, " and %d other %s", n, plural(n, "place", "places"))
	}
	one := len(names) == 1 && !unnamed
	fmt.Fprintf(&b, " %s registered when this ", pick(one, "stays", "stay"))
	if n := len(l.rets) - 1; n > 0 {
		fmt.Fprintf(&b, "or %d other %s an error: ", n, plural(n, "return gives", "returns give"))
	} else {
		b.WriteString("returns an error: ")
	}
	them := pick(one, "it", "them")
	scoped := func(r *registration) bool { return r.scope }
	if slices.ContainsFunc(l.regs, scoped) {
		b.WriteString("close its scope before returning")
		if rest := slices.DeleteFunc(slices.Clone(l.regs), scoped); len(rest) > 0 {
			// Closing the scope does not undo what went elsewhere.
			others := slices.DeleteFunc(slices.Clone(places), scoped)
			if len(others) == 0 {
				others = rest // made at the places of scoped ones
			}
			b.WriteString("; for the others, " + c.remedy(rest, others, "them", c.failedOne(rest, l)))
		}
		return b.String()
	}
	b.WriteString(c.remedy(l.regs, places, them, c.failedOne(l.regs, l)))
	return b.String()
}

// failedOne returns one of regs, part of l, that may have failed at one of
// l's returns while another of l's registrations stays there (see
// mayFail), or nil: perhaps by colliding with a collector registered
// before. One of a collector that the function holds is preferred, which
// Unregister would take for its own.
func (c *checker) failedOne(regs []*registration, l *leak) *registration {
	var failed *registration
	for _, q := range regs {
		if !slices.ContainsFunc(l.rets, func(ret *ssa.Return) bool {
			return slices.ContainsFunc(l.regs, func(r *registration) bool { return c.mayFail(q, r, ret) })
		}) {
			continue
		}
		if q.collector != nil {
			return q
		}
		if failed == nil {
			failed = q
		}
	}
	return failed
}

// remedy says what undoes regs, registrations made at places (as message
// gives them) through no scope, them naming their metrics, failed the one
// of them that a return finds failed, if any (see failedOne).
func (c *checker) remedy(regs, places []*registration, them string, failed *registration) string {
	first := places[0]
	// How many of the registrations Unregister cannot take back, and how
	// many went through a callee that handed nothing back to undo them
	// with.
	unchecked, unowned := 0, 0
	var handsNothing *types.Func // the callee of those, if there is one
	for _, r := range regs {
		switch {
		case r.unowned:
			unowned++
			if handsNothing == nil {
				handsNothing = r.via
			} else if handsNothing != r.via {
				handsNothing = nil
			}
		case c.unchecked(r):
			unchecked++
		}
	}
	// What to move after the last error return: the registrations, or
	// the calls that make them.
	late := "register " + them
	if first.via != nil && !slices.ContainsFunc(places, func(r *registration) bool { return r.via != first.via }) {
		late = "call " + c.funcName(first.via) // the only function that registers them
	} else if unowned == len(regs) {
		late = "make those calls"
	}
	switch m := c.undoMethod(first); {
	case unchecked == len(regs):
		return fmt.Sprintf("Unregister cannot take back a collector that describes nothing, so %s after the last error return", late)
	case unowned == len(regs) && handsNothing != nil:
		return fmt.Sprintf("nothing here can unregister %s: make %s hand %s back, or call it after the last error return", them, c.funcName(handsNothing), them)
	case unowned+unchecked == len(regs):
		return fmt.Sprintf("nothing here can unregister %s, so %s after the last error return", them, late)
	case unowned > 0 && handsNothing != nil:
		return fmt.Sprintf("unregister them before returning, and call %s, which hands back nothing to unregister with, after the last error return", c.funcName(handsNothing))
	case unowned > 0:
		return "unregister them before returning, and make the calls that hand back nothing to unregister with after the last error return"
	case failed != nil:
		// No method is named: it would undo the one that failed too.
		advice := "unregister each whose registration succeeded before returning"
		if failed.collector != nil {
			advice += ": Unregister of one that failed removes the collector it collided with"
		}
		if unchecked > 0 {
			advice += "; register those that describe nothing, which Unregister cannot take back, after the last error return"
		}
		return advice
	case m != nil:
		return fmt.Sprintf("unregister %s, or call %s, before returning", them, methodName(first.owner, m))
	case unchecked > 0:
		return "unregister them before returning, and register those that describe nothing, which Unregister cannot take back, after the last error return"
	}
	return fmt.Sprintf("unregister %s before returning, or %s after the last error return", them, late)
}

// places returns, for each place where l's registrations were made (a
// registration's site as a message names it, and for one made in a callee,
// the call), the first registration made there, in order, except
// that the first place of a registration whose metrics have names comes
// first: the message names that place, so that the names it lists do not
// all seem to come from a place that registered none of them.
func (c *checker) places(l *leak) []*registration {
	var regs []*registration
	seen := map[string]bool{}
	for _, r := range l.regs {
		place := c.displaySite(r.siteString(c.pass))
		if r.via != nil {
			// Each call of a callee that registers is a place of
			// its own: the calls leave different registrations.
			place += fmt.Sprint(" ", r.call.Pos())
		}
		if !seen[place] {
			seen[place] = true
			regs = append(regs, r)
		}
	}
	if i := slices.IndexFunc(regs, func(r *registration) bool { return len(r.metrics) > 0 }); i > 0 {
		lead := regs[i]
		copy(regs[1:i+1], regs[:i])
		regs[0] = lead
	}
	return regs
}

// shownNames is how many metric names a message lists before "and N more".
const shownNames = 5

// nameList lists the first few names, how many more there are, and, if
// unnamed, that there are metrics it has no name for.
func nameList(names []string, unnamed bool) string {
	n := len(names)
	switch {
	case n == 0:
		// "the" keeps the words from reading as a variable named metrics.
		return "the metrics"
	case n == 1 && !unnamed:
		return names[0]
	}
	items := slices.Clone(names[:min(n, shownNames)])
	if n > shownNames {
		items = append(items, fmt.Sprintf("%d more", n-shownNames))
	}
	if unnamed && n <= shownNames {
		return strings.Join(items, ", ") + " and other metrics"
	}
	list := strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
	if unnamed {
		return list + ", and other metrics" // not "4 more and other metrics"
	}
	return list
}

func pick(one bool, singular, plural string) string {
	if one {
		return singular
	}
	return plural
}

func plural(n int, singular, plural string) string { return pick(n == 1, singular, plural) }

// undoMethod returns a method of the value a callee handed back with the
// registration that undoes it, known by an unregistersFact and called
// without arguments or type arguments, such as (*API).UnregisterGauges; nil
// if there is none. A method named Unregister-something is preferred. The
// method of an interface is never suggested: nothing is known of what it
// does.
func (c *checker) undoMethod(r *registration) *types.Func { return c.undoMethodOf(r.owner) }

// undoMethodOf is undoMethod for a value of type t, or nil.
func (c *checker) undoMethodOf(t types.Type) *types.Func {
	if t == nil || types.IsInterface(t) {
		return nil
	}
	if _, isPtr := t.Underlying().(*types.Pointer); !isPtr {
		t = types.NewPointer(t)
	}
	var found *types.Func
	ms := types.NewMethodSet(t)
	for i := range ms.Len() {
		m, ok := ms.At(i).Obj().(*types.Func)
		if !ok || m.Signature().Params().Len() != 0 || m.Signature().TypeParams().Len() != 0 || !m.Exported() && m.Pkg() != c.pass.Pkg {
			continue
		}
		if !c.methodUnregisters(m) {
			continue
		}
		if strings.HasPrefix(m.Name(), "Unregister") {
			return m
		}
		if found == nil {
			found = m
		}
	}
	return found
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

// methodName formats m as a method expression of the owner type t with
// unqualified type names: "(*API).UnregisterGauges".
func methodName(t types.Type, m *types.Func) string {
	if _, isPtr := t.Underlying().(*types.Pointer); !isPtr {
		if recv := m.Signature().Recv(); recv != nil {
			if _, ptrRecv := recv.Type().Underlying().(*types.Pointer); ptrRecv {
				t = types.NewPointer(t)
			}
		}
	}
	s := types.TypeString(t, func(*types.Package) string { return "" })
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

// sitePos formats pos as "path/file.go:line", with the import path of
// the package being checked: the form a registersFact carries.
func sitePos(pass *analysis.Pass, pos token.Pos) string {
	p := pass.Fset.Position(pos)
	return fmt.Sprintf("%s/%s:%d", pass.Pkg.Path(), filepath.Base(p.Filename), p.Line)
}

// displaySite shortens a site from sitePos for a message: to the file's
// name in the package being checked, whose directory the report names
// already, or to its path in the module being checked; a site in another
// module keeps its package's import path.
func (c *checker) displaySite(site string) string {
	if rest, ok := strings.CutPrefix(site, c.pass.Pkg.Path()+"/"); ok && !strings.Contains(rest, "/") {
		return rest
	}
	if m := c.pass.Module; m != nil && m.Path != "" {
		if rest, ok := strings.CutPrefix(site, m.Path+"/"); ok {
			return rest
		}
	}
	return site
}
