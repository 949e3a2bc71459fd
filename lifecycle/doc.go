// Package lifecycle is the constructor side of promscope: it closes what a
// component built when the component fails to come up, or is replaced.
//
// # Overview
//
// Two patterns leak metrics in controllers. A constructor registers metrics
// and then fails without closing what it registered; and a restart loop
// keeps its live instance in a variable that becomes nil when a rebuild
// fails, so the next cleanup has nothing to close. [CloseOnError] makes the
// first a one-line defer; [Slot] makes the second impossible. [Stack]
// collects the cleanups of a constructor that builds several things.
//
// # Usage
//
// A constructor that owns a scope closes it when it fails:
//
//	func NewWatcher(reg prometheus.Registerer, cluster string, connect func() error) (_ *Watcher, err error) {
//		scope := registry.NewScope(reg, registry.WithLabels(prometheus.Labels{"cluster": cluster}))
//		defer lifecycle.CloseOnError(&err, scope)
//		...
//	}
//
// A reconnect loop rebuilds the component until it comes up:
//
//	slot := lifecycle.NewSlot[*Watcher](reg)
//	defer slot.Close()
//	for {
//		_, err := slot.Replace(func(scope *registry.Scope) (*Watcher, error) {
//			return NewWatcher(scope, cluster, connect)
//		})
//		if err == nil {
//			break
//		}
//		...
//	}
//
// # Concurrency
//
// Stack and Slot are safe for concurrent use. Slot serializes Replace,
// Clear and Close, so neither a build function nor an instance's Close may
// call any of them on its own slot; Current never waits for them.
//
// # Errors
//
// Errors are combined with go.uber.org/multierr, so errors.Is and errors.As
// find each of them. [Slot.Replace] wraps its build function's error in a
// [BuildError], which tells "nothing installed" from "installed, but closing
// the previous instance failed", and returns [ErrClosed] once the slot is
// closed. Misuse, such as CloseOnError with a nil error pointer, panics with a
// message starting "lifecycle:".
package lifecycle
