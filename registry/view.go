package registry

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// A view is how a scope's registrations look to the parent: the prefix and
// constant labels of the scope and of every scope it is nested in. A scope
// with neither has a nil view, and its collectors reach the parent as they
// are, with nothing in between on the scrape path.
//
// Descriptors are renamed and labelled once, at Register, by client_golang's
// own wrappers, so that names, labels, units and errors come out exactly as
// [prometheus.WrapRegistererWith] would make them on every supported
// client_golang version. Scrapes then reuse those descriptors and one sorted
// list of label pairs shared by every metric of the scope, instead of
// building both again for every metric as client_golang's wrapper does.
type view struct {
	prefix string
	labels prometheus.Labels
	pairs  []*dto.LabelPair      // labels, sorted by name
	wrap   prometheus.Registerer // client_golang's wrappers over a capture
	err    error                 // a label the scope and a scope above it both set
}

// newView composes o with the view of the scope above, up (nil for none).
func newView(up *view, o options) *view {
	if o.prefix == "" && len(o.labels) == 0 {
		return up
	}
	v := &view{prefix: o.prefix, labels: maps.Clone(o.labels)}
	if up != nil {
		v.prefix = up.prefix + o.prefix
		v.err = up.err
		for _, name := range slices.Sorted(maps.Keys(o.labels)) {
			if _, dup := up.labels[name]; dup && v.err == nil {
				v.err = fmt.Errorf("registry: label %q is set both by this scope and by a scope it is nested in", name)
			}
		}
		v.labels = maps.Clone(up.labels)
		if v.labels == nil {
			v.labels = prometheus.Labels{}
		}
		maps.Copy(v.labels, o.labels)
	}
	for name, value := range v.labels {
		v.pairs = append(v.pairs, &dto.LabelPair{Name: &name, Value: &value})
	}
	slices.SortFunc(v.pairs, compareLabels)
	v.wrap = prometheus.Registerer(capture{})
	if len(v.labels) > 0 {
		v.wrap = prometheus.WrapRegistererWith(v.labels, v.wrap)
	}
	if v.prefix != "" {
		v.wrap = prometheus.WrapRegistererWithPrefix(v.prefix, v.wrap)
	}
	return v
}

// wrapDescs returns ds as the parent must see them, in the same order.
func (v *view) wrapDescs(ds []*prometheus.Desc) []*prometheus.Desc {
	c := v.wrap.Register(descList(ds)).(captured).c //nolint:errorlint // capture returns it unwrapped, and the wrappers pass it on as it is.
	// A wrapper sends one descriptor for each that it is given, so the
	// buffer holds them all and Describe returns without a reader.
	ch := make(chan *prometheus.Desc, len(ds))
	c.Describe(ch)
	close(ch)
	out := make([]*prometheus.Desc, 0, len(ds))
	for d := range ch {
		out = append(out, d)
	}
	return out
}

// collect collects user as the parent must see it: each metric with the
// descriptor that wrapDescs made at Register from orig (descs, in the same
// order), and the view's labels.
// A metric whose descriptor the collector did not describe (an unchecked
// collector's, or one made anew in Collect) has its descriptor wrapped here,
// all such metrics of one pass together.
func (v *view) collect(user prometheus.Collector, orig, descs []*prometheus.Desc, ch chan<- prometheus.Metric) {
	in := make(chan prometheus.Metric, 16)
	go func() {
		defer close(in)
		user.Collect(in)
	}()
	var missed []prometheus.Metric
	for m := range in {
		if i := slices.Index(orig, m.Desc()); i >= 0 {
			ch <- &scopedMetric{Metric: m, desc: descs[i], pairs: v.pairs}
			continue
		}
		missed = append(missed, m)
	}
	if len(missed) == 0 {
		return
	}
	ds := make([]*prometheus.Desc, len(missed))
	for i, m := range missed {
		ds[i] = m.Desc()
	}
	for i, d := range v.wrapDescs(ds) {
		ch <- &scopedMetric{Metric: missed[i], desc: d, pairs: v.pairs}
	}
}

// A scopedMetric is a user's metric as the parent sees it through a view.
type scopedMetric struct {
	prometheus.Metric
	desc  *prometheus.Desc
	pairs []*dto.LabelPair
}

func (m *scopedMetric) Desc() *prometheus.Desc { return m.desc }

func (m *scopedMetric) Write(out *dto.Metric) error {
	if err := m.Metric.Write(out); err != nil {
		return err
	}
	if len(m.pairs) > 0 {
		out.Label = mergeLabels(out.Label, m.pairs)
	}
	return nil
}

// mergeLabels returns own and scope's pairs sorted by name: scope itself if
// own is empty (a registry copies label pairs before it changes them),
// otherwise a new slice. scope is sorted; own usually is, and is merged
// without sorting then.
func mergeLabels(own, scope []*dto.LabelPair) []*dto.LabelPair {
	if len(own) == 0 {
		return scope
	}
	out := make([]*dto.LabelPair, 0, len(own)+len(scope))
	if !slices.IsSortedFunc(own, compareLabels) {
		out = append(append(out, own...), scope...)
		slices.SortFunc(out, compareLabels)
		return out
	}
	i, j := 0, 0
	for i < len(own) && j < len(scope) {
		if compareLabels(own[i], scope[j]) <= 0 {
			out = append(out, own[i])
			i++
		} else {
			out = append(out, scope[j])
			j++
		}
	}
	return append(append(out, own[i:]...), scope[j:]...)
}

func compareLabels(a, b *dto.LabelPair) int { return cmp.Compare(a.GetName(), b.GetName()) }

// label is what Scope.String returns for a scope named name with view v.
func label(name string, v *view) string {
	if v == nil {
		return name
	}
	var b strings.Builder
	b.WriteString(name)
	if len(v.pairs) > 0 {
		b.WriteByte('{')
		for i, p := range v.pairs {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%s=%q", p.GetName(), p.GetValue())
		}
		b.WriteByte('}')
	}
	if v.prefix != "" {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "prefix=%q", v.prefix)
	}
	return b.String()
}

// capture is the Registerer under a view's wrappers. It keeps nothing: it
// hands the collector it is given, wrapped by then, back inside its error,
// which the wrappers return as it is.
type capture struct{}

func (capture) Register(c prometheus.Collector) error { return captured{c} }

func (capture) MustRegister(...prometheus.Collector) {}

func (capture) Unregister(prometheus.Collector) bool { return false }

type captured struct{ c prometheus.Collector }

func (captured) Error() string { return "registry: captured" }

// descList is a collector that describes the descriptors it holds and
// collects nothing.
type descList []*prometheus.Desc

func (l descList) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range l {
		ch <- d
	}
}

func (descList) Collect(chan<- prometheus.Metric) {}
