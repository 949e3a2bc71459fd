package registry_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/multierr"

	"github.com/promscope/promscope/registry"
)

// FuzzScope runs sequences of operations on a tree of scopes over one
// pedantic registry and checks, after every operation, that the registry
// exposes exactly what a plain model says it must.
//
// The model does not reuse the library's bookkeeping. It keeps, per scope,
// the list of registrations the scope owns, and for the registry what
// client_golang documents: which owner holds each descriptor identity (a
// metric name with its constant label values), which label names and help
// each metric name was first registered with (fixed for the registry's
// lifetime), and the unchecked collectors. Outsiders, other owners of the
// same registry, unregister identities and register equal collectors of
// their own behind the scopes' backs. From that the model predicts every
// result: Register's error (and the collectors an AlreadyRegisteredError
// names), Unregister's answer, the UnregisterErrors that Close reports, Len,
// a scope's own Gather, and the registry's Gather, series by series.
//
// The decoder only produces valid metric and label names, and the one
// misuse it produces on purpose (DeleteOnClose with no labels, Child setting
// a label an ancestor sets) must panic with a "registry:" message. Nothing
// depends on timing: every operation runs to completion before the next.
func FuzzScope(f *testing.F) {
	for _, seed := range fzSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := newFzRun(t)
		r.run(data)
	})
}

// The operations, one byte each, followed by their arguments.
const (
	fzOpNewScope           = iota // opts, nil-parent flag
	fzOpChild                     // scope, opts (5 and up: a label an ancestor sets)
	fzOpNewCollector              // kind, name, value
	fzOpRegister                  // scope, collector, MustRegister flag
	fzOpUnregister                // scope, collector
	fzOpUnregisterEqual           // scope, collector: a fresh equal collector
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
	fzMaxCollectors = 12
	fzMaxIdents     = 24
)

type fzKind int

const (
	fzGauge     fzKind = iota // prometheus.Gauge
	fzVec                     // *prometheus.CounterVec labelled k
	fzFunc                    // prometheus.GaugeFunc
	fzUnchecked               // a collector whose Describe yields nothing
	fzKinds
)

var fzBaseNames = [fzKinds][2]string{
	fzGauge:     {"g0", "g1"},
	fzVec:       {"v0", "v1"},
	fzFunc:      {"f0", "f1"},
	fzUnchecked: {"u0", "u1"},
}

func fzHelp(kind fzKind, name string) string {
	return fmt.Sprintf("Fuzz %s of kind %d.", name, kind)
}

// fzUncheckedCollector exposes one gauge but describes nothing.
type fzUncheckedCollector struct {
	desc  *prometheus.Desc
	value float64
}

func (*fzUncheckedCollector) Describe(chan<- *prometheus.Desc) {}

func (u *fzUncheckedCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(u.desc, prometheus.GaugeValue, u.value)
}

// fzCol is a collector object and the series the model expects it to
// expose, before any prefix or labels: the key is the value of label k for
// a vector, "" otherwise.
type fzCol struct {
	kind   fzKind
	name   string
	obj    prometheus.Collector
	gauge  prometheus.Gauge
	vec    *prometheus.CounterVec
	unc    *fzUncheckedCollector
	series map[string]float64
}

func fzNewCol(kind fzKind, name string, v byte) *fzCol {
	c := &fzCol{kind: kind, name: name, series: map[string]float64{}}
	help := fzHelp(kind, name)
	value := float64(v%16) + 1
	switch kind {
	case fzGauge:
		c.gauge = prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
		c.gauge.Set(value)
		c.obj = c.gauge
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
		c.unc = &fzUncheckedCollector{desc: prometheus.NewDesc(name, help, nil, nil), value: value}
		c.obj = c.unc
		c.series[""] = value
	}
	return c
}

// set changes what c exposes; a GaugeFunc's value is fixed.
func (c *fzCol) set(v byte) {
	value := float64(v%16) + 1
	switch c.kind {
	case fzGauge:
		c.gauge.Set(value)
		c.series[""] = value
	case fzVec:
		k := []string{"a", "b", "c"}[int(v/16)%3]
		c.vec.WithLabelValues(k).Add(value)
		c.series[k] += value
	case fzUnchecked:
		c.unc.value = value
		c.series[""] = value
	}
}

