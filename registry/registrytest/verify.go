package registrytest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/internal/describe"
	"github.com/promscope/promscope/internal/nilness"
	"github.com/promscope/promscope/registry"
)

// TestingT is the part of *testing.T that the helpers use.
type TestingT interface {
	Helper()
	Errorf(format string, args ...any)
}

// VerifyNone fails t, naming each metric family that g still exposes. When g
// is also a [prometheus.Collector], as a *prometheus.Registry and a
// *registry.Scope are, it also names every metric still registered whose
// collector exposes no series at the moment (such as a vector without
// children), since that registration would make the next one fail just the
// same. An unchecked collector (one that describes nothing) that collects
// nothing at the moment is seen only through a scope: a scope that owns
// something and exposes nothing at all is reported with the number of
// collectors it owns, whatever ignore says. When g is a *registry.Scope,
// the message names it, and lists which of the scopes nested in it own
// what.
//
// Each entry of ignore is a metric name to leave out, or a name prefix
// followed by "*" ("go_*" leaves out the Go runtime metrics).
//
// VerifyNone panics if g is nil or a nil pointer, which would prove
// nothing.
func VerifyNone(t TestingT, g prometheus.Gatherer, ignore ...string) {
	t.Helper()
	if nilness.IsNil(g) {
		panic("registrytest: VerifyNone needs a Gatherer")
	}
	msg := leftovers(g, ignore)
	s, isScope := g.(*registry.Scope)
	if msg == "" && isScope {
		msg = silent(s)
	}
	if msg != "" {
		if isScope {
			msg = fmt.Sprintf("scope %s: %s; owned by:\n%s", s, msg, owners(s))
		}
		t.Errorf("registrytest: %s", msg)
	}
}

// owners returns the ownership page of s (see registry.Handler).
func owners(s *registry.Scope) string {
	rec := httptest.NewRecorder()
	registry.Handler(s).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	return strings.TrimRight(rec.Body.String(), "\n")
}

// leftovers describes what g still exposes or holds, or returns "".
func leftovers(g prometheus.Gatherer, ignore []string) string {
	var parts []string
	mfs, err := g.Gather()
	if err != nil {
		parts = append(parts, fmt.Sprintf("gather failed: %v", err))
	}
	var exposed []string
	seen := map[string]bool{}
	for _, mf := range mfs {
		name := mf.GetName()
		seen[name] = true
		if !ignored(name, ignore) {
			exposed = append(exposed, fmt.Sprintf("%s (%d series)", name, len(mf.GetMetric())))
		}
	}
	if len(exposed) > 0 {
		parts = append(parts, fmt.Sprintf("%s still exposed: %s", describe.Count(len(exposed), "metric family", "metric families"), strings.Join(exposed, ", ")))
	}
	if c, ok := g.(prometheus.Collector); ok {
		var held []string
		for _, name := range describe.Names(describe.Descs(c)) {
			if !seen[name] && !ignored(name, ignore) {
				held = append(held, name)
			}
		}
		if len(held) > 0 {
			parts = append(parts, fmt.Sprintf("%s still registered with no series: %s", describe.Count(len(held), "metric", "metrics"), strings.Join(held, ", ")))
		}
	}
	return strings.Join(parts, "; ")
}

// silent describes what s owns when it exposes nothing at all, such as
// unchecked collectors that collect nothing at the moment, which no
// registry can tell of; or returns "".
func silent(s *registry.Scope) string {
	n := s.Len()
	if mfs, _ := s.Gather(); n == 0 || len(mfs) > 0 {
		return ""
	}
	return describe.Count(n, "collector", "collectors") + " still registered, exposing nothing"
}

func ignored(name string, ignore []string) bool {
	return slices.ContainsFunc(ignore, func(pattern string) bool {
		if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
			return strings.HasPrefix(name, prefix)
		}
		return name == pattern
	})
}
