package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/promscope/promscope/registry/registrytest"
)

func newTestRegistry() *prometheus.Registry { return prometheus.NewPedanticRegistry() }

// probeLatency is what every gateway probe takes in these tests, so that the
// histogram's exposition is known.
const probeLatency = 2 * time.Millisecond

func fixedLatency(time.Time) time.Duration { return probeLatency }

// startProgram starts a program on reg and makes sure it is shut down when
// the test ends.
func startProgram(t *testing.T, cfg config, reg *prometheus.Registry, out io.Writer, h hooks) *program {
	t.Helper()
	p, err := newProgram(cfg, reg, out, h)
	if err != nil {
		t.Fatalf("newProgram: %v", err)
	}
	t.Cleanup(func() {
		if _, err := p.shutdown(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return p
}

// families are the HELP and TYPE lines of every family the program exposes.
var families = []struct{ name, typ, help string }{
	{"endpoint_repairs_total", "counter", "Repairs of the endpoints mirrored from the target cluster."},
	{"endpoints_cache_size", "gauge", "Endpoints of the services mirrored from the target cluster."},
	{"gateway_alive", "gauge", "Whether the target cluster's gateway answered its last probe (1) or not (0)."},
	{"gateway_probe_latency_seconds", "histogram", "Latency of successful gateway probes, in seconds."},
	{"gateway_probes_total", "counter", "Probes of the target cluster's gateway, by outcome."},
	{"service_cache_size", "gauge", "Services mirrored from the target cluster."},
}

// exposition lays sample lines out as a text exposition: each family with
// samples gets its HELP and TYPE lines, then its samples.
func exposition(t *testing.T, blocks ...[]string) string {
	t.Helper()
	samples := slices.Concat(blocks...)
	var b strings.Builder
	used := 0
	for _, f := range families {
		var lines []string
		for _, s := range samples {
			name, _, _ := strings.Cut(s, "{")
			if name == f.name || f.typ == "histogram" && slices.Contains([]string{f.name + "_bucket", f.name + "_sum", f.name + "_count"}, name) {
				lines = append(lines, s)
			}
		}
		if len(lines) == 0 {
			continue
		}
		used += len(lines)
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n%s\n", f.name, f.help, f.name, f.typ, strings.Join(lines, "\n"))
	}
	if used != len(samples) {
		t.Fatalf("exposition: some samples belong to no known family: %q", samples)
	}
	return b.String()
}

// latency returns the histogram samples of link after n probes of
// probeLatency each.
func latency(link string, n int) []string {
	l := fmt.Sprintf("target_cluster_name=%q", link)
	return []string{
		fmt.Sprintf(`gateway_probe_latency_seconds_bucket{%s,le="0.001"} 0`, l),
		fmt.Sprintf(`gateway_probe_latency_seconds_bucket{%s,le="0.005"} %d`, l, n),
		fmt.Sprintf(`gateway_probe_latency_seconds_bucket{%s,le="0.025"} %d`, l, n),
		fmt.Sprintf(`gateway_probe_latency_seconds_bucket{%s,le="0.1"} %d`, l, n),
		fmt.Sprintf(`gateway_probe_latency_seconds_bucket{%s,le="0.5"} %d`, l, n),
		fmt.Sprintf(`gateway_probe_latency_seconds_bucket{%s,le="+Inf"} %d`, l, n),
		fmt.Sprintf(`gateway_probe_latency_seconds_sum{%s} %g`, l, float64(n)*probeLatency.Seconds()),
		fmt.Sprintf(`gateway_probe_latency_seconds_count{%s} %d`, l, n),
	}
}

// The series of the default scenario's two links, at each of its phases.
var (
	eastConnected = slices.Concat([]string{
		`endpoint_repairs_total{target_cluster_name="east"} 0`,
		`endpoints_cache_size{cluster="east"} 6`,
		`gateway_alive{target_cluster_name="east"} 1`,
		`gateway_probes_total{probe_successful="false",target_cluster_name="east"} 0`,
		`gateway_probes_total{probe_successful="true",target_cluster_name="east"} 1`,
		`service_cache_size{cluster="east"} 3`,
	}, latency("east", 1))
	eastUpdated = slices.Concat([]string{
		`endpoint_repairs_total{target_cluster_name="east"} 1`,
		`endpoints_cache_size{cluster="east"} 7`,
		`gateway_alive{target_cluster_name="east"} 1`,
		`gateway_probes_total{probe_successful="false",target_cluster_name="east"} 0`,
		`gateway_probes_total{probe_successful="true",target_cluster_name="east"} 2`,
		`service_cache_size{cluster="east"} 4`,
	}, latency("east", 2))
	westConnected = slices.Concat([]string{
		`endpoint_repairs_total{target_cluster_name="west"} 0`,
		`endpoints_cache_size{cluster="west"} 4`,
		`gateway_alive{target_cluster_name="west"} 1`,
		`gateway_probes_total{probe_successful="false",target_cluster_name="west"} 3`,
		`gateway_probes_total{probe_successful="true",target_cluster_name="west"} 1`,
		`service_cache_size{cluster="west"} 2`,
	}, latency("west", 1))
)

// westFailing returns west's series after its attempt number attempt failed:
// the failed probes counted, and no cache gauges at all.
func westFailing(attempt int) []string {
	return slices.Concat([]string{
		`endpoint_repairs_total{target_cluster_name="west"} 0`,
		`gateway_alive{target_cluster_name="west"} 0`,
		fmt.Sprintf(`gateway_probes_total{probe_successful="false",target_cluster_name="west"} %d`, attempt),
		`gateway_probes_total{probe_successful="true",target_cluster_name="west"} 0`,
	}, latency("west", 0))
}

func TestScenarioExposesWhatEachPhaseShould(t *testing.T) {
	reg := newTestRegistry()
	var (
		mu   sync.Mutex
		seen []string
	)
	pace := func(_ context.Context, cp checkpoint) error {
		var want string
		switch cp.phase {
		case phaseHealthyUp:
			want = exposition(t, eastConnected)
		case phaseRetrying:
			want = exposition(t, eastConnected, westFailing(cp.attempt))
		case phaseAllUp:
			want = exposition(t, eastConnected, westConnected)
		case phaseUpdated:
			want = exposition(t, eastUpdated, westConnected)
		case phaseDeleted:
			want = exposition(t, eastUpdated)
		default:
			t.Errorf("unexpected checkpoint %+v", cp)
			return nil
		}
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s %s %d", cp.phase, cp.link, cp.attempt))
		mu.Unlock()
		if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
			t.Errorf("at %s %s %d: %v", cp.phase, cp.link, cp.attempt, err)
		}
		return nil
	}
	cfg := config{failAttempts: 3, retry: time.Millisecond, links: 2}
	p := startProgram(t, cfg, reg, io.Discard, hooks{since: fixedLatency, pace: pace})
	if err := p.runScenario(t.Context()); err != nil {
		t.Fatalf("the story did not hold: %v", err)
	}

	wantSeen := []string{
		"healthy links connected  0",
		"attempt failed west 1",
		"attempt failed west 2",
		"attempt failed west 3",
		"all links connected  0",
		"healthy links updated  0",
		"flaky links deleted  0",
	}
	if !slices.Equal(seen, wantSeen) {
		t.Errorf("checkpoints:\n got %q\nwant %q", seen, wantSeen)
	}
	if _, err := p.shutdown(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	registrytest.VerifyNone(t, reg)
}

func TestFiftyFailedAttemptsRegisterCleanly(t *testing.T) {
	const fails = 50
	reg := newTestRegistry()
	var (
		mu       sync.Mutex
		attempts []int
	)
	pace := func(_ context.Context, cp checkpoint) error {
		if cp.phase != phaseRetrying {
			return nil
		}
		mu.Lock()
		attempts = append(attempts, cp.attempt)
		mu.Unlock()
		// Only east's gauges: the failed attempt took west's back.
		want := exposition(t, []string{
			`endpoints_cache_size{cluster="east"} 6`,
			`gateway_probes_total{probe_successful="false",target_cluster_name="east"} 0`,
			`gateway_probes_total{probe_successful="false",target_cluster_name="west"} ` + fmt.Sprint(cp.attempt),
			`gateway_probes_total{probe_successful="true",target_cluster_name="east"} 1`,
			`gateway_probes_total{probe_successful="true",target_cluster_name="west"} 0`,
			`service_cache_size{cluster="east"} 3`,
		})
		if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
			"service_cache_size", "endpoints_cache_size", "gateway_probes_total"); err != nil {
			t.Errorf("after attempt %d failed: %v", cp.attempt, err)
		}
		return nil
	}
	cfg := config{failAttempts: fails, retry: 0, links: 2}
	p := startProgram(t, cfg, reg, io.Discard, hooks{since: fixedLatency, pace: pace})
	if err := p.runScenario(t.Context()); err != nil {
		t.Fatalf("the story did not hold: %v", err)
	}

	failures, regErrors := p.ctl.stats()
	if failures != fails || regErrors != 0 {
		t.Errorf("stats: %d failed attempts, %d registration errors; want %d and 0", failures, regErrors, fails)
	}
	if len(attempts) != fails || attempts[fails-1] != fails {
		t.Errorf("saw the failed attempts %v, want 1 to %d", attempts, fails)
	}
	if got := p.state("west").lastAt; got != fails+1 {
		t.Errorf("west connected at attempt %d, want %d", got, fails+1)
	}
}

// seriesByLink returns, for each link in links, the series of every family
// that carry it as cluster or target_cluster_name, in protobuf text form.
func seriesByLink(t *testing.T, reg prometheus.Gatherer, links ...string) map[string][]string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	out := map[string][]string{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, link := range links {
				if hasLink(m, link) {
					out[link] = append(out[link], mf.GetName()+" "+m.String())
				}
			}
		}
	}
	return out
}

