package registry_test

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/multierr"

	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/registry"
)

// FuzzScope runs sequences of operations on scopes in every shape that users
// give them to each other, over one pedantic registry, and checks after every
// operation that the registry exposes exactly what a plain model says, and
// that every scope answers as the model says.
//
// The shapes: scopes on the registry and on no parent (a private registry),
// scopes nested with Child and with NewScope on a scope, and scopes on
// client_golang's WrapRegistererWith and WrapRegistererWithPrefix of a
// scope, three levels deep; registrations straight into a scope and through
// such a wrapper. The collectors: gauges, counter vectors, GaugeFuncs,
// unchecked collectors, values of a comparable type holding something that
// cannot be compared, and collectors that describe nothing the first time
// they are asked and a gauge after. Outsiders, other owners of the registry,
// unregister identities and register equal collectors of their own behind
// the scopes' backs.
//
// The model does not reuse the library's bookkeeping. It keeps each
// registry's holders of descriptor identities (a name with constant label
// values), the help and label names each name was first registered with, and
// the unchecked collectors; each scope's registrations, oldest first; and for
// each tree of nested scopes its hub of unchecked collectors. It follows the
// library's documented rules (Register, Unregister by collector or identity,
// Close's ownership check, what a closed scope answers) and from them
// predicts every result: Register's error and the collectors an
// AlreadyRegisteredError names, Unregister's answer, the UnregisterErrors
// Close reports, Len, a scope's own Gather, and the registry's Gather,
// series by series. Nothing depends on timing: every operation runs to
// completion before the next.
func FuzzScope(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		newFzRun(t).run(data)
	})
}

// The operations, one byte each, followed by their arguments.
const (
	fzOpRoot               = iota // opts, nil-parent flag
	fzOpNest                      // target, how, opts
	fzOpWrap                      // scope, kind
	fzOpNewCollector              // kind, name, value
	fzOpRegister                  // target, collector, MustRegister flag
	fzOpUnregister                // target, collector
	fzOpUnregisterEqual           // target, collector, copy flag
	fzOpClose                     // scope
	fzOpDeleteOnClose             // scope, labels, owner, k, vectors
	fzOpShared                    // vector, owner, k, amount
	fzOpSet                       // collector, value
	fzOpOutsiderUnregister        // identity
	fzOpOutsiderRegister          // identity, value
	fzOpGatherScope               // scope
	fzOpNil                       // scope
	fzOps
)

const (
	fzMaxOps        = 120
	fzMaxScopes     = 12
	fzMaxTargets    = 16
	fzMaxCollectors = 12
	fzMaxIdents     = 24
	fzMaxDepth      = 3
)

type fzKind int

const (
	fzGauge     fzKind = iota // prometheus.Gauge
	fzVec                     // *prometheus.CounterVec labelled k
	fzFunc                    // prometheus.GaugeFunc
	fzUnchecked               // describes nothing
	fzValue                   // a comparable value holding a slice
	fzQuiet                   // describes nothing the first time, a gauge after
	fzKinds
)

var fzBaseNames = [fzKinds][2]string{
	fzGauge:     {"g0", "g1"},
	fzVec:       {"v0", "v1"},
	fzFunc:      {"f0", "f1"},
	fzUnchecked: {"u0", "u1"},
	fzValue:     {"x0", "x1"},
	fzQuiet:     {"q0", "q1"},
}

func fzHelp(kind fzKind, name string) string {
	return fmt.Sprintf("Fuzz %s of kind %d.", name, kind)
}

// fzHolder is a comparable type holding a collector of a slice type
// (promtest.Gauges), so it cannot be compared with == without a panic.
type fzHolder struct{ inner prometheus.Collector }

func (h fzHolder) Describe(ch chan<- *prometheus.Desc) { h.inner.Describe(ch) }
func (h fzHolder) Collect(ch chan<- prometheus.Metric) { h.inner.Collect(ch) }

// fzQuietGauge describes nothing the first time it is asked.
type fzQuietGauge struct {
	prometheus.Gauge
	asked atomic.Bool
}

func (q *fzQuietGauge) Describe(ch chan<- *prometheus.Desc) {
	if q.asked.Swap(true) {
		q.Gauge.Describe(ch)
	}
}

// fzCol is a collector and the series the model expects it to expose, before
// any prefix or labels: the key is the value of label k for a vector, ""
// otherwise. Copies of a value collector share the same fzCol's series and
// are one collector; same says which collector an object is.
type fzCol struct {
	kind   fzKind
	name   string
	obj    prometheus.Collector
	same   *fzCol // the collector this one is a copy of, or itself
	gauge  prometheus.Gauge
	vec    *prometheus.CounterVec
	unc    *promtest.Unchecked
	quiet  *fzQuietGauge
	asked  bool // the model's own record of whether quiet was described
	series map[string]float64
}

func fzNewCol(kind fzKind, name string, v byte) *fzCol {
	c := &fzCol{kind: kind, name: name, series: map[string]float64{}}
	c.same = c
	help := fzHelp(kind, name)
	value := float64(v%16) + 1
	switch kind {
	case fzGauge, fzValue, fzQuiet:
		c.gauge = prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
		c.gauge.Set(value)
		c.obj = c.gauge
		switch kind {
		case fzValue:
			c.obj = fzHolder{inner: promtest.Gauges{c.gauge}}
		case fzQuiet:
			c.quiet = &fzQuietGauge{Gauge: c.gauge}
			c.obj = c.quiet
		}
		c.series[""] = value
	case fzVec:
		c.vec = prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"k"})
		c.obj = c.vec
		for i, k := range []string{"a", "b"} {
			if int(v/16)%3 > i {
				c.vec.WithLabelValues(k).Add(value + float64(i))
				c.series[k] = value + float64(i)
			}
		}
	case fzFunc:
		c.obj = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return value })
		c.series[""] = value
	case fzUnchecked:
		c.unc = &promtest.Unchecked{Name: name, Help: help, Value: value}
		c.obj = c.unc
		c.series[""] = value
	}
	return c
}

// copyOf returns another value of the value collector c: the same collector.
func (c *fzCol) copyOf() *fzCol {
	h := c.obj.(fzHolder)
	return &fzCol{kind: c.kind, name: c.name, obj: fzHolder{inner: h.inner}, same: c.same, gauge: c.gauge, series: c.series}
}

// set changes what c exposes; a GaugeFunc's value is fixed.
func (c *fzCol) set(v byte) {
	value := float64(v%16) + 1
	switch c.kind {
	case fzGauge, fzValue, fzQuiet:
		c.gauge.Set(value)
		c.series[""] = value
	case fzVec:
		k := []string{"a", "b", "c"}[int(v/16)%3]
		c.vec.WithLabelValues(k).Add(value)
		c.series[k] += value
	case fzUnchecked:
		c.unc.Value = value
		c.series[""] = value
	}
}

