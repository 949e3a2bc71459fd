package registry

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// A view is how a scope's registrations look to the parent: the prefix and
// constant labels of the scope, of every scope it is nested in, and of the
// client_golang wrappers it was made through. A scope with neither has a
// nil view, and its collectors reach the parent as they are, with nothing in
// between on the scrape path.
//
// Descriptors are renamed and labelled once, at Register, by client_golang's
// own wrappers, so that names, labels, units and errors come out exactly as
// [prometheus.WrapRegistererWith] would make them on every supported
// client_golang version. Scrapes then reuse those descriptors, and add the
// view's labels from one sorted list, instead of building both again for
// every metric as client_golang's wrapper does.
type view struct {
	prefix string
	labels prometheus.Labels
	sorted []labelPair           // labels, sorted by name
	wrap   prometheus.Registerer // client_golang's wrappers over a capture
	err    error                 // a label set twice on the way from the root
}

type labelPair struct{ name, value string }

// newView composes o with up, the view of what is above (nil for none).
func newView(up *view, o options) *view {
	if o.prefix == "" && len(o.labels) == 0 && o.err == nil {
		return up
	}
	v := &view{prefix: o.prefix, labels: maps.Clone(o.labels), err: o.err}
	if up != nil {
		v.prefix = up.prefix + o.prefix
		if v.err == nil {
			v.err = up.err
		}
		for _, name := range slices.Sorted(maps.Keys(o.labels)) {
			if _, dup := up.labels[name]; dup && v.err == nil {
				v.err = fmt.Errorf("registry: label %q is set more than once by this scope and the scopes and wrappers it is nested in", name)
			}
		}
		v.labels = maps.Clone(up.labels)
		if v.labels == nil {
			v.labels = prometheus.Labels{}
		}
		maps.Copy(v.labels, o.labels)
	}
	v.sorted = sortedPairs(v.labels)
	v.wrap = prometheus.Registerer(capture{})
	if len(v.labels) > 0 {
		v.wrap = prometheus.WrapRegistererWith(v.labels, v.wrap)
	}
	if v.prefix != "" {
		v.wrap = prometheus.WrapRegistererWithPrefix(v.prefix, v.wrap)
	}
	return v
}

// wrapDescs appends ds, as the parent must see them, to dst, in the same
// order. It collects, through the view's wrappers, one metric for each
// descriptor, and asks each wrapped metric for its descriptor, which
// client_golang's wrappers make in this goroutine: a descriptor that they
// cannot wrap, and that makes them dereference nil (one NewInvalidDesc
// made, under a prefix), is passed on as it is, for the parent to refuse,
// or for Gather to report, with its error.
func (v *view) wrapDescs(dst, ds []*prometheus.Desc) []*prometheus.Desc {
	if len(ds) == 0 {
		return dst
	}
	c := v.wrap.Register(descList(ds)).(captured).c //nolint:errorlint // capture returns it unwrapped, and the wrappers pass it on as it is.
	// A wrapper collects one metric for each that it is given, in order,
	// so the buffer holds them all and Collect returns without a reader.
	ch := make(chan prometheus.Metric, len(ds))
	c.Collect(ch)
	for _, d := range ds {
		dst = append(dst, wrappedDesc(<-ch, d))
	}
	return dst
}

// wrappedDesc returns the descriptor of m, the metric of d behind
// client_golang's wrappers, as they make it, or d if they panic making it.
func wrappedDesc(m prometheus.Metric, d *prometheus.Desc) (wrapped *prometheus.Desc) {
	defer func() {
		if recover() != nil {
			wrapped = d
		}
	}()
	return m.Desc()
}

