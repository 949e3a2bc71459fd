package registry

import (
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/internal/describe"
	"github.com/promscope/promscope/internal/nilness"
)

// This file answers "is this the same collector?" the way client_golang
// does, using only its public API: a collector is identified by the
// fully-qualified names and constant label values of what it describes, and
// a wrapper made by WrapRegistererWith or WrapRegistererWithPrefix stands for
// the collector it wraps.

const promPkg = "github.com/prometheus/client_golang/prometheus"

// A kind is what a collector is to client_golang.
type kind int

const (
	foreign    kind = iota // not of client_golang's package, or a registry
	ownMetric              // one of its metrics, which describes and collects itself
	ownVector              // one of its vectors, which describes one descriptor
	ownWrapper             // any other collector of its: a wrapper, or the like of the Go collector
)

// kindOf returns c's kind.
func kindOf(c prometheus.Collector) kind {
	switch c.(type) {
	case nil, *prometheus.Registry:
		return foreign
	case *prometheus.CounterVec, *prometheus.GaugeVec, *prometheus.HistogramVec,
		*prometheus.SummaryVec, *prometheus.MetricVec:
		return ownVector
	}
	if !promType(reflect.TypeOf(c)) {
		return foreign
	}
	if _, ok := c.(prometheus.Metric); ok {
		return ownMetric
	}
	return ownWrapper
}

// promType reports whether t is a pointer to a type of client_golang's
// prometheus package.
func promType(t reflect.Type) bool {
	return t != nil && t.Kind() == reflect.Pointer && t.Elem().PkgPath() == promPkg
}

// isWrapper reports whether c may be one of client_golang's wrappers.
func isWrapper(c prometheus.Collector) bool { return kindOf(c) == ownWrapper }

// appendDescs appends what c describes to dst, in order, and returns c's
// kind. client_golang's own metrics and vectors describe exactly one
// descriptor, and are asked without the goroutine that any other
// collector's Describe needs.
func appendDescs(dst []*prometheus.Desc, c prometheus.Collector) ([]*prometheus.Desc, kind) {
	k := kindOf(c)
	switch k {
	case ownVector:
		if zeroVector(c) {
			return append(dst, nil), k
		}
		ch := make(chan *prometheus.Desc, 1)
		c.Describe(ch)
		return append(dst, <-ch), k
	case ownMetric:
		return append(dst, c.(prometheus.Metric).Desc()), k
	case ownWrapper:
		if u := unwrap(c); nilness.IsNil(u) || zeroVector(u) {
			return append(dst, nil), k // its Describe would panic
		}
	}
	return append(dst, describe.Descs(c)...), k
}

// zeroVector reports whether v is one of client_golang's vectors that no New
// function made, whose methods all dereference nil: a zero value, or a typed
// nil.
func zeroVector(v any) bool {
	var mv *prometheus.MetricVec
	switch v := v.(type) {
	case *prometheus.MetricVec:
		mv = v
	case *prometheus.CounterVec:
		if v != nil {
			mv = v.MetricVec
		}
	case *prometheus.GaugeVec:
		if v != nil {
			mv = v.MetricVec
		}
	case *prometheus.HistogramVec:
		if v != nil {
			mv = v.MetricVec
		}
	case *prometheus.SummaryVec:
		if v != nil {
			mv = v.MetricVec
		}
	default:
		return false
	}
	return mv == nil || reflect.ValueOf(mv).Elem().IsZero()
}

// unwrap returns the collector that the client_golang wrapper c stands for,
// however deeply wrapped, which is what a prometheus.Registry names as the
// ExistingCollector of an AlreadyRegisteredError; c itself if it is no
// wrapper; nil if the wrappers wrap nil. It reads the wrappers' fields and
// never calls a Describe, so it sees through the wrapper of an unchecked
// collector too, and of one whose Describe has changed since it was
// registered, or panics by now.
func unwrap(c prometheus.Collector) prometheus.Collector {
	for {
		next, _, _, ok := wrapperFields(reflect.ValueOf(c), reflect.TypeFor[prometheus.Collector]())
		if !ok {
			if next.IsValid() && next.IsNil() {
				return nil // a wrapper of nil
			}
			return c
		}
		// Package reflect reads an unexported field but does not hand
		// out its value; the field is a prometheus.Collector, as
		// wrapperFields checked, so it is read as one.
		c = *(*prometheus.Collector)(unsafe.Pointer(next.UnsafeAddr()))
	}
}

