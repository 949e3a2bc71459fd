//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// e2eEnv, set to 1, makes a missing prometheus or promtool a failure of the
// end-to-end test rather than a skip. CI sets it.
const e2eEnv = "PROMSCOPE_E2E"

// e2eWait bounds each wait for Prometheus. It is generous, for busy
// machines: nothing is asserted of how long a wait takes.
const e2eWait = time.Minute

// TestPrometheusScrapesEveryStep serves the program's /metrics to a real
// Prometheus server, plays the story one step at a time, and after each step
// waits until Prometheus has stored exactly what the step exposes, no more,
// and until promtool finds no problem with the exposition.
func TestPrometheusScrapesEveryStep(t *testing.T) {
	promPath, promtoolPath := e2eTools(t)

	reg := prometheus.NewPedanticRegistry()
	c, err := newController(reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serve(ctx, ln, newMux(reg, c.scope)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
	})
	metrics := "http://" + ln.Addr().String() + "/metrics"
	prom := startPrometheus(t, promPath, ln.Addr().String())

	for _, step := range story {
		ok := t.Run(step.name, func(t *testing.T) {
			if err := step.give(c); !errors.Is(err, step.wantErr) {
				t.Fatalf("got error %v, want %v", err, step.wantErr)
			}
			prom.awaitSeries(t, step.want)
			promtoolCheck(t, promtoolPath, get(t, metrics))
		})
		if !ok {
			return
		}
	}

	// The ownership page, served next to /metrics, names the program's
	// scope, where it was made, and what it owns.
	page := get(t, "http://"+ln.Addr().String()+"/debug/scopes")
	first, _, _ := strings.Cut(page, "\n")
	if !regexp.MustCompile(`^mirror \(made at github\.com/promscope/promscope/examples/clusterwatcher/main\.go:\d+\): 1 collector: connect_attempts_total$`).MatchString(first) {
		t.Errorf("/debug/scopes begins %q", first)
	}
}

// e2eTools returns the paths of prometheus and promtool, or skips the test
// (fails it, with PROMSCOPE_E2E=1) when either is not on PATH.
func e2eTools(t *testing.T) (prometheusPath, promtoolPath string) {
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

// A prometheusServer is a prometheus process that a test started.
type prometheusServer struct {
	url string
	log *syncBuffer
}

// listening finds the address Prometheus says it listens on in its log.
var listening = regexp.MustCompile(`msg="Listening on" address=(\S+)`)

// startPrometheus starts prometheus on an ephemeral port, scraping target
// twice a second, with its configuration and storage in a temporary
// directory, and waits until it is ready. The process is stopped when the
// test ends, however it ends.
func startPrometheus(t *testing.T, path, target string) *prometheusServer {
	t.Helper()
	dir := t.TempDir()
	config := fmt.Sprintf(`global:
  scrape_interval: 500ms
  scrape_timeout: 500ms
scrape_configs:
  - job_name: clusterwatcher
    static_configs:
      - targets: [%q]
`, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &prometheusServer{log: &syncBuffer{}}
	cmd := exec.Command(path,
		"--config.file=prometheus.yml",
		"--storage.tsdb.path=data",
		"--web.listen-address=127.0.0.1:0",
	)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting prometheus: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait() // it exits on the SIGTERM below
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(e2eWait):
			_ = cmd.Process.Kill()
			<-exited
		}
	})

	await(t, "prometheus to be ready", func() (string, bool) {
		select {
		case <-exited:
			t.Fatalf("prometheus exited:\n%s", s.log)
		default:
		}
		if s.url == "" {
			m := listening.FindStringSubmatch(s.log.String())
			if m == nil {
				return "no address in its log", false
			}
			s.url = "http://" + m[1]
		}
		resp, err := client.Get(s.url + "/-/ready")
		if err != nil {
			return err.Error(), false
		}
		resp.Body.Close()
		return resp.Status, resp.StatusCode == 200
	})
	return s
}

// awaitSeries waits until Prometheus's newest scrape of the program has
// succeeded and holds exactly the samples want, in the form of
// promtest.Series.
func (s *prometheusServer) awaitSeries(t *testing.T, want []string) {
	t.Helper()
	want = append(slices.Clone(want), "up{} 1")
	slices.Sort(want)
	await(t, fmt.Sprintf("prometheus to hold\n%s", strings.Join(want, "\n")), func() (string, bool) {
		got, err := s.query(`{job="clusterwatcher",__name__!~"scrape_.+"}`)
		if err != nil {
			return err.Error(), false
		}
		return strings.Join(got, "\n"), slices.Equal(got, want)
	})
}

// query runs an instant query and returns its samples as promtest.Series
// does, without the job and instance labels that Prometheus adds.
func (s *prometheusServer) query(q string) ([]string, error) {
	resp, err := client.Get(s.url + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string
		Error  string
		Data   struct {
			Result []struct {
				Metric map[string]string
				Value  [2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("%s: %w", resp.Status, err)
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("%s: %s", resp.Status, body.Error)
	}
	var lines []string
	for _, r := range body.Data.Result {
		var pairs []string
		for name, value := range r.Metric {
			if name != "__name__" && name != "job" && name != "instance" {
				pairs = append(pairs, fmt.Sprintf("%s=%q", name, value))
			}
		}
		slices.Sort(pairs)
		text, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, err
		}
		lines = append(lines, fmt.Sprintf("%s{%s} %v", r.Metric["__name__"], strings.Join(pairs, ","), v))
	}
	slices.Sort(lines)
	return lines, nil
}

// promtoolCheck fails t unless `promtool check metrics` finds no problem
// with the exposition.
func promtoolCheck(t *testing.T, path, exposition string) {
	t.Helper()
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = strings.NewReader(exposition)
	if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s\nin:\n%s", err, out, exposition)
	}
}

// await polls done until it reports true, and fails t if it has not after
// e2eWait, with what done last said.
func await(t *testing.T, what string, done func() (last string, ok bool)) {
	t.Helper()
	deadline := time.Now().Add(e2eWait)
	for {
		last, ok := done()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s; last got:\n%s", e2eWait, what, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// syncBuffer is a bytes.Buffer that a process may write while a test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
