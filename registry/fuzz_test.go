package registry_test

// FuzzScope checks package registry against a model of docs/GUARANTEES.md.
//
// The fuzz input is a program: a sequence of operations a user of the
// package, or an outsider working straight on a registry, can perform (see
// the op constants). The test runs each operation on the real scopes and on
// the model, and after every one compares:
//
//   - the result of the operation (Register's error, MustRegister's panic,
//     Unregister's bool or panic, Close's error or panic) with what the model
//     derives from the rules;
//   - what each registry exposes (Gather, exact series and values) with the
//     model's registry (rule 22);
//   - each scope's Len and Gather with what the model says it owns (rule 19);
//   - Handler's JSON of each tree, and of the Index that the trees made
//     with WithIndex are listed in, with what the model says each scope
//     owns, its state and where it was made (rules 24, 25).
//
// The model keeps its own plain state and nothing else:
//
//   - mRegistry is a prometheus.Registry as client_golang's source defines it
//     (collector identities, descriptor IDs, the label names and help of each
//     metric name, which it never forgets, and the collectors it cannot
//     unregister), pedantic as the test's registries are: a series that a
//     checked collector collects undescribed fails the Gather and is
//     dropped. Each entry it holds says whose it is: a scope's
//     registration (the collector itself, or a record of the scope's), an
//     outsider's, or a registration a faulty parent kept after the scope let go
//     of it (a stuck registration).
//   - mScope is a scope: its state (open, closing, closed), the view levels
//     it was made under (its own options and those of the scopes and
//     client_golang wrappers around it), and the list of what it owns, in
//     order: registrations, nested scopes and DeleteOnClose calls.
//   - mReg is one registration: the user's collector, the client_golang
//     wrappers it came through, what the collector described then (one
//     collector's Describe changes, opShift, and a scope's changes with what
//     it owns), its identity before the view
//     and as the registry sees it, and whether the scope still owns it.
//   - mVia is the parent of a tree made on a Registerer of the user's own
//     that forwards to client_golang wrappers of a scope (rule 17). To the
//     tree it is a registry; to the scope behind, a user registering through
//     the wrappers. So the model applies the rules twice: a registration of
//     the tree is the scope behind's registration of what the tree's scope
//     registers in its place (the collector itself, or a record of the
//     scope's), and the tree asks that scope's rules who holds an identity.
//   - The model keeps the series of every vector itself.
//
// Every expectation comes from that state through the rules: each function
// of the model cites the rule it applies. The test asks the code only for
// what it checks.
//
// Where the contract leaves a choice open, the model accepts each reading
// and says so in a comment (search for "either").
//
// The seeds are stories, each told in a comment; the last twenty are the
// stories in which the model first disagreed with the code.

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/multierr"

	"github.com/promscope/promscope/internal/describe"
	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/registry"
)

// maxProgram bounds a fuzz input, so that one run stays short.
const maxProgram = 512

func FuzzScope(f *testing.F) {
	for _, s := range seeds {
		f.Add(s.program)
	}
	f.Fuzz(func(t *testing.T, program []byte) {
		if len(program) > maxProgram {
			program = program[:maxProgram]
		}
		w := newWorld(t)
		// A program that hangs is a finding too: the fuzzer would wait for
		// it for ever, so the watchdog crashes it with every goroutine's
		// stack.
		watchdog := time.AfterFunc(hangAfter, func() {
			buf := make([]byte, 1<<20)
			panic(fmt.Sprintf("FuzzScope hangs after:\n\t%s\n\n%s",
				strings.Join(w.traceCopy(), "\n\t"), buf[:runtime.Stack(buf, true)]))
		})
		defer watchdog.Stop()
		w.run(program)
	})
}

// hangAfter is how long one program may run.
const hangAfter = 20 * time.Second

// ---- the program ----

// The operations of a program. Each reads its operands from the bytes that
// follow it; a byte is taken modulo the number of choices, and a program
// that ends early reads zeros.
const (
	opRoot             = iota // kind (bit 7: WithIndex), [wrappers | scope, wrappers], options: an outermost scope
	opNest                    // scope, how, [wrappers], options: a nested scope
	opRegister                // scope, chain, collector, mode, fault
	opMustTwo                 // scope, chain, collector, collector: MustRegister(c1, c2)
	opUnregister              // scope, chain, collector, fault
	opClose                   // scope, fault, which
	opOutUnregister           // scope, chain, collector: an outsider unregisters
	opOutRegister             // scope, chain, collector: an outsider registers
	opSeries                  // vector, labels, amount: a series is added to
	opDelete                  // scope, labels, vectors: DeleteOnClose
	opRegisterScope           // scope, chain, scope, mode: a scope of the tree registered as a collector
	opRegisterRegistry        // scope, chain, mode: the registry registered as a collector
	opShift                   // what: the shifty collector's Describe changes
	nOps
)

// The kinds of outermost scope (opRoot).
const (
	onReg     = iota // a pedantic *prometheus.Registry
	onNil            // nil: a private registry
	onWrapped        // 1 or 2 client_golang wrappers of the registry
	onParent         // a promtest.Parent over a pedantic registry, which injects faults
	onScope          // a Registerer of the user's own that forwards to 0 to 2 client_golang wrappers of a scope
	onNowhere        // a client_golang wrapper of a nil Registerer, which keeps nothing
	onDiscard        // a Registerer of the user's own that accepts everything and keeps nothing
	nRoots
)

// How a nested scope is made (opNest).
const (
	byChild    = iota // s.Child(opts...)
	byNewScope        // registry.NewScope(s, opts...)
	byWrappers        // registry.NewScope(wrappers of s, opts...)
	nHows
)

// Registration modes (opRegister).
const (
	modeRegister = iota
	modeMust
	nModes
)

// Faults (opRegister, opUnregister, opClose): what the faulty parent does
// with the calls of one operation about the chosen metric names. They apply
// only in a tree on the parent, and only where the model can tell which
// calls the code must make (see the op functions); elsewhere a fault byte
// means nothing.
const (
	noFault = iota
	fault1      // Register: Fail;  Unregister, Close: Refuse
	fault2      // Register: Claim; Unregister, Close: LieKept
	fault3      // Register: ClaimNobody; Unregister, Close: LieRemoved
	fault4      // Register: PanicAfter; Unregister, Close: Panicking
	fault5      // Register: Must; Unregister: PanicAfter; Close: Fail, of the question's Register
	fault6      // Close: Claim, of the question's Register
	fault7      // Close: ClaimNobody, of the question's Register
	fault8      // Close: Must, of the question's Register
	nFaults = 9 // 5 to 8: no fault, but where said
)

// The collectors a program registers: indexes into world.pool, then a nil
// and a typed nil.
const (
	cG0a     = iota // *Gauge g0, 1
	cG0b            // *Gauge g0, 2: equal to g0a, not the same
	cG1a            // *Gauge g1, 3
	cValue          // valueGauge{g0a}: a comparable value, equal to g0a, not the same
	cGauges0        // promtest.Gauges{h0a, h1a}: a slice value, new each time
	cGauges1        // promtest.Gauges{h0b, h1b}: equal to cGauges0, not the same
	cH0a            // *Gauge h0, 5: the first gauge of cGauges0 alone
	cVec0a          // *CounterVec v0 (tenant, link)
	cVec0b          // *CounterVec v0: equal to cVec0a
	cU0             // *promtest.Unchecked u0, 9
	cU1             // *promtest.Unchecked u1, 10
	cK0             // *Gauge k0{l0="k"}, 11: carries a constant label
	cOdd            // odd{o0, 12}: a value holding a function, a NaN and itself, new each time
	cShift          // *shifty s0: describes what opShift last said (g0 at first), collects nothing
	cOther          // *registry.Scope {l6="t"} of a tree of its own, holding a g1 of 14
	nPool
	cNil      = nPool     // a nil Collector
	cTypedNil = nPool + 1 // a (*prometheus.CounterVec)(nil)
	cZero     = nPool + 2 // a &prometheus.GaugeVec{}, which no New function made
	nColls    = nPool + 3
)

// The vectors opSeries and opDelete name.
const (
	vVec0a  = iota // the vector cVec0a
	vVec0b         // the vector cVec0b
	vShared        // the bystander's GaugeVec "shared" (tenant)
	nVecs
	vCurried = nVecs // cVec0a curried with link="x": opDelete only
)

// ownVecs are the Deleters of the user's own that opDelete passes: the
// curried vector behind a Deleter that is no Collector, and the curried and
// shared vectors behind one that is, whose Describe DeleteOnClose must not
// call (rule 18).
const (
	ownBlind = iota
	ownCurried
	ownShared
)

var (
	labelValues   = []string{"x", "y"}
	scopePrefixes = []string{"a_", "b_"}
	wrapPrefixes  = []string{"p_", "q_"}
	tenants       = []string{"a", "b"}
	links         = []string{"x", "y"}
)

// input reads a program.
type input struct {
	b []byte
	i int
}

func (in *input) next() int {
	if in.i >= len(in.b) {
		return 0
	}
	v := in.b[in.i]
	in.i++
	return int(v)
}

func (in *input) n(k int) int { return in.next() % k }

// ---- views: prefixes and constant labels ----

type pair struct{ name, value string }

// A wrap is one level of prefix and constant labels: the options of one
// scope, or one client_golang wrapper (which has a prefix or labels, not
// both).
type wrap struct {
	prefix string
	labels []pair // sorted by name, each name once
	isLbl  bool   // a WrapRegistererWith (possibly with no labels)
}

// chainsEqual reports whether two stacks of client_golang wrappers (first
// applied first) are the same wrappers in the sense of "the same collector"
// (Words): "with the same prefix and labels ..., however deeply stacked",
// so what counts is the prefix and the labels they add, not how many
// wrappers add them.
func chainsEqual(a, b []wrap) bool { return chainKey(a) == chainKey(b) }

func chainKey(ws []wrap) string {
	var prefix string
	var labels []string
	for _, w := range ws {
		prefix = w.prefix + prefix
		for _, p := range w.labels {
			labels = append(labels, p.name+"="+p.value)
		}
	}
	slices.Sort(labels)
	return prefix + "{" + strings.Join(labels, ",") + "}"
}

func (w wrap) labelMap() prometheus.Labels {
	if !w.isLbl && len(w.labels) == 0 {
		return nil
	}
	m := prometheus.Labels{}
	for _, p := range w.labels {
		m[p.name] = p.value
	}
	return m
}

// on wraps r in the client_golang wrapper w stands for.
func (w wrap) on(r prometheus.Registerer) prometheus.Registerer {
	if w.isLbl {
		return prometheus.WrapRegistererWith(w.labelMap(), r)
	}
	return prometheus.WrapRegistererWithPrefix(w.prefix, r)
}

func (w wrap) String() string {
	if w.isLbl {
		return fmt.Sprintf("WrapRegistererWith(%s, ·)", labelsString(w.labels))
	}
	return fmt.Sprintf("WrapRegistererWithPrefix(%q, ·)", w.prefix)
}

func labelsString(ls []pair) string {
	parts := make([]string, len(ls))
	for i, p := range ls {
		parts[i] = fmt.Sprintf("%q: %q", p.name, p.value)
	}
	return "prometheus.Labels{" + strings.Join(parts, ", ") + "}"
}

// selector writes ps, in their order, as a series selector's braces:
// {a="x",b="y"}.
func selector(ps []pair) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = fmt.Sprintf("%s=%q", p.name, p.value)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func pairMap(ps []pair) map[string]string {
	m := map[string]string{}
	for _, p := range ps {
		m[p.name] = p.value
	}
	return m
}

func sortedPairs(m map[string]string) []pair {
	out := make([]pair, 0, len(m))
	for _, n := range slices.Sorted(maps.Keys(m)) {
		out = append(out, pair{n, m[n]})
	}
	return out
}

// A view is the composition of the levels from the outermost scope in
// (Words: view; rule 15): the prefixes concatenated, outermost first, and
// the labels of every level; clash names the labels that two levels set
// (rules 1 and 16).
type view struct {
	prefix string
	labels map[string]string
	clash  []string
}

func compose(levels []wrap) view {
	v := view{labels: map[string]string{}}
	for _, l := range levels {
		v.prefix += l.prefix
		for _, p := range l.labels {
			if _, ok := v.labels[p.name]; ok && !slices.Contains(v.clash, p.name) {
				v.clash = append(v.clash, p.name)
			}
			v.labels[p.name] = p.value
		}
	}
	return v
}

// none reports whether the view is empty: the scope has no view (Words).
func (v view) none() bool { return v.prefix == "" && len(v.labels) == 0 }

// wraps returns the view as client_golang wrappers: rule 2 has the registry
// decide as for WrapRegistererWithPrefix(prefix, WrapRegistererWith(labels,
// registry)), which applies the labels first.
func (v view) wraps() []wrap {
	var ws []wrap
	if len(v.labels) > 0 {
		ws = append(ws, wrap{labels: sortedPairs(v.labels), isLbl: true})
	}
	if v.prefix != "" {
		ws = append(ws, wrap{prefix: v.prefix})
	}
	return ws
}

// ---- what collectors describe and collect ----

// mDesc is a descriptor as client_golang builds it.
type mDesc struct {
	name, help string
	consts     map[string]string
	vars       []string
	bad        []string // labels a wrapper found set already: the descriptor is invalid
	zero       bool     // the last wrapper found a label set already: its ID is 0
}

// id is what a registry identifies a descriptor by: its name and the values
// of its constant labels in the order of their names (Words: identity).
func (d mDesc) id() string {
	parts := []string{d.name}
	for _, n := range slices.Sorted(maps.Keys(d.consts)) {
		parts = append(parts, d.consts[n])
	}
	return strings.Join(parts, "\xff")
}

// dim is what must agree between all descriptors of one name: the help and
// the label names.
func (d mDesc) dim() string {
	names := slices.Collect(maps.Keys(d.consts))
	for _, v := range d.vars {
		names = append(names, "$"+v)
	}
	slices.Sort(names)
	return d.help + "\xff" + strings.Join(names, "\xff")
}

// wrapDescs applies wrappers to descriptors, first to last, as client_golang's
// wrapping collector does: a label already set makes the descriptor invalid,
// with ID 0, the name and labels it had; the next wrapper wraps it again
// (giving it an ID), and the first error stays.
func wrapDescs(ds []mDesc, ws ...wrap) []mDesc {
	out := make([]mDesc, len(ds))
	for i, d := range ds {
		d.consts = maps.Clone(d.consts)
		for _, w := range ws {
			var clash []string
			for _, p := range w.labels {
				if _, ok := d.consts[p.name]; ok {
					clash = append(clash, p.name)
				}
			}
			if clash != nil {
				if d.bad == nil {
					d.bad = clash
				}
				d.zero = true
				continue
			}
			d.zero = false
			if d.consts == nil {
				d.consts = map[string]string{}
			}
			for _, p := range w.labels {
				d.consts[p.name] = p.value
			}
			d.name = w.prefix + d.name
		}
		out[i] = d
	}
	return out
}

// identity is the key of what descs describe: "" for nothing (unchecked),
// "!" for an invalid descriptor, else the sorted descriptor IDs.
func identity(ds []mDesc) string {
	if len(ds) == 0 {
		return ""
	}
	var ids []string
	for _, d := range ds {
		if d.bad != nil {
			return "!"
		}
		ids = append(ids, d.id())
	}
	slices.Sort(ids)
	return strings.Join(slices.Compact(ids), ";")
}

// unregisterKey is the identity prometheus.Registry.Unregister computes: it
// ignores errors, and a descriptor with ID 0 adds nothing.
func unregisterKey(ds []mDesc) string {
	var ids []string
	for _, d := range ds {
		if !d.zero {
			ids = append(ids, d.id())
		}
	}
	slices.Sort(ids)
	return strings.Join(slices.Compact(ids), ";")
}

