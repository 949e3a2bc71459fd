// Package promscope makes Prometheus metrics lifecycle-safe for components
// that come and go: cluster watchers, informers, per-tenant workers.
//
// # Overview
//
// A component registers metrics in its constructor. When the constructor
// fails halfway, or the component is recycled, those metrics stay behind.
// promscope makes the fix structural:
//
//   - Package [github.com/promscope/promscope/registry] provides Scope, a
//     prometheus.Registerer that owns what is registered through it and
//     takes exactly that back on Close; package
//     [github.com/promscope/promscope/registry/registrytest] checks for
//     leftovers in tests.
//   - Package [github.com/promscope/promscope/lifecycle] is the constructor
//     side: CloseOnError for a constructor's error path, Stack for ordered
//     cleanups, and Slot for a component rebuilt in a loop.
//   - The separate module github.com/promscope/promscope/analysis holds
//     metricleak, a vet check that finds the leak in code that does not use
//     promscope yet.
//
// The README shows the constructor pattern; the program in
// examples/clusterwatcher tells the whole story; [GUARANTEES] states every
// promise with the tests that prove it.
//
// This package holds no code; it exists for this overview.
//
// [GUARANTEES]: https://github.com/promscope/promscope/blob/main/docs/GUARANTEES.md
package promscope
