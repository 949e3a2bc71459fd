package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// The program starts HTTP servers, a controller and a worker per link; every
// test must end with all of them gone. goleak already ignores the goroutine
// that os/signal starts for run's signal.NotifyContext, which lives as long
// as the process.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// syncBuffer is a bytes.Buffer that the program may write while a test reads.
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

// waitForOutput polls out until it contains want, or fails t after timeout.
func waitForOutput(t *testing.T, out *syncBuffer, want string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the output after %v:\n%s", want, timeout, out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	tests := []struct {
		name string
		give []string
		want string
	}{
		{"an unknown flag", []string{"-nope"}, "flag provided but not defined: -nope"},
		{"a malformed number", []string{"-links", "two"}, `invalid value "two" for flag -links`},
		{"a malformed duration", []string{"-retry", "soon"}, `invalid value "soon" for flag -retry`},
		{"a single link", []string{"-links", "1"}, "-links must be between 2 and 100, not 1"},
		{"too many links", []string{"-links", "101"}, "-links must be between 2 and 100, not 101"},
		{"negative fail attempts", []string{"-fail-attempts", "-1"}, "-fail-attempts must be between 0 and 1000, not -1"},
		{"a negative retry", []string{"-retry", "-1s"}, "-retry must be between 0 and 1m0s, not -1s"},
		{"a positional argument", []string{"east"}, "unexpected arguments: east"},
	}
	for _, tt := range tests {
		t.Run("exits 2 with the usage for "+tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := run(tt.give, &stdout, &stderr); got != 2 {
				t.Errorf("run(%q) = %d, want 2", tt.give, got)
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr does not say %q:\n%s", tt.want, stderr.String())
			}
			if !strings.Contains(stderr.String(), "usage: clusterwatcher [flags]") {
				t.Errorf("stderr has no usage:\n%s", stderr.String())
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout is not empty:\n%s", stdout.String())
			}
		})
	}
}

func TestRunPrintsTheUsageForHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if got := run([]string{"-h"}, &stdout, &stderr); got != 0 {
		t.Errorf("run(-h) = %d, want 0", got)
	}
	for _, flag := range []string{"-listen ADDR", "-fail-attempts N", "-retry DURATION", "-links N", "-v"} {
		if !strings.Contains(stderr.String(), flag) {
			t.Errorf("the usage does not show %s:\n%s", flag, stderr.String())
		}
	}
}

func TestRunPlaysTheDefaultStory(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if got := run(nil, &stdout, &stderr); got != 0 {
		t.Fatalf("run() = %d, want 0; stderr:\n%s\nstdout:\n%s", got, stderr.String(), stdout.String())
	}
	out := stdout.String()
	// The log tells the story in order.
	for _, want := range []string{
		"clusterwatcher: 2 links; west fails its first 3 connects; retry after 50ms",
		"== link east added",
		"east  attempt 1: connected: 3 services, 6 endpoints cached",
		`/metrics: endpoint_repairs_total{target_cluster_name="east"} 0`,
		"== link west added",
		"west  attempt 1 failed: connect to 127.0.0.1:",
		"503 Service Unavailable; retrying in 50ms",
		"(no service_cache_size or endpoints_cache_size for west: the failed attempt's scope is closed)",
		"west  attempt 2 failed: connect to 127.0.0.1:",
		"west  attempt 3 failed: connect to 127.0.0.1:",
		"west  attempt 4: connected: 2 services, 4 endpoints cached",
		`service_cache_size{cluster="west"} 2`,
		"== link east updated: its cluster serves one more service",
		"east  watcher rebuilt in its slot (attempt 1): 4 services, 7 endpoints cached",
		`service_cache_size{cluster="east"} 4`,
		"== link west deleted",
		"/metrics: no series of west left (it had 7, in 6 families)",
		"/metrics: the 7 series of east are unchanged",
		"summary: 2 links, 3 failed attempts, 1 link deleted with all its series, 0 registration errors: the story held",
		"shutdown: removed 1 link, closed every scope; /metrics is empty",
	} {
		i := strings.Index(out, want)
		if i < 0 {
			t.Fatalf("the log does not say %q (or not in order):\n%s", want, stdout.String())
		}
		out = out[i+len(want):]
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr is not empty:\n%s", stderr.String())
	}
}

func TestExecuteFailsWhenItCannotListen(t *testing.T) {
	var stdout, stderr bytes.Buffer
	// Take a port, so that listening on it again fails.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := config{listen: ln.Addr().String(), failAttempts: 1, links: 2}
	if got := execute(context.Background(), cfg, newTestRegistry(), hooks{}, &stdout, &stderr); got != 1 {
		t.Errorf("execute = %d, want 1", got)
	}
	if want := "clusterwatcher: serving /metrics: listen tcp " + ln.Addr().String(); !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
	}
}
