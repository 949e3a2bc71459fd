package metricleak_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/promscope/promscope/analysis/metricleak"
)

// TestAnalyzer runs the analyzer over one testdata package per rule. Each
// package holds the reported cases, with the expected message in a want
// comment on the return, and the silent ones beside them; want comments on
// function declarations check the facts carried across packages.
func TestAnalyzer(t *testing.T) {
	for _, tt := range []struct {
		name string
		pkg  string
	}{
		{"a constructor of another package hands its registrations over through a fact", "kube"},
		{"the original bug is reported at the return, and its fix is not", "mirror"},
		{"Register and MustRegister leave their collectors behind unless unregistered", "direct"},
		{"promauto registers on the default registry or With's, not With(nil)'s", "promautocase"},
		{"a scope closed on the error path, deferred or owned by the caller undoes its registrations", "scope"},
		{"a deferred cleanup that runs on error undoes the registration", "defers"},
		{"an owner returned, stored where it outlives the call, or kept as a method value is handed on", "handon"},
		{"init, package variables and main are not checked", "daemon"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			analysistest.Run(t, analysistest.TestData(), metricleak.Analyzer, tt.pkg)
		})
	}
}

// TestPanic checks that a panic while analysing one function is reported
// as an internal error naming it, and that the other functions are still
// checked; the package also holds the shape that once panicked.
func TestPanic(t *testing.T) {
	restore := metricleak.SetTestHook(func(name string) {
		if name == "Explode" {
			panic("boom")
		}
	})
	defer restore()
	analysistest.Run(t, analysistest.TestData(), metricleak.Analyzer, "crash")
}
