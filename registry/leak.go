package registry

import (
	"fmt"
	"path/filepath"
	"runtime"
	"slices"

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

// caller returns "file.go:line" of the function skip frames above the caller
// of caller.
func caller(skip int) string {
	_, file, line, _ := runtime.Caller(skip + 1) // the depth is fixed, so it is there
	return fmt.Sprintf("%s:%d", filepath.Base(file), line)
}