func hasLink(m *dto.Metric, link string) bool {
	for _, lp := range m.GetLabel() {
		if lp.GetValue() == link && (lp.GetName() == "cluster" || lp.GetName() == "target_cluster_name") {
			return true
		}
	}
	return false
}

func TestDeletingLinksRemovesEverySeriesOfThemAndNoOther(t *testing.T) {
	reg := newTestRegistry()
	var before map[string][]string
	pace := func(_ context.Context, cp checkpoint) error {
		switch cp.phase {
		case phaseUpdated:
			before = seriesByLink(t, reg, "east", "west", "north", "south")
			for _, link := range []string{"east", "west", "north", "south"} {
				// Six families, the probes counter with two series.
				if n := len(before[link]); n != 7 {
					t.Errorf("before the deletion, %s has %d series, want 7:\n%s", link, n, strings.Join(before[link], "\n"))
				}
			}
		case phaseDeleted:
			after := seriesByLink(t, reg, "east", "west", "north", "south")
			for _, gone := range []string{"west", "south"} {
				if left := after[gone]; len(left) > 0 {
					t.Errorf("deleted link %s still has series:\n%s", gone, strings.Join(left, "\n"))
				}
			}
			for _, kept := range []string{"east", "north"} {
				if !slices.Equal(after[kept], before[kept]) {
					t.Errorf("the series of %s changed:\nbefore:\n%s\nafter:\n%s", kept,
						strings.Join(before[kept], "\n"), strings.Join(after[kept], "\n"))
				}
			}
		}
		return nil
	}
	cfg := config{failAttempts: 2, retry: time.Millisecond, links: 4}
	p := startProgram(t, cfg, reg, io.Discard, hooks{pace: pace})
	if err := p.runScenario(t.Context()); err != nil {
		t.Fatalf("the story did not hold: %v", err)
	}
}

