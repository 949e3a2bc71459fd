// Package nilness holds the one nil check that registry and lifecycle share:
// both accept interface values (collectors, vectors, closers) that may hold a
// nil pointer, and both treat such a value as nil.
package nilness

import "reflect"

// IsNil reports whether v is nil, or an interface holding a nil pointer, map,
// slice, func or channel.
func IsNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}
