package metricleak

import (
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/buildssa"
	"golang.org/x/tools/go/ssa"
)

// Analyzer reports returns of an error that leave metrics registered
// earlier in the same call behind. See the package documentation for the
// rules.
var Analyzer = &analysis.Analyzer{
	Name: "metricleak",
	Doc: `report error returns that leave registered Prometheus metrics behind

A function with an error result that registers metrics (Register,
MustRegister, promauto, or a call to a function that registers and hands the
registration back) and then returns a non-nil error without unregistering
them, closing their scope, or handing their owner on, leaves them in the
registry: the next attempt fails with a duplicate registration, and a
GaugeFunc keeps the failed component alive.`,
	URL:       "https://pkg.go.dev/github.com/promscope/promscope/analysis/metricleak",
	Requires:  []*analysis.Analyzer{buildssa.Analyzer},
	FactTypes: []analysis.Fact{new(registersFact), new(unregistersFact), new(keepsFact)},
	Run:       run,
}

func run(pass *analysis.Pass) (any, error) {
	info := pass.ResultOf[buildssa.Analyzer].(*buildssa.SSA)
	c := &checker{
		pass:      pass,
		pkg:       info.Pkg,
		registers: map[*ssa.Function]*registersFact{},
		keeps:     map[*ssa.Function]*keepsFact{},
		unreg:     map[*ssa.Function]bool{},
		broken:    map[*ssa.Function]bool{},
	}
	c.summarize(info.SrcFuncs)
	for _, fn := range info.SrcFuncs {
		if !exempt(fn) {
			c.guard(fn, func() { c.check(fn) })
		}
	}
	return nil, nil
}

// A checker holds what one pass learns about the package's functions.
type checker struct {
	pass      *analysis.Pass
	pkg       *ssa.Package
	registers map[*ssa.Function]*registersFact // this package's functions that register and hand on
	keeps     map[*ssa.Function]*keepsFact     // this package's functions that keep an argument
	unreg     map[*ssa.Function]bool           // memo of unregisters
	broken    map[*ssa.Function]bool           // functions whose analysis panicked
}

// check reports the returns of fn that leave a registration behind.
func (c *checker) check(fn *ssa.Function) {
	rets := errorReturns(fn)
	if len(rets) == 0 {
		return
	}
	leaked := map[*ssa.Return][]*registration{}
	for _, r := range c.registrations(fn) {
		if r.handedAtOnce() {
			continue
		}
		o := c.ownersOf(fn, r.seeds)
		eff := c.effects(fn, o)
		for _, ret := range rets {
			if leaks(r, ret, o, eff) {
				leaked[ret] = append(leaked[ret], r)
			}
		}
	}
	for _, ret := range rets {
		if regs := leaked[ret]; len(regs) > 0 {
			c.pass.Reportf(ret.Pos(), "%s", c.message(regs))
		}
	}
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
