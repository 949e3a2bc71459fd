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

// Missing returns those of names that d certainly has as neither a
// constant nor a variable label, in the order given. client_golang shows
// d's labels only in Desc.String, as {name="value",...} and then
// {name,...}: where that text is not as client_golang writes it, Missing
// returns none. A label name may be any UTF-8, and so hold the characters
// that separate the names there; a name is taken to be one of d's if it
// occurs in that text with a separator, or the text's start, on each side.
func Missing(d *prometheus.Desc, names []string) []string {
	s, ok := strings.CutPrefix(d.String(), "Desc{fqName: ")
	if !ok {
		return nil
	}
	// The quoted fields before the labels: the name, the help and, in
	// later releases, the unit.
	for {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return nil
		}
		s = s[len(q):]
		if rest, ok := strings.CutPrefix(s, ", constLabels: {"); ok {
			s = rest
			break
		}
		i := strings.Index(s, ": ")
		if !strings.HasPrefix(s, ", ") || i < 0 {
			return nil
		}
		s = s[i+2:]
	}
	var missing []string
	for _, n := range names {
		if !listed(s, n) {
			missing = append(missing, n)
		}
	}
	return missing
}

// listed reports whether name occurs in labels, the text of a descriptor's
// labels, as a name: after the text's start, a comma, a brace or a
// parenthesis (c(name) is a constrained label), and before an equals sign,
// a comma, a brace or a parenthesis.
func listed(labels, name string) bool {
	if name == "" {
		return false // no label's name
	}
	for i := 0; ; {
		j := strings.Index(labels[i:], name)
		if j < 0 {
			return false
		}
		at, end := i+j, i+j+len(name)
		if (at == 0 || strings.ContainsRune(",{(", rune(labels[at-1]))) &&
			end < len(labels) && strings.ContainsRune("=,})", rune(labels[end])) {
			return true
		}
		i = at + 1
	}
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
