package registry

import (
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/internal/describe"
	"github.com/promscope/promscope/internal/nilness"
)

// An Index lists scope trees for [Handler]: every outermost scope made with
// [WithIndex] is listed from NewScope until its Close completes, with the
// scopes nested in it. The index holds the scopes, not their users' handles,
// so an outermost scope that was dropped without Close while it still owned
// something is still listed, as it still has registrations in the parent; its
// leak report (see [WithLeakReport]) is how it can be closed, and without
// one, nothing closes it: the page shows it, with where it was made, until
// the program ends. A scope of a listed tree dropped while it has nothing to
// report is closed once the garbage collector finds its handle unreachable
// and it holds no registration and no nested scope, and so leaves the index
// or the scope it is nested in. The zero value is an empty index, ready to
// use.
type Index struct {
	mu    sync.Mutex
	roots list // guarded by mu; the outermost scopes, oldest first
}

func (x *Index) add(n *node) {
	x.mu.Lock()
	n.of = n
	x.roots.push(&n.item)
	x.mu.Unlock()
}

func (x *Index) remove(n *node) {
	x.mu.Lock()
	x.roots.remove(&n.item)
	x.mu.Unlock()
}

// Scopes is what [Handler] shows: a *Scope, with the scopes nested in it, or
// an *Index, with every tree listed in it. Only those two implement it.
type Scopes interface {
	scopes() []*node
}

func (s *Scope) scopes() []*node {
	if s == nil || s.n == nil {
		return nil
	}
	return []*node{s.n}
}

// scopes returns the outermost scopes, oldest first.
func (x *Index) scopes() []*node {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []*node
	for it := x.roots.head; it != nil; it = it.next {
		out = append(out, it.nested())
	}
	return out
}

// Handler serves the scopes of x and what each owns, to see which component
// holds which metric, and to spot the leak that no report can catch: a
// generation that should be gone, still listed. Serve it next to /metrics.
// Give it the program's outermost scope, or, to see every tree on a
// registry, leaked ones included, an [Index] they are all made with.
//
// It answers GET and HEAD, and any other method with 405 Method Not Allowed.
// By default it writes plain text, one line a scope, indented two spaces for
// each level of nesting: the scope's String (see [WithName]), where it was
// made, for a scope of a tree with a leak report or an Index (see
// [WithLeakReport] and [WithIndex]), how many collectors it
// owns, and their metric names; unchecked collectors, which describe none,
// are counted ("2 unchecked"), since the page collects nothing to name them;
// then, after "deletes on close:", the series that its pending
// [Scope.DeleteOnClose] calls name, which Close deletes or reports in a
// [DeleteError]: each vector's metric name, as the vector describes it,
// with the labels given (links_total{link="west"}), or the labels alone for a
// vector that cannot describe itself.
//
// A scope is named by its String, which quotes a name that holds a space,
// anything unprintable or not UTF-8, or one of the characters names and
// labels are joined with; metric and label names are quoted likewise, and
// label values always, as strconv.Quote quotes them. So a line is always one
// scope, and no name passes for another, or for what is written around it.
//
// With the query parameter format=json (format=text asks for text, whatever
// Accept says, any other format is answered with 400 Bad Request, and an
// empty one is no format), or with no format and an Accept header that names
// application/json with a quality above zero and no lower than that of
// text/plain (which, as RFC 9110 has it, text/* or */* give when text/plain
// is not named), it writes the same tree as JSON: {"scopes": [scope...]},
// each scope an object with "scope", "created" (where it was made, as the
// text's "made at" gives it, for a scope of a tree with a leak report or an
// Index; "" for others), "state" ("open", "closing" or "closed"),
// "collectors", "metrics" (the names as they are: JSON quotes them),
// "unchecked", "deletes" (the series as the text writes them) and "scopes"
// (the nested ones).
//
// Handler holds no lock of a scope while it writes: it copies each scope's
// list under the scope's lock and formats the copy, so that Register,
// Unregister and Close wait no longer than the copy takes.
//
// Handler panics if x is nil.
func Handler(x Scopes) http.Handler {
	if nilness.IsNil(x) {
		panic("registry: Handler needs a Scope or an Index")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "registry: method not allowed", http.StatusMethodNotAllowed)
			return
		}
		pages := []page{} // [] in JSON, not null, when there are none
		for _, n := range x.scopes() {
			pages = append(pages, n.page())
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		format := req.URL.Query().Get("format")
		if format != "" && format != "json" && format != "text" {
			http.Error(w, "registry: format must be json or text, not "+strconv.Quote(format), http.StatusBadRequest)
			return
		}
		if format == "json" || format == "" && wantsJSON(req.Header.Values("Accept")) {
			w.Header().Set("Content-Type", "application/json")
			if req.Method == http.MethodGet {
				_ = json.NewEncoder(w).Encode(struct { // a client that went away is not an error of ours
					Scopes []page `json:"scopes"`
				}{pages})
			}
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if req.Method == http.MethodGet {
			var b strings.Builder
			for _, p := range pages {
				p.write(&b, 0)
			}
			_, _ = w.Write([]byte(b.String()))
		}
	})
}