// checked reports whether describing c now yields its descriptor, and counts
// the question, which a quiet gauge answers differently the first time.
func (c *fzCol) checked() bool {
	switch c.kind {
	case fzUnchecked:
		return false
	case fzQuiet:
		asked := c.asked
		c.asked = true
		return asked
	}
	return true
}

// fzOpts are a prefix and constant labels.
type fzOpts struct {
	prefix string
	labels map[string]string
}

func (o fzOpts) String() string { return fmt.Sprintf("%q%v", o.prefix, o.labels) }

// over returns o applied outside inner: o's prefix first, both label sets.
func (o fzOpts) over(inner fzOpts) fzOpts {
	out := fzOpts{prefix: o.prefix + inner.prefix}
	if len(o.labels)+len(inner.labels) > 0 {
		out.labels = maps.Clone(o.labels)
		if out.labels == nil {
			out.labels = map[string]string{}
		}
		maps.Copy(out.labels, inner.labels)
	}
	return out
}

func (o fzOpts) equal(p fzOpts) bool { return o.prefix == p.prefix && maps.Equal(o.labels, p.labels) }

// fzChoose decodes a scope's own options at depth d: each depth has its own
// label name, so only a deliberate choice sets a label of a scope above.
func fzChoose(choice, depth int) (own fzOpts, opts []registry.Option) {
	label := fmt.Sprintf("l%d", depth)
	switch choice % 5 {
	case 1:
		own.prefix = "a_"
	case 2:
		own.labels = map[string]string{label: "x"}
	case 3:
		own.labels = map[string]string{label: "y"}
	case 4:
		own.prefix = "b_"
		own.labels = map[string]string{label: "x"}
	}
	if own.prefix != "" {
		opts = append(opts, registry.WithPrefix(own.prefix))
	}
	if own.labels != nil {
		opts = append(opts, registry.WithLabels(own.labels))
	}
	return own, opts
}

// fzDesc is what the model knows of the one descriptor a collector describes
// with options o applied.
type fzDesc struct {
	fqName string
	id     string // name and constant label values: client_golang's identity
	sig    string // label names and help, fixed per name once registered
}

func fzDescOf(c *fzCol, o fzOpts) fzDesc {
	fq := o.prefix + c.name
	names := slices.Sorted(maps.Keys(o.labels))
	values := []string{fq}
	for _, n := range names {
		values = append(values, o.labels[n])
	}
	dims := slices.Clone(names)
	if c.kind == fzVec {
		dims = append(dims, "$k")
	}
	slices.Sort(dims)
	return fzDesc{
		fqName: fq,
		id:     strings.Join(values, "\xff"),
		sig:    fzHelp(c.kind, c.name) + "\xff" + strings.Join(dims, ","),
	}
}

// fzExpose adds the series c exposes with options o to out.
func fzExpose(c *fzCol, o fzOpts, out map[string][]float64) {
	name := o.prefix + c.name
	for k, v := range c.series {
		labels := maps.Clone(o.labels)
		if c.kind == fzVec {
			if labels == nil {
				labels = map[string]string{}
			}
			labels["k"] = k
		}
		key := fzSeriesKey(name, labels)
		out[key] = append(out[key], v)
	}
}

func fzSeriesKey(name string, labels map[string]string) string {
	pairs := make([]string, 0, len(labels))
	for _, n := range slices.Sorted(maps.Keys(labels)) {
		pairs = append(pairs, fmt.Sprintf("%s=%q", n, labels[n]))
	}
	return name + "{" + strings.Join(pairs, ",") + "}"
}

// fzReg is the model of a prometheus.Registry: the shared one, or a private
// one of a scope with no parent.
type fzReg struct {
	held map[string]*fzRef // by fzDesc.id
	sigs map[string]string // by metric name; never forgotten
	hubs []*fzTree         // trees whose hub is registered here
}

// fzRef is a collector as somebody names it: a scope's registration, or a
// collector of somebody else's.
type fzRef struct {
	entry *fzEntry
	col   *fzCol
	opts  fzOpts // for col: the options the outsider registered it with
}

// fzTree is the model of a root scope's tree: where it registers (a registry,
// or a wrapper of a scope) and its hub of unchecked collectors.
type fzTree struct {
	reg   *fzReg
	up    *fzScope // else: the scope the wrapper wraps
	wrap  fzOpts   // and the wrapper's options
	hubOn bool     // the hub is registered upstream
	hub   []*fzEntry
}

// fzScope is the model of one scope.
type fzScope struct {
	s        *registry.Scope
	tree     *fzTree
	up       *fzScope // the scope it is nested in, in its tree
	view     fzOpts   // its options composed with those above it in its tree
	clash    bool     // it sets a label a scope above it sets
	depth    int
	closed   bool
	children []*fzScope // open nested scopes, oldest first
	entries  []*fzEntry // registrations, oldest first
	deletes  []fzDeletion
}

// fzItem is what a scope's Register or Unregister is given: a user's
// collector, perhaps wrapped by a client_golang wrapper, or what a scope on
// such a wrapper passes on: one of its registrations or its hub.
type fzItem struct {
	col    *fzCol
	member *fzEntry
	hub    *fzTree
	wrap   *fzOpts // the wrapper's options; nil: not wrapped
}

// fzEntry is one registration a scope owns.
type fzEntry struct {
	scope     *fzScope
	item      fzItem
	unchecked bool
	released  bool
}

// fzTarget is where a test registers: a scope, or a wrapper of one.
type fzTarget struct {
	scope *fzScope
	wrap  *fzOpts               // nil: the scope itself
	reg   prometheus.Registerer // what the test calls
	name  string
}

type fzDeletion struct {
	labels prometheus.Labels
	vecs   []int
}

// fzIdent is an identity in the shared registry that outsiders tamper with.
type fzIdent struct {
	col  *fzCol
	opts fzOpts
}

var (
	fzOwners   = []string{"o0", "o1", "o2"}
	fzSharedKs = []string{"a", "b"}
)

// fzRun is one run of the fuzz target: the real objects and the model.
type fzRun struct {
	t   *testing.T
	reg *prometheus.Registry
	log []string

	model   *fzReg
	scopes  []*fzScope
	targets []*fzTarget
	cols    []*fzCol
	idents  []fzIdent

	shared       [2]*prometheus.CounterVec
	sharedSeries [2]map[[2]string]float64 // owner, k
}

func newFzReg() *fzReg { return &fzReg{held: map[string]*fzRef{}, sigs: map[string]string{}} }

func newFzRun(t *testing.T) *fzRun {
	r := &fzRun{t: t, reg: prometheus.NewPedanticRegistry(), model: newFzReg()}
	for i := range r.shared {
		r.shared[i] = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: fmt.Sprintf("shared%d", i),
			Help: "A vector another owner registered on the registry.",
		}, []string{"owner", "k"})
		r.reg.MustRegister(r.shared[i])
		r.sharedSeries[i] = map[[2]string]float64{}
	}
	return r
}

