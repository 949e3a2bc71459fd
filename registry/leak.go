package registry

import (
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/promscope/promscope/internal/describe"
)

// A Leak is what [WithLeakReport] reports of a scope that was dropped without
// Close while it still owned registrations.
type Leak struct {
	Scope   string   // the String of the leaked scope
	Created string   // "file.go:123" of the call to NewScope or Child that made it
	Metrics []string // the fully-qualified names it still had registered, sorted
}

// String describes l for a log line.
func (l Leak) String() string {
	return fmt.Sprintf("registry: scope %q made at %s was dropped without Close; it still has %v registered", l.Scope, l.Created, l.Metrics)
}

// leakOf is what a scope's cleanup needs to report it: nothing that refers to
// the scope itself, or the scope would never become unreachable.
type leakOf struct {
	report  func(Leak)
	created string
	st      *state
}

// reportLeak is the cleanup of a scope made with WithLeakReport. A closed
// scope's cleanup is stopped, so a scope reported here was never closed.
func reportLeak(l leakOf) {
	l.st.mu.Lock()
	n := l.st.n
	var names []string
	for m := l.st.head; m != nil; m = m.next {
		names = append(names, describe.Names(m.descs)...)
	}
	l.st.mu.Unlock()
	if n == 0 {
		return
	}
	slices.Sort(names)
	l.report(Leak{Scope: l.st.label, Created: l.created, Metrics: slices.Compact(names)})
}

// madeAt returns "file.go:line" of the call that made a scope: the first
// caller outside packages registry and lifecycle, so that a scope a Slot
// makes is said to be made where Replace was called.
func madeAt() string {
	pc := make([]uintptr, 16)
	frames := runtime.CallersFrames(pc[:runtime.Callers(2, pc)])
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, "github.com/promscope/promscope/registry.") &&
			!strings.HasPrefix(f.Function, "github.com/promscope/promscope/lifecycle.") || !more {
			return fmt.Sprintf("%s:%d", filepath.Base(f.File), f.Line)
		}
	}
}
