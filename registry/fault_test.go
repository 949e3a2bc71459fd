package registry_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/multierr"

	"github.com/promscope/promscope/internal/describe"
	"github.com/promscope/promscope/registry"
)

// errFltInjected is what a fault-injecting parent's failing Register returns.
var errFltInjected = errors.New("injected register failure")

type fltKind int

const (
	fltPass       fltKind = iota
	fltFail               // Register returns errFltInjected and registers nothing
	fltClaim              // Register answers that a stranger holds the identity
	fltRefuse             // Unregister returns false and keeps the collector
	fltLieKept            // Unregister returns true and keeps the collector
	fltLieRemoved         // Unregister removes the collector and returns false
	fltBlock              // the call waits until released, then passes
)

// fltCall is one call to a fault-injecting parent: the operation, the metric
// names the collector describes at that moment, and how many calls of the
// same operation for the same names came before it.
type fltCall struct {
	op    string // "register" or "unregister"
	names string // comma-separated; "" for a collector describing nothing
	n     int
}

// fltFault is what the script makes of one call.
type fltFault struct {
	kind     fltKind
	stranger prometheus.Collector // for fltClaim
	entered  chan<- struct{}      // for fltBlock: told when the call waits
	release  <-chan struct{}      // for fltBlock: closed to let it go on
}

// fltParent is a parent Registerer that passes every call on to a pedantic
// registry unless its script injects a fault into that call, and logs what
// happened.
type fltParent struct {
	reg    *prometheus.Registry
	script func(fltCall) fltFault

	mu    sync.Mutex
	calls map[string]int // guarded by mu; by op and names
	log   []string       // guarded by mu
}

var _ prometheus.Registerer = (*fltParent)(nil)

func newFltParent(script func(fltCall) fltFault) *fltParent {
	return &fltParent{reg: prometheus.NewPedanticRegistry(), script: script, calls: map[string]int{}}
}

func (p *fltParent) fault(op string, c prometheus.Collector) (fltCall, fltFault) {
	call := fltCall{op: op, names: strings.Join(describe.Names(describe.Descs(c)), ",")}
	p.mu.Lock()
	key := op + " " + call.names
	call.n = p.calls[key]
	p.calls[key]++
	p.mu.Unlock()
	var f fltFault
	if p.script != nil {
		f = p.script(call)
	}
	if f.kind == fltBlock {
		f.entered <- struct{}{}
		<-f.release
	}
	return call, f
}

func (p *fltParent) note(call fltCall, outcome string) {
	p.mu.Lock()
	p.log = append(p.log, fmt.Sprintf("%s %s: %s", call.op, call.names, outcome))
	p.mu.Unlock()
}

// calledFor returns the log entries of op for the metric names.
func (p *fltParent) calledFor(op, names string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, l := range p.log {
		if strings.HasPrefix(l, op+" "+names+":") {
			out = append(out, l)
		}
	}
	return out
}

func (p *fltParent) Register(c prometheus.Collector) error {
	call, f := p.fault("register", c)
	switch f.kind {
	case fltFail:
		p.note(call, "failed")
		return errFltInjected
	case fltClaim:
		p.note(call, "claimed by a stranger")
		return prometheus.AlreadyRegisteredError{ExistingCollector: f.stranger, NewCollector: c}
	}
	err := p.reg.Register(c)
	p.note(call, fmt.Sprint(err))
	return err
}

func (p *fltParent) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := p.Register(c); err != nil {
			panic(err)
		}
	}
}

func (p *fltParent) Unregister(c prometheus.Collector) bool {
	call, f := p.fault("unregister", c)
	switch f.kind {
	case fltRefuse:
		p.note(call, "refused")
		return false
	case fltLieKept:
		p.note(call, "kept, said true")
		return true
	case fltLieRemoved:
		p.note(call, fmt.Sprintf("removed %v, said false", p.reg.Unregister(c)))
		return false
	}
	ok := p.reg.Unregister(c)
	p.note(call, fmt.Sprint(ok))
	return ok
}

