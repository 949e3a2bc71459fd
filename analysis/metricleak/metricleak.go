package metricleak

import (
	_ "embed"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/ctrlflow"
	"golang.org/x/tools/go/ssa"
)

//go:embed doc.go
var docGo string

// Analyzer reports returns of an error that leave metrics registered
// earlier in the same call behind. Its Doc is the package documentation.
//
// It has one flag, -commands: set it to check packages main too.
var Analyzer = newAnalyzer()

// config holds the values of the Analyzer's flags.
type config struct {
	// commands makes the analyzer check packages main, which it skips by
	// default: a command's setup ends the process when it fails.
	commands bool
}

func newAnalyzer() *analysis.Analyzer {
	cfg := new(config)
	a := &analysis.Analyzer{
		Name:      "metricleak",
		Doc:       packageDoc(docGo),
		URL:       "https://pkg.go.dev/github.com/promscope/promscope/analysis/metricleak",
		Requires:  []*analysis.Analyzer{ctrlflow.Analyzer},
		FactTypes: []analysis.Fact{new(registersFact), new(unregistersFact), new(keepsFact), new(neverFailsFact), new(doesNothingFact), new(makesRegistryFact), new(sharesFact)},
		Run:       func(pass *analysis.Pass) (any, error) { return run(pass, cfg) },
	}
	a.Flags.BoolVar(&cfg.commands, "commands", false, "check packages main too (their setup ends the process when it fails, so they are skipped by default)")
	return a
}

// packageDoc returns the package comment of doc.go as plain text, headed by
// the one-line title an analyzer's Doc starts with.
func packageDoc(src string) string {
	var b strings.Builder
	b.WriteString("report error returns that leave registered Prometheus metrics behind\n\n")
	for line := range strings.Lines(src) {
		if strings.HasPrefix(line, "package ") {
			break
		}
		line = strings.TrimPrefix(line, "//")
		b.WriteString(strings.TrimPrefix(line, " "))
	}
	return strings.TrimSpace(b.String())
}

func run(pass *analysis.Pass, cfg *config) (any, error) {
	if pass.Pkg.Name() == "main" && !cfg.commands {
		return nil, nil
	}
	pkg, funcs, ok := buildSSA(pass)
	if !ok {
		return nil, nil
	}
	c := &checker{
		pass:      pass,
		pkg:       pkg,
		registers: map[*ssa.Function]*registersFact{},
		keeps:     map[*ssa.Function]*keepsFact{},
		unreg:     map[*ssa.Function]bool{},
		neverFail: map[*ssa.Function]bool{},
		makesReg:  map[*ssa.Function]bool{},
		shares:    map[*ssa.Function]*sharesFact{},
		nilErrs:   map[ssa.Value]bool{},
		givesMemo: map[*ssa.Return]map[ssa.Value]bool{},
		loops:     map[ssa.Instruction]bool{},
		broken:    map[*ssa.Function]bool{},
		ignores:   findIgnores(pass),
	}
	all := withInit(pkg, funcs)
	c.calls = callSites(all)
	c.sentinels = sentinels(pkg.Func("init"), all)
	c.summarize(funcs)
	for _, fn := range funcs {
		if !exempt(fn) {
			c.guard(fn, func() { c.check(fn) })
		}
	}
	return nil, nil
}

// buildSSA builds the SSA form of the package of pass, as the buildssa pass
// does (with ctrlflow's knowledge of the functions that never return), and
// returns it with the package's functions, closures included, in source
// order. The analyzer builds it itself rather than requiring buildssa, whose
// result a driver keeps until the whole run ends: built here, it is garbage
// once run returns, so only the packages being analysed at the time hold
// SSA (one per process under go vet).
//
// If building panics, as x/tools' SSA builder does on syntax newer than it
// knows, buildSSA reports the package as an internal error and returns ok
// false: the package is skipped, without facts, and the run goes on.
func buildSSA(pass *analysis.Pass) (pkg *ssa.Package, funcs []*ssa.Function, ok bool) {
	defer func() {
		if p := recover(); p != nil {
			var pos token.Pos
			if len(pass.Files) > 0 {
				pos = pass.Files[0].Package
			}
			pass.Report(analysis.Diagnostic{
				Pos:     pos,
				Message: fmt.Sprintf("internal error: metricleak could not build package %s and skipped it: %v%s", pass.Pkg.Path(), p, panicSite()),
			})
			pkg, funcs, ok = nil, nil, false
		}
	}()
	if testHook != nil {
		testHook("package " + pass.Pkg.Path())
	}
	prog := ssa.NewProgram(pass.Fset, 0)
	prog.SetNoReturn(pass.ResultOf[ctrlflow.Analyzer].(*ctrlflow.CFGs).NoReturn)
	for _, imp := range pass.Pkg.Imports() {
		prog.CreatePackage(imp, nil, nil, true)
	}
	pkg = prog.CreatePackage(pass.Pkg, pass.Files, pass.TypesInfo, false)
	pkg.Build()
	var add func(fn *ssa.Function)
	add = func(fn *ssa.Function) {
		funcs = append(funcs, fn)
		for _, anon := range fn.AnonFuncs {
			add(anon)
		}
	}
	for _, f := range pass.Files {
		for _, decl := range f.Decls {
			if decl, ok := decl.(*ast.FuncDecl); ok {
				if obj, ok := pass.TypesInfo.Defs[decl.Name].(*types.Func); ok {
					if fn := prog.FuncValue(obj); fn != nil {
						add(fn)
					}
				}
			}
		}
	}
	return pkg, funcs, true
}