func descNames(ds []mDesc) []string {
	var names []string
	for _, d := range ds {
		names = append(names, d.name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// mSeries is one series a collector collects.
type mSeries struct {
	name   string
	labels map[string]string
	bad    bool     // a label set twice: a registry's Gather drops it and fails
	undesc bool     // a checked collector collects it undescribed: a pedantic registry drops it and fails, after it has taken its place
	vars   []string // its variable labels; the others are its descriptor's constant labels
	value  float64
}

// descID is the ID of the descriptor s is collected with (Words: identity).
func (s mSeries) descID() string {
	consts := maps.Clone(s.labels)
	for _, v := range s.vars {
		delete(consts, v)
	}
	return mDesc{name: s.name, consts: consts}.id()
}

func (s mSeries) key() string {
	var parts []string
	for _, p := range sortedPairs(s.labels) {
		parts = append(parts, fmt.Sprintf("%s=%q", p.name, p.value))
	}
	return s.name + "{" + strings.Join(parts, ",") + "}"
}

func wrapSeries(ss []mSeries, ws ...wrap) []mSeries {
	out := make([]mSeries, len(ss))
	for i, s := range ss {
		s.labels = maps.Clone(s.labels)
		if s.labels == nil {
			s.labels = map[string]string{}
		}
		for _, w := range ws {
			for _, p := range w.labels {
				if _, ok := s.labels[p.name]; ok {
					s.bad = true
				}
				s.labels[p.name] = p.value
			}
			s.name = w.prefix + s.name
		}
		out[i] = s
	}
	return out
}

// object is one collector of the pool, as the model knows it.
type object struct {
	name  string                          // how a program names it
	get   func() prometheus.Collector     // the collector; a new value each time for value types
	descs []mDesc                         // what it describes
	fixed []mSeries                       // what it collects, if that never changes
	vec   *mVec                           // or the vector whose series the model keeps
	same  func(prometheus.Collector) bool // whether c is this very collector (Words: the same collector)
	fn    bool                            // its values hold a function, which reflect.DeepEqual never calls equal
	rec   *mReg                           // or what the scope of rec, in a tree on a forwarder, registers in its place (rule 6)
	hub   *mTree                          // or what a tree on a forwarder registers in its parent for its unchecked collectors
	dyn   func() []mSeries                // or what it collects now: a scope as a collector (rule 19), whose Describe changes with what it owns
	of    *mScope                         // that scope
	zero  bool                            // a zero vector of client_golang's, which Register refuses (rule 1)
}

func (o *object) series() []mSeries {
	switch {
	case o.rec != nil:
		// Rule 13: a registration taken back exposes nothing.
		if !o.rec.live {
			return nil
		}
		return wrapSeries(o.rec.base.series(), slices.Concat(o.rec.chain, o.rec.scope.view.wraps())...)
	case o.hub != nil:
		// Rule 2: the tree's unchecked collectors reach its parent
		// through one collector of the tree's.
		var out []mSeries
		for _, s := range o.hub.scopes {
			for _, st := range s.steps {
				if r := st.reg; r != nil && r.live && r.pre == "" {
					out = append(out, wrapSeries(r.base.series(), slices.Concat(r.chain, s.view.wraps())...)...)
				}
			}
		}
		return out
	case o.dyn != nil:
		return o.dyn()
	case o.vec != nil:
		return o.vec.series()
	}
	return o.fixed
}

// shifts reports whether what o describes may change while it is
// registered, and what it collects with it: a scope of the program's, as
// it is or behind the records of scopes.
func (o *object) shifts() bool {
	for ; o != nil; o = o.rec.base {
		if o.dyn != nil {
			return true
		}
		if o.rec == nil {
			return false
		}
	}
	return false
}

// recordObject is what r's scope, which has a view and is in a tree on a
// forwarder, registers in the forwarder in r's place (rule 6): a collector
// that describes what r describes through the view, collects it until the
// scope takes r back, and whose Unwrap returns the user's collector (nil
// from then on).
func recordObject(r *mReg) *object {
	return &object{
		name:  fmt.Sprintf("%s's record of %s", r.scope.path, r.base.name),
		descs: wrapDescs(r.given, slices.Concat(r.chain, r.scope.view.wraps())...),
		rec:   r,
		same: func(c prometheus.Collector) bool {
			u, ok := c.(interface{ Unwrap() prometheus.Collector })
			if !ok {
				return false
			}
			got := u.Unwrap()
			if !r.live {
				return got == nil
			}
			// Rule 6: the user's collector, behind the records of the
			// scopes it came through.
			user := r.base.user()
			return got != nil && user != nil && user.same(got) && strings.Contains(fmt.Sprint(c), r.scope.str())
		},
	}
}

// user is the collector whose registration o is, as rule 3 names it: the
// user's collector behind the records of scopes; nil for a record its scope
// has taken back, which is no collector of anybody's.
func (o *object) user() *object {
	for o != nil && o.rec != nil {
		if !o.rec.live {
			return nil
		}
		o = o.rec.base
	}
	return o
}

// sameObject reports whether a and b are the same collector (Words): the
// same object, or the records of two scopes on forwarders of the same
// collector through the same wrappers and equal views, until either scope
// takes its registration back.
func sameObject(a, b *object) bool {
	if a == b {
		return true
	}
	if a.rec == nil || b.rec == nil || !a.rec.live || !b.rec.live {
		return false
	}
	x, y := a.rec, b.rec
	return sameObject(x.base, y.base) && chainsEqual(x.chain, y.chain) && chainsEqual(x.scope.view.wraps(), y.scope.view.wraps())
}

// mVec is a vector: the model keeps its series.
type mVec struct {
	obj     string // how a program names it
	name    string
	vars    []string
	curried []string // the labels it was curried with: no deletion matches them
	blind   bool     // a Deleter that is no Collector: Close cannot see what it left (rule 18)
	own     bool     // a Deleter of the user's own: DeleteOnClose does not ask for its labels (rule 18)
	real    interface{ DeletePartialMatch(prometheus.Labels) int }
	add     func(values []string, v float64)
	state   map[string]float64 // by label values joined with "\xff"
}

func (v *mVec) series() []mSeries {
	var out []mSeries
	for _, k := range slices.Sorted(maps.Keys(v.state)) {
		values := strings.Split(k, "\xff")
		ls := map[string]string{}
		for i, n := range v.vars {
			ls[n] = values[i]
		}
		out = append(out, mSeries{name: v.name, labels: ls, vars: v.vars, value: v.state[k]})
	}
	return out
}

// deleteMatching deletes every series whose labels include all of labels,
// where a label the vector was curried with matches nothing (rule 18), and
// returns, if it deleted none, the series that carry all of labels all the
// same, which Close reports.
func (v *mVec) deleteMatching(labels []pair) (left []string) {
	deleted := false
	for k := range v.state {
		if v.carries(k, labels) && !slices.ContainsFunc(labels, func(p pair) bool { return slices.Contains(v.curried, p.name) }) {
			delete(v.state, k)
			deleted = true
		}
	}
	if deleted || v.blind {
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(v.state)) {
		if v.carries(k, labels) {
			values := strings.Split(k, "\xff")
			var ls []pair
			for _, i := range sortedIndex(v.vars) {
				ls = append(ls, pair{v.vars[i], values[i]})
			}
			left = append(left, v.name+selector(ls))
		}
	}
	return left
}

// carries reports whether the series of v with the label values key has
// all of labels.
func (v *mVec) carries(key string, labels []pair) bool {
	values := strings.Split(key, "\xff")
	for _, p := range labels {
		i := slices.Index(v.vars, p.name)
		if i < 0 || values[i] != p.value {
			return false
		}
	}
	return true
}

// sortedIndex returns the indexes of names in the order of the names.
func sortedIndex(names []string) []int {
	idx := make([]int, len(names))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(names[a], names[b]) })
	return idx
}

// oddObject returns the pool's value that == cannot compare: every value
// it makes holds the same gauge, the same function and a NaN of the same
// bits, and a slice of its own that holds the value, so that all are equal
// (Words: the same collector) and none is the same object.
func oddObject() *object {
	g := promtest.Gauge("o0", 12)
	read := g.Desc().String
	o := gaugeObject("odd{o0}", nil, "o0", 12, nil)
	o.get = func() prometheus.Collector {
		v := odd{Gauge: g, read: func() float64 { return float64(len(read())) }, nan: math.NaN(), self: make([]any, 1)}
		v.self[0] = v
		return v
	}
	o.same = func(c prometheus.Collector) bool { v, ok := c.(odd); return ok && v.Gauge == g }
	o.fn = true
	return o
}

// shiftyObject returns the pool's collector whose Describe changes
// (opShift): at first it describes what g0a describes.
func (w *world) shiftyObject() *object {
	w.shifty = &shifty{}
	o := &object{name: "shifty{s0}", get: func() prometheus.Collector { return w.shifty }}
	o.same = func(c prometheus.Collector) bool { return c == prometheus.Collector(w.shifty) }
	w.describe(o, "g0")
	return o
}

// describe makes the shifty collector o describe gauges of names.
func (w *world) describe(o *object, names ...string) {
	w.shifty.names = names
	o.descs = nil
	for _, n := range names {
		o.descs = append(o.descs, mDesc{name: n, help: promtest.Help(n)})
	}
}

// otherObject returns the pool's scope of a tree of its own, on a private
// registry, with the label l6="t": a collector like any other, which
// describes and collects the g1 it holds, with its label. Nothing registers
// in it afterwards, so what it describes never changes.
func otherObject() *object {
	other := registry.NewScope(nil, registry.WithLabels(prometheus.Labels{"l6": "t"}))
	other.MustRegister(promtest.Gauge("g1", 14))
	o := gaugeObject(`other{l6="t"}`, nil, "g1", 14, map[string]string{"l6": "t"})
	o.get = func() prometheus.Collector { return other }
	o.same = func(c prometheus.Collector) bool { return c == prometheus.Collector(other) }
	return o
}

// valueGauge is a collector of a comparable non-pointer type.
type valueGauge struct{ prometheus.Gauge }

// passedThrough returns c as the stack of client_golang wrappers ws (first
// applied first) hands it to what is below them.
func passedThrough(c prometheus.Collector, ws []wrap) prometheus.Collector {
	for _, w := range ws {
		c = promtest.Passed(c, w.on)
	}
	return c
}

// ---- the model of a registry ----

// entry is what a registry holds under one identity.
type entry struct {
	key   string   // the collector's identity
	ids   []string // its descriptor IDs
	base  *object  // the collector
	chain []wrap   // the client_golang wrappers it reached the registry through, innermost first
	by    *mReg    // the scope registration that put it there; nil for an outsider
	rec   bool     // a record of by's scope (rule 6: the scope has a view), not the collector itself
}

// mRegistry is a prometheus.Registry as client_golang's registry.go defines
// it.
type mRegistry struct {
	name    string
	real    *prometheus.Registry // nil for a scope's private registry
	held    map[string]*entry
	descIDs map[string]bool
	dims    map[string]string // by metric name; a registry never forgets them
	loose   []*entry          // outsiders' unchecked collectors: a registry cannot unregister those
	// Or it is a Registerer that accepts everything and keeps nothing:
	// one of the user's own if reported, whose registrations Close then
	// reports, else a client_golang wrapper of a nil one (rule 11).
	keepsNothing, reported bool
}

func newRegistry(name string, real *prometheus.Registry) *mRegistry {
	return &mRegistry{name: name, real: real, held: map[string]*entry{}, descIDs: map[string]bool{}, dims: map[string]string{}}
}

type verdict int

const (
	vAccepted  verdict = iota
	vUnchecked         // describes nothing: always accepted
	vTaken             // an AlreadyRegisteredError naming the holder
	vRefused           // another error
)

// decide is prometheus.Registry.Register's decision for a collector
// describing ds, in its order: an invalid descriptor or a label set or help
// string that differs from a metric of the same name fails at once; then an
// identity already held; then a descriptor ID already held.
// decideOnly is decide's verdict alone.
func (m *mRegistry) decideOnly(ds []mDesc) verdict {
	v, _, _ := m.decide(ds)
	return v
}

func (m *mRegistry) decide(ds []mDesc) (verdict, *entry, []string) {
	switch {
	case m.keepsNothing && len(ds) == 0:
		return vUnchecked, nil, nil
	case m.keepsNothing:
		return vAccepted, nil, nil
	}
	ids, dims, dup := map[string]bool{}, map[string]string{}, false
	for _, d := range ds {
		if d.bad != nil {
			return vRefused, nil, d.bad
		}
		ids[d.id()] = true
		if m.descIDs[d.id()] {
			dup = true
		}
		if dim, ok := m.dims[d.name]; ok {
			if dim != d.dim() {
				return vRefused, nil, nil
			}
			continue
		}
		if dim, ok := dims[d.name]; ok && dim != d.dim() {
			return vRefused, nil, nil
		}
		dims[d.name] = d.dim()
	}
	switch {
	case len(ids) == 0:
		return vUnchecked, nil, nil
	case m.held[identity(ds)] != nil:
		return vTaken, m.held[identity(ds)], nil
	case dup:
		return vRefused, nil, nil
	}
	return vAccepted, nil, nil
}

func (m *mRegistry) put(ds []mDesc, e *entry) {
	if m.keepsNothing {
		return
	}
	e.key = identity(ds)
	for _, d := range ds {
		e.ids = append(e.ids, d.id())
		m.descIDs[d.id()] = true
		if _, ok := m.dims[d.name]; !ok {
			m.dims[d.name] = d.dim()
		}
	}
	m.held[e.key] = e
}

func (m *mRegistry) remove(key string) bool {
	e := m.held[key]
	if e == nil {
		return false
	}
	for _, id := range e.ids {
		delete(m.descIDs, id)
	}
	delete(m.held, key)
	return true
}

// ---- the model of scopes ----

const (
	open = iota
	closing
	closed
)

var stateNames = []string{"open", "closing", "closed"}

// mTree is what the scopes of one tree share.
type mTree struct {
	reg    *mRegistry
	outer  []wrap // client_golang wrappers between the outermost scope and the registry, scope side first
	parent bool   // the registry is the faulty promtest.Parent
	via    *mVia  // or the tree is on a forwarder over a scope; reg is nil
	hubUp  bool   // the registry holds the tree's collector for its unchecked ones
	listed bool   // made with WithIndex: its outermost scope is listed until it closes (rule 25)
	scopes []*mScope
}

// registry is the registry at the bottom of t, past the scopes behind
// forwarders.
func (t *mTree) registry() *mRegistry {
	for t.via != nil {
		t = t.via.scope.tree
	}
	return t.reg
}

// mVia is the parent of a tree made on a Registerer of the user's own that
// forwards to client_golang wrappers of a scope (rule 17): to the tree, a
// registry like any other; to the scope behind, a user registering through
// the wrappers.
type mVia struct {
	scope *mScope
	chain []wrap  // the wrappers between the forwarder and the scope, forwarder side first
	hub   *object // what the tree registers there for its unchecked collectors, once it has
	fwd   prometheus.Registerer
}

type mScope struct {
	path   string // the names the program gives the scopes from the outermost in, joined with "/"
	name   string // its name (rule 15), as WithName composes those of the scopes that have one
	real   *registry.Scope
	tree   *mTree
	levels []wrap // the view levels from the outermost scope in (rule 15)
	view   view
	state  int
	steps  []step  // what it owns, oldest first (rule 10)
	all    []*mReg // every registration it made, to find twins (rule 11)
	obj    *object // the scope as a collector, once a program has registered it as one
	at     string  // where it was made, for a scope of a listed tree (rules 24, 25); "" for others
}

// step is one thing a scope owns and undoes on Close.
type step struct {
	reg *mReg
	sub *mScope
	del *mDel
}

// mReg is one registration.
type mReg struct {
	scope    *mScope
	base     *object
	chain    []wrap // the wrappers it came through, user side first (rule 5)
	pre      string // its identity before the view (rule 8); "" if unchecked
	key      string // its identity as the registry sees it
	names    []string
	full     []string // the names as the registry sees them
	live     bool     // the scope still owns it
	takenIn  int      // the Close that took it back
	panicked bool     // the parent panicked when a Close took it back
	unvetted bool     // owned, though no registry accepted it: the parent panicked in Register, or keeps nothing
	hidden   bool     // unchecked, and not exposed: the parent panicked in Register (rule 2)
	given    []mDesc  // what the collector described at Register, before the wrappers and the view
	ds       []mDesc  // what it describes as the registry sees it
}

// same reports whether r is of the same collector as o reached through
// chain (Words).
func (m *model) same(r *mReg, o *object, chain []wrap) bool {
	return sameObject(r.base, o) && chainsEqual(r.chain, chain)
}

// twins: two registrations of a scope of the same collector with the same
// identity (rule 9). Unchecked collectors describe nothing, and invalid
// descriptors have no identity (Words), so neither has twins.
func (m *model) twins(r, t *mReg) bool {
	return r != t && r.scope == t.scope && m.sameIdentityAs(r, t)
}

// sameIdentityAs reports whether r and t are of the same collector, through
// the same wrappers, with the same identity as the registry sees it
// (rules 9 and 19).
func (m *model) sameIdentityAs(r, t *mReg) bool {
	return r.pre != "" && r.key != "!" && r.key == t.key && m.same(t, r.base, r.chain)
}

// regChain is what the registry holds for r when r's scope has no view: the
// collector itself, through the wrappers it came through and those of the
// registry (rule 6).
func (r *mReg) regChain() []wrap { return slices.Concat(r.chain, r.scope.tree.outer) }

// mDel is one DeleteOnClose.
type mDel struct {
	labels []pair
	vecs   []*mVec
	panics bool // its vector panics in DeletePartialMatch
}

type model struct {
	scopes []*mScope
	closes int // Close calls so far: tells which registrations one Close took back
}

// owns returns the registrations s and the scopes nested in it still own
// (rule 19).
func (s *mScope) owns() []*mReg {
	var out []*mReg
	for _, st := range s.steps {
		switch {
		case st.reg != nil && st.reg.live:
			out = append(out, st.reg)
		case st.sub != nil && st.sub.state != closed:
			out = append(out, st.sub.owns()...)
		}
	}
	return out
}

func (s *mScope) forget(r *mReg) {
	r.live = false
	s.steps = slices.DeleteFunc(s.steps, func(st step) bool { return st.reg == r })
}

// markClosing starts the Close of s: from now on s and every scope nested in
// it refuse Register and Unregister (rule 12).
func (s *mScope) markClosing() {
	if s.state == open {
		s.state = closing
	}
	for _, st := range s.steps {
		if st.sub != nil {
			st.sub.markClosing()
		}
	}
}

// holds reports whether the registry holds r's identity by r's scope
// (rule 7).
func (m *model) holds(r *mReg) bool {
	if r.pre == "" {
		return true // unchecked: always the scope's
	}
	if v := r.scope.tree.via; v != nil {
		a := m.ask(v, r.ds)
		return a.kind == aHeld && m.mine(r, a.holder)
	}
	e := r.scope.tree.reg.held[r.key]
	switch {
	case e == nil:
		return false
	case r.scope.view.none():
		// Without a view, the registry holds collectors, not owners: the
		// same collector is the scope's, whoever registered it.
		return !e.rec && sameObject(e.base, r.base) && chainsEqual(e.chain, r.regChain())
	default:
		// With a view, only the scope's own registration of the same
		// collector (r, or a twin of r) is the scope's.
		return e.rec && e.by.live && e.by.scope == r.scope && m.same(e.by, r.base, r.chain)
	}
}

// answer is what the scope behind a forwarder answers when a tree on the
// forwarder asks who holds an identity (rule 17).
type answer struct {
	kind   int
	holder *object // aHeld: what was registered through the scope behind (rule 3: behind any wrappers); nil for nothing of its tree's
}

const (
	aFree  = iota // nobody holds the identity: the question is accepted
	aHeld         // the question is refused as registered already
	aError        // another error: closed, a label set twice, a registry that refuses what it describes
)

// ask is what the scope behind v answers about ds, a question's
// descriptors: what it answers to a Register through v's wrappers (rules 1
// and 2), naming, when refused as registered already, what was registered
// through the scope behind (rule 17).
func (m *model) ask(v *mVia, ds []mDesc) answer {
	a := v.scope
	if a.state != open || len(a.view.clash) > 0 {
		return answer{kind: aError}
	}
	ds = wrapDescs(ds, slices.Concat(v.chain, a.view.wraps())...)
	if u := a.tree.via; u != nil {
		// The scope behind is in a tree on a forwarder too: it asks its
		// own parent, which names what was registered through it, a
		// registration of a scope of its tree; the collector registered
		// through that scope is the answer.
		up := m.ask(u, ds)
		switch h := up.holder; {
		case up.kind != aHeld || h == nil || h.rec == nil || h.rec.scope.tree != a.tree:
			return up // registered through a scope with no view: the collector itself
		case h.rec.live:
			return answer{kind: aHeld, holder: h.rec.base}
		}
		return answer{kind: aHeld}
	}
	verdict, e, _ := a.tree.reg.decide(wrapDescs(ds, a.tree.outer...))
	switch {
	case verdict == vAccepted:
		return answer{kind: aFree}
	case verdict != vTaken:
		return answer{kind: aError}
	case !e.rec:
		return answer{kind: aHeld, holder: e.base}
	case e.by.live && e.by.scope.tree == a.tree:
		return answer{kind: aHeld, holder: e.by.base}
	}
	return answer{kind: aHeld}
}

// mine applies rule 7 to a registration r of a tree on a forwarder, whose
// parent answered that h holds r's identity.
func (m *model) mine(r *mReg, h *object) bool {
	switch {
	case h == nil:
		return false
	case r.scope.view.none():
		return sameObject(h, r.base)
	}
	return h.rec != nil && h.rec.live && h.rec.scope == r.scope && m.same(h.rec, r.base, r.chain)
}

// questionObject is the question a scope of a tree on a forwarder asks
// about r (rule 17): a collector of nobody's that describes what r
// describes to the parent.
func questionObject(r *mReg) *object {
	return &object{name: "the question about " + r.base.name, descs: r.ds, same: func(prometheus.Collector) bool { return false }}
}

// outcome is what a Register must return.
type outcome struct {
	kind     int
	labels   []string                        // the error must name one of these, if any
	existing func(prometheus.Collector) bool // kTaken: checks ExistingCollector
	holders  []*mScope                       // kTaken: the scope of the tree holding the metric, if known; any of them
	orClosed bool                            // ErrClosed is as right (two rules of rule 1 apply)
	orLabel  []string                        // an error naming one of these is as right
}

const (
	kOK       = iota
	kNil      // ErrNilCollector
	kClosed   // ErrClosed
	kLabel    // an error naming a label, not an AlreadyRegisteredError
	kTaken    // an AlreadyRegisteredError
	kRefused  // another error from the registry
	kInjected // promtest.ErrInjected
	kPanicked // the parent's panic, promtest.ErrInjected, goes on
	kOwnTree  // an error that is none of the above: a scope of the tree registered in it
	kZero     // an error that is none of the above, for a zero vector
)

// register applies rules 1, 2, 3, 5 and 6 to Register(c) on s, with c
// reaching s through the wrappers chain (user side first).
func (m *model) register(s *mScope, chain []wrap, o *object, fault promtest.Fault, stranger prometheus.Collector) outcome {
	// Rule 1: nil, closed, or a label set twice; nothing is registered.
	switch {
	case o == nil:
		// Either error is right for a nil collector on a closed scope.
		return outcome{kind: kNil, orClosed: s.state != open}
	case o.zero:
		return outcome{kind: kZero, orClosed: s.state != open}
	case s.state != open:
		return outcome{kind: kClosed, orLabel: s.view.clash}
	case len(s.view.clash) > 0:
		return outcome{kind: kLabel, labels: s.view.clash}
	case o.hub != nil && m.collectsScopeOf(s.tree, o.hub):
		// Rule 1: the tree already collects, among its unchecked
		// collectors, a scope of the tree whose collector of unchecked
		// ones o is, which collects some of what o does.
		return outcome{kind: kOwnTree}
	}
	pre := wrapDescs(o.descs, chain...)
	scoped := wrapDescs(pre, s.view.wraps()...)
	ds := wrapDescs(scoped, s.tree.outer...)
	r := &mReg{scope: s, base: o, chain: chain, pre: identity(pre), key: identity(ds),
		names: descNames(scoped), full: descNames(ds), live: true, given: o.descs, ds: ds}
	accept := func() outcome {
		s.steps = append(s.steps, step{reg: r})
		s.all = append(s.all, r)
		return outcome{kind: kOK}
	}
	if v := s.tree.via; v != nil {
		return m.registerVia(s, v, r, accept)
	}
	// Rule 2: unchecked collectors are always accepted, through one
	// collector of the tree's, which the tree registers with the first
	// of them ("What is not promised"). A faulty parent decides about that
	// one its own way.
	if len(o.descs) == 0 {
		if !s.tree.hubUp {
			switch fault {
			case promtest.Fail:
				return outcome{kind: kInjected}
			case promtest.Claim:
				return outcome{kind: kTaken, existing: func(c prometheus.Collector) bool { return c == stranger }}
			case promtest.ClaimNobody:
				return outcome{kind: kTaken, existing: func(c prometheus.Collector) bool { return c == nil }}
			case promtest.PanicAfter:
				r.hidden = true
				accept()
				return outcome{kind: kPanicked}
			}
			s.tree.hubUp = true
		}
		return accept()
	}
	// Rule 2: the registry decides. A faulty parent decides its own way.
	switch fault {
	case promtest.Fail:
		return outcome{kind: kInjected}
	case promtest.Claim:
		return outcome{kind: kTaken, existing: func(c prometheus.Collector) bool { return c == stranger }}
	case promtest.ClaimNobody:
		return outcome{kind: kTaken, existing: func(c prometheus.Collector) bool { return c == nil }}
	}
	v, e, bad := s.tree.reg.decide(ds)
	if fault == promtest.PanicAfter {
		// The parent panicked after the registry decided: the panic
		// goes on, and the scope owns the registration all the same,
		// whatever the registry decided.
		if v == vAccepted {
			s.tree.reg.put(ds, &entry{base: o, chain: r.regChain(), by: r, rec: !s.view.none()})
		} else {
			r.unvetted = true
		}
		accept()
		return outcome{kind: kPanicked}
	}
	switch v {
	case vAccepted:
		// A parent that keeps nothing accepts what a registry may refuse.
		r.unvetted = s.tree.reg.keepsNothing
		// Rule 6: without a view the registry holds the collector itself,
		// else a record of the scope's.
		s.tree.reg.put(ds, &entry{base: o, chain: r.regChain(), by: r, rec: !s.view.none()})
		return accept()
	case vTaken:
		out := outcome{kind: kTaken, existing: scopeExisting(e)}
		// Rule 4: the holder is known for a record of a scope, of any
		// tree (rule 6), and for the collector itself registered by a
		// scope of this tree.
		switch {
		case e.rec && e.by.live:
			out.holders = []*mScope{e.by.scope}
		case e.rec:
		case e.base.rec != nil && e.base.rec.live:
			// The registry holds, as it is, the record of a scope with
			// a view on a forwarder: its registration, which names it.
			out.holders = []*mScope{e.base.rec.scope}
		default:
			out.holders = m.holders(s.tree, r.key)
		}
		return out
	}
	return outcome{kind: kRefused, labels: bad}
}

// collectsScopeOf reports whether a scope of tree owns, as an unchecked
// collector, a scope of other.
func (m *model) collectsScopeOf(tree, other *mTree) bool {
	for _, s := range tree.scopes {
		for _, st := range s.steps {
			if r := st.reg; r != nil && r.live && r.pre == "" && r.base.of != nil && r.base.of.tree == other {
				return true
			}
		}
	}
	return false
}

// holders applies rules 4 and 7 to an identity key that the registry
// holds a collector under: the scopes of tree with no view whose
// registration it is; if there are none, and tree is listed in the Index,
// those of the other trees listed there that register into the same
// parent, the same object. The registry holds collectors, not owners: if
// two such scopes own the same collector, either holds it ("What is not
// promised").
func (m *model) holders(tree *mTree, key string) []*mScope {
	in := func(t *mTree) []*mScope {
		var out []*mScope
		for _, r := range t.scopes[0].owns() {
			if r.scope.view.none() && r.key == key && m.holds(r) {
				out = append(out, r.scope)
			}
		}
		return out
	}
	out := in(tree)
	if len(out) > 0 || !tree.listed {
		return out
	}
	for _, s := range m.scopes {
		if t := s.tree; s == t.scopes[0] && t != tree && t.listed && s.state != closed && sameParent(t, tree) {
			out = append(out, in(t)...)
		}
	}
	return out
}

// sameParent reports whether a and b register into the same object: the
// same registry, not through wrappers or forwarders, each of which is an
// object of its own.
func sameParent(a, b *mTree) bool {
	return a.reg == b.reg && a.via == nil && b.via == nil && len(a.outer) == 0 && len(b.outer) == 0
}

// registerVia applies rules 2 to 4 and 17 to r, a registration of s, in a
// tree on the forwarder v: the scope behind decides, as its user's
// Register through v's wrappers, of what s registers in r's place (rule 6):
// the collector itself, or a record of s's. Unchecked collectors go through
// one collector of the tree's, registered with the first of them; later ones
// are recorded without asking the parent again ("What is not promised").
func (m *model) registerVia(s *mScope, v *mVia, r *mReg, accept func() outcome) outcome {
	if r.pre == "" {
		if v.hub == nil {
			hub := &object{name: "the unchecked collectors of " + s.tree.scopes[0].path, hub: s.tree}
			if out := m.register(v.scope, v.chain, hub, promtest.Pass, nil); out.kind != kOK {
				return out
			}
			v.hub = hub
		}
		return accept()
	}
	held, chain := r.base, slices.Concat(r.chain, v.chain)
	if !s.view.none() {
		held, chain = recordObject(r), v.chain
	}
	out := m.register(v.scope, chain, held, promtest.Pass, nil)
	switch out.kind {
	case kOK:
		r.unvetted = s.tree.registry().keepsNothing
		return accept()
	case kTaken:
		// Rule 4: the parent names the user's collector, so the holder is
		// known only as a scope of this tree with no view.
		out.holders = m.holders(s.tree, r.key)
	}
	return out
}

// scopeExisting checks the ExistingCollector of an AlreadyRegisteredError
// that a scope returns (rule 3): the collector its owner registered, never
// a wrapper or an object of promscope's.
func scopeExisting(e *entry) func(prometheus.Collector) bool {
	if u := e.owner().user(); u != nil && (!e.rec || e.by.live) {
		return u.same
	}
	// A record a faulty parent kept after the scope let go of it is no
	// collector of anybody's: rule 3 says nil.
	return func(c prometheus.Collector) bool { return c == nil }
}

// owner is the collector whose registration e is.
func (e *entry) owner() *object {
	if e.rec {
		return e.by.base
	}
	return e.base
}

// outsiderExisting checks the ExistingCollector of an AlreadyRegisteredError
// that the registry returns to an outsider (rule 6): the collector itself
// for a scope with no view, else a record whose Unwrap returns the user's
// collector, or nil once the scope has taken it back.
func outsiderExisting(e *entry) func(prometheus.Collector) bool {
	if !e.rec {
		return e.base.same
	}
	return func(c prometheus.Collector) bool {
		u, ok := c.(interface{ Unwrap() prometheus.Collector })
		if !ok {
			return false
		}
		got := u.Unwrap()
		if !e.by.live {
			return got == nil
		}
		s := fmt.Sprint(c)
		for _, n := range descNames(e.by.given) {
			if !strings.Contains(s, n) {
				return false
			}
		}
		// Rule 6: the user's collector, not the wrappers it came
		// through.
		return got != nil && e.by.base.same(got) && strings.Contains(s, e.by.scope.str())
	}
}

// find applies rule 8: of s's registrations, the newest of the same
// collector with the identity it describes now, before the view; else the
// newest of the same collector, whatever it described; else the newest with
// that identity. An unchecked collector is found only as the same
// collector. The identity is client_golang's (Words), which it computes
// for an invalid descriptor too, as prometheus.Registry.Unregister does.
func (m *model) find(s *mScope, o *object, chain []wrap) *mReg {
	now := unregisterKey(wrapDescs(o.descs, chain...))
	tests := []func(r *mReg) bool{
		func(r *mReg) bool { return now != "" && m.same(r, o, chain) && r.pre == now },
		func(r *mReg) bool { return m.same(r, o, chain) },
		func(r *mReg) bool { return now != "" && r.pre == now },
	}
	for _, test := range tests {
		for i := len(s.steps) - 1; i >= 0; i-- {
			if r := s.steps[i].reg; r != nil && test(r) {
				return r
			}
		}
	}
	return nil
}

// tri is a bool the contract may leave open.
type tri int

const (
	tFalse tri = iota
	tTrue
	tEither
	tPanics // the parent's panic goes on
)

// unregister applies rules 8 and 9 to Unregister(c) on s through chain.
func (m *model) unregister(s *mScope, chain []wrap, o *object, fault promtest.Fault) tri {
	if o == nil || o.zero || s.state != open {
		return tFalse
	}
	r := m.find(s, o, chain)
	if r == nil {
		return tFalse
	}
	mine := m.holds(r)
	if mine && r.pre != "" && (fault == promtest.Panicking || fault == promtest.PanicAfter) {
		// Rule 9: the panic goes on, and the scope forgets nothing.
		if fault == promtest.PanicAfter {
			s.tree.reg.remove(r.key)
		}
		return tPanics
	}
	var through tri
	switch v := s.tree.via; {
	case v != nil && mine && r.pre != "":
		// Rule 17: the scope asks through the forwarder, and removes
		// with its question, while it still owns r and its twins: until
		// then they are the same collector to the scope behind (Words).
		through = m.unregister(v.scope, v.chain, questionObject(r), promtest.Pass)
	case v != nil && r.pre != "" && m.ask(v, r.ds).kind == aFree:
		// As in a Close (rule 11).
		m.askFree(v, r)
	}
	// Rule 9: the scope forgets r and its twins, whatever the registry holds.
	for _, t := range s.owns() {
		if t == r || m.twins(r, t) {
			s.forget(t)
		}
	}
	switch {
	case !mine:
		return tFalse
	case r.pre == "":
		return tTrue
	case s.tree.via != nil:
		return through
	}
	switch fault {
	case promtest.Refuse:
		return tFalse
	case promtest.LieKept:
		return tTrue // a parent that lies cannot be caught
	case promtest.LieRemoved:
		s.tree.reg.remove(r.key)
		return tEither // the parent removed it and said it did not
	}
	s.tree.reg.remove(r.key)
	return tTrue
}

// wantUE is one UnregisterError a Close must report (rule 11).
type wantUE struct {
	reg   *mReg
	maybe bool // the contract lets Close report it or not
	// Or a DeleteError: the series a DeleteOnClose of scope left.
	left  []string
	scope *mScope
}

// closeFault is the fault injected into a Close: kind on every Unregister,
// or every Register of a question, of the metric names.
type closeFault struct {
	kind  promtest.Fault
	names string
}

// close applies rules 10 to 14 to Close on s. It returns the errors Close
// must report, and whether the parent's panic must come out of it.
func (m *model) close(s *mScope, f closeFault) (want []wantUE, panics bool) {
	if s.state == closed {
		return nil, false // rule 12: a second Close returns nil
	}
	m.closes++
	s.markClosing()
	if m.undo(s, f, &want) {
		return want, true
	}
	s.state = closed
	if v := s.tree.via; v != nil && v.hub != nil && s == s.tree.scopes[0] {
		// The outermost scope has closed: its collector for the
		// unchecked ones is unregistered (what the parent answers is
		// not reported).
		m.unregister(v.scope, v.chain, v.hub, promtest.Pass)
	}
	return want, false
}

// undo undoes what s owns, newest first, as deferred calls run (rule 10).
// It reports whether the parent, or a vector of DeleteOnClose, panicked;
// then everything not yet undone stays (rule 14).
func (m *model) undo(s *mScope, f closeFault, want *[]wantUE) bool {
	for len(s.steps) > 0 {
		st := s.steps[len(s.steps)-1]
		switch {
		case st.sub != nil:
			if st.sub.state != closed {
				if m.undo(st.sub, f, want) {
					return true
				}
				st.sub.state = closed
			}
		case st.del != nil && st.del.panics:
			// Rule 14: the vector's panic goes on, and the next
			// Close carries on past the call.
			s.steps = s.steps[:len(s.steps)-1]
			return true
		case st.del != nil:
			for _, left := range st.del.run() {
				*want = append(*want, wantUE{left: left, scope: s})
			}
		default:
			if m.takeBack(st.reg, f, want) {
				return true
			}
		}
		s.steps = s.steps[:len(s.steps)-1]
	}
	return false
}

// takeBack undoes one registration in a Close (rules 11 and 13).
func (m *model) takeBack(r *mReg, f closeFault, want *[]wantUE) (panics bool) {
	if v := r.scope.tree.via; v != nil && r.pre != "" {
		m.takeBackVia(v, r, want)
		r.live = false
		r.takenIn = m.closes
		return false
	}
	reg := r.scope.tree.reg
	switch {
	case r.pre == "":
		// Unchecked: always the scope's.
	case reg.keepsNothing:
		// Nothing to take back: reported for every registration on a
		// Registerer of the user's own, never on a client_golang
		// wrapper of a nil one.
		if reg.reported {
			*want = append(*want, wantUE{reg: r})
		}
	case m.holds(r):
		switch f.on(r) {
		case promtest.Panicking:
			r.panicked = true
			return true
		case promtest.Refuse:
			// Kept by the parent: reported; rule 13 says what stays exposed.
			*want = append(*want, wantUE{reg: r})
		case promtest.Fail, promtest.Claim, promtest.ClaimNobody:
			// The parent answers the question with another error, or
			// says somebody else holds the identity: left alone and
			// reported; rule 13 says what stays exposed.
			*want = append(*want, wantUE{reg: r})
		case promtest.LieKept:
			// A parent that says it unregistered cannot be caught.
		case promtest.LieRemoved:
			reg.remove(r.key)
			// Removed, though the parent said it was not: either is right.
			*want = append(*want, wantUE{reg: r, maybe: true})
		default:
			// No fault, or a parent built on MustRegister, which
			// answers the question by panicking with the registry's
			// AlreadyRegisteredError: an answer all the same (rule 2).
			reg.remove(r.key)
		}
	case reg.held[r.key] != nil:
		// Somebody else's: left alone, reported.
		*want = append(*want, wantUE{reg: r})
	case reg.decideOnly(r.ds) == vRefused:
		// The registry refuses what it describes (its label names or
		// help clash with a name the registry has seen): the parent
		// fails the ownership check, which is reported, whatever its
		// twins did.
		*want = append(*want, wantUE{reg: r})
	default:
		m.nobodys(r, want)
	}
	r.live = false
	r.takenIn = m.closes
	return false
}

// nobodys reports r, whose identity nobody holds, unless a twin came before
// it in this Close (rule 11). A twin taken back by an earlier Close that
// panicked is not "this Close"; either is right then.
func (m *model) nobodys(r *mReg, want *[]wantUE) {
	now, before := false, false
	for _, t := range r.scope.all {
		if m.twins(r, t) && t.takenIn == m.closes {
			now = true
		}
		if m.twins(r, t) && t.takenIn != 0 && t.takenIn < m.closes {
			before = true
		}
	}
	if !now {
		*want = append(*want, wantUE{reg: r, maybe: before})
	}
}

// takeBackVia applies rule 11 to r, a checked registration of a tree on the
// forwarder v: the scope asks the scope behind who holds r's identity, and
// takes r back with its question if the answer is r's collector (rule 17).
func (m *model) takeBackVia(v *mVia, r *mReg, want *[]wantUE) {
	a := m.ask(v, r.ds)
	switch {
	case a.kind == aHeld && m.mine(r, a.holder):
		if m.unregister(v.scope, v.chain, questionObject(r), promtest.Pass) != tTrue {
			*want = append(*want, wantUE{reg: r}) // the parent refused to let go
		}
	case a.kind == aFree:
		// A scope behind that does not let go of the question (its
		// parent keeps nothing) is reported.
		switch m.askFree(v, r) {
		case tTrue:
			m.nobodys(r, want)
		case tFalse:
			*want = append(*want, wantUE{reg: r})
		default:
			*want = append(*want, wantUE{reg: r, maybe: true})
		}
	default:
		// Somebody else's, or the parent failed the ownership check.
		*want = append(*want, wantUE{reg: r})
	}
}

// askFree is the question about r that a scope of a tree on the forwarder
// v asks when nobody holds r's identity (rule 17): it takes the free
// identity in the scope behind and is taken back out, with the result of
// that Unregister.
func (m *model) askFree(v *mVia, r *mReg) tri {
	q := questionObject(r)
	m.register(v.scope, v.chain, q, promtest.Pass, nil)
	return m.unregister(v.scope, v.chain, q, promtest.Pass)
}

func (f closeFault) on(r *mReg) promtest.Fault {
	if f.kind != promtest.Pass && strings.Join(r.full, ",") == f.names {
		return f.kind
	}
	return promtest.Pass
}

// like reports whether d and e have the same labels and the same vectors
// (rule 18): the same values, so two panicDeleter{} are one vector.
func (d *mDel) like(e *mDel) bool {
	if d.panics != e.panics {
		return false
	}
	set := func(ps []pair) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.name+"="+p.value)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	vecs := func(vs []*mVec) []*mVec {
		out := slices.Clone(vs)
		slices.SortFunc(out, func(a, b *mVec) int { return strings.Compare(a.obj, b.obj) })
		return slices.Compact(out)
	}
	return slices.Equal(set(d.labels), set(e.labels)) && slices.Equal(vecs(d.vecs), vecs(e.vecs))
}

