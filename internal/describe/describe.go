// Package describe holds the collector helpers that registry and
// registrytest share: running a collector's Describe or Collect, naming
// what it yields, and counting it in words. It is internal because the helpers only make sense next to the
// ownership rules of package registry.
package describe

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Descs runs c.Describe in its own goroutine, as prometheus.Registry does, and
// returns every descriptor it sent, in order. If Describe panics, Descs
// panics with the same value in the caller's goroutine, where the caller can
// recover it, rather than ending the program as a registry's goroutine does.
func Descs(c prometheus.Collector) []*prometheus.Desc {
	ch := make(chan *prometheus.Desc, 8)
	var panicked any
	go func() {
		defer close(ch)
		defer func() { panicked = recover() }()
		c.Describe(ch)
	}()
	var out []*prometheus.Desc
	for d := range ch {
		out = append(out, d)
	}
	if panicked != nil {
		panic(panicked)
	}
	return out
}

// Collected runs c.Collect in its own goroutine, as prometheus.Registry
// does, and returns every metric it sent, in order.
func Collected(c prometheus.Collector) []prometheus.Metric {
	ch := make(chan prometheus.Metric, 8)
	go func() {
		defer close(ch)
		c.Collect(ch)
	}()
	var out []prometheus.Metric
	for m := range ch {
		out = append(out, m)
	}
	return out
}

// Name returns the fully-qualified metric name of d. client_golang exposes it
// only through Desc.String, whose text starts with the quoted name; if that
// format ever changes, the whole String is returned so that a message still
// names the metric.
func Name(d *prometheus.Desc) string {
	s := d.String()
	const lead = `Desc{fqName: `
	if rest, ok := strings.CutPrefix(s, lead); ok {
		if q, err := strconv.QuotedPrefix(rest); err == nil {
			if name, err := strconv.Unquote(q); err == nil {
				return name
			}
		}
	}
	return s
}

// HasLabel reports whether d has a constant or a variable label called
// name. client_golang keeps d's labels in unexported fields, which package
// reflect reads, as ID reads the identity; ok is false if a release of
// client_golang keeps them otherwise.
func HasLabel(d *prometheus.Desc, name string) (has, ok bool) {
	v := reflect.ValueOf(d).Elem()
	consts, vars := v.FieldByName("constLabelPairs"), v.FieldByName("variableLabels")
	if !consts.IsValid() || consts.Type() != reflect.TypeFor[[]*dto.LabelPair]() || !vars.IsValid() || vars.Kind() != reflect.Pointer {
		return false, false
	}
	// Package reflect reads an unexported field but does not hand out its
	// value; the types were checked, so the fields are read as what they
	// are.
	for _, lp := range *(*[]*dto.LabelPair)(unsafe.Pointer(consts.UnsafeAddr())) {
		if lp.GetName() == name {
			return true, true
		}
	}
	if vars.IsNil() {
		return false, true
	}
	vs := vars.Elem().FieldByName("names")
	if !vs.IsValid() || vs.Type() != reflect.TypeFor[[]string]() {
		return false, false
	}
	return slices.Contains(*(*[]string)(unsafe.Pointer(vs.UnsafeAddr())), name), true
}

// ID returns d's identity to client_golang, the hash of its fully-qualified
// name and its constant label values by which a prometheus.Registry tells
// descriptors apart (help strings, units, variable labels and the constant
// labels' names do not change it). client_golang keeps it in an unexported
// field, which package reflect reads; ok is false if a release of
// client_golang ever keeps it otherwise.
func ID(d *prometheus.Desc) (id uint64, ok bool) {
	f := reflect.ValueOf(d).Elem().FieldByName("id")
	if !f.IsValid() || f.Kind() != reflect.Uint64 {
		return 0, false
	}
	return f.Uint(), true
}

// Names returns the sorted, de-duplicated metric names of descs, skipping
// nil ones: a broken collector may describe those.
func Names(descs []*prometheus.Desc) []string {
	names := make([]string, 0, len(descs))
	for _, d := range descs {
		if d != nil {
			names = append(names, Name(d))
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// Count returns n and the noun that goes with it: "1 collector",
// "3 collectors".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
