// Package registrytest checks, in tests, that components leave nothing
// registered behind, in the way goleak checks for goroutines.
//
// # Overview
//
// [VerifyNone] fails a test for every metric family a Gatherer still
// exposes, and, when the Gatherer is a registry, for every collector still
// registered even if it exposes no series. [VerifyRecycle] proves a
// constructor recycle-safe: it builds and closes the component many times
// against one pedantic registry and checks after every round that nothing
// was left.
//
// # Usage
//
//	func TestWatcherIsRecycleSafe(t *testing.T) {
//		connect := failEveryOther() // a func() error that fails the first call and every other one
//		registrytest.VerifyRecycle(t, 20, func(reg prometheus.Registerer) (*Watcher, error) {
//			return NewWatcher(reg, "east", connect)
//		})
//	}
//
// NewWatcher is the README's constructor, which registers its metrics and
// then connects. The test, and failEveryOther, are in package registry's
// example_test.go; this package's examples run both helpers.
//
// Both helpers take a [TestingT], which *testing.T and *testing.B satisfy.
//
// # Concurrency
//
// The helpers may be called from parallel tests; each call only reads the
// Gatherer it is given, or uses a registry of its own.
package registrytest