// run deletes d's series, and returns what each vector that deleted none
// left with d's labels (rule 18): one DeleteError each at Close.
func (d *mDel) run() (left [][]string) {
	for _, v := range d.vecs {
		if l := v.deleteMatching(d.labels); len(l) > 0 {
			left = append(left, l)
		}
	}
	return left
}

// scopeSeries is what s's Gather must return (rule 19): what s and the
// scopes nested in it own, through their views, not through the wrappers
// between the outermost scope and the registry.
func (m *model) scopeSeries(s *mScope) []mSeries {
	if s.state == closed {
		return nil
	}
	var out []mSeries
	for _, r := range m.gathered(s) {
		out = append(out, wrapSeries(r.base.series(), slices.Concat(r.chain, r.scope.view.wraps())...)...)
	}
	return out
}

// gathered is what s's Gather and Len count (rule 19): what s and the
// scopes nested in it own, a collector reached through the same wrappers
// with the same identity as the registry sees it once, since the registry
// holds at most one of them. Unchecked collectors have no identity: each
// registration counts.
func (m *model) gathered(s *mScope) []*mReg {
	var out []*mReg
	for _, r := range s.owns() {
		if slices.ContainsFunc(out, func(o *mReg) bool { return m.sameIdentityAs(o, r) }) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// exposed is what a registry must expose (rule 22): what the scopes own and
// the registry holds by them, through their views; what outsiders
// registered; and what a faulty parent kept of a scope with no view
// (rule 13). A record a scope no longer owns exposes nothing.
func (m *model) exposed(reg *mRegistry) []mSeries {
	var out []mSeries
	for _, e := range reg.held {
		switch {
		case !e.rec:
			out = append(out, reg.described(wrapSeries(e.base.series(), e.chain...))...)
		case e.by.live:
			out = append(out, reg.described(e.by.registrySeries())...)
		}
	}
	for _, e := range reg.loose {
		out = append(out, wrapSeries(e.base.series(), e.chain...)...)
	}
	for _, s := range m.scopes {
		if s.tree.reg != reg {
			continue
		}
		for _, st := range s.steps {
			if r := st.reg; r != nil && r.live && r.pre == "" && !r.hidden {
				out = append(out, r.registrySeries()...)
			}
		}
	}
	return out
}

// described marks what ss, collected by a checked collector the registry
// holds, collects with a descriptor that nothing it holds described: the
// registries of the model are pedantic.
func (m *mRegistry) described(ss []mSeries) []mSeries {
	for i, s := range ss {
		if !s.bad && !m.descIDs[s.descID()] {
			ss[i].undesc = true
		}
	}
	return ss
}

// registrySeries is what the registry exposes of r. A registration whose
// Close the parent interrupted stays recorded and exposed (rule 14).
func (r *mReg) registrySeries() []mSeries {
	return wrapSeries(r.base.series(), slices.Concat(r.chain, r.scope.view.wraps(), r.scope.tree.outer)...)
}

// ---- the world: real objects next to the model ----

type world struct {
	t      *testing.T
	m      *model
	reg    *prometheus.Registry
	par    *promtest.Parent
	mreg   *mRegistry // the model of reg
	mpar   *mRegistry // the model of par.Reg
	pool   []*object
	shifty *shifty // the collector of cShift
	vecs   []*mVec
	own    []*mVec // behind Deleters of the user's own: see ownVecs
	// described counts the Describe calls of the undescribed Deleters
	// of ownVecs.
	described atomic.Int32
	ix        *registry.Index // the Index of the trees a program makes with WithIndex
	scopes    []*mScope
	trace     []string
	mu        sync.Mutex
	armed     promtest.Call // Op and Names of the calls to fault
	fault     promtest.Fault
}

func newWorld(t *testing.T) *world {
	w := &world{t: t, m: &model{}, reg: prometheus.NewPedanticRegistry(), ix: &registry.Index{}}
	w.par = promtest.NewParent(w.script)
	w.par.Stranger = promtest.Gauge("stranger", 0)
	w.mreg = newRegistry("reg", w.reg)
	w.mpar = newRegistry("par.Reg", w.par.Reg)
	w.makePool()
	return w
}

func (w *world) script(c promtest.Call) promtest.Fault {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fault != promtest.Pass && c.Op == w.armed.Op && c.Names == w.armed.Names {
		return w.fault
	}
	return promtest.Pass
}

// arm makes the parent fault every call op about names until disarm.
func (w *world) arm(op string, names []string, f promtest.Fault) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed, w.fault = promtest.Call{Op: op, Names: strings.Join(names, ",")}, f
}

func (w *world) disarm() { w.arm("", nil, promtest.Pass) }

func gaugeObject(name string, g prometheus.Gauge, metric string, v float64, consts map[string]string) *object {
	return &object{
		name:  name,
		get:   func() prometheus.Collector { return g },
		descs: []mDesc{{name: metric, help: promtest.Help(metric), consts: consts}},
		fixed: []mSeries{{name: metric, labels: maps.Clone(consts), value: v}},
		same:  func(c prometheus.Collector) bool { return c == prometheus.Collector(g) },
	}
}

func (w *world) makePool() {
	g0a, g0b, g1a := promtest.Gauge("g0", 1), promtest.Gauge("g0", 2), promtest.Gauge("g1", 3)
	h0a, h1a, h0b, h1b := promtest.Gauge("h0", 5), promtest.Gauge("h1", 6), promtest.Gauge("h0", 7), promtest.Gauge("h1", 8)
	k0 := prometheus.NewGauge(prometheus.GaugeOpts{Name: "k0", Help: promtest.Help("k0"), ConstLabels: prometheus.Labels{"l0": "k"}})
	k0.Set(11)

	gauges := func(name string, a, b prometheus.Gauge, va, vb float64) *object {
		return &object{
			name: name,
			// A new slice each time: equal values, the same collector
			// (Words).
			get: func() prometheus.Collector { return promtest.Gauges{a, b} },
			descs: []mDesc{
				{name: "h0", help: promtest.Help("h0")},
				{name: "h1", help: promtest.Help("h1")},
			},
			fixed: []mSeries{{name: "h0", value: va}, {name: "h1", value: vb}},
			same: func(c prometheus.Collector) bool {
				gs, ok := c.(promtest.Gauges)
				return ok && len(gs) == 2 && gs[0] == a && gs[1] == b
			},
		}
	}
	vec := func(name string) (*object, *mVec) {
		cv := promtest.CounterVec("v0", "tenant", "link")
		v := &mVec{obj: name, name: "v0", vars: []string{"tenant", "link"}, real: cv, state: map[string]float64{},
			add: func(values []string, n float64) { cv.WithLabelValues(values...).Add(n) }}
		return &object{
			name:  name,
			get:   func() prometheus.Collector { return cv },
			descs: []mDesc{{name: "v0", help: promtest.Help("v0"), vars: v.vars}},
			vec:   v,
			same:  func(c prometheus.Collector) bool { return c == prometheus.Collector(cv) },
		}, v
	}
	unchecked := func(name string, u *promtest.Unchecked) *object {
		return &object{
			name:  name,
			get:   func() prometheus.Collector { return u },
			fixed: []mSeries{{name: u.Name, value: u.Value}},
			same:  func(c prometheus.Collector) bool { return c == prometheus.Collector(u) },
		}
	}
	vec0a, v0a := vec("vec0a")
	vec0b, v0b := vec("vec0b")
	value := gaugeObject("valueGauge{g0a}", nil, "g0", 1, nil)
	value.get = func() prometheus.Collector { return valueGauge{g0a} }
	value.same = func(c prometheus.Collector) bool { v, ok := c.(valueGauge); return ok && v.Gauge == g0a }

	w.pool = []*object{
		cG0a:     gaugeObject("g0a", g0a, "g0", 1, nil),
		cG0b:     gaugeObject("g0b", g0b, "g0", 2, nil),
		cG1a:     gaugeObject("g1a", g1a, "g1", 3, nil),
		cValue:   value,
		cGauges0: gauges("promtest.Gauges{h0a, h1a}", h0a, h1a, 5, 6),
		cGauges1: gauges("promtest.Gauges{h0b, h1b}", h0b, h1b, 7, 8),
		cH0a:     gaugeObject("h0a", h0a, "h0", 5, nil),
		cVec0a:   vec0a,
		cVec0b:   vec0b,
		cU0:      unchecked("u0", &promtest.Unchecked{Name: "u0", Value: 9}),
		cU1:      unchecked("u1", &promtest.Unchecked{Name: "u1", Value: 10}),
		cK0:      gaugeObject("k0", k0, "k0", 11, map[string]string{"l0": "k"}),
		cOdd:     oddObject(),
		cShift:   w.shiftyObject(),
		cOther:   otherObject(),
	}

	// The bystander: an outsider's gauge and shared vector on reg.
	b := promtest.NewBystander(w.reg)
	shared := &mVec{obj: "bystander.Shared", name: "shared", vars: []string{"tenant"}, real: b.Shared,
		state: map[string]float64{"a": 1, "b": 2},
		add:   func(values []string, n float64) { b.Shared.WithLabelValues(values...).Add(n) }}
	other := &object{name: "bystander.Gauge", descs: []mDesc{{name: "other", help: "Another owner's gauge."}},
		fixed: []mSeries{{name: "other", value: 42}}, same: func(c prometheus.Collector) bool { return c == prometheus.Collector(b.Gauge) }}
	sharedObj := &object{name: "bystander.Shared", descs: []mDesc{{name: "shared", help: "Another owner's vector.", vars: shared.vars}},
		vec: shared, same: func(c prometheus.Collector) bool { return c == prometheus.Collector(b.Shared) }}
	w.mreg.put(other.descs, &entry{base: other})
	w.mreg.put(sharedObj.descs, &entry{base: sharedObj})
	// A curried vector shares the series of the one it was curried from,
	// and deletes none by the label it was curried with (rule 18).
	curried := &mVec{obj: `vec0a.MustCurryWith(prometheus.Labels{"link": "x"})`, name: v0a.name, vars: v0a.vars, curried: []string{"link"},
		real: v0a.real.(*prometheus.CounterVec).MustCurryWith(prometheus.Labels{"link": "x"}), state: v0a.state}
	w.vecs = []*mVec{vVec0a: v0a, vVec0b: v0b, vShared: shared, vCurried: curried}
	// Deleters of the user's own (see ownVecs).
	w.own = []*mVec{
		ownBlind: {obj: "&blind{curried}", name: v0a.name, vars: v0a.vars, curried: curried.curried, blind: true, own: true,
			real: &blind{curried.real.(*prometheus.CounterVec)}, state: v0a.state},
		ownCurried: {obj: "undescribed{curried}", name: v0a.name, vars: v0a.vars, curried: curried.curried, own: true,
			real: undescribed{curried.real.(*prometheus.CounterVec), &w.described}, state: v0a.state},
		ownShared: {obj: "undescribed{bystander.Shared}", name: shared.name, vars: shared.vars, own: true,
			real: undescribed{b.Shared, &w.described}, state: shared.state},
	}
}

func (w *world) say(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.trace = append(w.trace, fmt.Sprintf(format, args...))
}

func (w *world) traceCopy() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.trace)
}