func TestALeakedGaugeMakesTheStoryFail(t *testing.T) {
	// What the original controller left behind: west's gauge, registered
	// without a scope by an attempt that failed.
	reg := newTestRegistry()
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "service_cache_size",
		Help:        "Services mirrored from the target cluster.",
		ConstLabels: prometheus.Labels{"cluster": "west"},
	}, func() float64 { return 0 }))

	var stdout, stderr syncBuffer
	cfg := config{failAttempts: 1, retry: 0, links: 2}
	if got := execute(t.Context(), cfg, reg, hooks{}, &stdout, &stderr); got != 1 {
		t.Fatalf("execute = %d, want 1; stdout:\n%s", got, stdout.String())
	}
	attempts := maxAttempts(cfg)
	for _, want := range []string{
		"clusterwatcher: the story did not hold: ",
		fmt.Sprintf("link west: all %d attempts to connect failed", attempts),
		fmt.Sprintf("%d registration errors: the retries did not register cleanly", attempts),
		// Shutdown closed every scope, and still finds the leak.
		"clusterwatcher: shutdown: every scope is closed, but /metrics still shows service_cache_size",
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
		}
	}
	for _, want := range []string{
		"west  attempt 1 failed: register: duplicate metrics collector registration attempted; retrying in 0s",
		fmt.Sprintf("west  attempt %d failed: register: duplicate metrics collector registration attempted; giving up", attempts),
		fmt.Sprintf("%d registration errors: the story did not hold", attempts),
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout does not say %q:\n%s", want, stdout.String())
		}
	}
}
