// Package promscope makes Prometheus metrics lifecycle-safe for components
// that come and go: cluster watchers, informers, per-tenant workers.
//
// # Overview
//
// A component registers metrics in its constructor. When the constructor
// fails halfway, or the component is recycled (reconnect, lost leader
// election, config reload), those metrics stay behind: the retry fails with
// "duplicate metrics collector registration attempted", a stale GaugeFunc
// keeps the dead component reachable and reports its value forever, and
// per-object series are never deleted. promscope makes the fix structural.
//
//   - Package [github.com/promscope/promscope/registry] provides Scope, a
//     prometheus.Registerer that owns what is registered through it and
//     removes exactly that on Close, and package
//     [github.com/promscope/promscope/registry/registrytest] checks for
//     leftovers in tests.
//   - Package [github.com/promscope/promscope/lifecycle] is the constructor
//     side: CloseOnError for a constructor's error path, Stack for ordered
//     cleanups, and Slot for a component rebuilt in a loop.
//   - The separate module github.com/promscope/promscope/analysis holds
//     metricleak, a vet check that finds the leak in code that does not use
//     promscope yet: an error return that leaves metrics registered.
//
// # Usage
//
// Give each component a scope of its own on the shared registry, and close
// it when the constructor fails:
//
//	func NewWatcher(reg prometheus.Registerer, cluster string) (_ *Watcher, err error) {
//		scope := registry.NewScope(reg, registry.WithLabels(prometheus.Labels{"cluster": cluster}))
//		defer lifecycle.CloseOnError(&err, scope)
//		w := &Watcher{scope: scope}
//		scope.MustRegister(prometheus.NewGaugeFunc(opts, w.cacheSize))
//		if err := w.connect(); err != nil {
//			return nil, err // the gauge is unregistered again
//		}
//		return w, nil
//	}
//
// The program in examples/clusterwatcher shows the whole story: a link
// controller whose watchers fail to connect, retry, connect, and are deleted,
// scraped all the while.
//
// This package holds no code; it exists for this overview.
package promscope