func (w *world) fail(format string, args ...any) {
	w.t.Helper()
	w.t.Fatalf("%s\nprogram so far:\n\t%s", fmt.Sprintf(format, args...), strings.Join(w.traceCopy(), "\n\t"))
}

func (w *world) run(program []byte) {
	// Rule 12: Close on a nil or zero scope returns nil; a zero scope is empty.
	var zero registry.Scope
	if err := (*registry.Scope)(nil).Close(); err != nil {
		w.fail("Close on a nil scope: %v", err)
	}
	if err := zero.Close(); err != nil || zero.Len() != 0 {
		w.fail("zero scope: Close %v, Len %d", err, zero.Len())
	}
	in := &input{b: program}
	for in.i < len(in.b) {
		w.op(in)
		w.check()
		w.checkPages()
	}
}

func (w *world) op(in *input) {
	switch in.n(nOps) {
	case opRoot:
		w.root(in)
	case opNest:
		w.nest(in)
	case opRegister:
		w.register(in)
	case opMustTwo:
		w.mustTwo(in)
	case opUnregister:
		w.unregister(in)
	case opClose:
		w.close(in)
	case opOutUnregister:
		w.outsider(in, false)
	case opOutRegister:
		w.outsider(in, true)
	case opSeries:
		w.series(in)
	case opDelete:
		w.deleteOnClose(in)
	case opRegisterScope:
		w.registerScope(in)
	case opRegisterRegistry:
		w.registerRegistry(in)
	case opShift:
		w.shift(in)
	}
}

// ---- reading operands ----

func (w *world) scope(in *input) *mScope {
	b := in.next()
	if len(w.scopes) == 0 {
		return nil
	}
	return w.scopes[b%len(w.scopes)]
}

// options reads a scope's options: a flags byte (bit 0: a prefix, whose
// index follows; bits 1 to 4: how many labels, modulo 9; bit 5: the labels
// split over two WithLabels; bit 6: an empty WithLabels too; bit 7: no
// WithName), then one byte per label (bits 0 to 2: the name l0 to l7; bit
// 3: the value).
func (w *world) options(in *input, name string) ([]registry.Option, wrap, string, bool) {
	f := in.next()
	var opts []registry.Option
	var desc []string
	named := f&0x80 == 0
	if named {
		opts = append(opts, registry.WithName(name))
		desc = append(desc, fmt.Sprintf("registry.WithName(%q)", name))
	}
	own := wrap{}
	if f&1 != 0 {
		own.prefix = scopePrefixes[in.n(len(scopePrefixes))]
		opts = append(opts, registry.WithPrefix(own.prefix))
		desc = append(desc, fmt.Sprintf("registry.WithPrefix(%q)", own.prefix))
	}
	n := (f >> 1 & 15) % 9
	var given []pair
	for range n {
		b := in.next()
		given = append(given, pair{fmt.Sprintf("l%d", b&7), labelValues[b>>3&1]})
	}
	if f&0x40 != 0 {
		opts = append(opts, registry.WithLabels(prometheus.Labels{}))
		desc = append(desc, "registry.WithLabels(prometheus.Labels{})")
	}
	split := 0
	if f&0x20 != 0 {
		split = len(given) / 2
	}
	merged := map[string]string{}
	for _, part := range [][]pair{given[:split], given[split:]} {
		if len(part) == 0 {
			continue
		}
		m := map[string]string{}
		for _, p := range part {
			m[p.name] = p.value // later wins, within one map and across options
			merged[p.name] = p.value
		}
		opts = append(opts, registry.WithLabels(m))
		desc = append(desc, fmt.Sprintf("registry.WithLabels(%s)", labelsString(sortedPairs(m))))
	}
	own.labels = sortedPairs(merged)
	return opts, own, strings.Join(desc, ", "), named
}

// scopeWrap reads a client_golang wrapper of a scope: bit 0 clear, a prefix
// (bit 1: p_ or q_); set, labels (bits 1 to 3: the name l0 to l7; bit 4: the
// value; bit 5: no labels at all).
func scopeWrap(b int) wrap {
	if b&1 == 0 {
		return wrap{prefix: wrapPrefixes[b>>1&1]}
	}
	if b&0x20 != 0 {
		return wrap{isLbl: true}
	}
	return wrap{isLbl: true, labels: []pair{{fmt.Sprintf("l%d", b>>1&7), labelValues[b>>4&1]}}}
}

// outerWrap reads a client_golang wrapper of the registry: bit 0 clear, the
// prefix w_; set, the label o0 or o1 (bit 1) with a value (bit 2).
func outerWrap(b int) wrap {
	if b&1 == 0 {
		return wrap{prefix: "w_"}
	}
	return wrap{isLbl: true, labels: []pair{{fmt.Sprintf("o%d", b>>1&1), labelValues[b>>2&1]}}}
}

// chain reads 0 to 3 wrappers of a scope, user side first.
func chain(in *input) []wrap {
	var ws []wrap
	for range in.n(4) {
		ws = append(ws, scopeWrap(in.next()))
	}
	return ws
}

// through wraps r in ws, so that a collector registered with the result
// meets ws[0] first.
func through(r prometheus.Registerer, ws []wrap) prometheus.Registerer {
	for i := len(ws) - 1; i >= 0; i-- {
		r = ws[i].on(r)
	}
	return r
}

func chainString(base string, ws []wrap) string {
	s := base
	for i := len(ws) - 1; i >= 0; i-- {
		s = strings.Replace(ws[i].String(), "·", s, 1)
	}
	return s
}

// collector reads a collector: the object (nil for cNil and cTypedNil) and
// the value to pass, which goes through the wrappers like any other.
func (w *world) collector(in *input) (*object, prometheus.Collector, string) {
	switch i := in.n(nColls); i {
	case cNil:
		return nil, nil, "nil"
	case cTypedNil:
		return nil, (*prometheus.CounterVec)(nil), "(*prometheus.CounterVec)(nil)"
	case cZero:
		const name = "&prometheus.GaugeVec{}"
		return &object{name: name, zero: true}, &prometheus.GaugeVec{}, name
	default:
		return w.pool[i], w.pool[i].get(), w.pool[i].name
	}
}

// ---- operations ----

func (w *world) root(in *input) {
	b := in.next()
	kind, listed := b&0x7f%nRoots, b&0x80 != 0
	var outer, via []wrap
	var behind *mScope
	switch kind {
	case onWrapped:
		for range 1 + in.n(2) {
			outer = append(outer, outerWrap(in.next()))
		}
	case onScope:
		behind = w.scope(in)
		for range in.n(3) {
			via = append(via, scopeWrap(in.next()))
		}
	}
	name := fmt.Sprintf("s%d", len(w.scopes))
	opts, own, desc, named := w.options(in, name)
	tree := &mTree{outer: outer, listed: listed}
	if listed {
		opts = append(opts, registry.WithIndex(w.ix))
		desc = strings.TrimPrefix(desc+", registry.WithIndex(ix)", ", ")
	}
	var parent prometheus.Registerer
	var pdesc string
	switch kind {
	case onScope:
		if behind == nil {
			return
		}
		fwd := promtest.NewParent(nil)
		fwd.Next = through(behind.real, via)
		parent, pdesc = fwd, "fwd"+name
		tree.via = &mVia{scope: behind, chain: via, fwd: fwd}
		w.say("%s := promtest.NewParent(nil); %s.Next = %s", pdesc, pdesc, chainString(behind.path2(), via))
	case onReg:
		parent, pdesc, tree.reg = w.reg, "reg", w.mreg
	case onNil:
		parent, pdesc, tree.reg = nil, "nil", newRegistry("private registry of "+name, nil)
	case onWrapped:
		// The outer wrappers are listed scope side first: the first one
		// wraps the rest.
		parent, pdesc, tree.reg = w.reg, "reg", w.mreg
		for i := len(outer) - 1; i >= 0; i-- {
			parent = outer[i].on(parent)
			pdesc = strings.Replace(outer[i].String(), "·", pdesc, 1)
		}
	case onParent:
		parent, pdesc, tree.reg, tree.parent = w.par, "par", w.mpar, true
	case onNowhere:
		parent, pdesc = prometheus.WrapRegistererWith(prometheus.Labels{"o0": "x"}, nil), `prometheus.WrapRegistererWith(prometheus.Labels{"o0": "x"}, nil)`
		tree.reg = newRegistry("nowhere", nil)
		tree.reg.keepsNothing = true
	case onDiscard:
		parent, pdesc = keepNothing{}, "keepNothing{}"
		tree.reg = newRegistry("keepNothing{}", nil)
		tree.reg.keepsNothing, tree.reg.reported = true, true
	}
	s := &mScope{path: name, tree: tree, levels: []wrap{own}, state: open}
	if named {
		s.name = name
	}
	s.view = compose(s.levels)
	s.real, s.at = registry.NewScope(parent, opts...), madeHere()
	if !listed {
		s.at = ""
	}
	w.addScope(s)
	w.say("%s := registry.NewScope(%s%s)", name, pdesc, sep(desc))
}

func sep(s string) string {
	if s == "" {
		return ""
	}
	return ", " + s
}

// madeHere returns where the line that calls it is, as rule 24 says where a
// scope was made: the package's import path, then file.go:line. A scope
// made on that line was made there.
func madeHere() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("github.com/promscope/promscope/registry/%s:%d", file[strings.LastIndexByte(file, '/')+1:], line)
}

func (w *world) addScope(s *mScope) {
	s.tree.scopes = append(s.tree.scopes, s)
	w.scopes = append(w.scopes, s)
	w.m.scopes = append(w.m.scopes, s)
}

// nest applies rule 15: Child, NewScope on the scope and NewScope on
// wrappers of it make a scope nested in it; rule 12: one made in a scope
// whose Close has begun is closed.
func (w *world) nest(in *input) {
	p := w.scope(in)
	how := in.n(nHows)
	var ws []wrap
	if how == byWrappers {
		for range 1 + in.n(3) {
			ws = append(ws, scopeWrap(in.next()))
		}
	}
	name := fmt.Sprintf("s%d", len(w.scopes))
	opts, own, desc, named := w.options(in, name)
	if p == nil {
		return
	}
	var real *registry.Scope
	var call, at string
	switch how {
	case byChild:
		real, at = p.real.Child(opts...), madeHere()
		call = fmt.Sprintf("%s.Child(%s)", p.path2(), desc)
	case byNewScope:
		real, at = registry.NewScope(p.real, opts...), madeHere()
		call = fmt.Sprintf("registry.NewScope(%s%s)", p.path2(), sep(desc))
	default:
		// The wrapper next to p is applied first, on p.
		var r prometheus.Registerer = p.real
		d := p.path2()
		for _, x := range ws {
			r = x.on(r)
			d = strings.Replace(x.String(), "·", d, 1)
		}
		real, at = registry.NewScope(r, opts...), madeHere()
		call = fmt.Sprintf("registry.NewScope(%s%s)", d, sep(desc))
	}
	if !p.tree.listed {
		at = ""
	}
	levels := slices.Concat(p.levels, ws, []wrap{own})
	s := &mScope{path: p.path + "/" + name, name: p.name, real: real, tree: p.tree, levels: levels, state: closed, at: at}
	// WithName: the outer scope's name, "/", its own; the one or the
	// other if either has none.
	switch {
	case !named:
	case s.name == "":
		s.name = name
	default:
		s.name += "/" + name
	}
	s.view = compose(levels)
	if p.state == open {
		s.state = open
		p.steps = append(p.steps, step{sub: s})
	}
	w.addScope(s)
	w.say("%s := %s", name, call)
}

// path2 is the Go variable of a scope in the trace.
func (s *mScope) path2() string { return s.path[strings.LastIndex(s.path, "/")+1:] }

// str is what s's String returns (rule 23): its name, then its view's
// labels in braces and its prefix, as Scope.String's doc shows them:
// mirror/west{cluster="west"} prefix="mirror_".
func (s *mScope) str() string {
	out := s.name
	if len(s.view.labels) > 0 {
		out += selector(sortedPairs(s.view.labels))
	}
	if s.view.prefix != "" {
		if out != "" {
			out += " "
		}
		out += fmt.Sprintf("prefix=%q", s.view.prefix)
	}
	return out
}

// registerFault returns the fault to inject into a Register on s, if the
// model can tell the parent gets the call: a checked collector whose
// descriptors are valid, on an open scope without a label set twice.
func (w *world) registerFault(s *mScope, ch []wrap, o *object, b int) (promtest.Fault, []string) {
	if !s.tree.parent || o == nil || o.zero || s.state != open || len(s.view.clash) > 0 || len(o.descs) == 0 && s.tree.hubUp {
		return promtest.Pass, nil
	}
	ds := wrapDescs(o.descs, slices.Concat(ch, s.view.wraps(), s.tree.outer)...)
	if identity(ds) == "!" {
		return promtest.Pass, nil
	}
	// A parent that panics before it passes Register on is not built:
	// the scope would own descriptors the registry never saw, and taking
	// them back makes the registry see them, after which it holds every
	// later registration of their names to their label names and help
	// (client_golang's rule, which the model does not keep). TestClose
	// has that parent.
	// A parent built on MustRegister (Must) panics with the registry's
	// refusal; the scope takes an AlreadyRegisteredError so thrown as
	// its answer. Any other refusal's panic goes on before the scope
	// knows what the registry saw, as above: Must is built only where
	// the registry would accept, or answer that the identity is held.
	f := []promtest.Fault{promtest.Pass, promtest.Fail, promtest.Claim, promtest.ClaimNobody, promtest.PanicAfter, promtest.Must}
	if b%nFaults >= len(f) || f[b%nFaults] == promtest.Must && s.tree.reg.decideOnly(ds) == vRefused {
		return promtest.Pass, nil
	}
	return f[b%nFaults], descNames(ds)
}

func (w *world) register(in *input) {
	s, ch := w.scope(in), chain(in)
	o, c, cdesc := w.collector(in)
	mode := in.n(nModes)
	fb := in.next()
	if s == nil {
		return
	}
	fault, names := w.registerFault(s, ch, o, fb)
	want := w.m.register(s, ch, o, fault, w.par.Stranger)
	target := chainString(s.path2(), ch)
	if fault != promtest.Pass {
		w.say("// the parent answers every Register of %q with %v", strings.Join(names, ","), faultName(fault))
		w.arm("register", names, fault)
	}
	defer w.disarm()
	var r prometheus.Registerer = s.real
	if len(ch) > 0 {
		r = through(s.real, ch)
	}
	if want.kind == kPanicked {
		v := promtest.Panic(func() {
			if mode == modeRegister {
				w.say("err = %s.Register(%s)", target, cdesc)
				_ = r.Register(c)
			} else {
				w.say("%s.MustRegister(%s)", target, cdesc)
				r.MustRegister(c)
			}
		})
		w.disarm()
		if err, _ := v.(error); !errors.Is(err, promtest.ErrInjected) {
			w.fail("Register panicked with %v, want the parent's panic to go on (rule 2)", v)
		}
		return
	}
	if mode == modeRegister {
		w.say("err = %s.Register(%s)", target, cdesc)
		err := r.Register(c)
		w.disarm()
		w.checkErr("Register", err, want, o, passedThrough(c, ch))
		return
	}
	w.say("%s.MustRegister(%s)", target, cdesc)
	v := promtest.Panic(func() { r.MustRegister(c) })
	w.disarm()
	// Rule 4 for the scope's own MustRegister; through client_golang's
	// wrappers, their MustRegister panics with the scope's Register error.
	w.checkPanic("MustRegister", v, want, o, passedThrough(c, ch), s, len(ch) == 0)
}

func (w *world) mustTwo(in *input) {
	s, ch := w.scope(in), chain(in)
	o1, c1, d1 := w.collector(in)
	o2, c2, d2 := w.collector(in)
	if s == nil {
		return
	}
	// MustRegister registers each in turn and stops at the first error.
	want := w.m.register(s, ch, o1, promtest.Pass, nil)
	wantObj, wantC := o1, c1
	if want.kind == kOK {
		want, wantObj, wantC = w.m.register(s, ch, o2, promtest.Pass, nil), o2, c2
	}
	w.say("%s.MustRegister(%s, %s)", chainString(s.path2(), ch), d1, d2)
	v := promtest.Panic(func() { through(s.real, ch).MustRegister(c1, c2) })
	w.checkPanic("MustRegister", v, want, wantObj, passedThrough(wantC, ch), s, len(ch) == 0)
}

func (w *world) unregister(in *input) {
	s, ch := w.scope(in), chain(in)
	o, c, cdesc := w.collector(in)
	fb := in.next()
	if s == nil {
		return
	}
	// A fault applies only where the parent must get the call: the scope
	// finds a checked registration that the registry holds by it.
	fault := promtest.Pass
	if s.tree.parent && o != nil && s.state == open {
		if r := w.m.find(s, o, ch); r != nil && r.pre != "" && w.m.holds(r) {
			f := []promtest.Fault{promtest.Pass, promtest.Refuse, promtest.LieKept, promtest.LieRemoved, promtest.Panicking, promtest.PanicAfter}
			if fb%nFaults < len(f) {
				fault = f[fb%nFaults]
			}
			if fault != promtest.Pass {
				w.say("// the parent answers every Unregister of %q with %v", strings.Join(r.full, ","), faultName(fault))
				w.arm("unregister", r.full, fault)
			}
		}
	}
	defer w.disarm()
	want := w.m.unregister(s, ch, o, fault)
	w.say("ok = %s.Unregister(%s)", chainString(s.path2(), ch), cdesc)
	var got bool
	v := promtest.Panic(func() { got = through(s.real, ch).Unregister(c) })
	w.disarm()
	if panicked := v != nil; panicked != (want == tPanics) {
		w.fail("Unregister panicked with %v, want the parent's panic to go on: %v (rule 9)", v, want == tPanics)
	} else if err, _ := v.(error); panicked && !errors.Is(err, promtest.ErrInjected) {
		w.fail("Unregister panicked with %v, want the parent's %v (rule 9)", v, promtest.ErrInjected)
	}
	if want != tEither && want != tPanics && got != (want == tTrue) {
		w.fail("Unregister returned %v, want %v", got, want == tTrue)
	}
}

// closeFaults lists the metric names a fault may target in a Close of s: those
// of which every registration in s's tree is one the Close must take back
// from the registry, each with an identity of its own, so that the parent
// gets one Unregister for each and the model can tell what it answered.
func (w *world) closeFaults(s *mScope) []string {
	if !s.tree.parent || s.state == closed {
		return nil
	}
	ok := map[string]bool{}
	keys := map[string]map[string]bool{}
	for _, r := range s.owns() {
		if r.pre == "" {
			continue
		}
		n := strings.Join(r.full, ",")
		if _, seen := ok[n]; !seen {
			ok[n], keys[n] = true, map[string]bool{}
		}
		if !w.m.holds(r) || keys[n][r.key] {
			ok[n] = false
		}
		keys[n][r.key] = true
	}
	var out []string
	for _, n := range slices.Sorted(maps.Keys(ok)) {
		if ok[n] {
			out = append(out, n)
		}
	}
	return out
}

func (w *world) close(in *input) {
	s := w.scope(in)
	fb, which := in.next(), in.next()
	if s == nil {
		return
	}
	var f closeFault
	if names := w.closeFaults(s); len(names) > 0 {
		// The first faults are of the Unregister Close makes, the
		// others of the Register of its question.
		kinds := []promtest.Fault{promtest.Pass, promtest.Refuse, promtest.LieKept, promtest.LieRemoved, promtest.Panicking, promtest.Fail, promtest.Claim, promtest.ClaimNobody, promtest.Must}
		f = closeFault{kind: kinds[fb%nFaults], names: names[which%len(names)]}
	}
	switch f.kind {
	case promtest.Pass:
	case promtest.Fail, promtest.Claim, promtest.ClaimNobody, promtest.Must:
		w.say("// the parent answers every Register of %q with %v", f.names, faultName(f.kind))
		w.arm("register", strings.Split(f.names, ","), f.kind)
	default:
		w.say("// the parent answers every Unregister of %q with %v", f.names, faultName(f.kind))
		w.arm("unregister", strings.Split(f.names, ","), f.kind)
	}
	defer w.disarm()
	want, panics := w.m.close(s, f)
	w.say("err = %s.Close()", s.path2())
	var err error
	v := promtest.Panic(func() { err = s.real.Close() })
	w.disarm()
	if panics {
		// Rule 14: the parent's panic goes on out of Close.
		if e, ok := v.(error); !ok || !errors.Is(e, promtest.ErrInjected) {
			w.fail("Close panicked with %v, want the parent's panic %v", v, promtest.ErrInjected)
		}
		return
	}
	if v != nil {
		w.fail("Close panicked: %v", v)
	}
	w.checkClose(s, err, want)
}

// outsider registers or unregisters a collector straight on the registry
// of s's tree, with the prefix and labels that s would give it: to collide
// with s's registrations, earlier or later, or to take them away.
func (w *world) outsider(in *input, register bool) {
	s, ch := w.scope(in), chain(in)
	o, c, cdesc := w.collector(in)
	if s == nil || o == nil || o.zero {
		return
	}
	if v := s.tree.via; v != nil {
		w.viaOutsider(s, v, ch, o, c, cdesc, register)
		return
	}
	if s.tree.reg.real == nil {
		return
	}
	stack := slices.Concat(ch, s.view.wraps(), s.tree.outer)
	var r prometheus.Registerer = s.tree.reg.real
	r = through(r, stack)
	target := chainString(s.tree.reg.name, stack)
	ds := wrapDescs(o.descs, stack...)
	reg := s.tree.reg
	if !register {
		want := false
		if k := unregisterKey(ds); k != "" {
			want = reg.remove(k)
		}
		w.say("ok = %s.Unregister(%s) // an outsider", target, cdesc)
		if got := r.Unregister(c); got != want {
			w.fail("the registry's Unregister returned %v, want %v", got, want)
		}
		return
	}
	w.say("err = %s.Register(%s) // an outsider", target, cdesc)
	err := r.Register(c)
	v, e, _ := reg.decide(ds)
	switch v {
	case vAccepted:
		reg.put(ds, &entry{base: o, chain: stack})
		if err != nil {
			w.fail("the registry refused: %v", err)
		}
	case vUnchecked:
		reg.loose = append(reg.loose, &entry{base: o, chain: stack})
		if err != nil {
			w.fail("the registry refused an unchecked collector: %v", err)
		}
	case vTaken:
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			w.fail("the registry returned %v, want an AlreadyRegisteredError", err)
		}
		if !outsiderExisting(e)(are.ExistingCollector) {
			w.fail("the registry's ExistingCollector is %s, want %s (rule 6)", shown(are.ExistingCollector), e.describe())
		}
	default:
		var are prometheus.AlreadyRegisteredError
		if err == nil || errors.As(err, &are) {
			w.fail("the registry returned %v, want its own refusal", err)
		}
	}
}

