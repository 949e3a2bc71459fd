package registrytest

import (
	"encoding/json"
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
// same; for a scope, which describes nothing while it owns an unchecked
// collector, those metrics are taken from its ownership page (see
// registry.Handler). An unchecked collector (one that describes nothing)
// that collects nothing at the moment is seen only through a scope: a scope
// that owns unchecked collectors and exposes nothing, or only metrics that
// its checked collectors describe, is reported with the number of unchecked
// ones, whatever ignore says. Once an unchecked collector exposes anything,
// even a metric that ignore leaves out, VerifyNone cannot tell whether the
// others expose anything, and says nothing of them. When g is a
// *registry.Scope, the message names it, and lists which of the scopes
// nested in it own what.
//
// Each entry of ignore is a metric name to leave out, or a name prefix
// followed by "*" ("go_*" leaves out the Go runtime metrics).
//
// A registry that other code fills as the program starts is not empty when a
// test begins, and what it holds depends on which packages the test imports.
// controller-runtime's metrics.Registry holds client-go's (rest_client_*)
// and leader election's (leader_election_*) metrics once its pkg/metrics is
// imported; its controller, webhook and certwatcher packages add the work
// queues' (workqueue_*), its own controllers', clients' and webhooks'
// (controller_runtime_*), the certificate watcher's (certwatcher_*), and the
// Go runtime's and the process's (go_*, process_*), many of them vectors
// with no series. Make the component's scope in a scope of the test's own on
// such a registry, keep that one open, and verify it rather than the
// registry; or ignore those names. A closed scope owns nothing, so verifying
// one proves nothing.
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
		msg = silent(s, tree(s))
	}
	if msg != "" {
		if isScope {
			name := s.String()
			if name == "" {
				name = "(unnamed scope)"
			}
			msg = fmt.Sprintf("scope %s: %s; owned by:\n%s", name, msg, owners(s))
		}
		t.Errorf("registrytest: %s", msg)
	}
}

// owners returns the ownership page of s (see registry.Handler).
func owners(s *registry.Scope) string {
	return strings.TrimRight(serve(s, "/"), "\n")
}

// serve returns what registry.Handler serves of s at target.
func serve(s *registry.Scope, target string) string {
	rec := httptest.NewRecorder()
	registry.Handler(s).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec.Body.String()
}

// A page is a scope as the JSON ownership page has it.
type page struct {
	State     string   `json:"state"`
	Metrics   []string `json:"metrics"`
	Unchecked int      `json:"unchecked"`
	Deletes   []string `json:"deletes"`
	Scopes    []page   `json:"scopes"`
}

// tree returns s as the JSON ownership page has it: a zero Scope, which the
// page lists as no scope, as an empty one.
func tree(s *registry.Scope) page {
	var p struct{ Scopes []page }
	if err := json.Unmarshal([]byte(serve(s, "/?format=json")), &p); err != nil || len(p.Scopes) > 1 {
		panic(fmt.Sprintf("registrytest: the ownership page of %q does not decode: %v", s, err))
	}
	if len(p.Scopes) == 0 {
		return page{}
	}
	return p.Scopes[0]
}

// all returns what field gives of p and of each scope nested in it: with
// metrics, the names of the checked collectors' metrics they own; with
// deletes, what their pending DeleteOnClose calls will delete.
func (p page) all(field func(page) []string) []string {
	out := slices.Clone(field(p))
	for _, c := range p.Scopes {
		out = append(out, c.all(field)...)
	}
	return out
}

func metrics(p page) []string { return p.Metrics }

// unchecked returns how many unchecked collectors p and the scopes nested
// in it own.
func (p page) unchecked() int {
	n := p.Unchecked
	for _, c := range p.Scopes {
		n += c.unchecked()
	}
	return n
}

func deletes(p page) []string { return p.Deletes }

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
		// A scope that owns an unchecked collector describes nothing:
		// its ownership page names what it holds.
		registered := describe.Names(describe.Descs(c))
		if s, ok := g.(*registry.Scope); ok {
			registered = tree(s).all(metrics)
			slices.Sort(registered)
			registered = slices.Compact(registered)
		}
		var held []string
		for _, name := range registered {
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

// silent describes the unchecked collectors that s, whose ownership page is
// p, owns and that expose nothing at the moment, which no registry can tell
// of: all of them, if s exposes only metrics that its checked collectors
// describe, or nothing. Otherwise it returns "". (Checked collectors that
// expose nothing, leftovers finds by their names.)
func silent(s *registry.Scope, p page) string {
	mfs, _ := s.Gather()
	described := map[string]bool{}
	for _, name := range p.all(metrics) {
		described[name] = true
	}
	for _, mf := range mfs {
		if !described[mf.GetName()] {
			return "" // an unchecked collector exposes it
		}
	}
	if n := p.unchecked(); n > 0 {
		return describe.Count(n, "unchecked collector", "unchecked collectors") + " still registered, exposing nothing"
	}
	return ""
}

// unclosed describes, from p, a scope's ownership page, the scopes still
// open in it and the DeleteOnClose calls still pending in them, which a
// registry need not show either; or returns "".
func unclosed(p page) string {
	var parts []string
	if n := len(p.Scopes); n > 0 {
		parts = append(parts, describe.Count(n, "scope", "scopes")+" still open")
	}
	if ds := p.all(deletes); len(ds) > 0 {
		parts = append(parts, "still to delete on close: "+strings.Join(ds, ", "))
	}
	return strings.Join(parts, "; ")
}

func ignored(name string, ignore []string) bool {
	return slices.ContainsFunc(ignore, func(pattern string) bool {
		if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
			return strings.HasPrefix(name, prefix)
		}
		return name == pattern
	})
}