func (r *fzRun) fatalf(format string, args ...any) {
	r.t.Helper()
	r.t.Fatalf("after:\n\t%s\n%s", strings.Join(r.log, "\n\t"), fmt.Sprintf(format, args...))
}

func (r *fzRun) logf(format string, args ...any) {
	r.log = append(r.log, fmt.Sprintf(format, args...))
}

// fzInput hands out the fuzz input a byte at a time, and zeros once it is
// used up.
type fzInput struct{ b []byte }

func (in *fzInput) byte() byte {
	if len(in.b) == 0 {
		return 0
	}
	c := in.b[0]
	in.b = in.b[1:]
	return c
}

func (in *fzInput) pick(n int) int { return int(in.byte()) % n }

func (r *fzRun) run(data []byte) {
	in := &fzInput{b: data}
	for ops := 0; len(in.b) > 0 && ops < fzMaxOps; ops++ {
		r.step(in)
		r.checkRegistry()
		r.checkLens()
	}
	// Closing every scope leaves nothing of theirs: only what outsiders
	// hold and the shared vectors stay exposed.
	for _, sc := range r.scopes {
		r.closeScope(sc)
		r.checkRegistry()
	}
	r.checkLens()
	for id, h := range r.model.held {
		if h.entry != nil {
			r.fatalf("model: %s still held by a scope after closing all", id)
		}
	}
}

func (r *fzRun) scope(in *fzInput) *fzScope {
	if len(r.scopes) == 0 {
		in.byte()
		return nil
	}
	return r.scopes[in.pick(len(r.scopes))]
}

func (r *fzRun) target(in *fzInput) *fzTarget {
	if len(r.targets) == 0 {
		in.byte()
		return nil
	}
	return r.targets[in.pick(len(r.targets))]
}

func (r *fzRun) col(in *fzInput) *fzCol {
	if len(r.cols) == 0 {
		in.byte()
		return nil
	}
	return r.cols[in.pick(len(r.cols))]
}

func (r *fzRun) step(in *fzInput) {
	switch op := in.pick(fzOps); op {
	case fzOpRoot:
		choice, nilParent := in.pick(5), in.pick(8) == 0
		r.root(choice, nilParent)
	case fzOpNest:
		tg, how, choice := r.target(in), in.pick(2), in.pick(6)
		if tg != nil {
			r.nest(tg, how, choice)
		}
	case fzOpWrap:
		sc, kind := r.scope(in), in.pick(2)
		if sc != nil {
			r.wrap(sc, kind)
		}
	case fzOpNewCollector:
		kind, name, v := fzKind(in.pick(int(fzKinds))), in.pick(2), in.byte()
		c := fzNewCol(kind, fzBaseNames[kind][name], v)
		i := len(r.cols)
		if i < fzMaxCollectors {
			r.cols = append(r.cols, c)
		} else {
			i = int(v) % len(r.cols)
			r.cols[i] = c
		}
		r.logf("col %d = %s (kind %d) %v", i, c.name, kind, c.series)
	case fzOpRegister:
		tg, c, must := r.target(in), r.col(in), in.pick(4) == 0
		if tg != nil && c != nil {
			r.register(tg, c, must)
		}
	case fzOpUnregister:
		tg, c := r.target(in), r.col(in)
		if tg != nil && c != nil {
			r.unregister(tg, c, "")
		}
	case fzOpUnregisterEqual:
		tg, c, cp := r.target(in), r.col(in), in.pick(2) == 0
		if tg == nil || c == nil {
			return
		}
		if cp && c.kind == fzValue {
			r.unregister(tg, c.copyOf(), " (a copy)")
		} else {
			r.unregister(tg, fzNewCol(c.kind, c.name, 0), " (a fresh equal one)")
		}
	case fzOpClose:
		if sc := r.scope(in); sc != nil {
			r.closeScope(sc)
		}
	case fzOpDeleteOnClose:
		sc, labels, owner, k, vecs := r.scope(in), in.pick(4), in.pick(len(fzOwners)), in.pick(len(fzSharedKs)), in.pick(4)
		if sc != nil {
			r.deleteOnClose(sc, labels, fzOwners[owner], fzSharedKs[k], vecs)
		}
	case fzOpShared:
		i, owner, k, v := in.pick(2), fzOwners[in.pick(len(fzOwners))], fzSharedKs[in.pick(len(fzSharedKs))], float64(in.pick(4)+1)
		r.shared[i].WithLabelValues(owner, k).Add(v)
		r.sharedSeries[i][[2]string{owner, k}] += v
		r.logf("shared%d{%s,%s} += %v", i, owner, k, v)
	case fzOpSet:
		c, v := r.col(in), in.byte()
		if c != nil {
			c.set(v)
			r.logf("set %s to %v", c.name, c.series)
		}
	case fzOpOutsiderUnregister:
		if len(r.idents) == 0 {
			in.byte()
			return
		}
		r.outsiderUnregister(r.idents[in.pick(len(r.idents))])
	case fzOpOutsiderRegister:
		if len(r.idents) == 0 {
			in.byte()
			in.byte()
			return
		}
		r.outsiderRegister(r.idents[in.pick(len(r.idents))], in.byte())
	case fzOpGatherScope:
		if sc := r.scope(in); sc != nil {
			r.checkScopeGather(sc)
		}
	case fzOpNil:
		sc := r.scope(in)
		if sc == nil {
			return
		}
		r.logf("%s: Register(nil), Unregister(nil)", r.name(sc))
		if err := sc.s.Register(nil); !errors.Is(err, registry.ErrNilCollector) {
			r.fatalf("Register(nil) = %v, want ErrNilCollector", err)
		}
		if sc.s.Unregister(nil) {
			r.fatalf("Unregister(nil) = true")
		}
	}
}

func (r *fzRun) name(sc *fzScope) string { return fmt.Sprintf("scope %d", slices.Index(r.scopes, sc)) }

// add records a new scope and its target.
func (r *fzRun) add(sc *fzScope, what string) {
	r.scopes = append(r.scopes, sc)
	tg := &fzTarget{scope: sc, reg: sc.s, name: r.name(sc)}
	r.targets = append(r.targets, tg)
	r.logf("%s = %s", tg.name, what)
}

func (r *fzRun) root(choice int, nilParent bool) {
	if len(r.scopes) >= fzMaxScopes || len(r.targets) >= fzMaxTargets {
		return
	}
	own, opts := fzChoose(choice, 0)
	tree := &fzTree{reg: r.model}
	var parent prometheus.Registerer = r.reg
	if nilParent {
		tree.reg = newFzReg()
		parent = nil
	}
	r.add(&fzScope{s: registry.NewScope(parent, opts...), tree: tree, view: own}, fmt.Sprintf("NewScope(nil parent %v, %v)", nilParent, own))
}