// viaOutsider is an outsider of a tree on the forwarder v: it registers or
// unregisters on the forwarder, which is, to the scope behind, its user
// registering through v's wrappers (rule 17).
func (w *world) viaOutsider(s *mScope, v *mVia, ch []wrap, o *object, c prometheus.Collector, cdesc string, register bool) {
	stack := slices.Concat(ch, s.view.wraps())
	chain := slices.Concat(stack, v.chain)
	r := through(v.fwd, stack)
	target := chainString("fwd"+s.tree.scopes[0].path, stack)
	if register {
		want := w.m.register(v.scope, chain, o, promtest.Pass, nil)
		w.say("err = %s.Register(%s) // an outsider", target, cdesc)
		w.checkErr("the forwarder's Register", r.Register(c), want, o, passedThrough(c, chain))
		return
	}
	want := w.m.unregister(v.scope, chain, o, promtest.Pass)
	w.say("ok = %s.Unregister(%s) // an outsider", target, cdesc)
	if got := r.Unregister(c); got != (want == tTrue) {
		w.fail("the forwarder's Unregister returned %v, want %v", got, want == tTrue)
	}
}

func (e *entry) describe() string {
	if e.rec {
		return fmt.Sprintf("a record of %s's registration of %s (live %v)", e.by.scope.path, e.by.base.name, e.by.live)
	}
	return e.base.name
}

func (w *world) series(in *input) {
	v := w.vecs[in.n(nVecs)]
	b := in.next()
	n := float64(1 + in.n(4))
	values := []string{tenants[b&1], links[b>>1&1]}[:len(v.vars)]
	v.add(values, n)
	v.state[strings.Join(values, "\xff")] += n
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = strconv.Quote(v)
	}
	w.say("%s.WithLabelValues(%s).Add(%v)", v.obj, strings.Join(quoted, ", "), n)
}

// The labels opDelete reads: the last is the empty misuse.
var deleteLabels = [][]pair{
	{{"tenant", "a"}},
	{{"tenant", "b"}},
	{{"link", "x"}},
	{{"link", "y"}, {"tenant", "a"}},
	nil,
}

// deleteOnClose applies rule 18. The vectors byte: bits 0 and 1 pick a
// vector, bit 2 adds the shared one; 0x38 passes none, 0x30 a nil one, 0x28
// one that panics, 0x20 a Deleter of the user's own, the one of ownVecs
// that bits 6 and 7 pick (3 is ownShared too).
func (w *world) deleteOnClose(in *input) {
	s := w.scope(in)
	labels := deleteLabels[in.n(len(deleteLabels))]
	b := in.next()
	if s == nil {
		return
	}
	var vecs []*mVec
	var ds []registry.Deleter
	var names []string
	panics := b&0x38 == 0x28
	switch b & 0x38 {
	case 0x38:
	case 0x30:
		ds, names = []registry.Deleter{(*prometheus.CounterVec)(nil)}, []string{"nil"}
	case 0x28:
		ds, names = []registry.Deleter{panicDeleter{}}, []string{"panicDeleter{}"}
	case 0x20:
		v := w.own[min(b>>6, ownShared)]
		vecs, ds, names = []*mVec{v}, []registry.Deleter{v.real}, []string{v.obj}
	default:
		v := w.vecs[b&3] // vCurried is 3
		vecs = append(vecs, v)
		if b&4 != 0 && v != w.vecs[vShared] {
			vecs = append(vecs, w.vecs[vShared])
		}
		for _, v := range vecs {
			ds = append(ds, v.real)
			names = append(names, v.obj)
		}
	}
	m := pairMap(labels)
	w.say("%s.DeleteOnClose(%s, %s)", s.path2(), labelsString(labels), strings.Join(names, ", "))
	described := w.described.Load()
	v := promtest.Panic(func() { s.real.DeleteOnClose(m, ds...) })
	if w.described.Load() != described {
		w.fail("DeleteOnClose called Describe of a Deleter of the user's own (rule 18)")
	}
	// Rule 18: a label that one of client_golang's vectors does not have
	// is misuse, as is no label, no vector or a nil one; a Deleter of the
	// user's own is not asked.
	lacks := slices.ContainsFunc(vecs, func(v *mVec) bool {
		return !v.own && slices.ContainsFunc(labels, func(p pair) bool { return !slices.Contains(v.vars, p.name) })
	})
	if len(labels) == 0 || len(ds) == 0 || vecs == nil && !panics || lacks {
		if !strings.HasPrefix(fmt.Sprint(v), "registry:") {
			w.fail("DeleteOnClose panicked with %v, want a registry: message", v)
		}
		return
	}
	if panics && s.state != open {
		// Rule 18: it deletes at once, and the vector's panic goes on.
		if e, ok := v.(error); !ok || !errors.Is(e, promtest.ErrInjected) {
			w.fail("DeleteOnClose panicked with %v, want the vector's panic", v)
		}
		return
	}
	if v != nil {
		w.fail("DeleteOnClose panicked: %v", v)
	}
	d := &mDel{labels: labels, vecs: vecs, panics: panics}
	if s.state == open {
		// Rule 18: a call like one pending adds nothing.
		if !slices.ContainsFunc(s.steps, func(st step) bool { return st.del != nil && st.del.like(d) }) {
			s.steps = append(s.steps, step{del: d})
		}
	} else {
		d.run() // rule 18: at once once Close has begun, reporting nothing
	}
}

// registerScope applies rule 1 to a scope of s's tree registered through s,
// through the wrappers chain: refused, and nothing registered; rules 1, 2
// and 17 to a scope of a tree that s's tree registers into through
// forwarders: that tree refuses it; and rules 1 and 2 to a scope of a tree
// that registers into s's tree through forwarders. (A scope of any other
// tree of the program would be a collector like that one, which the model
// leaves out; the pool's cOther is a scope of another tree whose contents
// never change.)
func (w *world) registerScope(in *input) {
	s, ch, t := w.scope(in), chain(in), w.scope(in)
	mode := in.n(nModes)
	if s == nil || t == nil {
		return
	}
	want := outcome{kind: kOwnTree, orClosed: s.state != open, orLabel: s.view.clash}
	if t.tree != s.tree && w.m.collectsScopeOf(t.tree, s.tree) {
		// t is a scope of a tree that holds, as an unchecked collector,
		// a scope of s's tree: collecting t would collect some of what
		// s's tree does (rule 1), whatever t and s are.
		w.registerScopeAs(s, ch, t, mode, want, nil)
		return
	}
	if ahead(t.tree, s.tree) {
		// A closed scope describes and collects nothing, nor does a
		// scope nested in one whose Close was cut short: the model
		// leaves those out.
		if t.state != open || t.tree.scopes[0].state != open {
			return
		}
		if !describesNothing(t) {
			// Rule 2: s cannot see through the forwarder, and the
			// registry decides; what t describes is what s's tree
			// registered for it, unless the wrappers or s's view
			// rename it ("What is not promised").
			o := w.asCollector(t)
			w.registerScopeAs(s, ch, t, mode, w.m.register(s, ch, o, promtest.Pass, nil), o)
			return
		}
		// t describes nothing: where its tree is on a forwarder over
		// s's tree, whose collector of unchecked ones a scope of s's
		// tree holds, t collects some of what that one does, and is
		// refused (rule 1). Where that collector was never registered,
		// t owns nothing, and s can see nothing of t's tree: it is
		// accepted, as an unchecked collector, after which its tree's
		// unchecked collectors are refused ("What is not promised").
		// The model leaves out the others: the tree's collector deeper
		// in, through more forwarders, one taken back, and the trees
		// that forward to t's.
		v := t.tree.via
		switch {
		case v.scope.tree != s.tree:
			return
		case slices.ContainsFunc(v.scope.owns(), func(r *mReg) bool { return r.base == v.hub }):
			w.registerScopeAs(s, ch, t, mode, want, nil)
		case v.hub == nil && s.tree.via == nil && !w.forwardedTo(t.tree):
			o := w.asCollector(t)
			w.registerScopeAs(s, ch, t, mode, w.m.register(s, ch, o, promtest.Pass, nil), o)
		}
		return
	}
	// A closed scope describes and collects nothing, and the one behind a
	// forwarder returns ErrClosed or, once the tree's collector of
	// unchecked ones is there, is not asked: the model leaves those out.
	behind, closedOnTheWay := false, t.state != open
	for v := s.tree.via; v != nil && !behind; v = v.scope.tree.via {
		behind = v.scope.tree == t.tree
		closedOnTheWay = closedOnTheWay || v.scope.state != open
	}
	if t.tree != s.tree && (!behind || closedOnTheWay) {
		return
	}
	if v := s.tree.via; behind && v.hub == nil && s.state == open && s.view.clash == nil && describesNothing(t) {
		// t describes nothing: the tree registers its collector of
		// unchecked ones first, and, refused, takes it back. A tree on
		// the way keeps the one it registered for it, empty ("What is
		// not promised"). If the scope behind refuses that collector (a
		// scope closed on its own way, say), its error is returned, as
		// for any unchecked collector (rule 2).
		hub := &object{name: "the unchecked collectors of " + s.tree.scopes[0].path, hub: s.tree}
		if o := w.m.register(v.scope, v.chain, hub, promtest.Pass, nil); o.kind == kOK {
			w.m.unregister(v.scope, v.chain, hub, promtest.Pass)
		} else {
			want = o
		}
	}
	w.registerScopeAs(s, ch, t, mode, want, nil)
}

// forwardedTo reports whether a tree on a forwarder over tree has
// registered its collector of unchecked ones there.
func (w *world) forwardedTo(tree *mTree) bool {
	return slices.ContainsFunc(w.scopes, func(s *mScope) bool {
		v := s.tree.via
		return v != nil && v.scope.tree == tree && v.hub != nil
	})
}

// ahead reports whether tree registers into behind through forwarders.
func ahead(tree, behind *mTree) bool {
	for v := tree.via; v != nil; v = v.scope.tree.via {
		if v.scope.tree == behind {
			return true
		}
	}
	return false
}

// asCollector returns t as a collector (rule 19): it describes what t owns
// now, as the parent sees it, and collects what t gathers, whatever t owns
// by then. It is one object for t, since it is one collector; what it
// describes is read anew each time it is registered.
func (w *world) asCollector(t *mScope) *object {
	if t.obj == nil {
		t.obj = &object{
			name: t.path,
			get:  func() prometheus.Collector { return t.real },
			same: func(c prometheus.Collector) bool { return c == prometheus.Collector(t.real) },
			dyn:  func() []mSeries { return w.m.scopeSeries(t) },
			of:   t,
		}
	}
	var ds []mDesc
	for _, r := range w.m.gathered(t) {
		ds = append(ds, wrapDescs(r.given, slices.Concat(r.chain, r.scope.view.wraps())...)...)
	}
	t.obj.descs = ds
	return t.obj
}

// registerScopeAs registers t through s and the wrappers ch, and checks the
// outcome against want; o is t as a collector, if the model follows it.
func (w *world) registerScopeAs(s *mScope, ch []wrap, t *mScope, mode int, want outcome, o *object) {
	target := chainString(s.path2(), ch)
	r := through(s.real, ch)
	var passed prometheus.Collector
	if o != nil {
		passed = passedThrough(t.real, ch)
	}
	if mode == modeRegister {
		w.say("err = %s.Register(%s)", target, t.path2())
		w.checkErr("Register", r.Register(t.real), want, o, passed)
		return
	}
	w.say("%s.MustRegister(%s)", target, t.path2())
	v := promtest.Panic(func() { r.MustRegister(t.real) })
	w.checkPanic("MustRegister", v, want, o, passed, s, len(ch) == 0)
}

// registerRegistry applies rule 1 to the registry registered through s,
// through the wrappers chain: the registry that s's tree registers into, as
// it is or through client_golang's wrappers, is refused, and nothing is
// registered. (The registry behind the faulty parent, a Registerer of the
// user's own, and the one a tree on a forwarder reaches, are not seen
// ("What is not promised"); and a registry that a tree does not register
// into is a collector whose Describe changes with what it holds, which the
// model does not follow: the model leaves those out.)
func (w *world) registerRegistry(in *input) {
	s, ch := w.scope(in), chain(in)
	mode := in.n(nModes)
	if s == nil || s.tree.reg != w.mreg || s.tree.parent || s.tree.via != nil {
		return
	}
	want := outcome{kind: kOwnTree, orClosed: s.state != open, orLabel: s.view.clash}
	target := chainString(s.path2(), ch)
	r := through(s.real, ch)
	if mode == modeRegister {
		w.say("err = %s.Register(reg)", target)
		w.checkErr("Register", r.Register(w.reg), want, nil, nil)
		return
	}
	w.say("%s.MustRegister(reg)", target)
	v := promtest.Panic(func() { r.MustRegister(w.reg) })
	w.checkPanic("MustRegister", v, want, nil, nil, s, len(ch) == 0)
}

// shift changes what the shifty collector describes: g0, g1 or nothing.
// Registrations made before keep what it described then (rules 8 and 11).
func (w *world) shift(in *input) {
	names := [][]string{{"g0"}, {"g1"}, nil}[in.n(3)]
	w.say("s0.names = %q // shifty's Describe changes", names)
	w.describe(w.pool[cShift], names...)
}

// describesNothing reports whether t, as a collector, describes nothing
// (rule 19): it owns nothing, or an unchecked collector.
func describesNothing(t *mScope) bool {
	rs := t.owns()
	return len(rs) == 0 || slices.ContainsFunc(rs, func(r *mReg) bool { return r.pre == "" })
}

func faultName(f promtest.Fault) string {
	return [...]string{"Pass", "Fail", "Claim", "ClaimNobody", "Refuse", "LieKept", "LieRemoved", "Block", "BlockAfter", "Panicking", "PanicAfter", "Must"}[f]
}

// ---- checks ----

func (w *world) checkErr(what string, err error, want outcome, o *object, passed prometheus.Collector) {
	w.t.Helper()
	if msg := mismatch(err, want, o, passed); msg != "" {
		w.fail("%s returned %v; %s", what, err, msg)
	}
}

// mismatch returns what is wrong with err against want, or "".
// mismatch compares err with want; passed is the collector the scope was
// given, which an AlreadyRegisteredError names as NewCollector (rule 3).
func mismatch(err error, want outcome, o *object, passed prometheus.Collector) string {
	var are prometheus.AlreadyRegisteredError
	isARE := errors.As(err, &are)
	names := func(labels []string) bool {
		if err == nil || isARE {
			return false
		}
		if len(labels) == 0 {
			return true
		}
		for _, l := range labels {
			if strings.Contains(err.Error(), l) {
				return true
			}
		}
		return false
	}
	if want.orClosed && errors.Is(err, registry.ErrClosed) || want.orLabel != nil && names(want.orLabel) {
		return ""
	}
	switch want.kind {
	case kOK:
		if err != nil {
			return "want nil (rule 2)"
		}
	case kNil:
		if !errors.Is(err, registry.ErrNilCollector) {
			return "want ErrNilCollector (rule 1)"
		}
	case kClosed:
		if !errors.Is(err, registry.ErrClosed) {
			return "want ErrClosed (rule 1)"
		}
	case kLabel:
		if !names(want.labels) {
			return fmt.Sprintf("want an error naming one of %q (rules 1, 16)", want.labels)
		}
	case kRefused:
		if !names(want.labels) {
			return fmt.Sprintf("want the registry's own error (rule 2), naming one of %q if any", want.labels)
		}
	case kInjected:
		if !errors.Is(err, promtest.ErrInjected) {
			return "want the parent's error (rule 2)"
		}
	case kOwnTree:
		if err == nil || isARE || errors.Is(err, registry.ErrClosed) || errors.Is(err, registry.ErrNilCollector) {
			return "want the error for a scope of the scope's own tree (rule 1)"
		}
	case kZero:
		if err == nil || isARE || errors.Is(err, registry.ErrClosed) || errors.Is(err, registry.ErrNilCollector) || !strings.Contains(err.Error(), "zero vector") {
			return "want the error for a zero vector (rule 1)"
		}
	case kTaken:
		if !isARE {
			return "want an AlreadyRegisteredError (rule 2)"
		}
		if !want.existing(are.ExistingCollector) {
			return fmt.Sprintf("ExistingCollector is %s, not the collector its owner registered (rule 3)", shown(are.ExistingCollector))
		}
		if o == nil || !isPassed(are.NewCollector, passed, o) {
			return fmt.Sprintf("NewCollector is %s, want the collector registered (rule 3)", shown(are.NewCollector))
		}
	}
	return ""
}

// isPassed reports whether got is o as passed shows it: o's collector as
// given to the parent (through wrappers, as they pass it on), by
// reflect.DeepEqual. DeepEqual calls no two non-nil functions equal, so for
// a value that holds one, got must be of passed's type, describe what passed
// describes, and stand for o once a registry has unwrapped it; its wrappers
// are then checked by what they add in all, not one by one.
func isPassed(got, passed prometheus.Collector, o *object) bool {
	if reflect.DeepEqual(got, passed) {
		return true
	}
	if !o.fn || reflect.TypeOf(got) != reflect.TypeOf(passed) || !slices.Equal(descStrings(got), descStrings(passed)) {
		return false
	}
	r := prometheus.NewRegistry()
	if r.Register(got) != nil {
		return false
	}
	are, ok := r.Register(got).(prometheus.AlreadyRegisteredError) //nolint:errorlint // a registry returns it as it is
	return ok && o.same(are.ExistingCollector)
}

// descStrings returns what c describes, as strings.
func descStrings(c prometheus.Collector) []string {
	var out []string
	for _, d := range describe.Descs(c) {
		out = append(out, d.String())
	}
	return out
}

// shown names c in a failure message: its type and what it describes.
// (A value that holds itself cannot be printed with %v.)
func shown(c prometheus.Collector) string {
	if c == nil {
		return "nil"
	}
	return fmt.Sprintf("%T describing %q", c, descStrings(c))
}

// checkPanic checks MustRegister's panic (rule 4). named: the scope's own
// MustRegister, whose AlreadyRegisteredError names the holding scope, and
// whose other errors of the parent's name s, the scope refused.
func (w *world) checkPanic(what string, v any, want outcome, o *object, passed prometheus.Collector, s *mScope, named bool) {
	w.t.Helper()
	if want.kind == kOK {
		if v != nil {
			w.fail("%s panicked with %v, want no panic", what, v)
		}
		return
	}
	err, ok := v.(error)
	if !ok {
		w.fail("%s panicked with %T %v, want an error", what, v, v)
	}
	if msg := mismatch(err, want, o, passed); msg != "" {
		w.fail("%s panicked with %v; %s (rule 4)", what, err, msg)
	}
	if !named || s.view.clash != nil {
		return
	}
	// Rule 4: Register's error, wrapped with the String of the scope
	// refused if it has one.
	switch refused := "registry: scope " + s.str() + ": "; {
	case s.str() == "":
		if k := want.kind; (k == kRefused || k == kInjected) && strings.HasPrefix(err.Error(), "registry: scope ") {
			w.fail("%s panicked with %q, want the parent's error as it is: the scope has no name, labels or prefix (rule 4)", what, err)
		}
		if want.kind != kTaken {
			return
		}
	case !strings.HasPrefix(err.Error(), refused):
		w.fail("%s panicked with %q, want it to begin %q (rule 4)", what, err, refused)
	case want.kind != kTaken:
		return
	}
	// Rule 4: the scope holding the metric, or outside the tree.
	says := func(holder string) bool { return strings.Contains(err.Error(), " is already registered "+holder+": ") }
	name := func(h *mScope) string {
		var named string
		switch {
		case h == s:
			return "by this scope"
		case h.str() == s.str() && h.str() == "":
			named = "by another scope with no name, labels or prefix"
		case h.str() == s.str():
			named = "by another scope " + h.str()
		case h.str() == "":
			named = "by a scope with no name, labels or prefix"
		default:
			named = "by scope " + h.str()
		}
		if h.str() == s.str() && h.at != "" {
			named += " made at " + h.at
		}
		// Nested scopes' paths go on from the paths of those they are
		// nested in.
		switch {
		case s.tree == h.tree && strings.HasPrefix(h.path, s.path+"/"):
			named += ", nested in this one"
		case s.tree == h.tree && strings.HasPrefix(s.path, h.path+"/"):
			named += ", which this one is nested in"
		}
		return named
	}
	switch {
	case len(want.holders) == 0:
		if !says("outside the scope's tree") {
			w.fail("%s panicked with %q, want it to say the metric is held outside the scope's tree (rule 4)", what, err)
		}
	case !slices.ContainsFunc(want.holders, func(h *mScope) bool { return says(name(h)) }):
		w.fail("%s panicked with %q, want it to name the scope holding the metric, %s (rule 4)", what, err, name(want.holders[0]))
	}
}

// checkClose checks Close's error against rule 11: one UnregisterError
// wrapping ErrNotRegistered per registration reported, in the order of the
// Close, combined with multierr, each naming the metrics.
func (w *world) checkClose(s *mScope, err error, want []wantUE) {
	w.t.Helper()
	got := multierr.Errors(err)
	var ues []*registry.UnregisterError
	var des []*registry.DeleteError
	for _, e := range got {
		var ue *registry.UnregisterError
		var de *registry.DeleteError
		switch {
		case errors.As(e, &de):
			des = append(des, de)
		case !errors.As(e, &ue) || !errors.Is(e, registry.ErrNotRegistered):
			w.fail("Close returned %v, which is not an UnregisterError wrapping ErrNotRegistered (rule 11) or a DeleteError (rule 18)", e)
		default:
			ues = append(ues, ue)
		}
	}
	// Rule 18: the DeleteErrors, in the order of the Close.
	var wantDel []wantUE
	want = slices.DeleteFunc(slices.Clone(want), func(u wantUE) bool {
		if u.left != nil {
			wantDel = append(wantDel, u)
		}
		return u.left != nil
	})
	sameDel := len(des) == len(wantDel)
	for i := 0; sameDel && i < len(des); i++ {
		sameDel = slices.Equal(des[i].Series, wantDel[i].left) && des[i].Scope == wantDel[i].scope.str()
	}
	if !sameDel {
		var wd, gd []string
		for _, u := range wantDel {
			wd = append(wd, fmt.Sprintf("%s: %q", u.scope.str(), u.left))
		}
		for _, d := range des {
			gd = append(gd, fmt.Sprintf("%s: %q", d.Scope, d.Series))
		}
		w.fail("Close reported the DeleteErrors %q, want %q (rule 18)", gd, wd)
	}
	if !matchUEs(ues, want) {
		var wd []string
		for _, u := range want {
			wd = append(wd, fmt.Sprintf("%s of %s %q (maybe %v)", u.reg.base.name, u.reg.scope.path, u.reg.names, u.maybe))
		}
		var gd []string
		for _, u := range ues {
			gd = append(gd, fmt.Sprintf("%s: %q", u.Scope, u.Metrics))
		}
		w.fail("Close reported %q, want %q (rule 11)", gd, wd)
	}
}

