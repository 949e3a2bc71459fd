package metricleak

import "golang.org/x/tools/go/ssa"

// SetTestHook makes h run before each step of the analysis of a function,
// with the function's name, until the returned function restores the
// analyzer.
func SetTestHook(h func(name string)) (restore func()) {
	testHook = func(fn *ssa.Function) { h(fn.Name()) }
	return func() { testHook = nil }
}
