package main

import (
	"math"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// A series is one line of the text exposition: a sample name with its labels,
// and its value.
type series struct {
	name  string // the sample name with its labels, as exposed
	value float64
}

func (s series) String() string { return s.name + " " + formatFloat(s.value) }

// belongsTo reports whether m is one of target's series: labelled
// cluster=<target> (the watcher's gauges) or target_cluster_name=<target>
// (the link's series in the shared vectors).
func belongsTo(m *dto.Metric, target string) bool {
	for _, lp := range m.GetLabel() {
		if (lp.GetName() == "cluster" || lp.GetName() == targetLabel) && lp.GetValue() == target {
			return true
		}
	}
	return false
}

// seriesOf returns, in exposition order, the samples of mfs that belong to
// target. A histogram is shown by its count; full adds its sum and buckets.
func seriesOf(mfs []*dto.MetricFamily, target string, full bool) []series {
	var out []series
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if belongsTo(m, target) {
				out = appendSamples(out, mf.GetName(), m, full)
			}
		}
	}
	return out
}

// appendSamples appends the samples of m, of the family called name.
func appendSamples(out []series, name string, m *dto.Metric, full bool) []series {
	labels := m.GetLabel()
	switch {
	case m.Gauge != nil:
		return append(out, series{sampleName(name, labels, ""), m.GetGauge().GetValue()})
	case m.Counter != nil:
		return append(out, series{sampleName(name, labels, ""), m.GetCounter().GetValue()})
	case m.Untyped != nil:
		return append(out, series{sampleName(name, labels, ""), m.GetUntyped().GetValue()})
	case m.Histogram != nil:
		h := m.GetHistogram()
		if full {
			for _, b := range h.GetBucket() {
				out = append(out, series{sampleName(name+"_bucket", labels, formatFloat(b.GetUpperBound())), float64(b.GetCumulativeCount())})
			}
			out = append(out, series{sampleName(name+"_bucket", labels, "+Inf"), float64(h.GetSampleCount())})
			out = append(out, series{sampleName(name+"_sum", labels, ""), h.GetSampleSum()})
		}
		return append(out, series{sampleName(name+"_count", labels, ""), float64(h.GetSampleCount())})
	case m.Summary != nil:
		s := m.GetSummary()
		if full {
			out = append(out, series{sampleName(name+"_sum", labels, ""), s.GetSampleSum()})
		}
		return append(out, series{sampleName(name+"_count", labels, ""), float64(s.GetSampleCount())})
	}
	return out
}

// sampleName formats name{labels}, with an le label last if le is not "".
func sampleName(name string, labels []*dto.LabelPair, le string) string {
	if len(labels) == 0 && le == "" {
		return name
	}
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for i, lp := range labels {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(lp.GetName())
		b.WriteByte('=')
		b.WriteString(strconv.Quote(lp.GetValue()))
	}
	if le != "" {
		if len(labels) > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`le="` + le + `"`)
	}
	b.WriteByte('}')
	return b.String()
}

// formatFloat formats v as the text exposition does.
func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, +1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// lookup returns the value of the sample called name (with its labels, as
// seriesOf formats it) among ss.
func lookup(ss []series, name string) (float64, bool) {
	for _, s := range ss {
		if s.name == name {
			return s.value, true
		}
	}
	return 0, false
}