func matchUEs(got []*registry.UnregisterError, want []wantUE) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if len(got) > 0 && ueIs(got[0], want[0].reg) && matchUEs(got[1:], want[1:]) {
		return true
	}
	return want[0].maybe && matchUEs(got, want[1:])
}

// ueIs reports whether ue reports r: the metrics as the outermost scope's
// parent sees them, and the scope that owned r (rules 11, 24).
func ueIs(ue *registry.UnregisterError, r *mReg) bool {
	if !slices.Equal(ue.Metrics, r.names) {
		return false
	}
	return ue.Scope == r.scope.str()
}

// check compares everything observable with the model after an operation.
func (w *world) check() {
	w.t.Helper()
	for _, reg := range []*mRegistry{w.mreg, w.mpar} {
		mfs, err := reg.real.Gather()
		if msg := compareSeries(mfs, err, w.m.exposed(reg)); msg != "" {
			w.fail("%s exposes the wrong series (rule 22): %s", reg.name, msg)
		}
	}
	for _, s := range w.scopes {
		// Rule 23; which of two values of a label set twice a scope
		// shows is not said.
		if got := s.real.String(); s.view.clash == nil && got != s.str() {
			w.fail("%s: String is %q, want %q (rule 23)", s.path, got, s.str())
		}
		want := w.m.scopeSeries(s)
		if n := len(w.m.gathered(s)); s.state == closed && s.real.Len() != 0 || s.state != closed && s.real.Len() != n {
			w.fail("%s (%s): Len is %d, want %d (rule 19)", s.path, stateNames[s.state], s.real.Len(), n)
		}
		mfs, err := s.real.Gather()
		if s.state == closed {
			if len(mfs) != 0 || err != nil {
				w.fail("%s is closed, yet gathers %q, %v (rule 12)", s.path, promtest.Lines(mfs), err)
			}
			continue
		}
		if msg := compareSeries(mfs, err, want); msg != "" {
			w.fail("%s (%s) gathers the wrong series (rule 19): %s", s.path, stateNames[s.state], msg)
		}
		// Rule 19: a scope is also a Collector of the same, which a pedantic
		// registry holds to describing everything it collects. What it
		// owns through a Register the parent panicked on, which the
		// registry did not accept, or on a parent that keeps nothing,
		// nothing vetted, and a scope of the program's, which describes
		// what it owned when it was registered and collects what it
		// owns now: a registry may refuse it then.
		if slices.ContainsFunc(s.owns(), func(r *mReg) bool { return r.unvetted || r.base.shifts() }) {
			continue
		}
		r := prometheus.NewPedanticRegistry()
		if err := r.Register(s.real); err != nil {
			w.fail("%s (%s) as a collector: a registry refuses it: %v (rule 19)", s.path, stateNames[s.state], err)
		}
		mfs, err = r.Gather()
		if msg := compareSeries(mfs, err, want); msg != "" {
			w.fail("%s (%s) as a collector collects the wrong series (rule 19): %s", s.path, stateNames[s.state], msg)
		}
	}
}

// page is what Handler must show of s (rule 25): its String (which of two
// values of a label set twice it shows is not said: got's is taken), where
// it was made (rule 24), its state, the registrations it owns itself, in
// order, by the names the parent of its tree sees, the series its pending
// DeleteOnClose calls name, and the scopes nested in it that are not
// closed.
func (s *mScope) page(got *page) page {
	p := page{Scope: s.str(), Created: s.at, State: stateNames[s.state], Metrics: []string{}, Deletes: []string{}, Scopes: []page{}}
	if s.view.clash != nil && got != nil {
		p.Scope = got.Scope
	}
	for _, st := range s.steps {
		switch {
		case st.reg != nil && st.reg.live:
			p.Collectors++
			p.Metrics = append(p.Metrics, st.reg.names...)
			if st.reg.pre == "" {
				p.Unchecked++
			}
		case st.del != nil:
			sel := selector(sortedPairs(pairMap(st.del.labels)))
			// A vector that describes nothing (the user's own here,
			// and the one that panics) is named by the labels alone.
			shown := []string{""}
			if !st.del.panics {
				shown = shown[:0]
				for _, v := range st.del.vecs {
					name := v.name
					if v.own {
						name = ""
					}
					shown = append(shown, name)
				}
			}
			for _, name := range shown {
				p.Deletes = append(p.Deletes, name+sel)
			}
		}
	}
	for _, st := range s.steps {
		if st.sub != nil && st.sub.state != closed {
			var g *page
			if got != nil && len(p.Scopes) < len(got.Scopes) {
				g = &got.Scopes[len(p.Scopes)]
			}
			p.Scopes = append(p.Scopes, st.sub.page(g))
		}
	}
	return p
}

// checkPages compares what Handler shows of the Index and of each tree that
// is not listed in it with the model (rule 25): the Index lists the
// outermost scopes made with WithIndex that are not closed, oldest first.
func (w *world) checkPages() {
	w.t.Helper()
	compare := func(what string, x registry.Scopes, roots []*mScope) {
		w.t.Helper()
		rec := httptest.NewRecorder()
		registry.Handler(x).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/?format=json", nil))
		var got struct{ Scopes []page }
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			w.fail("Handler(%s): %v", what, err)
		}
		want := []page{}
		for i, r := range roots {
			var g *page
			if i < len(got.Scopes) {
				g = &got.Scopes[i]
			}
			want = append(want, r.page(g))
		}
		if !reflect.DeepEqual(got.Scopes, want) {
			gj, _ := json.Marshal(got.Scopes)
			wj, _ := json.Marshal(want)
			w.fail("Handler(%s) shows\n\t%s\nwant\n\t%s (rule 25)", what, gj, wj)
		}
	}
	var listed []*mScope
	for _, s := range w.scopes {
		switch top := s.tree.scopes[0]; {
		case s != top:
		case s.tree.listed && s.state != closed:
			listed = append(listed, s)
		case !s.tree.listed:
			compare(s.path, s.real, []*mScope{s})
		}
	}
	compare("ix", w.ix, listed)
}

// compareSeries compares what a Gather returned with want. A series
// collected twice, or with a label set twice, makes a registry's Gather fail
// and keep one or none of them. One collected undescribed is not kept, and
// the same series of another collector may be kept or not, as the registry
// collects one or the other first.
func compareSeries(mfs []*dto.MetricFamily, err error, want []mSeries) string {
	cands := map[string][]float64{}
	vanish := map[string]bool{}
	failing := false
	for _, s := range want {
		if s.bad || s.undesc {
			failing = true
			vanish[s.key()] = vanish[s.key()] || s.undesc
			continue
		}
		if _, ok := cands[s.key()]; ok {
			failing = true
		}
		cands[s.key()] = append(cands[s.key()], s.value)
	}
	lines := promtest.Lines(mfs)
	got := promtest.Values(mfs)
	var wantLines []string
	for _, k := range slices.Sorted(maps.Keys(cands)) {
		wantLines = append(wantLines, fmt.Sprintf("%s %v", k, cands[k]))
	}
	if len(lines) != len(got) {
		return fmt.Sprintf("a series twice in %q", lines)
	}
	for k, v := range got {
		if !slices.Contains(cands[k], v) {
			return fmt.Sprintf("got %q, want %q", lines, wantLines)
		}
	}
	for k := range cands {
		if _, ok := got[k]; !ok && !vanish[k] {
			return fmt.Sprintf("got %q, want %q", lines, wantLines)
		}
	}
	if failing != (err != nil) {
		return fmt.Sprintf("Gather error %v, want one: %v (series %q)", err, failing, lines)
	}
	return ""
}

// ---- seeds ----

// A seed is a program that tells one story.
type seed struct {
	name    string
	program []byte
}

// Builders of programs, one per operation, so that a seed reads as the
// story it tells. Scopes are numbered in the order they are made.

func prog(ops ...[]byte) []byte { return slices.Concat(ops...) }

// opts: prefix is -1 for none, else an index into scopePrefixes; labels are
// lbl bytes.
func opts(prefix int, labels ...int) []byte {
	f := len(labels) << 1
	out := []byte{0}
	if prefix >= 0 {
		f |= 1
		out = append(out, byte(prefix))
	}
	out[0] = byte(f)
	for _, l := range labels {
		out = append(out, byte(l))
	}
	return out
}

func noOpts() []byte { return opts(-1) }

// unnamed makes o the options of a scope without WithName.
func unnamed(o []byte) []byte {
	o[0] |= 0x80
	return o
}

// lbl is label l<name> with value labelValues[value].
func lbl(name, value int) int { return name | value<<3 }

// wp is the client_golang prefix wrapper wrapPrefixes[i]; wl the label
// wrapper {l<name>: labelValues[value]}; wnone the label wrapper with no
// labels.
func wp(i int) byte           { return byte(i << 1) }
func wl(name, value int) byte { return byte(1 | name<<1 | value<<4) }
func wnone() byte             { return 1 | 0x20 }

// owp and owl are wrappers of the registry: the prefix w_, or {o<n>: value}.
func owp() byte             { return 0 }
func owl(n, value int) byte { return byte(1 | n<<1 | value<<2) }

func root(kind int, o []byte) []byte { return prog([]byte{opRoot, byte(kind)}, o) }

func rootWrapped(outer []byte, o []byte) []byte {
	return prog([]byte{opRoot, onWrapped, byte(len(outer) - 1)}, outer, o)
}

func rootOnScope(scope int, ws []byte, o []byte) []byte {
	return prog([]byte{opRoot, onScope, byte(scope), byte(len(ws))}, ws, o)
}

func nest(scope, how int, o []byte) []byte { return prog([]byte{opNest, byte(scope), byte(how)}, o) }

func nestWrapped(scope int, ws []byte, o []byte) []byte {
	return prog([]byte{opNest, byte(scope), byWrappers, byte(len(ws) - 1)}, ws, o)
}

func register(scope int, ws []byte, c, mode, fault int) []byte {
	return prog([]byte{opRegister, byte(scope), byte(len(ws))}, ws, []byte{byte(c), byte(mode), byte(fault)})
}

func mustTwo(scope int, ws []byte, c1, c2 int) []byte {
	return prog([]byte{opMustTwo, byte(scope), byte(len(ws))}, ws, []byte{byte(c1), byte(c2)})
}

func unregister(scope int, ws []byte, c, fault int) []byte {
	return prog([]byte{opUnregister, byte(scope), byte(len(ws))}, ws, []byte{byte(c), byte(fault)})
}

func closeScope(scope, fault, which int) []byte {
	return []byte{opClose, byte(scope), byte(fault), byte(which)}
}

func outUnregister(scope int, ws []byte, c int) []byte {
	return prog([]byte{opOutUnregister, byte(scope), byte(len(ws))}, ws, []byte{byte(c)})
}

func outRegister(scope int, ws []byte, c int) []byte {
	return prog([]byte{opOutRegister, byte(scope), byte(len(ws))}, ws, []byte{byte(c)})
}

func addSeries(vec, tenant, link, amount int) []byte {
	return []byte{opSeries, byte(vec), byte(tenant | link<<1), byte(amount - 1)}
}

func registerScope(scope int, ws []byte, other, mode int) []byte {
	return prog([]byte{opRegisterScope, byte(scope), byte(len(ws))}, ws, []byte{byte(other), byte(mode)})
}

func registerRegistry(scope int, ws []byte, mode int) []byte {
	return prog([]byte{opRegisterRegistry, byte(scope), byte(len(ws))}, ws, []byte{byte(mode)})
}

// deleteOnClose: labels indexes deleteLabels; vecs is a vector index
// (vCurried included), with 4 added for the shared vector too, or 0x38 for
// none, 0x30 for a nil one, 0x28 for one that panics, 0x20 for the curried
// vector behind a Deleter that is no Collector.
func deleteOnClose(scope, labels, vecs int) []byte {
	return []byte{opDelete, byte(scope), byte(labels), byte(vecs)}
}

// shift: what is 0 for g0, 1 for g1, 2 for nothing.
func shift(what int) []byte { return []byte{opShift, byte(what)} }

var none []byte