func fltGauge(name string, value float64) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: "Fault test gauge " + name + "."})
	g.Set(value)
	return g
}

// fltOther is the text of the collector another owner registered directly on
// the registry: whatever fails, it must stay.
const fltOther = `
# HELP other Fault test gauge other.
# TYPE other gauge
other 42
`

// fltHolds reports whether the registry still holds a registration with the
// descriptors of the gauge name: an equal gauge then fails to register.
func fltHolds(t *testing.T, reg *prometheus.Registry, name string) bool {
	t.Helper()
	g := fltGauge(name, 0)
	err := reg.Register(g)
	if err == nil {
		reg.Unregister(g)
		return false
	}
	var are prometheus.AlreadyRegisteredError
	if !errors.As(err, &are) {
		t.Fatalf("registering an equal %s: %v", name, err)
	}
	return true
}

// fltUnregisterErrors checks that every error combined in err is an
// UnregisterError wrapping ErrNotRegistered, and returns the metrics each
// names.
func fltUnregisterErrors(t *testing.T, err error) []string {
	t.Helper()
	var out []string
	for _, e := range multierr.Errors(err) {
		var ue *registry.UnregisterError
		if !errors.As(e, &ue) || !errors.Is(e, registry.ErrNotRegistered) {
			t.Errorf("error %q is not an UnregisterError wrapping ErrNotRegistered", e)
			continue
		}
		out = append(out, strings.Join(ue.Metrics, ","))
	}
	return out
}

