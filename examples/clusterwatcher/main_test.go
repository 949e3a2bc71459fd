package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/registry/registrytest"
)

// serve starts goroutines, and so does registration; every test must end
// with all of them gone.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// story is the story that run tells, one link event a step, with what the
// registry exposes after it. The end-to-end test plays it too.
var story = []struct {
	name    string                  // what the step shows
	give    func(*controller) error // the event
	wantErr error                   // what the event's error wraps; nil for none
	want    []string                // every sample the registry exposes after it
}{
	{
		name: "a link whose cluster answers exposes its watcher's gauges",
		give: func(c *controller) error {
			return c.add("east", fakeCluster(0, map[string]int{"web": 2, "api": 2, "db": 2}))
		},
		want: []string{
			`connect_attempts_total{result="ok",target_cluster_name="east"} 1`,
			`endpoints_cache_size{cluster="east"} 6`,
			`service_cache_size{cluster="east"} 3`,
		},
	},
	{
		name: "a link whose connect fails exposes its failed attempt and no gauge",
		give: func(c *controller) error {
			return c.add("west", fakeCluster(2, map[string]int{"web": 2, "api": 2}))
		},
		wantErr: errUnreachable,
		want: []string{
			`connect_attempts_total{result="error",target_cluster_name="west"} 1`,
			`connect_attempts_total{result="ok",target_cluster_name="east"} 1`,
			`endpoints_cache_size{cluster="east"} 6`,
			`service_cache_size{cluster="east"} 3`,
		},
	},
	{
		name:    "a retry fails for the cluster, not for a registration",
		give:    func(c *controller) error { return c.sync("west") },
		wantErr: errUnreachable,
		want: []string{
			`connect_attempts_total{result="error",target_cluster_name="west"} 2`,
			`connect_attempts_total{result="ok",target_cluster_name="east"} 1`,
			`endpoints_cache_size{cluster="east"} 6`,
			`service_cache_size{cluster="east"} 3`,
		},
	},
	{
		name: "the retry that connects registers the same gauges again",
		give: func(c *controller) error { return c.sync("west") },
		want: []string{
			`connect_attempts_total{result="error",target_cluster_name="west"} 2`,
			`connect_attempts_total{result="ok",target_cluster_name="east"} 1`,
			`connect_attempts_total{result="ok",target_cluster_name="west"} 1`,
			`endpoints_cache_size{cluster="east"} 6`,
			`endpoints_cache_size{cluster="west"} 4`,
			`service_cache_size{cluster="east"} 3`,
			`service_cache_size{cluster="west"} 2`,
		},
	},
	{
		name: "an update rebuilds the watcher in its slot, with the new cache",
		give: func(c *controller) error {
			return c.update("east", fakeCluster(0, map[string]int{"web": 2, "api": 2, "db": 2, "auth": 2}))
		},
		want: []string{
			`connect_attempts_total{result="error",target_cluster_name="west"} 2`,
			`connect_attempts_total{result="ok",target_cluster_name="east"} 2`,
			`connect_attempts_total{result="ok",target_cluster_name="west"} 1`,
			`endpoints_cache_size{cluster="east"} 8`,
			`endpoints_cache_size{cluster="west"} 4`,
			`service_cache_size{cluster="east"} 4`,
			`service_cache_size{cluster="west"} 2`,
		},
	},
	{
		name: "deleting a link leaves nothing of it and all of the other",
		give: func(c *controller) error { return c.remove("west") },
		want: []string{
			`connect_attempts_total{result="ok",target_cluster_name="east"} 2`,
			`endpoints_cache_size{cluster="east"} 8`,
			`service_cache_size{cluster="east"} 4`,
		},
	},
	{
		name: "deleting the last link leaves the shared vector empty",
		give: func(c *controller) error { return c.remove("east") },
	},
}

