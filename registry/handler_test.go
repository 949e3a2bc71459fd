package registry_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/registry"
)

func TestHandler(t *testing.T) {
	t.Run("serves the tree of open scopes, each with where it was made and what it owns", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		rootAt := line()
		root := registry.NewScope(reg, registry.WithName("mirror"), registry.WithPrefix("mirror_"),
			registry.WithLeakReport(func(registry.Leak) {}))
		root.MustRegister(promtest.Gauge("links", 2))
		eastAt := line()
		east := registry.NewScope(root, registry.WithName("east"), registry.WithLabels(prometheus.Labels{"cluster": "east"}))
		east.MustRegister(promtest.Gauge("service_cache_size", 3), promtest.CounterVec("events_total", "kind"))
		westAt := line()
		west := root.Child(registry.WithName("west"), registry.WithLabels(prometheus.Labels{"cluster": "west"}))
		probeAt := line()
		probe := west.Child(registry.WithName("probe"))
		probe.MustRegister(&promtest.Unchecked{Name: "probe_rtt", Value: 1})
		closed := root.Child(registry.WithName("gone"))
		closed.Close()

		srv := httptest.NewServer(registry.Handler(root))
		defer srv.Close()
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := strings.Join([]string{
			`mirror prefix="mirror_" (made at ` + rootAt + `): 1 collector: mirror_links`,
			`  mirror/east{cluster="east"} prefix="mirror_" (made at ` + eastAt + `): 2 collectors: mirror_service_cache_size, mirror_events_total`,
			`  mirror/west{cluster="west"} prefix="mirror_" (made at ` + westAt + `): 0 collectors`,
			`    mirror/west/probe{cluster="west"} prefix="mirror_" (made at ` + probeAt + `): 1 collector: 1 unchecked`,
		}, "\n") + "\n"
		if got := string(body); got != want {
			t.Errorf("the page is\n%s\nwant\n%s", got, want)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
			t.Errorf("Content-Type = %q", ct)
		}
		if err := root.Close(); err != nil {
			t.Error(err)
		}
	})

	t.Run("names an unnamed scope so, and shows a closed or zero scope as such", func(t *testing.T) {
		closed := registry.NewScope(nil)
		closed.Close()
		for _, tt := range []struct {
			give *registry.Scope
			want string
		}{
			{give: registry.NewScope(nil), want: "(unnamed scope): 0 collectors\n"},
			{give: closed, want: "(unnamed scope): closed\n"},
			{give: &registry.Scope{}, want: "(unnamed scope): 0 collectors\n"},
		} {
			rec := httptest.NewRecorder()
			registry.Handler(tt.give).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
			if got := rec.Body.String(); got != tt.want {
				t.Errorf("the page is %q, want %q", got, tt.want)
			}
		}
	})

	t.Run("panics with the package prefix for a nil scope", func(t *testing.T) {
		if msg, ok := promtest.Panic(func() { registry.Handler(nil) }).(string); !ok || !strings.HasPrefix(msg, "registry: ") {
			t.Errorf("Handler(nil) panicked with %#v", msg)
		}
	})
}