var seeds = []seed{
	{
		name: "a scope of a tree on a forwarder over the scope",
		// s1 is on a forwarder over s0, and registers u0: its collector
		// of unchecked ones is in s0. s1 describes nothing, and
		// collecting it would collect u0 again: s0 refuses it, as does
		// s2, nested in s0, through MustRegister and a wrapper (rule 1).
		program: prog(
			root(onReg, noOpts()),
			rootOnScope(0, none, opts(-1, lbl(1, 0))),
			register(1, none, cU0, modeRegister, noFault),
			registerScope(0, none, 1, modeRegister),
			nest(0, byChild, noOpts()),
			registerScope(2, []byte{wp(0)}, 1, modeMust),
		),
	},
	{
		name: "a Deleter that is no Collector",
		// vec0a has a series for {tenant="a",link="x"}. s0 asks to delete
		// {link="x"} from the vector curried with link="x", which matches
		// nothing: Close reports the series left. s1 asks the same of that
		// vector behind a Deleter that is no Collector, which Close cannot
		// ask what it holds: nothing is reported (rule 18).
		program: prog(
			root(onReg, noOpts()),
			register(0, none, cVec0a, modeRegister, noFault),
			addSeries(vVec0a, 0, 0, 1),
			deleteOnClose(0, 2, vCurried),
			closeScope(0, noFault, 0),
			root(onReg, noOpts()),
			deleteOnClose(1, 2, 0x20),
			closeScope(1, noFault, 0),
		),
	},
	{
		name: "a Deleter of the user's own that is a Collector",
		// vec0a has a series for {tenant="a",link="x"}. s0 asks to delete
		// {link="x"} from the curried vector behind a Deleter of the
		// user's own that is a Collector, and {link="y",tenant="a"} from
		// the bystander's shared vector behind another, which has no
		// label link. Neither is described. Close deletes nothing,
		// collects the first, and reports the series left; nothing of the
		// shared vector carries link (rule 18).
		program: prog(
			root(onReg, noOpts()),
			register(0, none, cVec0a, modeRegister, noFault),
			addSeries(vVec0a, 0, 0, 1),
			deleteOnClose(0, 2, 0x60),
			deleteOnClose(0, 3, 0xa0),
			closeScope(0, noFault, 0),
		),
	},
	{
		name: "an Index lists its trees until they close",
		// s0 on the faulty parent and s2 on reg are made with WithIndex;
		// s1{l0="x"} is nested in s0 through a wrapper, registers g0a
		// and asks to delete {tenant="a"} from vec0a; s2 registers u0.
		// The first Close of s0 runs that deletion, then panics taking
		// g0a back: s0 and s1 are closing, still listed with what they
		// own. The second Close ends it, and s0 leaves the Index (rules
		// 14, 24, 25).
		program: prog(
			root(onParent|0x80, noOpts()),
			nestWrapped(0, []byte{wp(0)}, opts(-1, lbl(0, 0))),
			register(1, none, cG0a, modeRegister, noFault),
			deleteOnClose(1, 0, vVec0a),
			root(onReg|0x80, opts(-1, lbl(1, 0))),
			register(2, none, cU0, modeRegister, noFault),
			closeScope(0, fault4, 0),
			closeScope(0, noFault, 0),
		),
	},
	{
		name: "MustRegister names a holder in another tree of the Index",
		// s0 and s1 are trees on reg listed in the Index, s2 a tree on
		// reg that is not. s0 registers g0a; s1's MustRegister of it
		// names s0, and s2's says it is held outside (rule 4).
		program: prog(
			root(onReg|0x80, noOpts()),
			register(0, none, cG0a, modeMust, noFault),
			root(onReg|0x80, noOpts()),
			register(1, none, cG0a, modeMust, noFault),
			root(onReg, noOpts()),
			register(2, none, cG0a, modeMust, noFault),
		),
	},
	{
		name: "parents that keep nothing",
		// s0 is on a client_golang wrapper of a nil Registerer, s2 on a
		// Registerer of the user's own that accepts everything and keeps
		// nothing; each registers g0a twice, u0, and, nested in it, g1a,
		// and unregisters g0a: false, since nothing holds it, and the
		// scope forgets both. Close reports every checked registration
		// on s2's parent, s3's g1a, and none on s0's (rules 9, 11).
		program: prog(
			root(onNowhere, noOpts()),
			register(0, none, cG0a, modeRegister, noFault),
			register(0, none, cG0a, modeRegister, noFault),
			register(0, none, cU0, modeRegister, noFault),
			nest(0, byChild, opts(-1, lbl(0, 0))),
			register(1, none, cG1a, modeRegister, noFault),
			unregister(0, none, cG0a, noFault),
			closeScope(0, noFault, 0),
			root(onDiscard, noOpts()),
			register(2, none, cG0a, modeRegister, noFault),
			register(2, none, cG0a, modeRegister, noFault),
			register(2, none, cU0, modeRegister, noFault),
			nest(2, byChild, opts(-1, lbl(0, 0))),
			register(3, none, cG1a, modeRegister, noFault),
			register(3, none, cG1a, modeRegister, noFault),
			unregister(2, none, cG0a, noFault),
			closeScope(2, noFault, 0),
		),
	},
	{
		name: "a collector whose Describe changes",
		// s0 registers shifty while it describes g0, and again, through
		// p_, once it describes g1. Unregister(shifty), describing g1 now,
		// finds neither registration with that identity (the second is
		// p_g1) and takes the newest of the same collector, p_g1, whatever
		// it described. s1{l0="x"} registers shifty describing g0, and,
		// describing nothing, again: Close takes both back by what they
		// described then, and g0a can be registered on the registry
		// (rules 8, 10, 11).
		program: prog(
			root(onReg, noOpts()),
			register(0, none, cShift, modeRegister, noFault),
			shift(1),
			register(0, []byte{wp(0)}, cShift, modeRegister, noFault),
			unregister(0, none, cShift, noFault),
			nest(0, byChild, opts(-1, lbl(0, 0))),
			shift(0),
			register(1, none, cShift, modeRegister, noFault),
			shift(2),
			register(1, none, cShift, modeRegister, noFault),
			closeScope(0, noFault, 0),
			outRegister(0, none, cG0a),
		),
	},
	{
		name: "Unregister finds by what a collector describes now",
		// s0 registers shifty describing g0, then g1: two registrations of
		// one collector. Describing g0 again, Unregister takes the older,
		// g0, the one with the identity it describes now; an outsider then
		// registers g1a, refused: the newer still holds g1. Describing
		// nothing, Unregister takes the newest of the same collector, g1
		// (rule 8).
		program: prog(
			root(onReg, noOpts()),
			register(0, none, cShift, modeRegister, noFault),
			shift(1),
			register(0, none, cShift, modeRegister, noFault),
			shift(0),
			unregister(0, none, cShift, noFault),
			outRegister(0, none, cG1a),
			shift(2),
			unregister(0, none, cShift, noFault),
			outRegister(0, none, cG1a),
		),
	},
	{
		name: "parent panics in Register after the registry",
		// On the faulty parent, s0 registers g0a, which the registry takes,
		// and s1{l0="x"} in it g0a twice, which the registry refuses for
		// its label names, each time with a parent that panics afterwards:
		// the panics go on, and the scopes own all three. Close takes back
		// s0's and reports both of s1's, since the registry refuses the
		// question about them too (rules 2, 11, 22).
		program: prog(
			root(onParent, noOpts()),
			nest(0, byChild, opts(-1, lbl(0, 0))),
			register(0, none, cG0a, modeRegister, fault4),
			register(1, none, cG0a, modeMust, fault4),
			register(1, none, cG0a, modeMust, fault4),
			closeScope(0, noFault, 0),
		),
	},
	{
		name: "MustRegister names a holder in another tree",
		// s1{l0="x"} in s0 registers g0a; an outsider unregisters it, and
		// s2{l0="x"}, a tree of its own, registers g0a. s3{l0="x"} in s0
		// colliding names s2, not s1, whose registration is gone (rule 4).
		program: prog(
			root(onReg, noOpts()),
			nest(0, byChild, opts(-1, lbl(0, 0))),
			register(1, none, cG0a, modeMust, noFault),
			outUnregister(1, none, cG0a),
			root(onReg, opts(-1, lbl(0, 0))),
			register(2, none, cG0a, modeMust, noFault),
			nest(0, byChild, opts(-1, lbl(0, 0))),
			register(3, none, cG0b, modeMust, noFault),
		),
	},
	{
		name: "outsider meets a gauge registered through a wrapper",
		// s0{l0="x"} registers g0a through a prefix wrapper. An outsider
		// registering g0b with the same name and labels meets s0's
		// registration, which unwraps to g0a itself, not to the wrapper
		// that passed it on (rule 6).
		program: prog(
			root(onReg, opts(-1, lbl(0, 0))),
			register(0, []byte{wp(0)}, cG0a, modeRegister, noFault),
			outRegister(0, []byte{wp(0)}, cG0b),
			closeScope(0, noFault, 0),
		),
	},
	{
		name: "outsider replaces a labelled scope's gauge, then Close",
		// s0{l0="x"} registers g0a. An outsider unregisters g0{l0="x"} and
		// registers g0b with the same labels: it collides with nothing. Close
		// leaves g0b exposed and reports g0 (rules 7, 11, 22).
		program: prog(
			root(onReg, opts(-1, lbl(0, 0))),
			register(0, none, cG0a, modeRegister, noFault),
			outUnregister(0, none, cG0a),
			outRegister(0, none, cG0b),
			closeScope(0, noFault, 0),
		),
	},
	{
		name: "scope through two wrappers of a program scope recycled 3 times",
		// A program scope s0{l0="x"}; three generations of a component,
		// each a scope made on WrapRegistererWithPrefix("p_",
		// WrapRegistererWith({l1="x"}, s0)) with a label of its own, which
		// registers a gauge, a vector and an unchecked collector and closes.
		// Each generation registers again what the last one left (rules 10,
		// 15).
		program: prog(
			root(onReg, opts(-1, lbl(0, 0))),
			nestWrapped(0, []byte{wl(1, 0), wp(0)}, opts(-1, lbl(2, 0))),
			register(1, none, cG0a, modeMust, noFault),
			register(1, none, cVec0a, modeRegister, noFault),
			register(1, none, cU0, modeRegister, noFault),
			addSeries(vVec0a, 0, 0, 1),
			closeScope(1, noFault, 0),
			nestWrapped(0, []byte{wl(1, 0), wp(0)}, opts(-1, lbl(2, 1))),
			register(2, none, cG0a, modeMust, noFault),
			register(2, none, cVec0a, modeRegister, noFault),
			register(2, none, cU0, modeRegister, noFault),
			addSeries(vVec0a, 1, 1, 2),
			closeScope(2, noFault, 0),
			nestWrapped(0, []byte{wl(1, 0), wp(0)}, opts(-1, lbl(2, 0))),
			register(3, none, cG0a, modeMust, noFault),
			register(3, none, cVec0a, modeRegister, noFault),
			register(3, none, cU0, modeRegister, noFault),
			closeScope(3, noFault, 0),
			closeScope(0, noFault, 0),
		),
	},
	{
		name: "parent panics during Close, second Close finishes",
		// On the faulty parent, s0 registers g0a and the pair Gauges0; s1 in
		// it registers g1a and u0. Close panics on g1's Unregister, after
		// the pair and u0 went: g1a, g0a and s1 stay recorded and exposed.
		// The second Close carries on and takes them back (rule 14).
		program: prog(
			root(onParent, noOpts()),
			register(0, none, cG0a, modeRegister, noFault),
			nest(0, byChild, noOpts()),
			register(1, none, cG1a, modeRegister, noFault),
			register(1, none, cU0, modeRegister, noFault),
			register(0, none, cGauges0, modeRegister, noFault),
			closeScope(0, fault4, 1), // the names "g0", "g1", "h0,h1": g1
			register(1, none, cG0b, modeRegister, noFault),
			closeScope(0, noFault, 0),
			closeScope(0, noFault, 0),
		),
	},
	{
		name: "outsider re-registers a no-view scope's gauge, Close takes it",
		// s0 has no view: an outsider unregisters g0a and registers the same
		// g0a again; it is still the scope's (rule 7), Unregister and Close
		// take it. In s1, an outsider replaces g1a's identity with... g1a
		// through a wrapper of its own: not the same collector, left alone.
		program: prog(
			root(onReg, noOpts()),
			register(0, none, cG0a, modeRegister, noFault),
			outUnregister(0, none, cG0a),
			outRegister(0, none, cG0a),
			root(onReg, noOpts()),
			register(1, none, cH0a, modeRegister, noFault),
			outUnregister(1, none, cH0a),
			outRegister(1, []byte{wl(1, 0)}, cH0a),
			outUnregister(1, []byte{wl(1, 0)}, cH0a),
			outRegister(1, none, cH0a),
			unregister(1, none, cH0a, noFault),
			closeScope(0, noFault, 0),
			closeScope(1, noFault, 0),
		),
	},
	{
		name: "twins: a collector registered again after an outsider removed it",
		// s0 registers g0a; an outsider unregisters it; s0 registers g0a
		// again: two registrations, one held (rule 9). An outsider removes
		// that too. Close reports the newer only (rule 11). In s1{l3="y"},
		// through a prefix wrapper, the value valueGauge{g0a} is registered
		// twice the same way; Unregister forgets both twins and says true.
		program: prog(
			root(onReg, noOpts()),
			register(0, none, cG0a, modeRegister, noFault),
			outUnregister(0, none, cG0a),
			register(0, none, cG0a, modeRegister, noFault),
			outUnregister(0, none, cG0a),
			closeScope(0, noFault, 0),
			root(onReg, opts(-1, lbl(3, 1))),
			register(1, []byte{wp(1)}, cValue, modeRegister, noFault),
			outUnregister(1, []byte{wp(1)}, cValue),
			register(1, []byte{wp(1)}, cValue, modeRegister, noFault),
			unregister(1, []byte{wp(1)}, cValue, noFault),
			closeScope(1, noFault, 0),
		),
	},
	{
		name: "values holding a function, a NaN and themselves",
		// In s0, with no view, odd{o0} is registered; an outsider
		// unregisters it and registers an equal value, which is the same
		// collector, so Close takes it back. In s1{l0="y"}, Unregister of
		// an equal value takes it back, and so does Close in s2 (rules 8
		// and 11).
		program: prog(
			root(onReg, noOpts()),
			register(0, none, cOdd, modeRegister, noFault),
			outUnregister(0, none, cOdd),
			outRegister(0, none, cOdd),
			closeScope(0, noFault, 0),
			root(onReg, opts(-1, lbl(0, 1))),
			register(1, none, cOdd, modeRegister, noFault),
			unregister(1, none, cOdd, noFault),
			closeScope(1, noFault, 0),
			root(onReg, noOpts()),
			register(2, none, cOdd, modeRegister, noFault),
			closeScope(2, noFault, 0),
		),
	},
	{
		name: "Unregister finds the same collector, else the identity",
		// In s0{l0="y"} prefix b_: valueGauge{g0a} is found by Unregister(g0a)
		// through its identity; Gauges{h0a, h1a}, a new slice each time, is
		// the same collector; h0a alone collides with the pair's
		// descriptor; u0 is found only as itself (rule 8).
		program: prog(
			root(onReg, opts(1, lbl(0, 1))),
			register(0, none, cValue, modeRegister, noFault),
			register(0, none, cG0a, modeRegister, noFault),
			unregister(0, none, cG0a, noFault),
			register(0, none, cG0b, modeRegister, noFault),
			register(0, none, cGauges0, modeRegister, noFault),
			register(0, none, cH0a, modeRegister, noFault),
			register(0, none, cGauges1, modeRegister, noFault),
			unregister(0, none, cGauges1, noFault),
			register(0, none, cU0, modeRegister, noFault),
			unregister(0, none, cU1, noFault),
			unregister(0, none, cU0, noFault),
			unregister(0, none, cU0, noFault),
			closeScope(0, noFault, 0),
		),
	},
	{
		name: "labels set twice by scopes, wrappers and collectors",
		// s0{l0="x"}; s1 on WrapRegistererWith({l0="y"}, s0) and s2, a
		// child with l0 again, refuse every registration naming l0 (rules 1,
		// 16); k0, which carries l0 itself, and a gauge registered through
		// a wrapper setting l0 are refused by the registry (rule 2).
		program: prog(
			root(onReg, opts(-1, lbl(0, 0))),
			nestWrapped(0, []byte{wl(0, 1)}, noOpts()),
			register(1, none, cG0a, modeRegister, noFault),
			register(1, none, cU0, modeMust, noFault),
			nest(0, byChild, opts(-1, lbl(0, 0), lbl(1, 0))),
			register(2, none, cVec0a, modeRegister, noFault),
			register(0, none, cK0, modeRegister, noFault),
			register(0, []byte{wl(0, 1)}, cG1a, modeMust, noFault),
			register(0, none, cG1a, modeMust, noFault),
			closeScope(0, noFault, 0),
		),
	},
	{
		name: "parent fails and claims on Register",
		// On the faulty parent, s0{l0="x"}'s Register of g0a fails, then is
		// claimed by a stranger (MustRegister), then by nobody named; then
		// it succeeds (rules 2, 3, 4).
		program: prog(
			root(onParent, opts(-1, lbl(0, 0))),
			register(0, none, cG0a, modeRegister, fault1),
			register(0, none, cG0a, modeMust, fault2),
			register(0, none, cG0a, modeRegister, fault3),
			register(0, none, cG0a, modeRegister, noFault),
			closeScope(0, noFault, 0),
		),
	},
	{
		name: "parent refuses or lies on Unregister",
		// s0 has no view: the parent refuses to let g0a go, which stays
		// exposed; registering g0a again collides with it. s1{l1="x"}: a
		// refused g1a is no longer exposed (rule 22); an outsider colliding
		// with its record finds it empty (rule 6). The parent lies about h0a
		// (kept, says true) and about vec0a (removed, says false).
		program: prog(
			root(onParent, noOpts()),
			root(onParent, opts(-1, lbl(1, 0))),
			register(0, none, cG0a, modeRegister, noFault),
			unregister(0, none, cG0a, fault1),
			register(0, none, cG0a, modeRegister, noFault),
			register(1, none, cG1a, modeRegister, noFault),
			unregister(1, none, cG1a, fault1),
			outRegister(1, none, cG1a),
			register(1, none, cH0a, modeRegister, noFault),
			unregister(1, none, cH0a, fault2),
			register(1, none, cVec0a, modeRegister, noFault),
			unregister(1, none, cVec0a, fault3),
			closeScope(1, noFault, 0),
			closeScope(0, noFault, 0),
		),
	},
	{
		name: "parent refuses or lies during Close",
		// Three scopes on the faulty parent, each closed while the parent
		// refuses (reported; exposed only without a view), says true and
		// keeps, or removes and says false (rules 11, 13).
		program: prog(
			root(onParent, noOpts()),
			register(0, none, cG0a, modeRegister, noFault),
			register(0, none, cG1a, modeRegister, noFault),
			closeScope(0, fault1, 0), // "g0", "g1": g0
			root(onParent, opts(0)),
			register(1, none, cG0a, modeRegister, noFault),
			register(1, none, cGauges0, modeRegister, noFault),
			closeScope(1, fault1, 1), // "a_g0", "a_h0,a_h1": the pair
			root(onParent, opts(1, lbl(2, 0))),
			register(2, none, cG0b, modeRegister, noFault),
			nest(2, byNewScope, opts(-1, lbl(3, 0))),
			register(3, none, cG1a, modeRegister, noFault),
			closeScope(2, fault2, 0), // "b_g0", "b_g1": b_g0
			root(onParent, opts(1, lbl(4, 0))),
			register(4, none, cVec0b, modeRegister, noFault),
			addSeries(vVec0b, 0, 1, 3),
			closeScope(4, fault3, 0),
		),
	},
	{
		name: "DeleteOnClose on shared vectors, misused, and after Close",
		// s0 registers vector v0a; s1{l0="x"} in it names the tenant "a"
		// series of v0a and of the bystander's vector. Misuse panics. Close
		// deletes those series; after Close, DeleteOnClose deletes at once
		// (rule 18).
		program: prog(
			root(onReg, noOpts()),
			register(0, none, cVec0a, modeRegister, noFault),
			addSeries(vVec0a, 0, 0, 1),
			addSeries(vVec0a, 1, 0, 2),
			addSeries(vVec0a, 0, 1, 3),
			nest(0, byChild, opts(-1, lbl(0, 0))),
			deleteOnClose(1, 0, vVec0a|4),
			deleteOnClose(1, 4, vVec0a),
			deleteOnClose(1, 0, 0x38),
			deleteOnClose(1, 0, 0x30),
			closeScope(1, noFault, 0),
			closeScope(1, noFault, 0),
			addSeries(vVec0a, 0, 0, 1),
			deleteOnClose(1, 2, vVec0a),
			deleteOnClose(0, 3, vVec0a),
			addSeries(vVec0b, 1, 1, 1),
			deleteOnClose(0, 1, vVec0b),
			closeScope(0, noFault, 0),
		),
	},
	{
		name: "DeleteOnClose on a curried vector",
		// s0 registers v0a, with series a/x, b/x and a/y (tenant/link). Its
		// child names, through v0a curried with link="x", the link "x"
		// series and the link "y" tenant "a" one: a curried label matches
		// nothing, so its Close deletes none and reports both, newest
		// first. s0 then names the tenant "a" series of the curried vector,
		// which go, whatever their link (rule 18).
		program: prog(
			root(onReg, noOpts()),
			register(0, none, cVec0a, modeRegister, noFault),
			addSeries(vVec0a, 0, 0, 1),
			addSeries(vVec0a, 1, 0, 2),
			addSeries(vVec0a, 0, 1, 3),
			nest(0, byChild, noOpts()),
			deleteOnClose(1, 2, vCurried),
			deleteOnClose(1, 3, vCurried),
			closeScope(1, noFault, 0),
			deleteOnClose(0, 0, vCurried),
			closeScope(0, noFault, 0),
		),
	},
	{
		name: "scopes on client_golang wrappers of the registry",
		// s0 is made on WrapRegistererWith({o0="x"},
		// WrapRegistererWithPrefix("w_", reg)): the registry sees w_ and o0,
		// s0's Gather does not (rule 19). An outsider colliding through the
		// same wrappers gets s0's record (rule 6).
		program: prog(
			rootWrapped([]byte{owl(0, 0), owp()}, opts(0, lbl(0, 0))),
			register(0, none, cG0a, modeRegister, noFault),
			register(0, none, cU0, modeRegister, noFault),
			nest(0, byChild, noOpts()),
			register(1, []byte{wp(0)}, cVec0b, modeRegister, noFault),
			addSeries(vVec0b, 0, 0, 2),
			outRegister(0, none, cG0b),
			rootWrapped([]byte{owp()}, noOpts()),
			register(2, none, cG1a, modeRegister, noFault),
			outRegister(2, none, cG1a),
			closeScope(0, noFault, 0),
			closeScope(2, noFault, 0),
		),
	},
	{
		name: "private registry of a nil parent",
		// s0 on nil refuses g0b after g0a, naming g0a (rule 3); s1 in it
		// too, naming s0 (rule 4); its own scope s2 on nil does not.
		program: prog(
			root(onNil, noOpts()),
			register(0, none, cG0a, modeRegister, noFault),
			register(0, none, cG0b, modeRegister, noFault),
			nest(0, byNewScope, noOpts()),
			register(1, none, cG0b, modeMust, noFault),
			root(onNil, noOpts()),
			register(2, none, cG0b, modeMust, noFault),
			closeScope(0, noFault, 0),
			closeScope(2, noFault, 0),
		),
	},
	{
		name: "Close at any depth, twice, and scopes made in closed scopes",
		// s1 in s0 is closed first, twice; it then refuses Register, and a
		// scope made in it is closed (rule 12). Closing s0 later closes s2.
		program: prog(
			root(onReg, opts(0)),
			nest(0, byChild, noOpts()),
			register(1, none, cG0a, modeRegister, noFault),
			closeScope(1, noFault, 0),
			closeScope(1, noFault, 0),
			register(1, none, cG0a, modeRegister, noFault),
			register(1, none, cNil, modeRegister, noFault),
			nest(1, byChild, noOpts()),
			register(2, none, cG1a, modeRegister, noFault),
			nest(0, byNewScope, opts(-1, lbl(5, 1))),
			register(3, none, cG1a, modeRegister, noFault),
			unregister(3, none, cTypedNil, noFault),
			register(0, none, cTypedNil, modeMust, noFault),
			closeScope(0, noFault, 0),
			nest(0, byChild, noOpts()),
			unregister(3, none, cG1a, noFault),
		),
	},
	{
		name: "MustRegister of two stops at the first error",
		// s0{l0="x"} owns g1a. MustRegister(g0a, g1a) registers g0a and
		// panics on g1a; g0a stays registered and owned. MustRegister(u0,
		// nil) registers u0 and panics with ErrNilCollector (rules 1, 4).
		program: prog(
			root(onReg, opts(-1, lbl(0, 0))),
			register(0, none, cG1a, modeRegister, noFault),
			mustTwo(0, none, cG0a, cG1a),
			mustTwo(0, none, cU0, cNil),
			closeScope(0, noFault, 0),
		),
	},
	{
		name: "a zero vector or a nil is refused, through wrappers too",
		// s0{l0="x"} refuses a &prometheus.GaugeVec{}, as it is and
		// through client_golang's wrappers, whose Describe would
		// dereference nil, and MustRegister(g0a, zero) keeps g0a;
		// Unregister of it finds nothing. A nil and a typed nil through
		// wrappers give ErrNilCollector. Closed, s0 may say either
		// (rule 1).
		program: prog(
			root(onReg, opts(-1, lbl(0, 0))),
			register(0, nil, cZero, modeRegister, noFault),
			register(0, []byte{wp(0), wl(1, 1)}, cZero, modeMust, noFault),
			mustTwo(0, []byte{wl(2, 0)}, cG0a, cZero),
			unregister(0, []byte{wp(1)}, cZero, noFault),
			register(0, []byte{wl(1, 1)}, cNil, modeRegister, noFault),
			register(0, []byte{wp(1), wp(0)}, cTypedNil, modeMust, noFault),
			mustTwo(0, []byte{wp(0)}, cG1a, cNil),
			unregister(0, []byte{wl(2, 0)}, cNil, noFault),
			closeScope(0, noFault, 0),
			register(0, []byte{wp(0)}, cZero, modeRegister, noFault),
			register(0, []byte{wp(0)}, cNil, modeRegister, noFault),
		),
	},
	{
		name: "outsider registers first, then the scope collides",
		// An outsider registers g0b with s0's labels before s0 registers
		// g0a: s0's Register names g0b (rule 3), MustRegister says no
		// scope of the tree holds it (rule 4). An outsider's unchecked
		// collector stays for ever.
		program: prog(
			root(onReg, opts(-1, lbl(0, 0))),
			outRegister(0, none, cG0b),
			register(0, none, cG0a, modeRegister, noFault),
			register(0, none, cG0a, modeMust, noFault),
			outRegister(0, none, cU1),
			register(0, none, cU1, modeRegister, noFault),
			closeScope(0, noFault, 0),
		),
	},
	{
		name: "nesting through three wrappers, eight labels",
		// s1 is made on three wrappers of s0 with prefixes and a label,
		// and has eight labels of its own, each set once; s2 in s1 through
		// a prefix wrapper. Registrations there carry every level (rule 15).
		program: prog(
			root(onReg, opts(1)),
			nestWrapped(0, []byte{wp(0), wl(0, 1), wp(1)},
				opts(0, lbl(1, 0), lbl(2, 1), lbl(3, 0), lbl(4, 1), lbl(5, 0), lbl(6, 1), lbl(7, 0), lbl(7, 1))),
			register(1, []byte{wp(1), wl(0, 0)}, cGauges0, modeRegister, noFault),
			nestWrapped(1, []byte{wp(0)}, noOpts()),
			register(2, none, cG1a, modeMust, noFault),
			unregister(1, []byte{wp(1), wl(0, 0)}, cGauges0, noFault),
			closeScope(0, noFault, 0),
		),
	},
	{
		name: "a tree on a forwarder over a wrapper of a scope",
		// s1 is made on a Registerer of the user's own that forwards to
		// WrapRegistererWith({l1="x"}, s0): an outermost scope, whose
		// registrations s0 owns as its user's (rule 17). s1 registers g0a,
		// u0 and v0a with its label l2="x"; s0 and the registry expose them
		// with l1 and l0 too. s1.Close takes them back through s0, and s2,
		// made the same way, registers g0a again.
		program: prog(
			root(onReg, opts(-1, lbl(0, 0))),
			rootOnScope(0, []byte{wl(1, 0)}, opts(-1, lbl(2, 0))),
			register(1, none, cG0a, modeRegister, noFault),
			register(1, none, cU0, modeRegister, noFault),
			register(1, none, cVec0a, modeRegister, noFault),
			addSeries(vVec0a, 0, 0, 1),
			closeScope(1, noFault, 0),
			rootOnScope(0, []byte{wl(1, 0)}, opts(-1, lbl(2, 0))),
			register(2, none, cG0a, modeRegister, noFault),
		),
	},
	{
		name: "registered again by a tree on a forwarder",
		// s1, on a forwarder over s0, registers g0a with l1="x". An
		// outsider removes it from the registry, and s1 registers g0a
		// again: s0 owns both registrations of what is the same collector
		// to it (Words), and gathers and counts it once (rule 19). s1's
		// Close reports the first as nobody's.
		program: prog(
			root(onReg, noOpts()),
			rootOnScope(0, none, opts(-1, lbl(1, 0))),
			register(1, none, cG0a, modeRegister, noFault),
			outUnregister(0, []byte{wl(1, 0)}, cG0a),
			register(1, none, cG0a, modeRegister, noFault),
			closeScope(1, noFault, 0),
		),
	},
	{
		name: "a tree on a forwarder over a tree on a forwarder",
		// s1, with l1="x", is on a forwarder over s0; s2, with l2="x", on
		// a forwarder over s1. s2 registers g0a and u0 through both;
		// Unregister and Close take them back through s1 and s0 (rule
		// 17), and s3, made like s2, registers g0a again.
		program: prog(
			root(onReg, opts(-1, lbl(0, 0))),
			rootOnScope(0, none, opts(-1, lbl(1, 0))),
			rootOnScope(1, none, opts(-1, lbl(2, 0))),
			register(2, none, cG0a, modeRegister, noFault),
			register(2, none, cU0, modeRegister, noFault),
			unregister(2, none, cG0a, noFault),
			register(2, none, cG0a, modeRegister, noFault),
			closeScope(2, noFault, 0),
			rootOnScope(1, none, opts(-1, lbl(2, 0))),
			register(3, none, cG0a, modeRegister, noFault),
		),
	},
	{
		name: "the scope behind a forwarder closes first",
		// s0 closes, taking back what s1, on a forwarder over it,
		// registered through it. s1's Register gets s0's ErrClosed (rule
		// 2), and s1's Close reports its registrations (rule 11).
		program: prog(
			root(onReg, noOpts()),
			rootOnScope(0, none, noOpts()),
			register(1, none, cG0a, modeRegister, noFault),
			register(1, none, cU0, modeRegister, noFault),
			closeScope(0, noFault, 0),
			register(1, none, cG1a, modeRegister, noFault),
			register(1, none, cU1, modeRegister, noFault),
			closeScope(1, noFault, 0),
		),
	},
	{
		name: "the parent panics in Unregister",
		// s0 registers g0a and g1a, and a child with labels registers h0a.
		// The parent panics in the Unregister of g0, before removing it,
		// then in that of h0, after: the panic goes on, and the scopes
		// forget nothing (rule 9). An outsider unregisters g0. Close
		// reports h0, then g0, as nobody's, in their turn (rules 10, 11).
		program: prog(
			root(onParent, noOpts()),
			register(0, none, cG0a, modeRegister, noFault),
			register(0, none, cG1a, modeRegister, noFault),
			nest(0, byChild, opts(-1, lbl(0, 0))),
			register(1, none, cH0a, modeRegister, noFault),
			unregister(0, none, cG0a, fault4),
			unregister(1, none, cH0a, fault5),
			outUnregister(0, none, cG0a),
			closeScope(0, noFault, 0),
		),
	},
	{
		name: "the parent answers Close's questions wrongly",
		// s0 registers g0a; s1, with a label, registers g1a. The parent
		// says a stranger holds g0 when s0's Close asks: s0 reports it and
		// leaves it, exposed, since s0 has no view. It says somebody
		// unnamed holds g1 when s1's Close asks: s1 reports it, and its
		// record, silenced, exposes nothing (rules 11, 13). s2, like s1,
		// then collides with that record, which is nobody's collector
		// (rule 3), and s3 with g0a.
		program: prog(
			root(onParent, noOpts()),
			register(0, none, cG0a, modeRegister, noFault),
			root(onParent, opts(-1, lbl(0, 0))),
			register(1, none, cG1a, modeRegister, noFault),
			closeScope(0, fault6, 0),
			closeScope(1, fault7, 0),
			root(onParent, opts(-1, lbl(0, 0))),
			register(2, none, cG1a, modeMust, noFault),
			root(onParent, noOpts()),
			register(3, none, cG0b, modeRegister, noFault),
		),
	},
	{
		name: "scopes without names",
		// s0 and s1, a child, have no name, labels or prefix: their String
		// is empty. s1 registers g0a; s0's MustRegister of g0b says the
		// holder is a scope with no name (rule 4). s2, a named child with
		// a label, and s3, its child without a name, have s2's name
		// (rule 23); s3's MustRegister of g1b names s2's g1a.
		program: prog(
			root(onReg, unnamed(noOpts())),
			nest(0, byChild, unnamed(noOpts())),
			register(1, none, cG0a, modeMust, noFault),
			register(0, none, cG0b, modeMust, noFault),
			nest(0, byNewScope, opts(-1, lbl(0, 0))),
			nest(2, byChild, unnamed(noOpts())),
			register(2, none, cG1a, modeMust, noFault),
			register(3, none, cG1a, modeMust, noFault),
		),
	},
	{
		name: "the parent fails the tree's collector of unchecked ones",
		// s0's first unchecked collector, u0, makes the tree register its
		// collector of unchecked ones: the parent fails it, then names a
		// stranger, then nobody, as the holder, and Register returns that
		// (rules 2, 3); then it panics after taking it: the panic goes on,
		// s0 owns u0, which the registry does not expose (rule 2). u1 then
		// gets the tree's collector registered, and is exposed.
		program: prog(
			root(onParent, noOpts()),
			register(0, none, cU0, modeRegister, fault1),
			register(0, none, cU0, modeRegister, fault2),
			register(0, none, cU0, modeMust, fault3),
			register(0, none, cU0, modeRegister, fault4),
			register(0, none, cU1, modeRegister, noFault),
			closeScope(0, noFault, 0),
		),
	},
	{
		name: "DeleteOnClose called again",
		// s1, a child of s0, which registers v0a, asks on every pass of
		// a loop to delete link "x" through v0a curried with link="x": a
		// call like one pending adds nothing (rule 18), so its Close
		// reports the curried vector's series once. s0 asks to delete
		// tenant "a" from v0a, then from v0a and the shared vector: the
		// second call is another, and both run.
		program: prog(
			root(onReg, noOpts()),
			register(0, none, cVec0a, modeRegister, noFault),
			nest(0, byChild, noOpts()),
			addSeries(vVec0a, 0, 0, 1),
			deleteOnClose(1, 2, vCurried),
			addSeries(vVec0a, 0, 0, 1),
			deleteOnClose(1, 2, vCurried),
			closeScope(1, noFault, 0),
			deleteOnClose(0, 0, vVec0a),
			deleteOnClose(0, 0, vVec0a|4),
			addSeries(vShared, 0, 0, 1),
			closeScope(0, noFault, 0),
		),
	},
	{
		name: "a scope of the tree registered in it",
		// s0 registers itself; s1, nested in it through a label wrapper,
		// registers s0 through a prefix wrapper, and s0 registers s1, by
		// Register and by MustRegister: each is refused, and nothing is
		// registered (rule 1). Once s0 has closed, ErrClosed is as right.
		program: prog(
			root(onReg, noOpts()),
			register(0, none, cG0a, modeRegister, noFault),
			registerScope(0, none, 0, modeRegister),
			nestWrapped(0, []byte{wl(0, 0)}, noOpts()),
			registerScope(1, []byte{wp(0)}, 0, modeRegister),
			registerScope(0, none, 1, modeMust),
			closeScope(0, noFault, 0),
			registerScope(1, none, 0, modeRegister),
		),
	},
	{
		name: "the scope behind a forwarder registered through it",
		// s1, with a prefix, is on a forwarder over s0. s1 registers s0:
		// it passes s0 on in a collector of its own, which s0 refuses, as
		// it would s0 itself (rules 1, 2, 17); so is s0 through s2, with
		// a label, on a forwarder over s1. s3 owns nothing, so describes
		// nothing: s4, on a forwarder over it, would register it as an
		// unchecked collector, through its one collector of those, which
		// s3 then holds, and is refused too; so is s5, with a prefix, on a
		// forwarder over a prefix wrapper of s3, and s8, on a forwarder
		// over s7, itself on one over s6, which registers s6: s7 keeps
		// the collector of unchecked ones it registered in s6 for it.
		// s7 registers s9, an empty child of s6, which s6's tree would
		// then collect twice: refused too.
		program: prog(
			root(onReg, noOpts()),
			register(0, none, cG0a, modeRegister, noFault),
			rootOnScope(0, none, opts(0)),
			registerScope(1, none, 0, modeRegister),
			rootOnScope(1, none, opts(-1, lbl(0, 0))),
			registerScope(2, none, 0, modeMust),
			root(onReg, noOpts()),
			rootOnScope(3, none, noOpts()),
			registerScope(4, none, 3, modeRegister),
			rootOnScope(3, []byte{wp(0)}, opts(0)),
			registerScope(5, none, 3, modeRegister),
			root(onReg, noOpts()),
			rootOnScope(6, none, noOpts()),
			rootOnScope(7, none, noOpts()),
			registerScope(8, none, 6, modeRegister),
			nest(6, byChild, noOpts()),
			registerScope(7, none, 9, modeRegister),
		),
	},
	{
		name: "the parent panics in a view scope's Close",
		// s0 prefix a_ {l0="x"} on the faulty parent registers h0a. Close
		// panics on its Unregister: h0a stays recorded and exposed (rule
		// 14; Len 1), and s0's Gather returns it (rule 19); the next Close
		// takes it back.
		program: prog(
			root(onParent, opts(0, lbl(0, 0))),
			register(0, none, cH0a, modeRegister, noFault),
			closeScope(0, fault4, 0),
			closeScope(0, noFault, 0),
		),
	},
	{
		name: "a parent built on MustRegister",
		// s0 and s1 on the faulty parent; s0 registers g0a. The parent
		// answers s1's Register of g0b, and then its MustRegister, by
		// panicking with the registry's AlreadyRegisteredError, as a
		// Registerer built on MustRegister does: Register returns it, and
		// MustRegister panics naming s0 (rules 3, 4). s0's Close asks the
		// parent who holds g0's identity, and is answered with the same
		// panic: that is the answer, and Close takes g0a back (rule 2).
		program: prog(
			root(onParent, noOpts()),
			register(0, none, cG0a, modeRegister, noFault),
			root(onParent, noOpts()),
			register(1, none, cG0b, modeRegister, fault5),
			register(1, none, cG0b, modeMust, fault5),
			closeScope(0, fault8, 0),
		),
	},
	{
		name: "a scope of another tree as a collector",
		// other, a scope {l6="t"} of a tree of its own, holds a g1 of 14.
		// s0 {l0="x"} registers it: the registry exposes
		// g1{l0="x",l6="t"} 14. s0's g1a is refused, its label names
		// differing from that g1's (rule 2). s1, nested in s0 with
		// {l6="y"}, sets l6 again, and its registration of other is
		// refused. s0's Close takes other back (rule 11).
		program: prog(
			root(onReg, opts(-1, lbl(0, 0))),
			register(0, none, cOther, modeRegister, noFault),
			register(0, none, cG1a, modeRegister, noFault),
			nest(0, byChild, opts(-1, lbl(6, 1))),
			register(1, none, cOther, modeMust, noFault),
			closeScope(0, noFault, 0),
		),
	},
	{
		name: "a scope on a forwarder registered in the scope behind",
		// s1 {l1="x"} is on a forwarder over s0, and registers g0a: the
		// registry exposes g0{l1="x"} 1. s1 describes that, and s0
		// cannot see through the forwarder: the registry refuses s1 as
		// registered, and through a label wrapper for its label names.
		// Through a prefix wrapper it accepts p_g0{l1="x"}: g0a is
		// exposed twice ("What is not promised"). s1 then registers g1a,
		// which s1 collects undescribed: the pedantic registry fails
		// its Gather. Closed, s1 collects nothing; s0's Close takes it
		// back.
		program: prog(
			root(onReg, noOpts()),
			rootOnScope(0, none, opts(-1, lbl(1, 0))),
			register(1, none, cG0a, modeRegister, noFault),
			registerScope(0, none, 1, modeRegister),
			registerScope(0, []byte{wl(2, 0)}, 1, modeRegister),
			registerScope(0, []byte{wp(0)}, 1, modeMust),
			register(1, none, cG1a, modeRegister, noFault),
			closeScope(1, noFault, 0),
			closeScope(0, noFault, 0),
		),
	},
	{
		name: "an empty scope on a forwarder in the scope behind",
		// s1 is on a forwarder over s0 and owns nothing: s0 cannot see
		// what s1 is, and accepts it as an unchecked collector. s1 then
		// registers g0a, which the registry exposes twice, and its
		// scrapes fail; and u0, for which its tree would register its
		// collector of unchecked ones in s0, which collects s1 already:
		// refused (rule 1). s0's Close takes s1 back; s1 registers u0
		// again: s0 is closed.
		program: prog(
			root(onReg, noOpts()),
			rootOnScope(0, none, noOpts()),
			registerScope(0, none, 1, modeRegister),
			register(1, none, cG0a, modeRegister, noFault),
			register(1, none, cU0, modeRegister, noFault),
			closeScope(0, noFault, 0),
			register(1, none, cU0, modeRegister, noFault),
		),
	},
	{
		name: "equal slice values are the same collector",
		// s0 registers promtest.Gauges{h0a, h1a}; an outsider unregisters
		// it; s0 registers a new, equal Gauges{h0a, h1a}: the same collector
		// (Words), so the two are twins and Unregister forgets both (rule
		// 9), and Close has nothing to report.
		program: prog(
			root(onReg, opts(-1, lbl(3, 1))),
			register(0, none, cGauges0, modeRegister, noFault),
			outUnregister(0, none, cGauges0),
			register(0, none, cGauges0, modeRegister, noFault),
			unregister(0, none, cGauges0, noFault),
			closeScope(0, noFault, 0),
		),
	},
	{
		name: "a record the parent kept is named as nothing",
		// s0{l1="x"} on the faulty parent registers g1a; the parent refuses
		// to let it go on Unregister, and keeps s0's (now empty) record. s0
		// registers g1a again: the registry refuses it with an
		// AlreadyRegisteredError (rule 2), whose ExistingCollector is nil
		// (rule 3).
		program: prog(
			root(onParent, opts(-1, lbl(1, 0))),
			register(0, none, cG1a, modeRegister, noFault),
			unregister(0, none, cG1a, fault1),
			register(0, none, cG1a, modeRegister, noFault),
		),
	},
	{
		name: "a scope with an unchecked collector is an unchecked Collector",
		// s0 owns g0a and the unchecked u0. As a Collector (rule 19) it
		// describes nothing and collects both, so a pedantic registry
		// takes it and gathers both.
		program: prog(
			root(onReg, noOpts()),
			register(0, none, cG0a, modeRegister, noFault),
			register(0, none, cU0, modeRegister, noFault),
		),
	},
	{
		name: "MustRegister names the scope holding the identity",
		// s0 registers g0a; s1, a child with prefix a_, registers g0a too,
		// then again: a_g0 is held by s1, which MustRegister names (rule
		// 4), not s0, which holds g0.
		program: prog(
			root(onReg, noOpts()),
			register(0, none, cG0a, modeMust, noFault),
			nest(0, byChild, opts(0)),
			register(1, none, cG0a, modeMust, noFault),
			register(1, none, cG0a, modeMust, noFault),
		),
	},
	{
		name: "Unregister through wrappers stacked otherwise",
		// s0 registers the unchecked u0 through WrapRegistererWith(
		// prometheus.Labels{}, s0), and u1 through {l0="x"} then
		// {l1="y"}. Wrappers with the same prefix and labels of the same
		// collector, however deeply stacked, are the same collector
		// (Words), so s0.Unregister(u0), and Unregister(u1) through
		// {l1="y"} then {l0="x"}, find them (rule 8).
		program: prog(
			root(onReg, noOpts()),
			register(0, []byte{wnone()}, cU0, modeRegister, noFault),
			unregister(0, none, cU0, noFault),
			register(0, []byte{wl(0, 0), wl(1, 1)}, cU1, modeRegister, noFault),
			unregister(0, []byte{wl(1, 1), wl(0, 0)}, cU1, noFault),
		),
	},
	{
		name: "MustRegister names a scope holding a wrapped registration",
		// s0 registers g0a through WrapRegistererWithPrefix("p_", s0); s1,
		// made on the same wrapper, collides with it: MustRegister names
		// s0, which holds it (rules 4, 5).
		program: prog(
			root(onReg, noOpts()),
			register(0, []byte{wp(0)}, cG0a, modeMust, noFault),
			nestWrapped(0, []byte{wp(0)}, noOpts()),
			register(1, none, cG0b, modeMust, noFault),
		),
	},
	{
		name: "a label set twice by wrappers is not set once",
		// Found by fuzzing. s0 registers u0 through two wrappers that set
		// l3="y" each (and one that sets nothing), then unregisters u0
		// through three that set it: the wrappers add l3 twice, then three
		// times, so the two are not the same collector (Words), and
		// Unregister returns false (rule 8).
		program: prog(
			root(onReg, noOpts()),
			register(0, []byte{wl(3, 1), wnone(), wl(3, 1)}, cU0, modeRegister, noFault),
			unregister(0, []byte{wl(3, 1), wl(3, 1), wl(3, 1)}, cU0, noFault),
		),
	},
	{
		name: "the holder of a collector an outsider registered again",
		// Found by fuzzing. s0 registers an odd value; an outsider
		// unregisters it and registers an equal value, the same
		// collector (Words). The registry holds collectors, not owners,
		// so s0's MustRegister of it again names s0 as the holder (rules
		// 4 and 7), not somebody outside the tree.
		program: prog(
			root(onParent, noOpts()),
			register(0, none, cOdd, modeRegister, noFault),
			outUnregister(0, none, cOdd),
			outRegister(0, none, cOdd),
			register(0, none, cOdd, modeMust, noFault),
		),
	},
	{
		name: "twins behind a forwarder go together",
		// Found by fuzzing. s1, with l0="x", is on a forwarder over s0.
		// s1 registers g0a; an outsider removes it from the registry, and
		// s1 registers g0a again: s0 owns two records of s1's, the same
		// collector to it (Words). s1.Unregister(g0a) asks s0 to remove
		// it while s1 still owns both, so s0 forgets both (rule 9).
		program: prog(
			root(onParent, noOpts()),
			rootOnScope(0, none, opts(-1, lbl(0, 0))),
			register(1, none, cG0a, modeRegister, noFault),
			outUnregister(0, []byte{wl(0, 0)}, cValue),
			register(1, none, cG0a, modeRegister, noFault),
			unregister(1, none, cG0a, noFault),
		),
	},
	{
		name: "a record behind a forwarder names its scope",
		// Found by fuzzing. s1, with a prefix and a label, is on a
		// forwarder over s0, which has no view: the registry holds s1's
		// record of g0a as it is. s2, another tree with the same view,
		// collides with it, and MustRegister names s1, whose registration
		// the registry names (rule 4).
		program: prog(
			root(onParent, noOpts()),
			rootOnScope(0, none, opts(0, lbl(0, 0))),
			root(onParent, opts(0, lbl(0, 0))),
			register(1, none, cG0a, modeMust, noFault),
			register(2, none, cG0a, modeMust, noFault),
		),
	},
	{
		name: "a scope with no view answers with what it passed on",
		// Found by fuzzing. s1, with no view, is on a forwarder over s0;
		// s2, with prefix a_, on a forwarder over p_p_ of s1. s2 registers
		// g0b, which s1 passes on as it was given. s2.Unregister(g0a), the
		// same identity, asks s1 who holds it: s1 answers with the record
		// s2 passed on (rule 17), s2's own, so Unregister takes it back
		// and returns true.
		program: prog(
			root(onParent, noOpts()),
			rootOnScope(0, none, noOpts()),
			rootOnScope(1, []byte{wp(0), wp(0)}, opts(0)),
			register(2, none, cG0b, modeRegister, noFault),
			unregister(2, none, cG0a, noFault),
		),
	},
	{
		name: "a scope behind a forwarder over a closed scope",
		// Found by fuzzing. s0 closes; s1 is on a forwarder over s0, and
		// s2 on a forwarder over s1. s2 registers s1, which describes
		// nothing: s2 registers its collector of unchecked ones with s1
		// first, which s1 passes on to s0, closed, so s2.Register returns
		// s0's ErrClosed (rule 2), and nothing is registered.
		program: prog(
			root(onParent, noOpts()),
			closeScope(0, noFault, 0),
			rootOnScope(0, none, noOpts()),
			rootOnScope(1, none, noOpts()),
			registerScope(2, none, 1, modeRegister),
		),
	},
	{
		name: "a scope that collects itself through two wrappers",
		// s1 is on a forwarder over p_ of s0, and s2 on one over p_ of
		// s1. s1 registers u0, so s1's collector of unchecked ones is in
		// s0, wrapped. s2 registers s0, which describes nothing: its
		// collector of unchecked ones goes into s1's, wrapped, and
		// collecting s0 would collect it, through both wrappers, so s2
		// refuses s0 (rule 1).
		program: prog(
			root(onParent, noOpts()),
			rootOnScope(0, []byte{wp(0)}, noOpts()),
			rootOnScope(1, []byte{wp(0)}, noOpts()),
			register(1, none, cU0, modeRegister, noFault),
			registerScope(2, none, 0, modeRegister),
		),
	},
	{
		name: "a vector of DeleteOnClose that panics",
		// s0 registers g0a, and s1, nested in it, g1a; s0 asks to delete
		// {tenant="a"} from a vector that panics. s0's Close meets the
		// call first: its panic goes on, and s0 and s1 still own their
		// gauges; the next Close carries on past the call and takes them
		// back (rule 14). A call on a scope closing deletes at once: its
		// panic goes on out of DeleteOnClose (rule 18).
		program: prog(
			root(onReg, noOpts()),
			register(0, none, cG0a, modeRegister, noFault),
			nest(0, byChild, noOpts()),
			register(1, none, cG1a, modeRegister, noFault),
			deleteOnClose(0, 0, 0x28),
			closeScope(0, noFault, 0),
			deleteOnClose(1, 0, 0x28),
			closeScope(0, noFault, 0),
		),
	},
	{
		name: "the registry a tree registers into",
		// s0, prefix a_, is on p_ of the registry; s1 is nested in it.
		// s0 registers u0, so the registry holds the tree's collector of
		// unchecked ones, and g0a, which the registry holds as a_g0.
		// Registered through s0, or through {l0="x"} of s1, the registry
		// would collect itself: both refuse it (rule 1).
		program: prog(
			rootWrapped([]byte{owp()}, opts(0)),
			nest(0, byChild, noOpts()),
			register(0, none, cU0, modeRegister, noFault),
			register(0, none, cG0a, modeRegister, noFault),
			registerRegistry(0, none, modeRegister),
			registerRegistry(1, []byte{wl(0, 0)}, modeMust),
		),
	},
	{
		name: "a parent that keeps nothing takes invalid ones",
		// Found by fuzzing. s0{l0="x",l6="x"} is on a Registerer that
		// accepts everything; through {l0="x"} it registers g0a twice,
		// which a registry would refuse: l0 is set twice. The parent
		// takes both, and their descriptors, invalid, give them no
		// identity, so they are not twins: Len counts both, Unregister
		// takes one, and Close reports the other (Words, rules 9, 11,
		// 19).
		program: prog(
			root(onDiscard, opts(-1, lbl(0, 0), lbl(6, 0))),
			mustTwo(0, []byte{wl(0, 0)}, cG0a, cG0a),
			unregister(0, []byte{wl(0, 0)}, cG0a, noFault),
			closeScope(0, noFault, 0),
		),
	},
	{
		name: "a question through two forwarders to a parent that keeps nothing",
		// Found by fuzzing. s0, a_, is on a Registerer that keeps
		// nothing; s1, a_, on a forwarder over s0, and s2, a_, on one over
		// s1. s2 registers g0a twice; each reaches s0 as a record of a
		// record. Unregister asks s1 who holds a_g0: nobody, at the bottom,
		// so s1 records the question, registers its own record of it in
		// s0, and, asked to take it back, asks s0 in turn, whose answer is
		// the same: s0 keeps the record of s1's, as it keeps the two of
		// s2's gauges, and Len counts them (rules 9, 11, 17, 19).
		program: prog(
			root(onDiscard, opts(0)),
			rootOnScope(0, none, opts(0)),
			rootOnScope(1, none, opts(0)),
			mustTwo(2, none, cG0a, cG0a),
			unregister(2, none, cG0a, noFault),
		),
	},
	{
		name: "a scope behind that keeps the question",
		// Found by fuzzing. s0 is on a Registerer that keeps nothing; s1,
		// a_, on a forwarder over s0, and s2, a_, on one over s1. s2
		// registers g0a and unregisters it, then registers it twice
		// through p_: s1 holds records of all three. s1's Close asks s0
		// about each: nobody holds the identity, and s0, asked to take
		// the question back, cannot, since its parent keeps nothing. Each
		// is reported as a question the parent would not let go of, the
		// twin too (rule 11).
		program: prog(
			root(onDiscard, noOpts()),
			rootOnScope(0, none, opts(0)),
			rootOnScope(1, none, opts(0)),
			register(2, none, cG0a, modeRegister, noFault),
			unregister(2, none, cG0a, noFault),
			mustTwo(2, []byte{wp(0)}, cG0a, cG0a),
			closeScope(1, noFault, 0),
		),
	},
	{
		name: "twins of records through a wrapper of the scope behind",
		// Found by fuzzing. s0, b_ {l7="x"}, is on a Registerer that keeps
		// nothing; s1 on a forwarder over p_ of s0, s2, a_, on one over
		// s1. s2 registers g0a twice: s1 holds two records of s2's, and
		// s0 the two through p_, which are one collector as long as s2
		// owns them (Words): s0 counts them once (rule 19).
		program: prog(
			root(onDiscard, opts(1, lbl(7, 0))),
			rootOnScope(0, []byte{wp(0)}, noOpts()),
			rootOnScope(1, none, opts(0)),
			mustTwo(2, none, cG0a, cG0a),
		),
	},
	{
		name: "a tree holding a scope of the tree behind",
		// Found by fuzzing. s0 {l0="x"}; s1, nested in it, sets l0
		// again; s2, empty, is on a forwarder over s1. s0 accepts s2 as
		// an unchecked collector ("What is not promised"). s2 then
		// registers s0, whose tree holds s2: collecting s0 would collect
		// s2's tree again, and s2 refuses it at once (rule 1), before
		// its tree would register its collector of unchecked ones in s1,
		// which would refuse that for the label set twice.
		program: prog(
			root(onReg, opts(-1, lbl(0, 0))),
			nest(0, byChild, opts(-1, lbl(0, 1))),
			rootOnScope(1, none, noOpts()),
			registerScope(0, none, 2, modeRegister),
			registerScope(2, none, 0, modeMust),
		),
	},
}