// unwrapRegisterer returns the Registerer that r, a Registerer that
// WrapRegistererWith or WrapRegistererWithPrefix made, passes registrations
// on to; nil if r is no such wrapper, or wraps nil.
func unwrapRegisterer(r prometheus.Registerer) prometheus.Registerer {
	next, _, _, ok := wrapperFields(reflect.ValueOf(r), reflect.TypeFor[prometheus.Registerer]())
	if !ok {
		return nil
	}
	// As in unwrap: the field is a prometheus.Registerer.
	return *(*prometheus.Registerer)(unsafe.Pointer(next.UnsafeAddr()))
}

// samePointer reports whether a and b are the same pointer, of the same
// type (see pointerOf): the same object, where == would compare values, or
// panic on values that are not comparable.
func samePointer(a, b any) bool {
	pa, okA := pointerOf(reflect.ValueOf(a))
	pb, okB := pointerOf(reflect.ValueOf(b))
	return okA && okB && pa == pb
}

// sameCollector reports whether a and b are the same collector: the same
// object, equal values, the same collector behind the viewed collectors of
// scopes whose views add the same, or the same collector behind
// client_golang wrappers that add the same prefix and labels in all,
// however they are stacked (the
// wrappers make a new value on every call, so an Unregister through them
// never passes the value their Register did, and a wrapper that adds
// nothing stands for what it wraps). It never panics, not even for a
// comparable type whose values hold something unhashable, where == would,
// and it ends on a value that holds itself.
func sameCollector(a, b prometheus.Collector) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Kind() == reflect.Pointer && vb.Kind() == reflect.Pointer && va.Type() == vb.Type() && va.Pointer() == vb.Pointer() {
		return true // the same object, the common case, with no walk
	}
	var w walk
	return w.same(va, vb)
}

// A walk is one comparison of sameCollector. It remembers the pairs of
// slices it has compared or begun to compare: pointers and maps are
// compared by identity, not followed, so a value can hold itself only
// through slices, and a pair met again is taken to be equal (had it been
// found unequal, the walk would have ended there), which ends the walk of
// a value that holds itself.
type walk struct {
	seen map[visit]struct{}
	// noFuncs makes functions other than nil unequal: a comparison of
	// Deleters, where closures of the same code over other vectors
	// delete other series.
	noFuncs bool
}

// A visit is a pair of slices, by their first elements and their length,
// since two slices of one array may differ in length.
type visit struct {
	t    reflect.Type
	a, b uintptr
	n    int
}

// enter reports whether the slices a and b are being compared already, and
// remembers them if not.
func (w *walk) enter(a, b reflect.Value) bool {
	v := visit{t: a.Type(), a: a.Pointer(), b: b.Pointer(), n: a.Len()}
	if _, ok := w.seen[v]; ok {
		return true
	}
	if w.seen == nil {
		w.seen = map[visit]struct{}{}
	}
	w.seen[v] = struct{}{}
	return false
}

