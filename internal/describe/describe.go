// Package describe holds the collector helpers that registry and
// registrytest share: running a collector's Describe or Collect, naming
// what it yields, and counting it in words. It is internal because the helpers only make sense next to the
// ownership rules of package registry.
package describe

import (
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// Descs runs c.Describe in its own goroutine, as prometheus.Registry does, and
// returns every descriptor it sent, in order.
func Descs(c prometheus.Collector) []*prometheus.Desc {
	ch := make(chan *prometheus.Desc, 8)
	go func() {
		defer close(ch)
		c.Describe(ch)
	}()
	var out []*prometheus.Desc
	for d := range ch {
		out = append(out, d)
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

// ID returns a key for d's identity to client_golang: its fully-qualified
// name and its constant label values, in the order of their names, which is
// what a prometheus.Registry tells descriptors apart by; help strings,
// units, variable labels and the constant labels' names do not change it.
// Like Name it reads d.String, taking each field as written there (a quoted
// string, or a list in braces) so that no help text is taken for a field; if
// that format ever changes, it returns Name(d), a coarser key that still
// never tells two descriptors of one identity apart.
func ID(d *prometheus.Desc) string {
	if id, ok := idOf(d.String()); ok {
		return id
	}
	return Name(d)
}

// idOf reads the identity out of s, the String of a descriptor; ok is false
// if s is not in the format ID expects.
func idOf(s string) (id string, ok bool) {
	rest, ok := strings.CutPrefix(s, `Desc{fqName: `)
	name, err := strconv.QuotedPrefix(rest)
	if !ok || err != nil {
		return "", false
	}
	id, rest = name, rest[len(name):]
	for {
		var field string
		if field, rest, ok = strings.Cut(strings.TrimPrefix(rest, ", "), ": "); !ok {
			return "", false
		}
		if field == "constLabels" {
			break
		}
		q, err := strconv.QuotedPrefix(rest) // help, unit
		if err != nil {
			return "", false
		}
		rest = rest[len(q):]
	}
	// {name="value",name="value"}: the values are quoted, and the names
	// are label names, with no "=" in them, or the descriptor is invalid
	// and has no identity anyway.
	if rest, ok = strings.CutPrefix(rest, "{"); !ok {
		return "", false
	}
	for !strings.HasPrefix(rest, "}") {
		if _, rest, ok = strings.Cut(rest, "="); !ok {
			return "", false
		}
		q, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return "", false
		}
		id += q
		rest = strings.TrimPrefix(rest[len(q):], ",")
	}
	return id, true
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