// collect collects b's collector as the parent must see it: each metric
// with the descriptor that wrapDescs made at Register from the record's
// (descs, in the same order), and the view's labels.
// A metric whose descriptor the collector did not describe (an unchecked
// collector's, or one made anew in Collect) has its descriptor wrapped here,
// all such metrics of one pass together.
func (v *view) collect(b *bound, descs []*prometheus.Desc, ch chan<- prometheus.Metric) {
	in := make(chan prometheus.Metric, 16)
	go func() {
		defer close(in)
		b.r.c.Collect(in)
	}()
	var missed []prometheus.Metric
	for m := range in {
		if i := b.index(m.Desc()); i >= 0 {
			ch <- &scopedMetric{Metric: m, desc: descs[i], view: v}
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
	for i, d := range v.wrapDescs(nil, ds) {
		ch <- &scopedMetric{Metric: missed[i], desc: d, view: v}
	}
}

// A scopedMetric is a user's metric as the parent sees it through a view.
type scopedMetric struct {
	prometheus.Metric
	desc *prometheus.Desc
	view *view
}

func (m *scopedMetric) Desc() *prometheus.Desc { return m.desc }

// Write writes the user's metric, then adds the view's labels. The label
// list it leaves in out, and the pairs it adds, are new on every call, made
// for this writer alone: whoever reads out may append to the list, sort it
// or change a pair (client_golang's wrappers do the first two) without
// touching another metric or scrape.
func (m *scopedMetric) Write(out *dto.Metric) error {
	if err := m.Metric.Write(out); err != nil {
		return err
	}
	if len(m.view.sorted) > 0 {
		out.Label = m.view.addLabels(out.Label)
	}
	return nil
}

// A labelCell holds one label pair that addLabels makes, with the strings it
// points to.
type labelCell struct {
	pair        dto.LabelPair
	name, value string
}

// A oneLabel is what addLabels makes for a view of one label, the common
// case of a scope per cluster or tenant, in one allocation: the cell and the
// list for a metric with up to three labels of its own.
type oneLabel struct {
	cell [1]labelCell
	list [4]*dto.LabelPair
}

// addLabels returns a new list holding own's pairs and new pairs of v's
// labels, sorted by name. own usually is sorted, and is merged without
// sorting then.
func (v *view) addLabels(own []*dto.LabelPair) []*dto.LabelPair {
	var cells []labelCell
	var out []*dto.LabelPair
	if len(v.sorted) == 1 && len(own) < len(oneLabel{}.list) {
		b := new(oneLabel)
		cells, out = b.cell[:], b.list[:0:len(own)+1]
	} else {
		cells = make([]labelCell, len(v.sorted))
		out = make([]*dto.LabelPair, 0, len(own)+len(v.sorted))
	}
	cell := func(i int) *dto.LabelPair {
		c := &cells[i]
		c.name, c.value = v.sorted[i].name, v.sorted[i].value
		c.pair.Name, c.pair.Value = &c.name, &c.value
		return &c.pair
	}
	if !slices.IsSortedFunc(own, compareLabels) {
		out = append(out, own...)
		for i := range cells {
			out = append(out, cell(i))
		}
		slices.SortFunc(out, compareLabels)
		return out
	}
	i, j := 0, 0
	for i < len(own) && j < len(cells) {
		if own[i].GetName() <= v.sorted[j].name {
			out = append(out, own[i])
			i++
		} else {
			out = append(out, cell(j))
			j++
		}
	}
	out = append(out, own[i:]...)
	for ; j < len(cells); j++ {
		out = append(out, cell(j))
	}
	return out
}

func compareLabels(a, b *dto.LabelPair) int { return cmp.Compare(a.GetName(), b.GetName()) }

// sortedPairs returns labels as pairs sorted by name.
func sortedPairs(labels prometheus.Labels) []labelPair {
	var out []labelPair
	for _, name := range slices.Sorted(maps.Keys(labels)) {
		out = append(out, labelPair{name, labels[name]})
	}
	return out
}

// writeLabels writes pairs in braces, as a series selector has them:
// {name="value",...}, each name as quote writes it and each value quoted.
func writeLabels(b *strings.Builder, pairs []labelPair) {
	b.WriteByte('{')
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(b, "%s=%q", quote(p.name), p.value)
	}
	b.WriteByte('}')
}

// quote returns s as it is if it is valid UTF-8 and every rune of it is
// printable (as strconv.IsPrint has it) and none is a space or one of the
// characters that names and selectors are joined with: " \ { } , = /.
// Otherwise it returns s quoted as strconv.Quote quotes it. So a name of a
// scope, metric or label cannot pass for another, or for what is written
// around it, and the text it is written in stays valid UTF-8 on one line.
func quote(s string) string {
	if !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if r == ' ' || !strconv.IsPrint(r) || strings.ContainsRune(`"\{},=/`, r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// appendQuoted appends each of names to dst, quoted as quote does.
func appendQuoted(dst []string, names ...string) []string {
	for _, n := range names {
		dst = append(dst, quote(n))
	}
	return dst
}

// scopeString is what Scope.String returns for a scope named name with view
// v.
func scopeString(name string, v *view) string {
	if v == nil {
		return name
	}
	var b strings.Builder
	b.WriteString(name)
	if len(v.sorted) > 0 {
		writeLabels(&b, v.sorted)
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

// descList is a collector that describes the descriptors it holds, and
// collects a descMetric of each.
type descList []*prometheus.Desc

func (l descList) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range l {
		ch <- d
	}
}

func (l descList) Collect(ch chan<- prometheus.Metric) {
	for _, d := range l {
		ch <- descMetric{d}
	}
}

// A descMetric stands for its descriptor, to be wrapped: it has no value.
type descMetric struct{ d *prometheus.Desc }

func (m descMetric) Desc() *prometheus.Desc { return m.d }

func (descMetric) Write(*dto.Metric) error { return errors.New("registry: a descriptor, not a metric") }
