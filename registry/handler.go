package registry

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/promscope/promscope/internal/describe"
)

// Handler serves the tree of open scopes under root as plain text, one line a
// scope, indented two spaces for each level of nesting: the scope's String
// (see [WithName]), where it was made when that is known (see
// [WithLeakReport]), how many collectors it owns, and their metric names. Serve
// it next to /metrics to see which component holds which metric, and to spot
// the leak that no report can catch: a generation that should be gone, still
// listed.
//
// Handler panics if root is nil.
func Handler(root *Scope) http.Handler {
	if root == nil {
		panic("registry: Handler needs a scope")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		var b strings.Builder
		root.writeTree(&b, 0)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, b.String()) // a client that went away is not an error of ours
	})
}

// writeTree writes the lines of s and its open nested scopes to b.
func (s *Scope) writeTree(b *strings.Builder, depth int) {
	b.WriteString(strings.Repeat("  ", depth))
	if s.String() == "" {
		b.WriteString("(unnamed scope)")
	} else {
		b.WriteString(s.String())
	}
	if s.created != "" {
		fmt.Fprintf(b, " (made at %s)", s.created)
	}
	var children []*Scope
	if s.st == nil {
		b.WriteString(": 0 collectors")
	} else {
		s.st.mu.Lock()
		if s.st.closed {
			b.WriteString(": closed")
		} else {
			var names []string
			unchecked := 0
			for m := s.st.head; m != nil; m = m.next {
				if m.unchecked() {
					unchecked++
				}
				names = append(names, describe.Names(m.descs)...)
			}
			if unchecked > 0 {
				names = append(names, fmt.Sprintf("%d unchecked", unchecked))
			}
			fmt.Fprintf(b, ": %d collector%s", s.st.n, map[bool]string{true: "s"}[s.st.n != 1])
			if len(names) > 0 {
				b.WriteString(": " + strings.Join(names, ", "))
			}
			children = s.st.childList()
		}
		s.st.mu.Unlock()
	}
	b.WriteByte('\n')
	for _, c := range children {
		c.writeTree(b, depth+1)
	}
}
