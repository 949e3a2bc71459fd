package registrytest

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/internal/nilness"
	"github.com/promscope/promscope/registry"
)

// VerifyRecycle proves that build can be run again and again without leaking
// metrics. It calls build n times against one fresh pedantic registry; after
// each call it closes the value if build returned no error, then checks, as
// [VerifyNone] does, that nothing is left registered or exposed, and that
// the Registerer build was given owns nothing: no collector, no scope still
// open, no DeleteOnClose pending. A scope that build dropped while it held
// nothing is closed by the garbage collector (see registry.WithLeakReport):
// before it says a scope is still open, VerifyRecycle runs the collector a
// few times, so that whether one ran during build does not change the
// verdict. It stops at the first failure, and fails t when:
//
//   - something is left after a round;
//   - build returns a [prometheus.AlreadyRegisteredError], the mark of an
//     earlier round's leak, or, in the first round, of build registering
//     one metric twice (any other error is taken as the failure the test
//     is simulating, such as an unreachable cluster);
//   - the Registerer build is given is closed after a round (a value's
//     Close closed it): the rounds after would register nothing, and prove
//     nothing;
//   - closing a built value returns an error;
//   - build, or closing a built value, panics.
//
// A nil value (or a nil pointer) that build returns with no error is not
// closed: what it registered is left, and reported. VerifyRecycle sees only
// the registry it made: the series that build writes to a vector registered
// elsewhere (one the program shares among components) and does not ask to
// delete are not looked at; check that registry with VerifyNone.
// VerifyRecycle panics if build is nil or n is less than 1, since the test
// would then prove nothing.
//
// The Registerer that build is given is a *registry.Scope on the registry,
// which records where each scope nested in it was made: a leak message says
// what build registered straight on it, and lists the scopes it made (see
// registry.Handler), by name, with those places and what each owns. The scope
// is closed when VerifyRecycle returns, leak or no leak.
func VerifyRecycle[T io.Closer](t TestingT, n int, build func(prometheus.Registerer) (T, error)) {
	t.Helper()
	if build == nil {
		panic("registrytest: VerifyRecycle needs a build function")
	}
	if n < 1 {
		panic("registrytest: VerifyRecycle needs at least one round, not " + strconv.Itoa(n))
	}
	reg := prometheus.NewPedanticRegistry()
	scope := registry.NewScope(reg, registry.WithLeakReport(func(registry.Leak) {}))
	defer func() { _ = scope.Close() }() // it owns nothing unless a round failed, which is reported
	for round := 1; round <= n; round++ {
		if msg := recycleOnce(reg, scope, round, build); msg != "" {
			t.Errorf("registrytest: round %d of %d: %s", round, n, msg)
			return
		}
	}
}

// recycleOnce runs one round and describes what went wrong, or returns "".
func recycleOnce[T io.Closer](reg *prometheus.Registry, scope *registry.Scope, round int, build func(prometheus.Registerer) (T, error)) (msg string) {
	step := "build"
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprintf("%s panicked: %v", step, r)
		}
	}()
	v, err := build(scope)
	var are prometheus.AlreadyRegisteredError
	switch {
	case errors.As(err, &are) && round == 1:
		return fmt.Sprintf("build registered a metric twice: %v", err)
	case errors.As(err, &are):
		return fmt.Sprintf("build hit a registration left from an earlier round: %v", err)
	case err == nil && !nilness.IsNil(v):
		step = "close"
		if cerr := v.Close(); cerr != nil {
			return fmt.Sprintf("close: %v", cerr)
		}
	}
	p := tree(scope)
	if p.State != "open" {
		// Not what the test simulates: the rounds after this one would
		// register nothing, and prove nothing.
		return "the Registerer build was given is closed after the round; neither build nor a value's Close may close it"
	}
	left := leftovers(reg, nil)
	if left == "" {
		left = silent(scope, p)
	}
	if left == "" {
		left = unclosed(settled(scope, p))
	}
	if left != "" {
		outcome := "after a successful build and close"
		switch {
		case err != nil:
			outcome = fmt.Sprintf("after build failed with %q", err)
		case nilness.IsNil(v):
			outcome = "after build returned a nil value and no error, which is not closed"
		}
		return fmt.Sprintf("%s: %s%s", outcome, left, whose(owners(scope)))
	}
	return ""
}

// settled returns the ownership page of scope once the garbage collector
// has closed the scopes build dropped while they held nothing: p, if it
// lists no scope still open; else the page after a few collections that
// change nothing more.
func settled(scope *registry.Scope, p page) page {
	for range 20 {
		if unclosed(p) == "" {
			return p
		}
		runtime.GC()
		time.Sleep(time.Millisecond) // the cleanups start goroutines that close the scopes
		p = tree(scope)
	}
	return p
}

// whose says, from page, the ownership page of VerifyRecycle's own scope,
// what build registered straight on the Registerer it was given, and which
// scopes it made own what.
func whose(page string) string {
	// The first line is VerifyRecycle's scope: what it owns itself,
	// build registered straight on it.
	own, nested, _ := strings.Cut(page, "\n")
	var out string
	if _, names, ok := strings.Cut(own, " collector: "); ok {
		out += "; registered straight on the Registerer build was given: " + names
	} else if _, names, ok := strings.Cut(own, " collectors: "); ok {
		out += "; registered straight on the Registerer build was given: " + names
	}
	if nested != "" {
		out += "; owned by:\n" + strings.ReplaceAll(strings.TrimPrefix(nested, "  "), "\n  ", "\n")
	}
	return out
}