func TestFaultyParent(t *testing.T) {
	// onB injects f into the calls for metric b that match op and, when
	// n >= 0, the call's number (0 is b's registration, 1 the probe
	// that Close or Unregister makes first).
	onB := func(op string, n int, f fltFault) func(fltCall) fltFault {
		return func(c fltCall) fltFault {
			if c.op == op && c.names == "b" && (n < 0 || c.n == n) {
				return f
			}
			return fltFault{}
		}
	}
	stranger := fltGauge("b", 13)
	tests := []struct {
		name string
		give func(fltCall) fltFault
		// wantRegisterErr is what Register(b) returns.
		wantRegisterErr error
		// wantErrs names the UnregisterErrors that removing b reports;
		// wantInjected says they also wrap the parent's own error.
		wantErrs     []string
		wantInjected bool
		// wantHeld says the registry still holds b's identity afterwards:
		// only a silent wrapper, which exposes nothing.
		wantHeld bool
	}{
		{
			name:            "Register of b fails",
			give:            onB("register", 0, fltFault{kind: fltFail}),
			wantRegisterErr: errFltInjected,
		},
		{
			name:         "the probe for b fails",
			give:         onB("register", 1, fltFault{kind: fltFail}),
			wantErrs:     []string{"b"},
			wantInjected: true,
			wantHeld:     true,
		},
		{
			name:     "the probe for b says a stranger holds it",
			give:     onB("register", 1, fltFault{kind: fltClaim, stranger: stranger}),
			wantErrs: []string{"b"},
			wantHeld: true,
		},
		{
			name:     "Unregister of b refuses",
			give:     onB("unregister", -1, fltFault{kind: fltRefuse}),
			wantErrs: []string{"b"},
			wantHeld: true,
		},
		{
			name:     "Unregister of b says true and keeps it",
			give:     onB("unregister", -1, fltFault{kind: fltLieKept}),
			wantHeld: true,
		},
		{
			name:     "Unregister of b removes it and says false",
			give:     onB("unregister", -1, fltFault{kind: fltLieRemoved}),
			wantErrs: []string{"b"},
		},
		{
			name: "nothing fails",
		},
	}
	for _, where := range []string{"the scope", "a child", "a grandchild"} {
		for _, tt := range tests {
			for _, how := range []string{"Close", "Unregister"} {
				if tt.wantRegisterErr != nil && how == "Unregister" {
					continue
				}
				t.Run(fmt.Sprintf("%s reports it when %s in %s, and removes the rest", how, tt.name, where), func(t *testing.T) {
					p := newFltParent(tt.give)
					p.reg.MustRegister(fltGauge("other", 42))
					root := registry.NewScope(p)
					s := root
					switch where {
					case "a child":
						s = root.Child()
					case "a grandchild":
						s = root.Child().Child()
					}
					a, b, c := fltGauge("a", 1), fltGauge("b", 2), fltGauge("c", 3)
					if err := root.Register(a); err != nil {
						t.Fatalf("Register(a) = %v", err)
					}
					err := s.Register(b)
					if err != tt.wantRegisterErr { //nolint:errorlint // the parent's error must come back unchanged
						t.Fatalf("Register(b) = %v, want %v", err, tt.wantRegisterErr)
					}
					if err := s.Register(c); err != nil {
						t.Fatalf("Register(c) = %v", err)
					}
					wantLen := 3
					if tt.wantRegisterErr != nil {
						wantLen = 2
					}
					if got := root.Len(); got != wantLen {
						t.Errorf("Len() = %d, want %d", got, wantLen)
					}

					var errs []string
					var closeErr error
					if how == "Unregister" {
						ok := s.Unregister(b)
						if ok != (len(tt.wantErrs) == 0) {
							t.Errorf("Unregister(b) = %v, want %v", ok, len(tt.wantErrs) == 0)
						}
						if ok {
							errs = nil
						} else {
							errs = []string{"b"}
						}
						if got := root.Len(); got != 2 {
							t.Errorf("Len() after Unregister(b) = %d, want 2: b is forgotten either way", got)
						}
						closeErr = root.Close()
						if closeErr != nil {
							t.Errorf("Close after Unregister(b) = %v, want nil", closeErr)
						}
					} else {
						closeErr = root.Close()
						errs = fltUnregisterErrors(t, closeErr)
						if got := errors.Is(closeErr, errFltInjected); got != tt.wantInjected {
							t.Errorf("errors.Is(Close(), injected) = %v, want %v (%v)", got, tt.wantInjected, closeErr)
						}
					}
					if !slices.Equal(errs, tt.wantErrs) {
						t.Errorf("failures reported for %q, want %q (%v)", errs, tt.wantErrs, closeErr)
					}

					// Nothing of the scope's is exposed, b included, and the
					// other owner's gauge is untouched.
					if err := testutil.GatherAndCompare(p.reg, strings.NewReader(fltOther)); err != nil {
						t.Error(err)
					}
					if got := root.Len(); got != 0 {
						t.Errorf("Len() after Close = %d, want 0", got)
					}
					for _, name := range []string{"a", "c"} {
						if fltHolds(t, p.reg, name) {
							t.Errorf("the registry still holds %s", name)
						}
					}
					if got := fltHolds(t, p.reg, "b"); got != tt.wantHeld {
						t.Errorf("the registry holds b: %v, want %v", got, tt.wantHeld)
					}
					if got := p.calledFor("unregister", "other"); len(got) > 0 {
						t.Errorf("the scope unregistered the other owner's gauge: %q", got)
					}
				})
			}
		}
	}
}