// nest makes a scope in tg: nested in tg's scope (with Child, or NewScope on
// the scope), or, if tg is a wrapper, the root of a new tree on it.
func (r *fzRun) nest(tg *fzTarget, how, choice int) {
	up := tg.scope
	if len(r.scopes) >= fzMaxScopes || len(r.targets) >= fzMaxTargets || up.depth+1 >= fzMaxDepth {
		return
	}
	depth := up.depth + 1
	own, opts := fzChoose(choice, depth)
	if tg.wrap != nil {
		tree := &fzTree{up: up, wrap: *tg.wrap}
		r.add(&fzScope{s: registry.NewScope(tg.reg, opts...), tree: tree, view: own, depth: depth},
			fmt.Sprintf("NewScope(%s, %v)", tg.name, own))
		return
	}
	if choice == 5 {
		// Set a label that a scope above sets, if there is one.
		for a := up; a != nil && len(own.labels) == 0; a = a.up {
			for n := range a.view.labels {
				own = fzOpts{labels: map[string]string{n: "z"}}
				opts = []registry.Option{registry.WithLabels(own.labels)}
				break
			}
		}
	}
	sc := &fzScope{tree: up.tree, up: up, view: up.view.over(own), depth: depth, clash: up.clash}
	for n := range own.labels {
		if _, dup := up.view.labels[n]; dup {
			sc.clash = true
		}
	}
	what := fmt.Sprintf("%s.Child(%v)", tg.name, own)
	if how == 0 {
		sc.s = up.s.Child(opts...)
	} else {
		sc.s = registry.NewScope(up.s, opts...)
		what = fmt.Sprintf("NewScope(%s, %v)", tg.name, own)
	}
	if up.closed {
		sc.closed = true
	} else {
		up.children = append(up.children, sc)
	}
	r.add(sc, fmt.Sprintf("%s closed %v clash %v", what, sc.closed, sc.clash))
}

// wrap makes a target that is client_golang's wrapper of sc.
func (r *fzRun) wrap(sc *fzScope, kind int) {
	if len(r.targets) >= fzMaxTargets {
		return
	}
	tg := &fzTarget{scope: sc, name: fmt.Sprintf("wrapper %d", len(r.targets))}
	o := fzOpts{labels: map[string]string{fmt.Sprintf("w%d", sc.depth): "w"}}
	if kind == 1 {
		o = fzOpts{prefix: "w_"}
		tg.reg = prometheus.WrapRegistererWithPrefix(o.prefix, sc.s)
	} else {
		tg.reg = prometheus.WrapRegistererWith(o.labels, sc.s)
	}
	tg.wrap = &o
	r.targets = append(r.targets, tg)
	r.logf("%s = wrapper %v of %s", tg.name, o, r.name(sc))
}

// The model of the library's rules. Each function below follows the
// documented behaviour of the call it is named after.

// itemOpts are the options an item carries before the scope's own: a
// wrapper's, over what a nested scope's registration carries.
func itemOpts(it fzItem) fzOpts {
	var o fzOpts
	if it.member != nil {
		o = entryOpts(it.member)
	}
	if it.wrap != nil {
		o = it.wrap.over(o)
	}
	return o
}

// entryOpts are the options a scope's registration is described with to the
// scope's parent.
func entryOpts(e *fzEntry) fzOpts { return e.scope.view.over(itemOpts(e.item)) }

// bottom is the user's collector at the bottom of an item (nil for a hub).
func bottom(it fzItem) *fzCol {
	for it.member != nil {
		it = it.member.item
	}
	return it.col
}

// sameCollector: the same collector, maybe through equal wrappers.
func sameCollector(a, b fzItem) bool {
	if (a.wrap == nil) != (b.wrap == nil) || a.wrap != nil && !a.wrap.equal(*b.wrap) {
		return false
	}
	switch {
	case a.col != nil && b.col != nil:
		return a.col.same == b.col.same
	case a.member != nil:
		return a.member == b.member
	case a.hub != nil:
		return a.hub == b.hub
	}
	return false
}

type fzResult struct {
	err      error  // a sentinel or a marker of the kind of error
	existing *fzRef // for an AlreadyRegisteredError
}

var (
	errFzSig   = errors.New("the registry's consistency error")
	errFzClash = errors.New("the scope's label clash")
)

// modelRegister is Scope.Register of it into sc.
func (r *fzRun) modelRegister(sc *fzScope, it fzItem) fzResult {
	if sc.closed {
		return fzResult{err: registry.ErrClosed}
	}
	if sc.clash {
		return fzResult{err: errFzClash}
	}
	e := &fzEntry{scope: sc, item: it, unchecked: !r.describe(it)}
	if e.unchecked {
		if res := r.hubOn(sc.tree); res.err != nil {
			return res
		}
		sc.tree.hub = append(sc.tree.hub, e)
		sc.entries = append(sc.entries, e)
		return fzResult{}
	}
	res := r.upstreamRegister(e)
	if res.existing != nil {
		res.existing = userOf(res.existing, it.member != nil)
	}
	if res.err == nil && res.existing == nil {
		sc.entries = append(sc.entries, e)
	}
	return res
}

// describe is what describing an item says: whether it is checked.
func (r *fzRun) describe(it fzItem) bool {
	switch {
	case it.hub != nil:
		return false
	case it.member != nil:
		return !it.member.unchecked
	}
	return it.col.checked()
}

// hubOn registers the tree's hub upstream if it is not yet.
func (r *fzRun) hubOn(t *fzTree) fzResult {
	if t.hubOn {
		return fzResult{}
	}
	if t.reg != nil {
		t.reg.hubs = append(t.reg.hubs, t)
	} else if res := r.modelRegister(t.up, fzItem{hub: t, wrap: &t.wrap}); res.err != nil || res.existing != nil {
		return res
	}
	t.hubOn = true
	return fzResult{}
}

// upstreamRegister is a tree's Register of e's member with its parent.
func (r *fzRun) upstreamRegister(e *fzEntry) fzResult {
	t := e.scope.tree
	if t.reg == nil {
		return r.modelRegister(t.up, fzItem{member: e, wrap: &t.wrap})
	}
	c := bottom(e.item)
	o := entryOpts(e)
	d := fzDescOf(c, o)
	if t.reg == r.model && len(r.idents) < fzMaxIdents {
		r.idents = append(r.idents, fzIdent{col: c, opts: o})
	}
	if sig := t.reg.sigs[d.fqName]; sig != "" && sig != d.sig {
		return fzResult{err: errFzSig}
	}
	if h := t.reg.held[d.id]; h != nil {
		return fzResult{existing: h}
	}
	t.reg.held[d.id] = &fzRef{entry: e}
	t.reg.sigs[d.fqName] = d.sig
	return fzResult{}
}

