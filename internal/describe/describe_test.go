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

// TestHasLabel checks HasLabel on descriptors made with the labels it must
// find, names of any UTF-8 among them, and names they do not have.
func TestHasLabel(t *testing.T) {
	odd := []string{"a,z", `x=""`, "c(d)", "}{b"}
	names := append([]string{"v", "x", "c", "z", "a", "", "y"}, odd...)
	for _, tt := range []struct {
		desc *prometheus.Desc
		want []string
	}{
		{prometheus.NewDesc("a", "h", nil, nil), nil},
		{prometheus.NewDesc("a", "h", []string{"v", "x"}, nil), []string{"v", "x"}},
		{prometheus.NewDesc("a", "h", []string{"v"}, prometheus.Labels{"x": "1", "c": `2"}, variableLabels: {z`}), []string{"v", "x", "c"}},
		{prometheus.V2.NewDesc("a", "h", prometheus.ConstrainedLabels{{Name: "c", Constraint: strings.ToLower}, {Name: "z"}}, nil), []string{"c", "z"}},
		{prometheus.NewDesc("a", "h", odd, nil), odd},
		{prometheus.NewDesc("a", "h", nil, prometheus.Labels{odd[0]: "1", odd[1]: "2"}), odd[:2]},
	} {
		for _, name := range names {
			has, ok := describe.HasLabel(tt.desc, name)
			if want := slices.Contains(tt.want, name); !ok || has != want {
				t.Errorf("HasLabel(%v, %q) = %t, %t; want %t, true", tt.desc, name, has, ok, want)
			}
		}
	}
}
