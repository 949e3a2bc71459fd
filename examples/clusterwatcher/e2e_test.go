//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// e2eEnv, set to 1, makes a missing prometheus or promtool a failure of the
// end-to-end test rather than a skip. CI sets it.
const e2eEnv = "PROMSCOPE_E2E"

// e2eWait bounds each wait for Prometheus to see something.
const e2eWait = 20 * time.Second

// TestPrometheusScrapesTheStory plays the default scenario while a real
// Prometheus server scrapes /metrics every second, and checks at each phase,
// through Prometheus's query API, what it has stored.
func TestPrometheusScrapesTheStory(t *testing.T) {
	promBin, promtoolBin := requireE2ETools(t)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() }) // serveMetrics owns it once called
	prom := startPrometheus(t, promBin, ln.Addr().String())

	e := &e2e{t: t, prom: prom, metricsURL: "http://" + ln.Addr().String() + "/metrics", promtool: promtoolBin}
	var out syncBuffer
	cfg := config{failAttempts: 3, retry: 50 * time.Millisecond, links: 2}
	p := startProgram(t, cfg, newTestRegistry(), &out, hooks{pace: e.pace, timeout: 2 * time.Minute})
	p.serveMetrics(ln)

	if err := p.runScenario(t.Context()); err != nil {
		t.Fatalf("the story did not hold: %v\nlog:\n%s\nprometheus:\n%s", err, out.String(), prom.log.String())
	}
	if _, err := p.shutdown(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

// requireE2ETools returns the paths of prometheus and promtool, or skips the
// test (fails it, with PROMSCOPE_E2E=1) when either is not on PATH.
func requireE2ETools(t *testing.T) (prometheusPath, promtoolPath string) {
	t.Helper()
	var paths, missing []string
	for _, name := range []string{"prometheus", "promtool"} {
		p, err := exec.LookPath(name)
		if err != nil {
			missing = append(missing, name)
		}
		paths = append(paths, p)
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("%s not on PATH: the end-to-end test needs a real Prometheus; "+
			"install the Debian package with `apt-get install prometheus`", strings.Join(missing, " and "))
		if os.Getenv(e2eEnv) == "1" {
			t.Fatalf("%s=1, but %s", e2eEnv, msg)
		}
		t.Skipf("%s (set %s=1 to make this a failure)", msg, e2eEnv)
	}
	return paths[0], paths[1]
}

// prometheusServer is a prometheus process started by a test.
type prometheusServer struct {
	url    string
	log    *syncBuffer
	exited chan struct{} // closed when the process has been waited for
	err    error         // what Wait returned; set before exited is closed
}

// startPrometheus starts prometheus, scraping target every second, with its
// configuration and storage in a temporary directory, and waits until it is
// ready. The process (its whole process group) is stopped, and the directory
// removed, when the test ends, however it ends.
func startPrometheus(t *testing.T, bin, target string) *prometheusServer {
	t.Helper()
	dir := t.TempDir() // removed after the cleanup below has stopped prometheus
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: clusterwatcher
    static_configs:
      - targets: [%q]
`, target)
	configPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configPath, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	s := &prometheusServer{url: "http://" + addr, log: &syncBuffer{}, exited: make(chan struct{})}
	cmd := exec.Command(bin,
		"--config.file="+configPath,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
	)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = s.log, s.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting prometheus: %v", err)
	}
	go func() {
		s.err = cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		pgid := cmd.Process.Pid // Setpgid made it the group's leader
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-s.exited
		}
	})

	deadline := time.Now().Add(30 * time.Second)
	for {
		if resp, err := promClient.Get(s.url + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case <-s.exited:
			t.Fatalf("prometheus exited before it was ready: %v\n%s", s.err, s.log.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready after 30s:\n%s", s.log.String())
		}
	}
}

// freeAddr returns a 127.0.0.1 address with a port that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// promClient talks to Prometheus and to the program's /metrics. It keeps no
// idle connections, so that none outlive a test.
var promClient = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// A sample is one element of an instant vector.
type sample struct {
	labels map[string]string
	value  float64
}

// query runs an instant query at the current time.
func (s *prometheusServer) query(ctx context.Context, q string) ([]sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/api/v1/query?query="+url.QueryEscape(q), nil)
	if err != nil {
		return nil, err
	}
	resp, err := promClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("query %s: %s: %w", q, resp.Status, err)
	}
	if body.Status != "success" || body.Data.ResultType != "vector" {
		return nil, fmt.Errorf("query %s: status %s, result type %q: %s", q, body.Status, body.Data.ResultType, body.Error)
	}
	out := make([]sample, 0, len(body.Data.Result))
	for _, r := range body.Data.Result {
		text, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, fmt.Errorf("query %s: value %v: %w", q, r.Value[1], err)
		}
		out = append(out, sample{labels: r.Metric, value: v})
	}
	return out, nil
}

// e2e holds what the pace hook of the end-to-end test needs.
type e2e struct {
	t          *testing.T
	prom       *prometheusServer
	metricsURL string
	promtool   string
}

// pace checks, at each checkpoint of the scenario, that Prometheus has
// scraped what /metrics shows there. The scenario waits meanwhile, so each
// state lasts until Prometheus has seen it.
func (e *e2e) pace(ctx context.Context, cp checkpoint) error {
	e.t.Logf("checkpoint: %s %s %d", cp.phase, cp.link, cp.attempt)
	var checks []func(context.Context) error
	switch cp.phase {
	case phaseHealthyUp:
		checks = append(checks,
			e.value(`up{job="clusterwatcher"}`, 1),
			e.value(`service_cache_size{cluster="east"}`, 3),
		)
	case phaseRetrying:
		if cp.attempt != 1 {
			return nil
		}
		// Once a scrape shows west's failed probe, the same scrape shows
		// no cache gauge of west: the failed attempt took them back.
		checks = append(checks,
			e.value(`gateway_probes_total{target_cluster_name="west",probe_successful="false"}`, 1),
			e.emptyNow(`{cluster="west"}`),
		)
	case phaseAllUp:
		checks = append(checks,
			e.value(`service_cache_size{cluster="west"}`, 2),
			e.value(`service_cache_size{cluster="east"}`, 3),
		)
	case phaseUpdated:
		checks = append(checks,
			e.value(`service_cache_size{cluster="east"}`, 4), // the live value, read by the rebuilt watcher's gauge
			e.value(`endpoint_repairs_total{target_cluster_name="east"}`, 1),
			e.value(`service_cache_size{cluster="west"}`, 2),
		)
	case phaseDeleted:
		checks = append(checks,
			// Staleness markers: the deleted link's series are gone from
			// an instant query at the next scrape.
			e.empty(`{target_cluster_name="west"}`),
			e.empty(`{cluster="west"}`),
			e.value(`service_cache_size{cluster="east"}`, 4),
			// east's other series: the repairs, alive and two probes
			// counters, and the histogram's 6 buckets, sum and count.
			e.value(`count({target_cluster_name="east"})`, 12),
		)
	}
	checks = append(checks, e.promtoolCheck)
	for _, check := range checks {
		if err := check(ctx); err != nil {
			return err
		}
	}
	return nil
}

// value waits until q yields exactly one sample, of value want.
func (e *e2e) value(q string, want float64) func(context.Context) error {
	return e.await(q, fmt.Sprintf("one sample of value %v", want), func(ss []sample) bool {
		return len(ss) == 1 && ss[0].value == want
	})
}

// empty waits until q yields nothing.
func (e *e2e) empty(q string) func(context.Context) error {
	return e.await(q, "no sample", func(ss []sample) bool { return len(ss) == 0 })
}

// emptyNow checks, without waiting, that q yields nothing.
func (e *e2e) emptyNow(q string) func(context.Context) error {
	return func(ctx context.Context) error {
		ss, err := e.prom.query(ctx, q)
		if err != nil {
			return err
		}
		if len(ss) > 0 {
			return fmt.Errorf("query %s: got %v, want no sample", q, ss)
		}
		return nil
	}
}

// await polls q until ok holds of its result, for at most e2eWait.
func (e *e2e) await(q, want string, ok func([]sample) bool) func(context.Context) error {
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, e2eWait)
		defer cancel()
		var last []sample
		var lastErr error
		for {
			last, lastErr = e.prom.query(ctx, q)
			if lastErr == nil && ok(last) {
				return nil
			}
			select {
			case <-ctx.Done():
				got := fmt.Sprint(last)
				if lastErr != nil {
					got = lastErr.Error()
				}
				return fmt.Errorf("query %s: after %v, got %s, want %s\nprometheus:\n%s",
					q, e2eWait, got, want, e.prom.log.String())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

// promtoolCheck runs `promtool check metrics` on what /metrics serves now,
// and requires that it finds no problem.
func (e *e2e) promtoolCheck(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.metricsURL, nil)
	if err != nil {
		return err
	}
	resp, err := promClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	if _, err := body.ReadFrom(resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || body.Len() == 0 {
		return fmt.Errorf("GET %s: %s, %d bytes", e.metricsURL, resp.Status, body.Len())
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body.Bytes())
	out, err := cmd.CombinedOutput()
	if _, exited := errors.AsType[*exec.ExitError](err); err != nil && !exited {
		return fmt.Errorf("running promtool: %w", err)
	}
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		return fmt.Errorf("promtool check metrics found problems (%s):\n%s\nin:\n%s", cmd.ProcessState, out, body.String())
	}
	return nil
}