// upstreamUnregister is a tree's Unregister of e's member (or of the hub)
// from its parent.
func (r *fzRun) upstreamUnregister(e *fzEntry) bool {
	t := e.scope.tree
	if t.reg == nil {
		return r.modelUnregister(t.up, fzItem{member: e, wrap: &t.wrap})
	}
	d := fzDescOf(bottom(e.item), entryOpts(e))
	if t.reg.held[d.id] == nil {
		return false
	}
	delete(t.reg.held, d.id)
	return true
}

// userOf is what an AlreadyRegisteredError names for a holder: the user's
// collector, or, for a scope asking through a wrapper, the first member below
// the top.
func userOf(h *fzRef, askerIsScope bool) *fzRef {
	if h.entry == nil {
		return h
	}
	it := h.entry.item
	for it.member != nil {
		if askerIsScope {
			return &fzRef{entry: it.member}
		}
		it = it.member.item
	}
	return &fzRef{col: it.col}
}

// modelUnregister is Scope.Unregister of it from sc.
func (r *fzRun) modelUnregister(sc *fzScope, it fzItem) bool {
	checked := r.describe(it)
	if sc.closed {
		return false
	}
	i := -1
	if checked {
		c, o := bottom(it), itemOpts(it)
		d := fzDescOf(c, o)
		var candidates []int
		for j, e := range sc.entries {
			if !e.unchecked && fzDescOf(bottom(e.item), itemOpts(e.item)).fqName == d.fqName {
				candidates = append(candidates, j)
			}
		}
		for _, j := range slices.Backward(candidates) {
			if sameCollector(sc.entries[j].item, it) {
				i = j
				break
			}
		}
		if i < 0 {
			for _, j := range slices.Backward(candidates) {
				if fzDescOf(bottom(sc.entries[j].item), itemOpts(sc.entries[j].item)).id == d.id {
					i = j
					break
				}
			}
		}
	}
	if i < 0 {
		for j := len(sc.entries) - 1; j >= 0; j-- {
			if sameCollector(sc.entries[j].item, it) {
				i = j
				break
			}
		}
	}
	if i < 0 {
		return false
	}
	e := sc.entries[i]
	sc.entries = slices.Delete(sc.entries, i, i+1)
	es := []*fzEntry{e}
	if !e.unchecked {
		// The older registrations of the same collector with the same
		// identity go too, after it; the answer is whether any of them
		// was the parent's.
		id := fzDescOf(bottom(e.item), itemOpts(e.item)).id
		sc.entries = slices.DeleteFunc(sc.entries, func(t *fzEntry) bool {
			twin := !t.unchecked && sameCollector(t.item, e.item) && fzDescOf(bottom(t.item), itemOpts(t.item)).id == id
			if twin {
				es = append(es, t)
			}
			return twin
		})
	}
	removed := false
	for _, e := range es {
		if r.release(e) == "" {
			removed = true
		}
	}
	return removed
}

// release is what Unregister and Close do with one registration; it returns
// why Close must report it, or "".
func (r *fzRun) release(e *fzEntry) string {
	defer func() { e.released = true }()
	if e.unchecked {
		e.scope.tree.hub = slices.DeleteFunc(e.scope.tree.hub, func(x *fzEntry) bool { return x == e })
		return ""
	}
	probe := r.upstreamRegister(e)
	switch {
	case probe.err == nil && probe.existing == nil:
		if r.upstreamUnregister(e) {
			return "somebody else unregistered it"
		}
		return ""
	case probe.existing != nil:
		if probe.existing.entry != e {
			return "replaced"
		}
		if r.upstreamUnregister(e) {
			return ""
		}
		again := r.upstreamRegister(e)
		if errors.Is(again.err, registry.ErrClosed) {
			return ""
		}
		if again.err == nil && again.existing == nil {
			r.upstreamUnregister(e)
		}
		return "refused"
	case errors.Is(probe.err, registry.ErrClosed):
		return ""
	}
	return "failed"
}

// modelClose is Scope.Close; it returns the metric names of the
// UnregisterErrors Close must report.
func (r *fzRun) modelClose(sc *fzScope) []string {
	if sc.closed {
		return nil
	}
	sc.closed = true
	var fails []string
	kids := sc.children
	sc.children = nil
	for _, c := range slices.Backward(kids) {
		fails = append(fails, r.modelClose(c)...)
	}
	for _, d := range sc.deletes {
		r.applyDeletion(d)
	}
	sc.deletes = nil
	for _, e := range slices.Backward(sc.entries) {
		if r.release(e) != "" {
			fails = append(fails, fzDescOf(bottom(e.item), entryOpts(e)).fqName)
		}
	}
	sc.entries = nil
	if sc.up != nil {
		sc.up.children = slices.DeleteFunc(sc.up.children, func(c *fzScope) bool { return c == sc })
	} else if t := sc.tree; t.hubOn {
		if t.reg == nil {
			r.modelUnregister(t.up, fzItem{hub: t, wrap: &t.wrap})
		}
		t.hubOn = false
	}
	return fails
}

// The operations, each done on the real objects and checked against the
// model.

func (r *fzRun) register(tg *fzTarget, c *fzCol, must bool) {
	r.logf("%s: Register(%s %p) must %v", tg.name, c.name, c.obj, must)
	var err error
	if must {
		v := promtest.Panic(func() { tg.reg.MustRegister(c.obj) })
		if v != nil {
			var ok bool
			if err, ok = v.(error); !ok {
				r.fatalf("MustRegister panicked with %#v, not an error", v)
			}
		}
	} else {
		err = tg.reg.Register(c.obj)
	}
	want := r.modelRegister(tg.scope, fzItem{col: c, wrap: tg.wrap})
	var are prometheus.AlreadyRegisteredError
	switch {
	case want.existing != nil:
		if !errors.As(err, &are) {
			r.fatalf("Register = %v, want an AlreadyRegisteredError", err)
		}
		w := want.existing.col.obj
		if !fzSameObj(are.ExistingCollector, w) {
			r.fatalf("AlreadyRegisteredError names %T %p as the holder, want %T %p", are.ExistingCollector, are.ExistingCollector, w, w)
		}
		if tg.wrap == nil && !fzSameObj(are.NewCollector, c.obj) || strings.HasPrefix(fmt.Sprintf("%T", are.NewCollector), "*registry.") {
			r.fatalf("AlreadyRegisteredError names %T %p as the new collector", are.NewCollector, are.NewCollector)
		}
	case errors.Is(want.err, errFzSig):
		if err == nil || errors.As(err, &are) || !strings.HasPrefix(err.Error(), "a previously registered descriptor with the same fully-qualified name") {
			r.fatalf("Register = %v, want the registry's consistency error", err)
		}
	case errors.Is(want.err, errFzClash):
		if err == nil || !strings.HasPrefix(err.Error(), "registry: label ") {
			r.fatalf("Register = %v, want the label clash", err)
		}
	case want.err != nil:
		if !errors.Is(err, want.err) {
			r.fatalf("Register = %v, want %v", err, want.err)
		}
	case err != nil:
		r.fatalf("Register = %v, want nil", err)
	}
}

