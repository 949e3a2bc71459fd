package registry

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/promscope/promscope/internal/describe"
)

// This file finds a scope behind client_golang's wrappers. NewScope, given
// a Registerer that WrapRegistererWith or WrapRegistererWithPrefix made,
// registers a probe through it. Each wrapper passes the probe on, wrapped,
// to the Registerer below; if that is a scope, the scope recognises the
// probe and answers with itself and the prefix and labels that the wrappers
// put on the way, and the new scope is nested in it with those. Any other
// Registerer refuses the probe, whose descriptor is invalid, and registers
// nothing.

// probeName is the name the probe's descriptor has, under the wrappers'
// prefix.
const probeName = "promscope_scope_probe"

// probeMark is the label name that the probe's metric writes, so that a scope
// can tell it from any collector of somebody else's: no valid metric has a
// label whose name starts with "__".
const probeMark = "__promscope_probe"

// A probe is registered by NewScope to find the scope behind a Registerer.
type probe struct{ desc *prometheus.Desc }

func newProbe() *probe {
	// The variable label's name is reserved, so the descriptor is invalid
	// and a registry refuses it.
	return &probe{desc: prometheus.NewDesc(probeName, "Asks for the promscope scope behind a Registerer.", []string{probeMark}, nil)}
}

func (p *probe) Describe(ch chan<- *prometheus.Desc) { ch <- p.desc }

func (p *probe) Collect(ch chan<- prometheus.Metric) { ch <- probeMetric{p.desc} }

// probeMetric is the probe's one metric. Only its labels are read: those the
// wrappers added, and the mark.
type probeMetric struct{ desc *prometheus.Desc }

func (m probeMetric) Desc() *prometheus.Desc { return m.desc }

func (probeMetric) Write(out *dto.Metric) error {
	name, value := probeMark, ""
	out.Label = append(out.Label, &dto.LabelPair{Name: &name, Value: &value})
	return nil
}

// found is a scope's answer to a probe: the scope, and what the wrappers
// between the scope and NewScope add.
type found struct {
	n      *node
	over   options // the wrappers' prefix and labels
	unmade bool    // the scope is a nil or zero Scope, which NewScope did not make; n is nil
	zero   bool    // a zero one
}

func (*found) Error() string { return "registry: a probe found a scope" }

// findScope returns the scope behind parent, if parent is one of
// client_golang's wrappers with a scope below it (and, between them, only
// Registerers that pass collectors on as they are), and nil otherwise.
// keepsNothing reports a parent that takes the probe, invalid as it is, and
// then has nothing to unregister: one that keeps nothing, such as a wrapper
// of a nil Registerer. A wrapper over a Registerer that panics when it
// refuses (one built on MustRegister) is taken to have no scope behind it.
func findScope(parent prometheus.Registerer) (f *found, keepsNothing bool) {
	if _, ok := parent.(*prometheus.Registry); ok || !promType(reflect.TypeOf(parent)) {
		return nil, false
	}
	return askForScope(parent)
}

// askForScope is findScope for one of client_golang's wrappers.
func askForScope(parent prometheus.Registerer) (f *found, keepsNothing bool) {
	defer func() {
		if recover() != nil {
			f, keepsNothing = nil, false
		}
	}()
	p := newProbe()
	err := parent.Register(p)
	if errors.As(err, &f) {
		return f, false
	}
	if err == nil {
		return nil, !parent.Unregister(p)
	}
	return nil, false
}

// probed returns a scope's answer if c, which describes ds and may be one of
// client_golang's wrappers if wrapper is set, is a wrapped probe, and nil
// otherwise. Only a wrapper that describes one descriptor of the
// probe's name is collected to make sure, so nothing else registered
// through a scope is collected at Register.
func probed(c prometheus.Collector, ds []*prometheus.Desc, wrapper bool) *found {
	if !wrapper || len(ds) != 1 || ds[0] == nil {
		return nil
	}
	name := describe.Name(ds[0])
	if !strings.HasSuffix(name, probeName) {
		return nil
	}
	var out dto.Metric
	if ms := describe.Collected(c); len(ms) != 1 || ms[0].Write(&out) != nil {
		return nil
	}
	f := &found{over: options{prefix: strings.TrimSuffix(name, probeName)}}
	marked := false
	for _, lp := range out.GetLabel() {
		switch _, dup := f.over.labels[lp.GetName()]; {
		case lp.GetName() == probeMark:
			marked = true
		case dup:
			f.over.err = fmt.Errorf("registry: label %q is set by two of the wrappers this scope was made through", lp.GetName())
		default:
			if f.over.labels == nil {
				f.over.labels = prometheus.Labels{}
			}
			f.over.labels[lp.GetName()] = lp.GetValue()
		}
	}
	if !marked {
		return nil
	}
	return f
}
