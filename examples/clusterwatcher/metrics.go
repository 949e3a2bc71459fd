package main

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/registry"
)

// targetLabel names the target cluster in the vectors that every link shares.
const targetLabel = "target_cluster_name"

// probeLatencyName is the name of the gateway probe latency histogram. The
// original controller calls it gateway_probe_latency_ms; this one observes
// seconds, Prometheus's base unit, so that `promtool check metrics` finds no
// problem with the exposition.
const probeLatencyName = "gateway_probe_latency_seconds"

// linkMetrics are the vectors that every link shares, one series (or one per
// probe outcome) per target cluster, as in real controllers. The controller
// registers them once; each link creates its own series and deletes them when
// it goes away, leaving the other links' series alone.
type linkMetrics struct {
	alive   *prometheus.GaugeVec
	probes  *prometheus.CounterVec
	latency *prometheus.HistogramVec
	repairs *prometheus.CounterVec
}

// newLinkMetrics registers the shared vectors with reg. On error, the vectors
// registered before the failing one stay registered: the caller registers
// through a scope and closes it.
func newLinkMetrics(reg prometheus.Registerer) (*linkMetrics, error) {
	m := &linkMetrics{
		alive: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "gateway_alive",
			Help: "Whether the target cluster's gateway answered its last probe (1) or not (0).",
		}, []string{targetLabel}),
		probes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gateway_probes_total",
			Help: "Probes of the target cluster's gateway, by outcome.",
		}, []string{targetLabel, "probe_successful"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    probeLatencyName,
			Help:    "Latency of successful gateway probes, in seconds.",
			Buckets: []float64{0.001, 0.005, 0.025, 0.1, 0.5},
		}, []string{targetLabel}),
		repairs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "endpoint_repairs_total",
			Help: "Repairs of the endpoints mirrored from the target cluster.",
		}, []string{targetLabel}),
	}
	for _, c := range []prometheus.Collector{m.alive, m.probes, m.latency, m.repairs} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// linkSeries are one link's series in the shared vectors.
type linkSeries struct {
	alive       prometheus.Gauge
	probeOK     prometheus.Counter
	probeFailed prometheus.Counter
	latency     prometheus.Observer
	repairs     prometheus.Counter
}

// forLink creates the series of the link to target, every counter at zero
// (so that the first increment is not lost to rate()), and makes scope
// delete all of them, in every vector, when it closes.
func (m *linkMetrics) forLink(scope *registry.Scope, target string) *linkSeries {
	scope.DeleteOnClose(prometheus.Labels{targetLabel: target}, m.alive, m.probes, m.latency, m.repairs)
	return &linkSeries{
		alive:       m.alive.WithLabelValues(target),
		probeOK:     m.probes.WithLabelValues(target, "true"),
		probeFailed: m.probes.WithLabelValues(target, "false"),
		latency:     m.latency.WithLabelValues(target),
		repairs:     m.repairs.WithLabelValues(target),
	}
}

// probed records the outcome of one gateway probe.
func (s *linkSeries) probed(ok bool, latency time.Duration) {
	if !ok {
		s.alive.Set(0)
		s.probeFailed.Inc()
		return
	}
	s.alive.Set(1)
	s.probeOK.Inc()
	s.latency.Observe(latency.Seconds())
}