// fzSameObj compares two collectors, values of uncomparable content included.
func fzSameObj(a, b prometheus.Collector) bool {
	ha, aok := a.(fzHolder)
	hb, bok := b.(fzHolder)
	if aok || bok {
		if !aok || !bok {
			return false
		}
		ga, _ := ha.inner.(promtest.Gauges)
		gb, _ := hb.inner.(promtest.Gauges)
		return len(ga) > 0 && len(gb) > 0 && &ga[0] == &gb[0]
	}
	return a == b
}

func (r *fzRun) unregister(tg *fzTarget, c *fzCol, how string) {
	r.logf("%s: Unregister(%s %p)%s", tg.name, c.name, c.obj, how)
	got := tg.reg.Unregister(c.obj)
	if want := r.modelUnregister(tg.scope, fzItem{col: c, wrap: tg.wrap}); got != want {
		r.fatalf("Unregister = %v, want %v", got, want)
	}
}

func (r *fzRun) closeScope(sc *fzScope) {
	r.logf("%s: Close", r.name(sc))
	err := sc.s.Close()
	want := r.modelClose(sc)
	if len(want) == 0 {
		if err != nil {
			r.fatalf("Close = %v, want nil", err)
		}
		return
	}
	var got []string
	for _, e := range multierr.Errors(err) {
		var ue *registry.UnregisterError
		if !errors.As(e, &ue) || !errors.Is(e, registry.ErrNotRegistered) {
			r.fatalf("Close reported %v, not an UnregisterError wrapping ErrNotRegistered", e)
		}
		got = append(got, strings.Join(ue.Metrics, ","))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		r.fatalf("Close reported UnregisterErrors for %q, want %q (%v)", got, want, err)
	}
}

func (r *fzRun) deleteOnClose(sc *fzScope, choice int, owner, k string, vecs int) {
	var labels prometheus.Labels
	switch choice {
	case 1:
		labels = prometheus.Labels{"owner": owner}
	case 2:
		labels = prometheus.Labels{"k": k}
	case 3:
		labels = prometheus.Labels{"owner": owner, "k": k}
	}
	d := fzDeletion{labels: labels}
	var ds []registry.Deleter
	for i := range r.shared {
		if vecs&(1<<i) != 0 {
			d.vecs = append(d.vecs, i)
			ds = append(ds, r.shared[i])
		}
	}
	r.logf("%s: DeleteOnClose(%v, %v)", r.name(sc), labels, d.vecs)
	if len(labels) == 0 || len(ds) == 0 {
		v := promtest.Panic(func() { sc.s.DeleteOnClose(labels, ds...) })
		if msg, ok := v.(string); !ok || !strings.HasPrefix(msg, "registry: ") {
			r.fatalf("DeleteOnClose with no labels or no vectors panicked with %#v, want a \"registry: \" message", v)
		}
		return
	}
	sc.s.DeleteOnClose(labels, ds...)
	if sc.closed {
		r.applyDeletion(d)
	} else {
		sc.deletes = append(sc.deletes, d)
	}
}

func (r *fzRun) applyDeletion(d fzDeletion) {
	for _, i := range d.vecs {
		for s := range r.sharedSeries[i] {
			if o, ok := d.labels["owner"]; ok && o != s[0] {
				continue
			}
			if k, ok := d.labels["k"]; ok && k != s[1] {
				continue
			}
			delete(r.sharedSeries[i], s)
		}
	}
}

// outsider returns a registerer that applies o as an outsider would, to
// register something equal to a scope's registration.
func (r *fzRun) outsider(o fzOpts) prometheus.Registerer {
	var reg prometheus.Registerer = r.reg
	if len(o.labels) > 0 {
		reg = prometheus.WrapRegistererWith(o.labels, reg)
	}
	if o.prefix != "" {
		reg = prometheus.WrapRegistererWithPrefix(o.prefix, reg)
	}
	return reg
}

func (r *fzRun) outsiderUnregister(id fzIdent) {
	c := fzNewCol(id.col.kind, id.col.name, 0)
	d := fzDescOf(c, id.opts)
	r.logf("outsider: Unregister(%s with %v)", c.name, id.opts)
	if c.kind == fzQuiet {
		c.quiet.asked.Store(true)
		c.asked = true
	}
	got := r.outsider(id.opts).Unregister(c.obj)
	_, want := r.model.held[d.id]
	delete(r.model.held, d.id)
	if got != want {
		r.fatalf("the registry's Unregister = %v, want %v", got, want)
	}
}

func (r *fzRun) outsiderRegister(id fzIdent, v byte) {
	c := fzNewCol(id.col.kind, id.col.name, v)
	d := fzDescOf(c, id.opts)
	r.logf("outsider: Register(%s %p with %v) %v", c.name, c.obj, id.opts, c.series)
	if c.kind == fzQuiet {
		c.quiet.asked.Store(true)
		c.asked = true
	}
	err := r.outsider(id.opts).Register(c.obj)
	var are prometheus.AlreadyRegisteredError
	switch h := r.model.held[d.id]; {
	case r.model.sigs[d.fqName] != "" && r.model.sigs[d.fqName] != d.sig:
		if err == nil || errors.As(err, &are) {
			r.fatalf("the registry's Register = %v, want its consistency error", err)
		}
	case h != nil:
		if !errors.As(err, &are) {
			r.fatalf("the registry's Register = %v, want an AlreadyRegisteredError", err)
		}
		if h.col != nil && !fzSameObj(are.ExistingCollector, h.col.obj) {
			r.fatalf("AlreadyRegisteredError names %p, want the outsider's %p", are.ExistingCollector, h.col.obj)
		}
		// A scope's registration is what the registry holds; it
		// unwraps to the collector registered through the scope.
		if h.entry != nil && h.entry.item.col != nil && h.entry.item.wrap == nil {
			u, ok := are.ExistingCollector.(interface{ Unwrap() prometheus.Collector })
			if !ok || !fzSameObj(u.Unwrap(), h.entry.item.col.obj) {
				r.fatalf("AlreadyRegisteredError names %T, which does not unwrap to the scope's collector", are.ExistingCollector)
			}
		}
	default:
		if err != nil {
			r.fatalf("the registry's Register = %v, want nil", err)
		}
		r.model.held[d.id] = &fzRef{col: c, opts: id.opts}
		r.model.sigs[d.fqName] = d.sig
	}
}

