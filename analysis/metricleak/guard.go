package metricleak

import (
	"fmt"
	"go/token"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ssa"
)

// testHook, when a test sets it, is called before the SSA of a package is
// built, with "package " and its path, and before each step of the
// analysis of a function, with the function's name; the tests make it
// panic to check that a panic costs one package or one function, not the
// run.
var testHook func(step string)

// guard runs one step of the analysis of fn. If it panics, guard reports
// the function as an internal error, once, and the analysis goes on with
// the other functions; fn is skipped from then on.
func (c *checker) guard(fn *ssa.Function, step func()) {
	if c.broken[fn] {
		return
	}
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		c.broken[fn] = true
		c.report(analysis.Diagnostic{
			Pos: fnPos(fn),
			Message: fmt.Sprintf("internal error: metricleak failed on %s and skipped it: %v%s",
				displayName(fn), p, panicSite()),
		})
	}()
	if testHook != nil {
		testHook(fn.Name())
	}
	step()
}

// fnPos is where fn is declared, or, for a function without a position of
// its own, where the function that encloses it is.
func fnPos(fn *ssa.Function) token.Pos {
	for f := fn; f != nil; f = f.Parent() {
		if f.Pos().IsValid() {
			return f.Pos()
		}
	}
	return fn.Pos()
}

// displayName names fn the way its source does: "NewAPI", "(*API).Close",
// or "NewAPI.func1" for a closure.
func displayName(fn *ssa.Function) string {
	if fn.Pkg == nil {
		return fn.String()
	}
	return fn.RelString(fn.Pkg.Pkg)
}

// panicSite returns " (at file.go:line)" for the innermost frame of this
// package in the panicking goroutine's stack, to put in a bug report; ""
// if there is none.
func panicSite() string {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for {
		f, more := frames.Next()
		if strings.Contains(f.Function, "/analysis/metricleak.") {
			return fmt.Sprintf(" (at %s:%d)", filepath.Base(f.File), f.Line)
		}
		if !more {
			return ""
		}
	}
}

// referrers returns the instructions that use v. It is empty for a value
// whose uses SSA does not track, such as a package variable or a function,
// for which v.Referrers() is nil.
func referrers(v ssa.Value) []ssa.Instruction {
	if refs := v.Referrers(); refs != nil {
		return *refs
	}
	return nil
}
