package describe_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/internal/describe"
)

// descs is a collector describing what it holds.
type descs []*prometheus.Desc

func (ds descs) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range ds {
		ch <- d
	}
}

func (descs) Collect(chan<- prometheus.Metric) {}

// TestID checks ID against client_golang's own verdict: two valid
// descriptors have one ID exactly when a registry holding one of them
// unregisters it for the other. The descriptors differ in every part of a
// descriptor, with names and values that look like the text around them in
// Desc.String.
func TestID(t *testing.T) {
	var all []*prometheus.Desc
	for _, name := range []string{"a", "b_total"} {
		for _, help := range []string{"h", `a help, constLabels: {x="1"}`} {
			for _, consts := range []prometheus.Labels{
				nil, {"x": "1"}, {"y": "1"}, {"x": "2"}, {"x": `1"}, y: "2`},
				{"x": "1", "y": "2"}, {"x": "2", "y": "1"}, {"w": "1", "x": "2"},
				{`x=""`: "1"}, {`x="1",y`: "2"},
			} {
				for _, vars := range [][]string{nil, {"v"}} {
					all = append(all, prometheus.NewDesc(name, help, vars, consts))
				}
			}
		}
	}
	for _, a := range all {
		for _, b := range all {
			reg := prometheus.NewRegistry()
			if err := reg.Register(descs{a}); err != nil {
				t.Fatalf("%v: %v", a, err)
			}
			same := reg.Unregister(descs{b})
			ida, oka := describe.ID(a)
			idb, okb := describe.ID(b)
			if !oka || !okb {
				t.Fatalf("ID(%v) or ID(%v) found no ID", a, b)
			}
			if got := ida == idb; got != same {
				t.Errorf("ID(%v) == ID(%v) is %t; the registry says %t", a, b, got, same)
			}
		}
	}
}

// TestMissing checks Missing on descriptors with the labels it must find,
// help strings that look like the text around them, and names that hold
// that text.
func TestMissing(t *testing.T) {
	names := []string{"x", "v", "c", "a", "z", "q", ""}
	for _, tt := range []struct {
		desc *prometheus.Desc
		want []string
	}{
		{prometheus.NewDesc("a", "h", nil, nil), names},
		{prometheus.NewDesc("a", "h", []string{"v", "x"}, nil), []string{"c", "a", "z", "q", ""}},
		{prometheus.NewDesc("a", "h", nil, prometheus.Labels{"x": "1", "c": `2"}, variableLabels: {z`}), []string{"v", "a", "z", "q", ""}},
		{prometheus.NewDesc("a", `h", constLabels: {q="1"}, variableLabels: {z}}`, []string{"v"}, prometheus.Labels{"x": "1"}), []string{"c", "a", "z", "q", ""}},
		{prometheus.V2.NewDesc("a", "h", prometheus.ConstrainedLabels{{Name: "c", Constraint: strings.ToLower}, {Name: "z"}}, nil), []string{"x", "v", "a", "q", ""}},
		// Names that hold the separators are found whole in the text,
		// and every name they hold is taken to be there.
		{prometheus.NewDesc("a", "h", []string{"a,z"}, nil), []string{"x", "v", "c", "q", ""}},
		{prometheus.NewDesc("a", "h", nil, prometheus.Labels{`x=""`: "1"}), []string{"v", "c", "a", "z", "q", ""}},
		// A name within another is no name.
		{prometheus.NewDesc("a", "h", []string{"xv", "cz"}, prometheus.Labels{"aq": "x"}), names},
	} {
		if got := describe.Missing(tt.desc, names); !slices.Equal(got, tt.want) {
			t.Errorf("Missing(%v) = %q, want %q", tt.desc, got, tt.want)
		}
	}
	odd := []string{"a,z", `x=""`, "c(d)"}
	for _, d := range []*prometheus.Desc{
		prometheus.NewDesc("a", "h", odd, nil),
		prometheus.NewDesc("a", "h", nil, prometheus.Labels{odd[0]: "1", odd[1]: "2", odd[2]: "3"}),
	} {
		if got := describe.Missing(d, odd); got != nil {
			t.Errorf("Missing(%v) of its own names = %q, want none", d, got)
		}
	}
}