// expose adds what e's registration exposes, with outer applied outside, to
// out: nothing once it is released, and through a nested registration or a
// hub only what is still live below.
func expose(e *fzEntry, outer fzOpts, out map[string][]float64) {
	if e.released {
		return
	}
	o := outer.over(e.scope.view)
	if e.item.wrap != nil {
		o = o.over(*e.item.wrap)
	}
	switch it := e.item; {
	case it.col != nil:
		fzExpose(it.col, o, out)
	case it.member != nil:
		expose(it.member, o, out)
	case it.hub != nil:
		for _, x := range it.hub.hub {
			expose(x, o, out)
		}
	}
}

// wantRegistry is what the registry must expose.
func (r *fzRun) wantRegistry() map[string][]float64 {
	out := map[string][]float64{}
	for _, h := range r.model.held {
		if h.entry != nil {
			expose(h.entry, fzOpts{}, out)
		} else {
			fzExpose(h.col, h.opts, out)
		}
	}
	for _, t := range r.model.hubs {
		for _, e := range t.hub {
			expose(e, fzOpts{}, out)
		}
	}
	for i, series := range r.sharedSeries {
		for s, v := range series {
			key := fzSeriesKey(fmt.Sprintf("shared%d", i), map[string]string{"owner": s[0], "k": s[1]})
			out[key] = append(out[key], v)
		}
	}
	return out
}

// wantScope is what sc.Gather must return: everything sc and the open scopes
// nested in it own, as its tree's parent would see it.
func (r *fzRun) wantScope(sc *fzScope, out map[string][]float64) {
	if sc.closed {
		return
	}
	for _, e := range sc.entries {
		expose(e, fzOpts{}, out)
	}
	for _, c := range sc.children {
		r.wantScope(c, out)
	}
}

func (r *fzRun) checkRegistry() {
	r.t.Helper()
	mfs, err := r.reg.Gather()
	r.compare("the registry", mfs, err, r.wantRegistry())
}

func (r *fzRun) checkScopeGather(sc *fzScope) {
	r.t.Helper()
	r.logf("%s: Gather", r.name(sc))
	mfs, err := sc.s.Gather()
	want := map[string][]float64{}
	r.wantScope(sc, want)
	r.compare(r.name(sc), mfs, err, want)
}

// compare fails unless mfs holds exactly the series of want. A series the
// model expects more than once (an unchecked collector exposed twice the
// same way) must make Gather fail; it is then exposed once.
func (r *fzRun) compare(what string, mfs []*dto.MetricFamily, err error, want map[string][]float64) {
	r.t.Helper()
	got := fzGathered(mfs)
	dup := false
	for key, vs := range want {
		g, ok := got[key]
		switch {
		case !ok:
			r.fatalf("%s does not expose %s, want %v\ngot  %v\nwant %v", what, key, vs, got, want)
		case len(vs) > 1:
			dup = true
		case g != vs[0]:
			r.fatalf("%s exposes %s = %v, want %v", what, key, g, vs[0])
		}
	}
	for key, v := range got {
		if _, ok := want[key]; !ok {
			r.fatalf("%s exposes %s = %v, which it must not\ngot  %v\nwant %v", what, key, v, got, want)
		}
	}
	if dup != (err != nil) {
		r.fatalf("%s: Gather error = %v, want an error: %v", what, err, dup)
	}
}

func fzGathered(mfs []*dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			v := m.GetGauge().GetValue()
			if m.Counter != nil {
				v = m.GetCounter().GetValue()
			}
			out[fzSeriesKey(mf.GetName(), labels)] = v
		}
	}
	return out
}

func wantLen(sc *fzScope) int {
	if sc.closed {
		return 0
	}
	n := len(sc.entries)
	for _, c := range sc.children {
		n += wantLen(c)
	}
	return n
}

func (r *fzRun) checkLens() {
	r.t.Helper()
	for _, sc := range r.scopes {
		if got, want := sc.s.Len(), wantLen(sc); got != want {
			r.fatalf("%s: Len() = %d, want %d", r.name(sc), got, want)
		}
	}
}

var updateCorpus = flag.Bool("update-corpus", false, "rewrite testdata/fuzz/FuzzScope from fzSeeds")

// An fzSeed is a named input of FuzzScope.
type fzSeed struct {
	name string
	data []byte
}

// TestFuzzCorpus checks that testdata/fuzz/FuzzScope holds exactly the
// seeds of fzSeeds, each in the file of its name in the fuzzing engine's
// format, so that the files go on meaning what their names say when the
// operations change. An input the fuzzer finds and writes there belongs in
// fzSeeds, under a name.
func TestFuzzCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzScope")
	want := map[string]string{} // each file's content, by name
	for _, seed := range fzSeeds() {
		want[seed.name] = fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", seed.data)
	}
	if *updateCorpus {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, content := range want {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		w, ok := want[f.Name()]
		if !ok {
			t.Errorf("%s is not a seed of fzSeeds: add it there under a name, then run with -update-corpus", f.Name())
			continue
		}
		delete(want, f.Name())
		got, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != w {
			t.Errorf("%s is not what fzSeeds says; run with -update-corpus", f.Name())
		}
	}
	for name := range want {
		t.Errorf("seed %s has no file; run with -update-corpus", name)
	}
}