// wantsJSON reports whether the Accept header values ask for
// application/json, named as such, with a quality above zero and no lower
// than the quality they give text/plain (by its name, text/*, or */*, and
// 0 when none of these is listed). A media range that does not parse, or
// whose quality is not a qvalue of RFC 9110 (0 to 1, at most three
// decimals), is ignored.
func wantsJSON(accept []string) bool {
	jsonQ, textQ := 0.0, map[string]float64{}
	for _, v := range accept {
		for _, part := range mediaRanges(v) {
			mt, params, err := mime.ParseMediaType(part)
			if err != nil {
				continue
			}
			q := 1.0
			if s, ok := params["q"]; ok {
				if q, ok = qvalue(s); !ok {
					continue
				}
			}
			switch mt {
			case "application/json":
				jsonQ = q
			case "text/plain", "text/*", "*/*":
				textQ[mt] = q
			}
		}
	}
	text := 0.0
	for _, mt := range []string{"*/*", "text/*", "text/plain"} { // the most specific listed wins
		if q, ok := textQ[mt]; ok {
			text = q
		}
	}
	return jsonQ > 0 && jsonQ >= text
}

// mediaRanges splits an Accept header value at the commas that are not in a
// quoted string.
func mediaRanges(v string) []string {
	var out []string
	quoted, escaped, start := false, false, 0
	for i := range len(v) {
		switch c := v[i]; {
		case escaped:
			escaped = false
		case quoted && c == '\\':
			escaped = true
		case c == '"':
			quoted = !quoted
		case c == ',' && !quoted:
			out = append(out, v[start:i])
			start = i + 1
		}
	}
	return append(out, v[start:])
}

// qvalue parses a quality: "0" or "1", optionally followed by a dot and up
// to three digits (only zeros after a 1).
func qvalue(s string) (float64, bool) {
	whole, frac, _ := strings.Cut(s, ".")
	ok := len(frac) <= 3 && (whole == "0" || whole == "1" && strings.Trim(frac, "0") == "")
	for _, c := range frac {
		ok = ok && c >= '0' && c <= '9'
	}
	if !ok {
		return 0, false
	}
	q, err := strconv.ParseFloat(s, 64)
	return q, err == nil
}

// A page is one scope as Handler shows it.
type page struct {
	Scope      string   `json:"scope"`
	Created    string   `json:"created"`
	State      string   `json:"state"`
	Collectors int      `json:"collectors"`
	Metrics    []string `json:"metrics"`
	Unchecked  int      `json:"unchecked"`
	Deletes    []string `json:"deletes"`
	Scopes     []page   `json:"scopes"`
}

// page copies what n owns under its lock, then describes the copy.
func (n *node) page() page {
	rs, nested, ds := n.entries()
	p := page{Scope: n.str, Created: n.created, State: n.state(), Collectors: len(rs), Metrics: []string{}, Deletes: []string{}, Scopes: []page{}}
	for _, r := range rs {
		if r.unchecked() {
			p.Unchecked++
		}
		p.Metrics = append(p.Metrics, r.names()...)
	}
	for _, d := range ds {
		sel := selector(d.labels)
		for _, v := range d.vecs {
			var names []string
			if c, ok := v.(prometheus.Collector); ok {
				names = describe.Names(describe.Descs(c))
			}
			if len(names) == 0 {
				names = []string{""}
			}
			for _, name := range names {
				p.Deletes = append(p.Deletes, quote(name)+sel)
			}
		}
	}
	for _, c := range nested {
		p.Scopes = append(p.Scopes, c.page())
	}
	return p
}

// state says whether n is open, closing, or closed.
func (n *node) state() string {
	switch {
	case n.closed.Load():
		return "closed"
	case n.stopped():
		return "closing"
	}
	return "open"
}

// write writes p and the scopes nested in it to b, one line a scope.
func (p page) write(b *strings.Builder, depth int) {
	b.WriteString(strings.Repeat("  ", depth))
	if p.Scope == "" {
		b.WriteString("(unnamed scope)")
	} else {
		b.WriteString(p.Scope)
	}
	if p.Created != "" {
		b.WriteString(" (made at " + escape(p.Created) + ")")
	}
	if p.State != "open" {
		b.WriteString(" (" + p.State + ")")
	}
	b.WriteString(": " + describe.Count(p.Collectors, "collector", "collectors"))
	names := appendQuoted(make([]string, 0, len(p.Metrics)+1), p.Metrics...)
	if p.Unchecked > 0 {
		names = append(names, strconv.Itoa(p.Unchecked)+" unchecked")
	}
	if len(names) > 0 {
		b.WriteString(": " + strings.Join(names, ", "))
	}
	if len(p.Deletes) > 0 {
		b.WriteString("; deletes on close: " + strings.Join(p.Deletes, ", "))
	}
	b.WriteByte('\n')
	for _, c := range p.Scopes {
		c.write(b, depth+1)
	}
}

// escape returns s with every rune outside printable ASCII, every
// backslash and every double quote written as a Go string literal writes
// them, so that s cannot break a line.
func escape(s string) string {
	q := strconv.QuoteToASCII(s)
	return q[1 : len(q)-1]
}