// withInit returns funcs, the package's functions, with the package
// initializer, which holds the package variables' initializers, and its
// closures.
func withInit(pkg *ssa.Package, funcs []*ssa.Function) []*ssa.Function {
	init := pkg.Func("init")
	if init == nil {
		return funcs
	}
	funcs = append(slices.Clip(funcs), init)
	for i := len(funcs) - 1; i < len(funcs); i++ {
		funcs = append(funcs, funcs[i].AnonFuncs...)
	}
	return funcs
}

// A checker holds what one pass learns about the package's functions.
type checker struct {
	pass       *analysis.Pass
	pkg        *ssa.Package
	registers  map[*ssa.Function]*registersFact   // this package's functions that register and hand on
	keeps      map[*ssa.Function]*keepsFact       // this package's functions that keep an argument
	unreg      map[*ssa.Function]bool             // memo of unregisters
	neverFail  map[*ssa.Function]bool             // memo of neverFails
	makesReg   map[*ssa.Function]bool             // memo of makesRegistry
	shares     map[*ssa.Function]*sharesFact      // memo of sharesOf
	nilErrs    map[ssa.Value]bool                 // memo of nilError
	givesMemo  map[*ssa.Return]map[ssa.Value]bool // memo of givesOf
	loops      map[ssa.Instruction]bool           // memo of inLoop
	failBudget int                                // states left for walks that follow a failure in the function checked (see maxFailedWork)
	sentinels  map[*ssa.Global]bool               // the package variables this package sets: whether each is never nil
	calls      map[*ssa.Function]*uses            // how this package's functions are used
	scopes     map[scopeKey]bool                  // memo of scopeParam
	broken     map[*ssa.Function]bool             // functions whose analysis panicked
	ignores    *ignores                           // the //lint: directives of the package
}

// check reports, for each set of registrations that fn leaves behind, the
// first return that leaves them, with the others as related positions.
func (c *checker) check(fn *ssa.Function) {
	rets := c.errorReturns(fn)
	if len(rets) == 0 {
		return
	}
	regs := c.registrations(fn)
	c.failBudget = maxFailedWork
	leaked := make([][]int, len(rets)) // for each return, the indexes of what it leaves
	for i, r := range regs {
		if c.handedAtOnce(r) {
			continue
		}
		o := c.ownersOf(fn, r.seeds)
		eff := c.effects(fn, o)
		for j, ret := range rets {
			if c.leaks(r, regs, ret, o, eff) {
				leaked[j] = append(leaked[j], i)
			}
		}
	}
	var leaks []*leak
	for j, ret := range rets {
		if len(leaked[j]) == 0 {
			continue
		}
		i := slices.IndexFunc(leaks, func(l *leak) bool { return slices.Equal(l.set, leaked[j]) })
		if i < 0 {
			l := &leak{set: leaked[j]}
			for _, k := range leaked[j] {
				l.regs = append(l.regs, regs[k])
			}
			leaks = append(leaks, l)
			i = len(leaks) - 1
		}
		leaks[i].rets = append(leaks[i].rets, ret)
	}
	for _, l := range leaks {
		c.reportLeak(fn, l)
	}
}

// A leak is a set of registrations that some returns of a function leave
// behind: the analyzer reports it once.
type leak struct {
	set  []int           // the indexes of regs among the function's registrations
	regs []*registration // in block order
	rets []*ssa.Return   // in block order, which is source order for returns
}

// exempt reports whether fn is, or is a closure within, a package's init
// function or the main function of a command: what they register lives as
// long as the process, and a failure there ends it.
func exempt(fn *ssa.Function) bool {
	for fn.Parent() != nil {
		fn = fn.Parent()
	}
	if fn.Signature.Recv() != nil {
		return false
	}
	name := fn.Name()
	if name == "init" || strings.HasPrefix(name, "init#") {
		return true
	}
	return name == "main" && fn.Pkg != nil && fn.Pkg.Pkg.Name() == "main"
}

// appendNew appends the elements of add that list lacks.
func appendNew(list []string, add ...string) []string {
	for _, s := range add {
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	return list
}
