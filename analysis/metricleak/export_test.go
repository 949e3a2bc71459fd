package metricleak

// SetTestHook makes h run before the SSA of a package is built, with
// "package " and its path, and before each step of the analysis of a
// function, with the function's name, until the returned function restores
// the analyzer.
func SetTestHook(h func(step string)) (restore func()) {
	testHook = h
	return func() { testHook = nil }
}