// same compares two values as sameCollector does: client_golang wrappers by
// what they wrap, with their prefixes and labels; other pointers by
// identity; functions by their code, which is all that package reflect
// shows of a closure, so that two closures of the same code are equal
// whatever they captured; structs, arrays and slices element by element;
// maps by identity; floating-point numbers as == does, except that a NaN
// equals a NaN of the same bits (a value is always equal to itself);
// everything else as == would. Values of unexported fields are only read,
// never used.
func (w *walk) same(a, b reflect.Value) bool {
	a, pa, la := peel(a)
	b, pb, lb := peel(b)
	if pa != pb || !slices.Equal(la, lb) {
		return false
	}
	if !a.IsValid() || !b.IsValid() || a.Type() != b.Type() {
		return !a.IsValid() && !b.IsValid()
	}
	if a.Type() == reflect.TypeFor[*viewed]() {
		// Read from a client_golang wrapper's field, a viewed collector
		// cannot be had through Interface; the type says what it is.
		return w.sameViewed((*viewed)(a.UnsafePointer()), (*viewed)(b.UnsafePointer()))
	}
	switch a.Kind() {
	case reflect.Func:
		if w.noFuncs && (!a.IsNil() || !b.IsNil()) {
			return false
		}
		return a.Pointer() == b.Pointer()
	case reflect.Pointer:
		return a.Pointer() == b.Pointer()
	case reflect.Interface:
		return true // both nil: peel took the dynamic value of any other
	case reflect.Slice:
		if a.Len() != b.Len() {
			return false
		}
		if a.Pointer() == b.Pointer() || w.enter(a, b) {
			return true
		}
		return w.elements(a, b)
	case reflect.Array:
		return w.elements(a, b)
	case reflect.Struct:
		for i := range a.NumField() {
			if !w.same(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		// The same map: its entries are not read, since the collector
		// may change them as it collects, under a lock of its own.
		return a.Pointer() == b.Pointer()
	case reflect.Float32, reflect.Float64:
		return sameFloat(a.Float(), b.Float())
	case reflect.Complex64, reflect.Complex128:
		x, y := a.Complex(), b.Complex()
		return sameFloat(real(x), real(y)) && sameFloat(imag(x), imag(y))
	}
	return a.Equal(b)
}

// sameViewed compares two viewed collectors, which a scope registers with
// its parent in place of its user's collectors, as client_golang's wrappers
// are compared: by the collectors they stand for and what their views add.
// A viewed collector taken back stands for nothing, and is the same only as
// itself.
func (w *walk) sameViewed(x, y *viewed) bool {
	if x == y || x == nil || y == nil {
		return x == y
	}
	rx, ry := x.owner(), y.owner()
	return rx != nil && ry != nil && x.view.prefix == y.view.prefix && slices.Equal(x.view.sorted, y.view.sorted) &&
		w.same(reflect.ValueOf(rx.c), reflect.ValueOf(ry.c))
}

// elements compares the elements of two slices or arrays of one length.
func (w *walk) elements(a, b reflect.Value) bool {
	for i := range a.Len() {
		if !w.same(a.Index(i), b.Index(i)) {
			return false
		}
	}
	return true
}

// sameFloat reports whether x and y are equal, or the same NaN.
func sameFloat(x, y float64) bool {
	return x == y || math.Float64bits(x) == math.Float64bits(y)
}

// peel returns what v, a chain of client_golang's wrapping collectors,
// wraps, with the prefix and the labels that the whole chain adds (as
// sorted name=value pairs, a label that two wrappers set counted twice), or
// v itself with neither when it is no such wrapper. The outer wrapper's
// prefix comes first in a name, as client_golang composes them.
func peel(v reflect.Value) (inner reflect.Value, prefix string, labels []string) {
	for v.IsValid() && v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	for {
		next, p, l, ok := wrapperFields(v, reflect.TypeFor[prometheus.Collector]())
		if !ok {
			break
		}
		prefix += p.String()
		for it := l.MapRange(); it.Next(); {
			labels = append(labels, it.Key().String()+"\xff"+it.Value().String())
		}
		v = next.Elem()
	}
	slices.Sort(labels)
	return v, prefix, labels
}

// wrapperFields returns the fields of v if it is one of client_golang's
// wrappers of a value of the interface type inner, a wrapping collector or
// a wrapping Registerer: a pointer to a struct of client_golang's with
// exactly three fields, the wrapped value (not nil), the prefix and the
// labels. The metrics and vectors of client_golang have other shapes. next
// is addressable.
func wrapperFields(v reflect.Value, inner reflect.Type) (next, prefix, labels reflect.Value, ok bool) {
	if !v.IsValid() || !promType(v.Type()) || v.IsNil() {
		return next, prefix, labels, false
	}
	s := v.Elem()
	if s.Kind() != reflect.Struct || s.NumField() != 3 {
		return next, prefix, labels, false
	}
	for i := range 3 {
		switch f := s.Field(i); {
		case f.Type() == inner:
			next = f
		case f.Kind() == reflect.String:
			prefix = f
		case f.Kind() == reflect.Map && f.Type().Key().Kind() == reflect.String && f.Type().Elem().Kind() == reflect.String:
			labels = f
		}
	}
	ok = next.IsValid() && prefix.IsValid() && labels.IsValid() && !next.IsNil()
	return next, prefix, labels, ok
}

// A collectorKey is what collectors that sameCollector finds the same
// share: the type of what client_golang's wrappers wrap and the address of
// the first thing in it that is compared by identity (see identityIn). Values
// that hold none, and the viewed collectors of scopes, which stand for
// others, share one key per type.
type collectorKey struct {
	t reflect.Type
	p uintptr
}

// keyOf returns x's key: x is a collector, or a Deleter, which is compared
// the same way.
func keyOf(x any) collectorKey {
	v, _, _ := peel(reflect.ValueOf(x))
	if !v.IsValid() {
		return collectorKey{}
	}
	budget := keyBudget
	p, _ := identityIn(v, &budget)
	return collectorKey{t: v.Type(), p: p}
}

// keyBudget is how many values keyOf looks at, at most, to find one
// compared by identity: a value holding itself ends there too.
const keyBudget = 16

// identityIn returns the address of the first value in v, in the order
// same compares them, that same compares by identity (a pointer, a
// function, a map or a channel), looking through client_golang's wrappers,
// into the fields of structs and the first element of arrays and slices; ok
// is false if there is none within budget values, or it is a scope's viewed
// collector, which is compared by what it stands for. Two values that same
// finds the same are walked alike, so they give the same address.
func identityIn(v reflect.Value, budget *int) (p uintptr, ok bool) {
	if *budget <= 0 {
		return 0, false
	}
	*budget--
	v, _, _ = peel(v)
	if !v.IsValid() {
		return 0, false
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.Type() == reflect.TypeFor[*viewed]() {
			return 0, false
		}
		return v.Pointer(), true
	case reflect.Func, reflect.Map, reflect.Chan, reflect.UnsafePointer:
		return v.Pointer(), true
	case reflect.Struct:
		for i := range v.NumField() {
			if p, ok := identityIn(v.Field(i), budget); ok {
				return p, true
			}
		}
	case reflect.Array, reflect.Slice:
		if v.Len() > 0 {
			return identityIn(v.Index(0), budget)
		}
	}
	return 0, false
}

// A pointer tells what a pointer points to from anything else: by its
// address and its type, since a struct and its first field, or two values
// of zero size, may share an address.
type pointer struct{ addr, typ uintptr }

// pointerOf returns v's pointer; ok is false if v holds no pointer.
func pointerOf(v reflect.Value) (p pointer, ok bool) {
	if !v.IsValid() || v.Kind() != reflect.Pointer {
		return pointer{}, false
	}
	// A reflect.Type is a pointer to the one descriptor of its type.
	return pointer{addr: v.Pointer(), typ: reflect.ValueOf(v.Type()).Pointer()}, true
}

// identityKey returns a key of ds's identity to client_golang, a necessary
// condition for two collectors to be equal and the key of a scope's index:
// the descriptors' IDs combined as a registry combines them (see
// describe.ID), or, should client_golang not keep them where ID reads them,
// their metric names. Records of one name that differ in their constant
// label values, such as one gauge per cluster, each have a key of their own.
func identityKey(ds []*prometheus.Desc) string {
	ids := make([]uint64, 0, len(ds))
	for _, d := range ds {
		if d == nil {
			continue // a broken collector's; its registration fails
		}
		id, ok := describe.ID(d)
		if !ok {
			return strings.Join(describe.Names(ds), "\n")
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var xor uint64
	for _, id := range slices.Compact(ids) {
		xor ^= id
	}
	return strconv.FormatUint(xor, 16)
}

// sameIdentity reports whether collectors describing a and b are the same
// collector to client_golang: whether their descriptors have the same
// fully-qualified names and constant label values, whatever their help
// strings and variable labels. A throwaway registry decides, so the answer
// is client_golang's own.
func sameIdentity(a, b []*prometheus.Desc) bool {
	if slices.Equal(a, b) {
		return true
	}
	r := prometheus.NewRegistry()
	return r.Register(descList(a)) == nil && r.Unregister(descList(b))
}