// fzSeeds are hand-written scenarios, one per kind of trouble, so that the
// seed run alone reaches every branch of the model. They are the seed
// corpus in testdata/fuzz/FuzzScope, one file each, which TestFuzzCorpus
// keeps in step with this list: after changing the operations or a seed,
// rewrite the files with go test -run TestFuzzCorpus -update-corpus.
func fzSeeds() []fzSeed {
	op := func(code int, args ...byte) []byte { return append([]byte{byte(code)}, args...) }
	seq := func(ops ...[]byte) []byte { return slices.Concat(ops...) }
	return []fzSeed{
		// A gauge, registered twice (the duplicate fails), then closed.
		{"gauge-registered-twice-then-closed", seq(op(fzOpRoot, 0, 1), op(fzOpNewCollector, byte(fzGauge), 0, 3),
			op(fzOpRegister, 0, 0, 1), op(fzOpRegister, 0, 0, 0), op(fzOpClose, 0))},
		// An outsider unregisters the scope's vector and registers an
		// equal one of its own: Close leaves theirs.
		{"outsider-replaces-the-scopes-vector", seq(op(fzOpRoot, 2, 1), op(fzOpNewCollector, byte(fzVec), 0, 0x25),
			op(fzOpRegister, 0, 0, 1), op(fzOpOutsiderUnregister, 0),
			op(fzOpOutsiderRegister, 0, 7), op(fzOpRegister, 0, 0, 1), op(fzOpClose, 0))},
		// Nested scopes with prefixes and labels, a GaugeFunc and an
		// unchecked collector in both; the outer scope closes them all.
		{"nested-prefixes-and-labels-closed-by-the-outer-scope", seq(op(fzOpRoot, 1, 1), op(fzOpNest, 0, 0, 2), op(fzOpNest, 1, 1, 4),
			op(fzOpNewCollector, byte(fzFunc), 1, 9), op(fzOpNewCollector, byte(fzUnchecked), 0, 4),
			op(fzOpRegister, 1, 0, 1), op(fzOpRegister, 2, 1, 1), op(fzOpRegister, 0, 1, 1),
			op(fzOpGatherScope, 1), op(fzOpUnregister, 2, 1), op(fzOpClose, 0), op(fzOpRegister, 2, 0, 1))},
		// Shared vectors with DeleteOnClose from two scopes, one of them
		// already closed, and the misuse of no labels.
		{"shared-vectors-delete-on-close-from-two-scopes", seq(op(fzOpRoot, 0, 1), op(fzOpRoot, 3, 1), op(fzOpShared, 0, 0, 0, 2),
			op(fzOpShared, 1, 1, 1, 1), op(fzOpShared, 0, 1, 0, 3),
			op(fzOpDeleteOnClose, 0, 1, 0, 0, 3), op(fzOpDeleteOnClose, 1, 0, 0, 0, 1),
			op(fzOpClose, 1), op(fzOpDeleteOnClose, 1, 3, 1, 1, 2), op(fzOpClose, 0))},
		// The same descriptors under two scopes of different label names:
		// the second fails with the registry's consistency error.
		{"same-descriptors-under-two-label-names", seq(op(fzOpRoot, 0, 1), op(fzOpRoot, 2, 1), op(fzOpNewCollector, byte(fzGauge), 1, 2),
			op(fzOpRegister, 0, 0, 1), op(fzOpRegister, 1, 0, 1), op(fzOpUnregisterEqual, 0, 0, 1),
			op(fzOpRegister, 1, 0, 1))},
		// The same gauge registered again after tampering, then an equal
		// one: Unregister takes every registration of the gauge, the
		// newest reporting the equal one left alone.
		{"same-gauge-registered-again-after-tampering", seq(op(fzOpRoot, 0, 1), op(fzOpNewCollector, byte(fzGauge), 0, 1), op(fzOpNewCollector, byte(fzGauge), 0, 2),
			op(fzOpRegister, 0, 0, 1), op(fzOpOutsiderUnregister, 0), op(fzOpRegister, 0, 0, 1),
			op(fzOpOutsiderUnregister, 0), op(fzOpRegister, 0, 1, 1), op(fzOpUnregister, 0, 0),
			op(fzOpUnregister, 0, 0), op(fzOpGatherScope, 0), op(fzOpClose, 0))},
		// A scope with a nil parent, a nested scope setting its label.
		{"nil-parent-and-a-nested-scope-setting-its-label", seq(op(fzOpRoot, 2, 0), op(fzOpNest, 0, 0, 5), op(fzOpNewCollector, byte(fzUnchecked), 1, 3),
			op(fzOpRegister, 0, 0, 1), op(fzOpRegister, 0, 0, 1), op(fzOpRegister, 1, 0, 1), op(fzOpGatherScope, 0),
			op(fzOpNil, 0), op(fzOpUnregister, 0, 0), op(fzOpGatherScope, 0))},
		// A scope on a label wrapper of a program scope, three levels
		// deep, with checked and unchecked collectors, recycled.
		{"three-levels-on-a-label-wrapper-recycled", seq(op(fzOpRoot, 1, 1), op(fzOpWrap, 0, 0), op(fzOpNest, 1, 0, 2), op(fzOpWrap, 1, 1), op(fzOpNest, 3, 0, 3),
			op(fzOpNewCollector, byte(fzGauge), 0, 1), op(fzOpNewCollector, byte(fzUnchecked), 0, 2),
			op(fzOpRegister, 2, 0, 0), op(fzOpRegister, 2, 1, 0), op(fzOpRegister, 4, 0, 1), op(fzOpRegister, 4, 1, 1),
			op(fzOpGatherScope, 0), op(fzOpClose, 2), op(fzOpNest, 1, 0, 2), op(fzOpRegister, 5, 1, 0),
			op(fzOpClose, 0), op(fzOpRegister, 4, 0, 0), op(fzOpClose, 4))},
		// Registrations through wrappers of a scope, and the outsider
		// tampering with them behind the scope's back.
		{"registrations-through-wrappers-with-an-outsider", seq(op(fzOpRoot, 2, 1), op(fzOpWrap, 0, 1), op(fzOpWrap, 0, 0),
			op(fzOpNewCollector, byte(fzVec), 1, 0x12), op(fzOpNewCollector, byte(fzUnchecked), 1, 5),
			op(fzOpRegister, 1, 0, 0), op(fzOpRegister, 2, 0, 0), op(fzOpRegister, 1, 1, 0),
			op(fzOpOutsiderUnregister, 0), op(fzOpOutsiderRegister, 0, 3), op(fzOpUnregister, 1, 0),
			op(fzOpUnregisterEqual, 2, 0, 1), op(fzOpUnregister, 1, 1), op(fzOpClose, 0))},
		// Values holding slices, copies of them, and quiet collectors.
		{"values-holding-slices-and-quiet-collectors", seq(op(fzOpRoot, 0, 1), op(fzOpNest, 0, 1, 1), op(fzOpNewCollector, byte(fzValue), 0, 4),
			op(fzOpNewCollector, byte(fzQuiet), 1, 6), op(fzOpRegister, 1, 0, 0), op(fzOpUnregisterEqual, 1, 0, 0),
			op(fzOpRegister, 1, 0, 0), op(fzOpRegister, 0, 1, 0), op(fzOpRegister, 1, 1, 0),
			op(fzOpUnregister, 0, 1), op(fzOpGatherScope, 0), op(fzOpClose, 1))},
		// A nested scope that sets its outer scope's label: its
		// registrations fail, and once closed, say so first.
		{"nested-scope-setting-its-outer-scopes-label", seq(op(fzOpRoot, 2, 1), op(fzOpNest, 0, 1, 5), op(fzOpNewCollector, byte(fzGauge), 0, 1),
			op(fzOpRegister, 1, 0, 0), op(fzOpRegister, 1, 0, 1), op(fzOpClose, 0), op(fzOpRegister, 1, 0, 0))},
		// A scope nested through a wrapper outlives the scope it is on.
		{"scope-through-a-wrapper-outlives-the-scope-it-is-on", seq(op(fzOpRoot, 0, 1), op(fzOpWrap, 0, 1), op(fzOpNest, 1, 0, 0),
			op(fzOpNewCollector, byte(fzGauge), 1, 1), op(fzOpNewCollector, byte(fzUnchecked), 0, 1),
			op(fzOpRegister, 2, 0, 0), op(fzOpClose, 0), op(fzOpRegister, 2, 1, 0), op(fzOpUnregister, 2, 0),
			op(fzOpGatherScope, 1), op(fzOpClose, 1))},
	}
}