// TestFaultyParentNeverRemovesAnotherOwners puts an outsider's equal gauge in
// place of the scope's, then makes the parent misbehave: the scope must not
// unregister the outsider's gauge, whatever the parent says.
func TestFaultyParentNeverRemovesAnotherOwners(t *testing.T) {
	tests := []struct {
		name string
		give fltFault
	}{
		{name: "the parent answers truthfully", give: fltFault{}},
		{name: "the parent's probe fails", give: fltFault{kind: fltFail}},
		{name: "the parent claims a stranger holds it", give: fltFault{kind: fltClaim, stranger: fltGauge("b", 0)}},
	}
	for _, tt := range tests {
		t.Run("Close leaves the outsider's gauge when "+tt.name, func(t *testing.T) {
			var replaced bool
			var mu sync.Mutex
			p := newFltParent(func(c fltCall) fltFault {
				mu.Lock()
				defer mu.Unlock()
				if replaced && c.op == "register" && c.names == "b" {
					return tt.give
				}
				return fltFault{}
			})
			scope := registry.NewScope(p)
			scope.MustRegister(fltGauge("b", 1))
			if !p.reg.Unregister(fltGauge("b", 0)) {
				t.Fatal("the outsider could not unregister b")
			}
			p.reg.MustRegister(fltGauge("b", 7))
			mu.Lock()
			replaced = true
			mu.Unlock()

			err := scope.Close()
			if got := fltUnregisterErrors(t, err); !slices.Equal(got, []string{"b"}) {
				t.Errorf("Close reported %q, want one UnregisterError for b (%v)", got, err)
			}
			if got := p.calledFor("unregister", "b"); len(got) > 0 {
				t.Errorf("Close unregistered b, which was the outsider's: %q", got)
			}
			want := "# HELP b Fault test gauge b.\n# TYPE b gauge\nb 7\n"
			if err := testutil.GatherAndCompare(p.reg, strings.NewReader(want)); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestFaultyParentBlocks blocks the parent in the middle of a Close and
// shows that nothing else waits for it that need not, and that whoever
// depends on the Close does.
func TestFaultyParentBlocks(t *testing.T) {
	t.Run("a Close blocked in the parent holds no lock others need, and the parent scope's Close waits for it", func(t *testing.T) {
		entered, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		p := newFltParent(func(c fltCall) fltFault {
			switch {
			case c.op == "unregister" && c.names == "b":
				return fltFault{kind: fltBlock, entered: entered, release: release}
			case c.op == "unregister" && c.names == "x":
				// The root's Close is under way: let the child's go on.
				once.Do(func() { close(release) })
			}
			return fltFault{}
		})
		p.reg.MustRegister(fltGauge("other", 42))
		root := registry.NewScope(p)
		child := root.Child()
		sibling := root.Child()
		last := root.Child() // closed first by the root
		root.MustRegister(fltGauge("a", 1))
		child.MustRegister(fltGauge("b", 2))
		sibling.MustRegister(fltGauge("c", 3))
		last.MustRegister(fltGauge("x", 9))

		childDone := make(chan error, 1)
		go func() { childDone <- child.Close() }()
		<-entered

		// While the child's Close waits in the parent: the child is
		// closed and empty, its sibling and the root work as usual,
		// and the registry gathers.
		if err := child.Register(fltGauge("d", 4)); !errors.Is(err, registry.ErrClosed) {
			t.Errorf("Register on the closing child = %v, want ErrClosed", err)
		}
		if got := child.Len(); got != 0 {
			t.Errorf("closing child Len() = %d, want 0", got)
		}
		if err := sibling.Register(fltGauge("e", 5)); err != nil {
			t.Errorf("sibling Register = %v", err)
		}
		if got := root.Len(); got != 4 {
			t.Errorf("root Len() = %d, want 4 (a, c, e and x)", got)
		}
		if _, err := p.reg.Gather(); err != nil {
			t.Errorf("Gather = %v", err)
		}
		if _, err := root.Gather(); err != nil {
			t.Errorf("root Gather = %v", err)
		}

		// The root owns the child: its Close returns only once the
		// child's has, b included.
		if err := root.Close(); err != nil {
			t.Errorf("root Close = %v", err)
		}
		if err := testutil.GatherAndCompare(p.reg, strings.NewReader(fltOther)); err != nil {
			t.Errorf("right after the root's Close: %v", err)
		}
		if fltHolds(t, p.reg, "b") {
			t.Error("the root's Close returned while its child's b was still registered")
		}
		if err := <-childDone; err != nil {
			t.Errorf("child Close = %v", err)
		}
	})

	t.Run("a scope on a scope whose Close is blocked in the parent lets that Close finish before it lets go of its collector", func(t *testing.T) {
		entered, release := make(chan struct{}), make(chan struct{})
		p := newFltParent(func(c fltCall) fltFault {
			if c.op == "unregister" && c.names == "b" {
				return fltFault{kind: fltBlock, entered: entered, release: release}
			}
			return fltFault{}
		})
		outer := registry.NewScope(p)
		registering := make(chan struct{}, 2)
		inner := registry.NewScope(fltSpy{Registerer: outer, registering: registering})
		inner.MustRegister(fltGauge("b", 2))
		<-registering

		outerDone := make(chan error, 1)
		go func() { outerDone <- outer.Close() }()
		<-entered // the outer Close is taking b back, in the parent
		innerDone := make(chan error, 1)
		go func() { innerDone <- inner.Close() }()
		<-registering // the inner Close asks the outer scope about b
		close(release)
		if err := <-outerDone; err != nil {
			t.Errorf("outer Close = %v, want nil: b was the outer scope's to take back", err)
		}
		if err := <-innerDone; err != nil {
			t.Errorf("inner Close = %v, want nil", err)
		}
		if fltHolds(t, p.reg, "b") {
			t.Error("the registry still holds b")
		}
	})

	t.Run("a Register blocked in the parent completes before a racing Close, which removes it", func(t *testing.T) {
		entered, release := make(chan struct{}), make(chan struct{})
		p := newFltParent(func(c fltCall) fltFault {
			if c.op == "register" && c.names == "b" && c.n == 0 {
				return fltFault{kind: fltBlock, entered: entered, release: release}
			}
			return fltFault{}
		})
		scope := registry.NewScope(p)
		registered := make(chan error, 1)
		go func() { registered <- scope.Register(fltGauge("b", 2)) }()
		<-entered
		closed := make(chan error, 1)
		go func() { closed <- scope.Close() }()
		close(release)
		if err := <-registered; err != nil {
			t.Errorf("Register = %v, want nil: it was in the parent before Close began", err)
		}
		if err := <-closed; err != nil {
			t.Errorf("Close = %v", err)
		}
		if fltHolds(t, p.reg, "b") {
			t.Error("the registry still holds b")
		}
	})
}

// fltSpy passes every call on to a parent Registerer, and tells when a
// Register starts.
type fltSpy struct {
	prometheus.Registerer
	registering chan<- struct{}
}

func (s fltSpy) Register(c prometheus.Collector) error {
	s.registering <- struct{}{}
	return s.Registerer.Register(c)
}

// TestFaultyParentUnderNestedScopes runs a scope on a scope on a faulty
// parent: the inner scope's failure reaches the outer scope's caller once,
// and nothing is left to report or expose.
func TestFaultyParentUnderNestedScopes(t *testing.T) {
	for _, kind := range []fltKind{fltRefuse, fltLieRemoved} {
		t.Run(fmt.Sprintf("an outer Close reports fault %d in the parent, and the inner Close then has nothing to do", kind), func(t *testing.T) {
			p := newFltParent(func(c fltCall) fltFault {
				if c.op == "unregister" && c.names == "b" {
					return fltFault{kind: kind}
				}
				return fltFault{}
			})
			p.reg.MustRegister(fltGauge("other", 42))
			inner := registry.NewScope(p)
			outer := registry.NewScope(inner)
			outer.MustRegister(fltGauge("a", 1), fltGauge("b", 2))
			err := outer.Close()
			if got := fltUnregisterErrors(t, err); !slices.Equal(got, []string{"b"}) {
				t.Errorf("outer Close reported %q, want one UnregisterError for b (%v)", got, err)
			}
			if got := inner.Len(); got != 0 {
				t.Errorf("inner Len() = %d, want 0", got)
			}
			if err := inner.Close(); err != nil {
				t.Errorf("inner Close = %v, want nil", err)
			}
			if err := testutil.GatherAndCompare(p.reg, strings.NewReader(fltOther)); err != nil {
				t.Error(err)
			}
			if fltHolds(t, p.reg, "a") {
				t.Error("the registry still holds a")
			}
		})
	}
}