// fzOpts are a scope's prefix and labels, composed with its ancestors'.
type fzOpts struct {
	prefix string
	labels map[string]string
}

func (o fzOpts) String() string {
	return fmt.Sprintf("%q%v", o.prefix, o.labels)
}

// fzChoose decodes the options of a scope at depth d: each depth uses its
// own label name, so that Child never sets a label an ancestor sets.
func fzChoose(choice, depth int) (own fzOpts, opts []registry.Option) {
	label := fmt.Sprintf("l%d", depth)
	switch choice {
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

func (o fzOpts) under(parent fzOpts) fzOpts {
	out := fzOpts{prefix: parent.prefix + o.prefix}
	if len(parent.labels)+len(o.labels) > 0 {
		out.labels = maps.Clone(parent.labels)
		if out.labels == nil {
			out.labels = map[string]string{}
		}
		maps.Copy(out.labels, o.labels)
	}
	return out
}

// wrap applies o to a collector the way an outsider would, to build one
// equal to what a scope with these options exposes.
func (o fzOpts) wrap(c prometheus.Collector) prometheus.Collector {
	if o.prefix != "" {
		c = prometheus.WrapCollectorWithPrefix(o.prefix, c)
	}
	if len(o.labels) > 0 {
		c = prometheus.WrapCollectorWith(o.labels, c)
	}
	return c
}

// fzDesc is what the model knows of the one descriptor a collector kind and
// name, exposed with some options, describes.
type fzDesc struct {
	fqName string
	id     string // what client_golang keys registrations by
	sig    string // label names and help, fixed per name once registered
	key    string // what a scope's Unregister matches
}

func fzDescOf(kind fzKind, name string, o fzOpts) fzDesc {
	fq := o.prefix + name
	names := slices.Sorted(maps.Keys(o.labels))
	values := []string{fq}
	pairs := []string{}
	for _, n := range names {
		values = append(values, o.labels[n])
		pairs = append(pairs, n+"="+o.labels[n])
	}
	dims := slices.Clone(names)
	vars := ""
	if kind == fzVec {
		dims = append(dims, "$k")
		vars = "k"
	}
	slices.Sort(dims)
	help := fzHelp(kind, name)
	return fzDesc{
		fqName: fq,
		id:     strings.Join(values, "\xff"),
		sig:    help + "\xff" + strings.Join(dims, ","),
		key:    strings.Join([]string{fq, help, strings.Join(pairs, ","), vars}, "\xff"),
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

// fzScope is the model of one scope.
type fzScope struct {
	s         *registry.Scope
	own       fzOpts // the options given to NewScope or Child
	opts      fzOpts // composed with the ancestors'
	depth     int
	nilParent bool
	closed    bool
	up        *fzScope
	children  []*fzScope // open children, oldest first
	entries   []*fzEntry // owned registrations, oldest first
	deletes   []fzDeletion
}

// fzEntry is one registration a scope owns.
type fzEntry struct {
	scope    *fzScope
	col      *fzCol
	desc     fzDesc
	silenced bool // for unchecked entries, which the registry keeps
}

// fzOutsider is a registration of somebody else's, made on the registry
// directly.
type fzOutsider struct {
	col  *fzCol
	opts fzOpts
}

// fzHolder is whoever holds an identity in the registry: a scope's entry or
// an outsider.
type fzHolder struct {
	entry *fzEntry
	out   *fzOutsider
}

func (h *fzHolder) user() prometheus.Collector {
	if h.entry != nil {
		return h.entry.col.obj
	}
	return h.out.col.obj
}

// fzIdent is a descriptor identity that outsiders may tamper with.
type fzIdent struct {
	kind fzKind
	name string
	opts fzOpts
}

type fzDeletion struct {
	labels prometheus.Labels
	vecs   []int
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

	scopes []*fzScope
	cols   []*fzCol
	idents []fzIdent

	held      map[string]*fzHolder // by fzDesc.id
	sigs      map[string]string    // by metric name; never forgotten
	unchecked []*fzEntry           // unchecked registrations in the registry

	shared       [2]*prometheus.CounterVec
	sharedSeries [2]map[[2]string]float64 // owner, k
}

func newFzRun(t *testing.T) *fzRun {
	r := &fzRun{
		t:    t,
		reg:  prometheus.NewPedanticRegistry(),
		held: map[string]*fzHolder{},
		sigs: map[string]string{},
	}
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
	for id, h := range r.held {
		if h.entry != nil {
			r.fatalf("model: %s still held by a scope after closing all", id)
		}
	}
}

func (r *fzRun) scope(in *fzInput) *fzScope {
	if len(r.scopes) == 0 {
		return nil
	}
	return r.scopes[in.pick(len(r.scopes))]
}

func (r *fzRun) col(in *fzInput) *fzCol {
	if len(r.cols) == 0 {
		return nil
	}
	return r.cols[in.pick(len(r.cols))]
}

func (r *fzRun) step(in *fzInput) {
	switch op := in.pick(fzOps); op {
	case fzOpNewScope:
		choice, nilParent := in.pick(5), in.pick(8) == 0
		if len(r.scopes) >= fzMaxScopes {
			return
		}
		own, opts := fzChoose(choice, 0)
		var parent prometheus.Registerer = r.reg
		if nilParent {
			parent = nil
		}
		sc := &fzScope{s: registry.NewScope(parent, opts...), own: own, opts: own.under(fzOpts{}), nilParent: nilParent}
		r.scopes = append(r.scopes, sc)
		r.logf("scope %d = NewScope(nil parent %v, %v)", len(r.scopes)-1, nilParent, own)
	case fzOpChild:
		up, choice := r.scope(in), in.pick(7)
		if up == nil || len(r.scopes) >= fzMaxScopes {
			return
		}
		r.child(up, choice)
	case fzOpNewCollector:
		kind, name, v := fzKind(in.pick(int(fzKinds))), in.pick(2), in.byte()
		c := fzNewCol(kind, fzBaseNames[kind][name], v)
		if len(r.cols) < fzMaxCollectors {
			r.cols = append(r.cols, c)
			r.logf("col %d = %s (kind %d) %v", len(r.cols)-1, c.name, kind, c.series)
		} else {
			i := int(v) % len(r.cols)
			r.cols[i] = c
			r.logf("col %d = %s (kind %d) %v", i, c.name, kind, c.series)
		}
	case fzOpRegister:
		sc, c, must := r.scope(in), r.col(in), in.pick(4) == 0
		if sc == nil || c == nil {
			return
		}
		r.register(sc, c, must)
	case fzOpUnregister, fzOpUnregisterEqual:
		sc, c := r.scope(in), r.col(in)
		if sc == nil || c == nil {
			return
		}
		if op == fzOpUnregisterEqual {
			c = fzNewCol(c.kind, c.name, 0)
		}
		r.unregister(sc, c, op == fzOpUnregisterEqual)
	case fzOpClose:
		sc := r.scope(in)
		if sc == nil {
			return
		}
		r.closeScope(sc)
	case fzOpDeleteOnClose:
		sc, labels, owner, k, vecs := r.scope(in), in.pick(4), in.pick(len(fzOwners)), in.pick(len(fzSharedKs)), in.pick(4)
		if sc == nil {
			return
		}
		r.deleteOnClose(sc, labels, fzOwners[owner], fzSharedKs[k], vecs)
	case fzOpShared:
		i, owner, k, v := in.pick(2), fzOwners[in.pick(len(fzOwners))], fzSharedKs[in.pick(len(fzSharedKs))], float64(in.pick(4)+1)
		r.shared[i].WithLabelValues(owner, k).Add(v)
		r.sharedSeries[i][[2]string{owner, k}] += v
		r.logf("shared%d{%s,%s} += %v", i, owner, k, v)
	case fzOpSet:
		c, v := r.col(in), in.byte()
		if c == nil {
			return
		}
		c.set(v)
		r.logf("set %s to %v", c.name, c.series)
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
		sc := r.scope(in)
		if sc == nil {
			return
		}
		r.checkScopeGather(sc)
	case fzOpNil:
		sc := r.scope(in)
		if sc == nil {
			return
		}
		r.logf("scope %d: Register(nil), Unregister(nil)", r.index(sc))
		if err := sc.s.Register(nil); !errors.Is(err, registry.ErrNilCollector) {
			r.fatalf("Register(nil) = %v, want ErrNilCollector", err)
		}
		if sc.s.Unregister(nil) {
			r.fatalf("Unregister(nil) = true")
		}
	}
}

func (r *fzRun) index(sc *fzScope) int { return slices.Index(r.scopes, sc) }

func (r *fzRun) child(up *fzScope, choice int) {
	depth := up.depth + 1
	if choice >= 5 {
		// Misuse: set a label an ancestor sets. Child must panic and
		// create nothing.
		var taken string
		for a := up; a != nil && taken == ""; a = a.up {
			for n := range a.own.labels {
				taken = n
			}
		}
		if taken == "" {
			choice = 0
		} else {
			r.logf("scope %d: Child(WithLabels(%s)) (misuse)", r.index(up), taken)
			v := fzPanic(func() { up.s.Child(registry.WithLabels(prometheus.Labels{taken: "z"})) })
			if msg, ok := v.(string); !ok || !strings.HasPrefix(msg, "registry: ") {
				r.fatalf("Child with a label of an ancestor panicked with %#v, want a \"registry: \" message", v)
			}
			return
		}
	}
	own, opts := fzChoose(choice, depth)
	sc := &fzScope{s: up.s.Child(opts...), own: own, opts: own.under(up.opts), depth: depth, nilParent: up.nilParent, up: up}
	if up.closed {
		sc.closed = true
		sc.up = nil
	} else {
		up.children = append(up.children, sc)
	}
	r.scopes = append(r.scopes, sc)
	r.logf("scope %d = scope %d .Child(%v) closed %v", len(r.scopes)-1, r.index(up), own, sc.closed)
}

func fzPanic(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// register predicts and checks sc.Register(c.obj).
func (r *fzRun) register(sc *fzScope, c *fzCol, must bool) {
	e := &fzEntry{scope: sc, col: c, desc: fzDescOf(c.kind, c.name, sc.opts)}
	r.logf("scope %d: Register(%s %p) must %v", r.index(sc), c.name, c.obj, must)
	if c.kind != fzUnchecked && len(r.idents) < fzMaxIdents {
		r.idents = append(r.idents, fzIdent{kind: c.kind, name: c.name, opts: sc.opts})
	}

	var err error
	if must {
		v := fzPanic(func() { sc.s.MustRegister(c.obj) })
		if v != nil {
			var ok bool
			if err, ok = v.(error); !ok {
				r.fatalf("MustRegister panicked with %#v, not an error", v)
			}
		}
	} else {
		err = sc.s.Register(c.obj)
	}

	var are prometheus.AlreadyRegisteredError
	switch {
	case sc.closed:
		if !errors.Is(err, registry.ErrClosed) {
			r.fatalf("Register on a closed scope = %v, want ErrClosed", err)
		}
		return
	case sc.nilParent || c.kind == fzUnchecked:
		if err != nil {
			r.fatalf("Register = %v, want nil", err)
		}
		if !sc.nilParent {
			r.unchecked = append(r.unchecked, e)
		}
	case r.sigs[e.desc.fqName] != "" && r.sigs[e.desc.fqName] != e.desc.sig:
		// The registry's own error, passed through unchanged.
		if err == nil || errors.As(err, &are) || !strings.HasPrefix(err.Error(), "a previously registered descriptor with the same fully-qualified name") {
			r.fatalf("Register of %s with other label names = %v, want the registry's inconsistency error", e.desc.fqName, err)
		}
		return
	case r.held[e.desc.id] != nil:
		h := r.held[e.desc.id]
		if !errors.As(err, &are) {
			r.fatalf("Register of %s = %v, want an AlreadyRegisteredError", e.desc.fqName, err)
		}
		if are.ExistingCollector != h.user() || are.NewCollector != c.obj {
			r.fatalf("AlreadyRegisteredError names %p (%T) and %p, want existing %p and new %p",
				are.ExistingCollector, are.ExistingCollector, are.NewCollector, h.user(), c.obj)
		}
		return
	default:
		if err != nil {
			r.fatalf("Register of %s = %v, want nil", e.desc.fqName, err)
		}
		r.held[e.desc.id] = &fzHolder{entry: e}
		r.sigs[e.desc.fqName] = e.desc.sig
	}
	sc.entries = append(sc.entries, e)
}

// lookup finds what sc.Unregister(c) takes: the newest entry of sc for the
// object c, else the newest checked entry with the same descriptors.
func (r *fzRun) lookup(sc *fzScope, c *fzCol) int {
	for i := len(sc.entries) - 1; i >= 0; i-- {
		if sc.entries[i].col == c {
			return i
		}
	}
	if c.kind == fzUnchecked {
		return -1
	}
	key := fzDescOf(c.kind, c.name, sc.opts).key
	for i := len(sc.entries) - 1; i >= 0; i-- {
		if e := sc.entries[i]; e.col.kind != fzUnchecked && e.desc.key == key {
			return i
		}
	}
	return -1
}

// release takes e back, as Unregister and Close do, and reports whether
// it was still e's to take.
func (r *fzRun) release(e *fzEntry) bool {
	if e.scope.nilParent {
		return true
	}
	if e.col.kind == fzUnchecked {
		e.silenced = true
		return true
	}
	h := r.held[e.desc.id]
	switch {
	case h == nil:
		return false // somebody else unregistered it
	case h.entry == e:
		delete(r.held, e.desc.id)
		return true
	default:
		return false // somebody else's is registered in its place
	}
}

func (r *fzRun) unregister(sc *fzScope, c *fzCol, equal bool) {
	r.logf("scope %d: Unregister(%s %p) with a fresh equal collector %v", r.index(sc), c.name, c.obj, equal)
	got := sc.s.Unregister(c.obj)
	want := false
	if !sc.closed {
		if i := r.lookup(sc, c); i >= 0 {
			e := sc.entries[i]
			sc.entries = slices.Delete(sc.entries, i, i+1)
			want = r.release(e)
		}
	}
	if got != want {
		r.fatalf("Unregister = %v, want %v", got, want)
	}
}

// modelClose closes sc in the model and returns the metric names of the
// UnregisterErrors Close must report.
func (r *fzRun) modelClose(sc *fzScope) []string {
	if sc.closed {
		return nil
	}
	sc.closed = true
	if sc.up != nil {
		sc.up.children = slices.DeleteFunc(sc.up.children, func(c *fzScope) bool { return c == sc })
		sc.up = nil
	}
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
		if !r.release(e) {
			fails = append(fails, e.desc.fqName)
		}
	}
	sc.entries = nil
	return fails
}

func (r *fzRun) closeScope(sc *fzScope) {
	r.logf("scope %d: Close", r.index(sc))
	err := sc.s.Close()
	want := r.modelClose(sc)
	if len(want) == 0 {
		if err != nil {
			r.fatalf("Close = %v, want nil", err)
		}
		return
	}
	if !errors.Is(err, registry.ErrNotRegistered) {
		r.fatalf("Close = %v, want an error wrapping ErrNotRegistered", err)
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
	r.logf("scope %d: DeleteOnClose(%v, %v)", r.index(sc), labels, d.vecs)
	if len(labels) == 0 {
		v := fzPanic(func() { sc.s.DeleteOnClose(labels, ds...) })
		if msg, ok := v.(string); !ok || !strings.HasPrefix(msg, "registry: ") {
			r.fatalf("DeleteOnClose with no labels panicked with %#v, want a \"registry: \" message", v)
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

func (r *fzRun) outsiderUnregister(id fzIdent) {
	c := fzNewCol(id.kind, id.name, 0)
	d := fzDescOf(id.kind, id.name, id.opts)
	r.logf("outsider: Unregister(%s with %v)", id.name, id.opts)
	got := r.reg.Unregister(id.opts.wrap(c.obj))
	_, want := r.held[d.id]
	delete(r.held, d.id)
	if got != want {
		r.fatalf("the registry's Unregister = %v, want %v", got, want)
	}
}

func (r *fzRun) outsiderRegister(id fzIdent, v byte) {
	c := fzNewCol(id.kind, id.name, v)
	d := fzDescOf(id.kind, id.name, id.opts)
	r.logf("outsider: Register(%s %p with %v) %v", id.name, c.obj, id.opts, c.series)
	err := r.reg.Register(id.opts.wrap(c.obj))
	var are prometheus.AlreadyRegisteredError
	switch h := r.held[d.id]; {
	case r.sigs[d.fqName] != "" && r.sigs[d.fqName] != d.sig:
		if err == nil || errors.As(err, &are) {
			r.fatalf("the registry's Register = %v, want its inconsistency error", err)
		}
	case h != nil:
		if !errors.As(err, &are) {
			r.fatalf("the registry's Register = %v, want an AlreadyRegisteredError", err)
		}
		// A scope's member is what the registry holds; client_golang
		// names it, and only a scope's own Register translates it.
		if h.out != nil && are.ExistingCollector != h.out.col.obj {
			r.fatalf("AlreadyRegisteredError names %p, want the outsider's %p", are.ExistingCollector, h.out.col.obj)
		}
	default:
		if err != nil {
			r.fatalf("the registry's Register = %v, want nil", err)
		}
		r.held[d.id] = &fzHolder{out: &fzOutsider{col: c, opts: id.opts}}
		r.sigs[d.fqName] = d.sig
	}
}

// wantRegistry is what the registry must expose.
func (r *fzRun) wantRegistry() map[string][]float64 {
	out := map[string][]float64{}
	for _, h := range r.held {
		if h.entry != nil {
			fzExpose(h.entry.col, h.entry.scope.opts, out)
		} else {
			fzExpose(h.out.col, h.out.opts, out)
		}
	}
	for _, e := range r.unchecked {
		if !e.silenced {
			fzExpose(e.col, e.scope.opts, out)
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

// wantScope is what sc.Gather must return: everything sc and its open
// children own, as they would expose it.
func (r *fzRun) wantScope(sc *fzScope, out map[string][]float64) {
	if sc.closed {
		return
	}
	for _, e := range sc.entries {
		fzExpose(e.col, sc.opts, out)
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
	r.logf("scope %d: Gather", r.index(sc))
	mfs, err := sc.s.Gather()
	want := map[string][]float64{}
	r.wantScope(sc, want)
	r.compare(fmt.Sprintf("scope %d", r.index(sc)), mfs, err, want)
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

func (r *fzRun) wantLen(sc *fzScope) int {
	if sc.closed {
		return 0
	}
	n := len(sc.entries)
	for _, c := range sc.children {
		n += r.wantLen(c)
	}
	return n
}

func (r *fzRun) checkLens() {
	r.t.Helper()
	for i, sc := range r.scopes {
		if got, want := sc.s.Len(), r.wantLen(sc); got != want {
			r.fatalf("scope %d: Len() = %d, want %d", i, got, want)
		}
	}
}

// fzSeeds are hand-written scenarios, one per kind of trouble, so that the
// seed run alone reaches every branch of the model.
func fzSeeds() [][]byte {
	op := func(code int, args ...byte) []byte { return append([]byte{byte(code)}, args...) }
	seq := func(ops ...[]byte) []byte { return slices.Concat(ops...) }
	return [][]byte{
		// A gauge, registered twice (the duplicate fails), then closed.
		seq(op(fzOpNewScope, 0, 1), op(fzOpNewCollector, byte(fzGauge), 0, 3),
			op(fzOpRegister, 0, 0, 1), op(fzOpRegister, 0, 0, 0), op(fzOpClose, 0)),
		// An outsider unregisters the scope's vector and registers an
		// equal one of its own: Close leaves theirs.
		seq(op(fzOpNewScope, 2, 1), op(fzOpNewCollector, byte(fzVec), 0, 0x25),
			op(fzOpRegister, 0, 0, 1), op(fzOpOutsiderUnregister, 0),
			op(fzOpOutsiderRegister, 0, 7), op(fzOpRegister, 0, 0, 1), op(fzOpClose, 0)),
		// Children with prefixes and labels, a GaugeFunc and an unchecked
		// collector, registered in both; the parent closes them all.
		seq(op(fzOpNewScope, 1, 1), op(fzOpChild, 0, 2), op(fzOpChild, 1, 4),
			op(fzOpNewCollector, byte(fzFunc), 1, 9), op(fzOpNewCollector, byte(fzUnchecked), 0, 4),
			op(fzOpRegister, 1, 0, 1), op(fzOpRegister, 2, 1, 1), op(fzOpRegister, 0, 1, 1),
			op(fzOpGatherScope, 1), op(fzOpUnregister, 2, 1), op(fzOpClose, 0), op(fzOpRegister, 2, 0, 1)),
		// Shared vectors with DeleteOnClose from two scopes, one of them
		// already closed, and the misuse of no labels.
		seq(op(fzOpNewScope, 0, 1), op(fzOpNewScope, 3, 1), op(fzOpShared, 0, 0, 0, 2),
			op(fzOpShared, 1, 1, 1, 1), op(fzOpShared, 0, 1, 0, 3),
			op(fzOpDeleteOnClose, 0, 1, 0, 0, 3), op(fzOpDeleteOnClose, 1, 0, 0, 0, 1),
			op(fzOpClose, 1), op(fzOpDeleteOnClose, 1, 3, 1, 1, 2), op(fzOpClose, 0)),
		// The same descriptors under two scopes of different label names:
		// the second fails with the registry's consistency error.
		seq(op(fzOpNewScope, 0, 1), op(fzOpNewScope, 2, 1), op(fzOpNewCollector, byte(fzGauge), 1, 2),
			op(fzOpRegister, 0, 0, 1), op(fzOpRegister, 1, 0, 1), op(fzOpUnregisterEqual, 0, 0),
			op(fzOpRegister, 1, 0, 1)),
		// After tampering, the scope registers an equal gauge again and
		// unregisters it by an equal one.
		seq(op(fzOpNewScope, 0, 1), op(fzOpNewCollector, byte(fzGauge), 0, 1), op(fzOpNewCollector, byte(fzGauge), 0, 2),
			op(fzOpRegister, 0, 0, 1), op(fzOpOutsiderUnregister, 0), op(fzOpRegister, 0, 1, 1),
			op(fzOpUnregisterEqual, 0, 0), op(fzOpUnregisterEqual, 0, 0), op(fzOpClose, 0)),
		// The same gauge registered again after tampering, then an equal
		// one: Unregister of the gauge finds its own stale entries first,
		// newest first, and leaves the equal one registered.
		seq(op(fzOpNewScope, 0, 1), op(fzOpNewCollector, byte(fzGauge), 0, 1), op(fzOpNewCollector, byte(fzGauge), 0, 2),
			op(fzOpRegister, 0, 0, 1), op(fzOpOutsiderUnregister, 0), op(fzOpRegister, 0, 0, 1),
			op(fzOpOutsiderUnregister, 0), op(fzOpRegister, 0, 1, 1), op(fzOpUnregister, 0, 0),
			op(fzOpUnregister, 0, 0), op(fzOpGatherScope, 0), op(fzOpClose, 0)),
		// A scope with a nil parent, and Child's misuse.
		seq(op(fzOpNewScope, 2, 0), op(fzOpChild, 0, 6), op(fzOpNewCollector, byte(fzUnchecked), 1, 3),
			op(fzOpRegister, 0, 0, 1), op(fzOpRegister, 0, 0, 1), op(fzOpGatherScope, 0),
			op(fzOpNil, 0), op(fzOpUnregister, 0, 0), op(fzOpGatherScope, 0)),
	}
}
