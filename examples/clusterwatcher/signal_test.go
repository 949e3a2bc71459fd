//go:build unix

package main

import (
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRunServesMetricsUntilItIsSignalled(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run("and shuts down cleanly on "+sig.String(), func(t *testing.T) {
			var stdout, stderr syncBuffer
			code := make(chan int, 1)
			go func() {
				code <- run([]string{"-listen", "127.0.0.1:0", "-retry", "1ms"}, &stdout, &stderr)
			}()
			// run prints this line only once it handles the signals, so
			// from then on a signal reaches run, not the test binary's
			// default handler.
			waitForOutput(t, &stdout, "serving /metrics on ", 30*time.Second)
			signalled := false
			t.Cleanup(func() {
				if !signalled {
					_ = syscall.Kill(os.Getpid(), sig)
					<-code
				}
			})
			waitForOutput(t, &stdout, "the story held; still serving /metrics until interrupted (SIGINT or SIGTERM)", 30*time.Second)

			m := regexp.MustCompile(`serving /metrics on (http://\S+/metrics)`).FindStringSubmatch(stdout.String())
			if m == nil {
				t.Fatalf("no address in the output:\n%s", stdout.String())
			}
			body := get200(t, m[1])
			for _, want := range []string{`service_cache_size{cluster="east"} 4`, `gateway_alive{target_cluster_name="east"} 1`} {
				if !strings.Contains(body, want) {
					t.Errorf("/metrics does not show %s:\n%s", want, body)
				}
			}
			if strings.Contains(body, `"west"`) {
				t.Errorf("/metrics still shows the deleted link west:\n%s", body)
			}

			signalled = true
			if err := syscall.Kill(os.Getpid(), sig); err != nil {
				t.Fatal(err)
			}
			select {
			case got := <-code:
				if got != 0 {
					t.Errorf("run = %d, want 0; stderr:\n%s", got, stderr.String())
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("run did not return after %v:\n%s", sig, stdout.String())
			}
			for _, want := range []string{"interrupted: shutting down", "shutdown: removed 1 link, closed every scope; /metrics is empty"} {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("the log does not say %q:\n%s", want, stdout.String())
				}
			}
			if resp, err := http.Get(m[1]); err == nil {
				resp.Body.Close()
				t.Errorf("/metrics still answers after shutdown: %s", resp.Status)
			}
		})
	}
}

// get200 fetches u and returns its body, failing t unless the status is 200.
func get200(t *testing.T, u string) string {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", u, resp.Status, b)
	}
	return string(b)
}