func TestControllerKeepsTheRegistryRight(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	c, err := newController(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range story {
		ok := t.Run(step.name, func(t *testing.T) {
			if err := step.give(c); !errors.Is(err, step.wantErr) {
				t.Fatalf("got error %v, want %v", err, step.wantErr)
			}
			got, err := promtest.Series(reg)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, step.want) {
				t.Errorf("the registry exposes\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(step.want, "\n"))
			}
		})
		if !ok {
			break
		}
	}
	// No watcher is left registered once every link is deleted.
	t.Run("links deleted", func(t *testing.T) {
		registrytest.VerifyNone(t, reg, "connect_attempts_total")
	})
	// Closing the controller leaves the registry empty.
	t.Run("controller closed", func(t *testing.T) {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		registrytest.VerifyNone(t, reg)
	})
}

func TestWatcherIsRecycleSafe(t *testing.T) {
	// The first five rounds fail to connect, the next five connect.
	cluster := fakeCluster(5, map[string]int{"web": 2})
	registrytest.VerifyRecycle(t, 10, func(reg prometheus.Registerer) (*watcher, error) {
		return newWatcher(reg, "east", cluster)
	})
}

func TestRunTellsTheStoryOfTheReadme(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```text\n\\$ go run \\./examples/clusterwatcher\n(.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no output of go run ./examples/clusterwatcher")
	}
	reg := prometheus.NewPedanticRegistry()
	var out strings.Builder
	if err := run(t.Context(), &out, reg, config{fail: 3}); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), string(m[1]); got != want {
		t.Errorf("run prints\n%s\nbut the README shows\n%s", got, want)
	}
	registrytest.VerifyNone(t, reg)
}

func TestRunRetriesUntilTheClusterAnswers(t *testing.T) {
	for _, give := range []int{0, 1, 1000} {
		t.Run("after "+strconv.Itoa(give)+" failed connects", func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			var out strings.Builder
			if err := run(t.Context(), &out, reg, config{fail: give}); err != nil {
				t.Fatal(err)
			}
			if got := strings.Count(out.String(), "connect to west: connection refused"); got != give {
				t.Errorf("run tells of %d failed connects, want %d:\n%s", got, give, out.String())
			}
			if want := `service_cache_size{cluster="west"} 2`; !strings.Contains(out.String(), want) {
				t.Errorf("run never shows %s:\n%s", want, out.String())
			}
			registrytest.VerifyNone(t, reg)
		})
	}
}

func TestRunServesUntilItsContextIsDone(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	r, w := io.Pipe()
	ran := make(chan error, 1)
	go func() {
		ran <- run(ctx, w, reg, config{listen: "127.0.0.1:0"})
		w.Close()
	}()
	var base string
	serving := regexp.MustCompile(`^serving (http://\S+)/metrics`)
	for lines := bufio.NewScanner(r); base == "" && lines.Scan(); {
		if m := serving.FindStringSubmatch(lines.Text()); m != nil {
			base = m[1]
		}
	}
	go io.Copy(io.Discard, r) // whatever run prints from now on
	if base == "" {
		t.Fatalf("run did not say where it serves: %v", <-ran)
	}

	// /metrics shows what the story left.
	t.Run("/metrics", func(t *testing.T) {
		var got []string
		for line := range strings.Lines(get(t, base+"/metrics")) {
			if !strings.HasPrefix(line, "#") {
				got = append(got, strings.TrimSuffix(line, "\n"))
			}
		}
		want := []string{
			`connect_attempts_total{result="ok",target_cluster_name="east"} 2`,
			`endpoints_cache_size{cluster="east"} 8`,
			`service_cache_size{cluster="east"} 4`,
		}
		if !slices.Equal(got, want) {
			t.Errorf("/metrics shows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	// /debug/scopes names the scopes and where they were made.
	t.Run("/debug/scopes", func(t *testing.T) {
		got := regexp.MustCompile(`made at [\w./-]+\.go:\d+`).ReplaceAllString(get(t, base+"/debug/scopes"), "made at FILE:LINE")
		want := `mirror (made at FILE:LINE): 1 collector: connect_attempts_total
  mirror/east (made at FILE:LINE): 0 collectors; deletes on close: connect_attempts_total{target_cluster_name="east"}
    mirror/east/watcher (made at FILE:LINE): 0 collectors
      mirror/east/watcher/2 (made at FILE:LINE): 0 collectors
        mirror/east/watcher/2{cluster="east"} (made at FILE:LINE): 2 collectors: service_cache_size, endpoints_cache_size
`
		if got != want {
			t.Errorf("/debug/scopes shows\n%s\nwant\n%s", got, want)
		}
	})

	cancel()
	if err := <-ran; err != nil {
		t.Errorf("run: %v", err)
	}
	registrytest.VerifyNone(t, reg)
}

// client keeps no idle connections, so that none outlive a test.
var client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// get returns the body of a GET of url, which must answer 200.
func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v", url, resp.Status, err)
	}
	return string(body)
}
