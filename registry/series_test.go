package registry_test

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/multierr"

	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/registry"
)

func TestDeleteOnClose(t *testing.T) {
	// shared returns two vectors that components share, registered on reg
	// directly, with series for two tenants.
	shared := func(reg *prometheus.Registry) (*prometheus.CounterVec, *prometheus.GaugeVec) {
		requests := promtest.CounterVec("requests_total", "tenant", "path")
		queue := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "queue_depth", Help: "h"}, []string{"tenant"})
		reg.MustRegister(requests, queue)
		for _, tenant := range []string{"acme", "globex"} {
			requests.WithLabelValues(tenant, "/a").Inc()
			requests.WithLabelValues(tenant, "/b").Add(2)
			queue.WithLabelValues(tenant).Set(5)
		}
		return requests, queue
	}
	// deleteErrors returns the DeleteErrors that err, Close's, combines,
	// and fails t if it combines anything else.
	deleteErrors := func(t *testing.T, err error) []*registry.DeleteError {
		t.Helper()
		var des []*registry.DeleteError
		for _, e := range multierr.Errors(err) {
			var de *registry.DeleteError
			if !errors.As(e, &de) {
				t.Fatalf("Close returned %v, want DeleteErrors only", e)
			}
			des = append(des, de)
		}
		return des
	}
	globex := []string{`queue_depth{tenant="globex"} 5`, `requests_total{path="/a",tenant="globex"} 1`, `requests_total{path="/b",tenant="globex"} 2`}
	tests := []struct {
		name string
		give func(reg *prometheus.Registry, d func(*registry.Scope, prometheus.Labels))
		want []string
	}{
		{name: "on Close", give: func(reg *prometheus.Registry, d func(*registry.Scope, prometheus.Labels)) {
			s := registry.NewScope(reg, registry.WithLabels(prometheus.Labels{"cluster": "east"}))
			d(s, prometheus.Labels{"tenant": "acme"})
			s.Close()
		}, want: globex},
		{name: "closed scope", give: func(reg *prometheus.Registry, d func(*registry.Scope, prometheus.Labels)) {
			s := registry.NewScope(reg)
			s.Close()
			d(s, prometheus.Labels{"tenant": "acme"})
		}, want: globex},
		{name: "scope around", give: func(reg *prometheus.Registry, d func(*registry.Scope, prometheus.Labels)) {
			s := registry.NewScope(reg)
			d(s.Child(), prometheus.Labels{"tenant": "acme"})
			s.Close()
		}, want: globex},
		{name: "scope on a wrapper", give: func(reg *prometheus.Registry, d func(*registry.Scope, prometheus.Labels)) {
			s := registry.NewScope(reg)
			d(registry.NewScope(prometheus.WrapRegistererWith(prometheus.Labels{"w": "1"}, s)), prometheus.Labels{"tenant": "acme"})
			s.Close()
		}, want: globex},
		{name: "scope around closing", give: func(reg *prometheus.Registry, d func(*registry.Scope, prometheus.Labels)) {
			p := promtest.NewParent(promtest.On("unregister", "x", 0, promtest.Panicking))
			p.Reg = reg
			s := registry.NewScope(p)
			nested := s.Child()
			s.MustRegister(promtest.Gauge("x", 1))
			promtest.Panic(func() { s.Close() })
			d(nested, prometheus.Labels{"tenant": "acme"})
			reg.Unregister(promtest.Gauge("x", 0))
		}, want: globex},
		{name: "all labels", give: func(reg *prometheus.Registry, d func(*registry.Scope, prometheus.Labels)) {
			s := registry.NewScope(reg)
			d(s, prometheus.Labels{"tenant": "acme", "path": "/a"})
			s.Close()
		}, want: append([]string{`queue_depth{tenant="acme"} 5`, `requests_total{path="/b",tenant="acme"} 2`}, globex...)},
		{name: "not before", give: func(reg *prometheus.Registry, d func(*registry.Scope, prometheus.Labels)) {
			d(registry.NewScope(reg), prometheus.Labels{"tenant": "acme"})
		}, want: append([]string{`queue_depth{tenant="acme"} 5`, `requests_total{path="/a",tenant="acme"} 1`, `requests_total{path="/b",tenant="acme"} 2`}, globex...)},
	}
	// DeleteOnClose deletes the matching series of shared vectors, and no
	// other, on Close and not before, in every shape.
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			requests, queue := shared(reg)
			tt.give(reg, func(s *registry.Scope, l prometheus.Labels) {
				vecs := []registry.Deleter{requests}
				if _, ok := l["path"]; !ok {
					vecs = append(vecs, queue) // it has no path label: see misuse
				}
				s.DeleteOnClose(l, vecs...)
			})
			promtest.Expose(t, reg, tt.want...)
		})
	}

	// A vector curried with a label, or with it as a constant label,
	// deletes nothing for it (DeletePartialMatch matches only the other
	// variable labels): Close reports each such vector that still holds
	// series with the labels, and none that deleted its series or has
	// none to delete.
	t.Run("labels that match nothing", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		requests, queue := shared(reg)
		env := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "env_total", Help: "h", ConstLabels: prometheus.Labels{"tenant": "acme"}}, []string{"path"})
		reg.MustRegister(env)
		env.WithLabelValues("/a").Inc()
		curried := requests.MustCurryWith(prometheus.Labels{"tenant": "acme"})
		s := registry.NewScope(reg, registry.WithName("acme"))
		s.DeleteOnClose(prometheus.Labels{"tenant": "acme"}, curried, env, queue)
		s.DeleteOnClose(prometheus.Labels{"tenant": "initech"}, curried)
		des := deleteErrors(t, s.Close())
		slices.SortFunc(des, func(a, b *registry.DeleteError) int { return strings.Compare(a.Series[0], b.Series[0]) })
		want := [][]string{
			{`env_total{path="/a",tenant="acme"}`},
			{`requests_total{path="/a",tenant="acme"}`, `requests_total{path="/b",tenant="acme"}`},
		}
		if len(des) != len(want) {
			t.Fatalf("Close reported %v, want the series of env_total and requests_total", des)
		}
		for i, de := range des {
			if de.Scope != "acme" || !maps.Equal(de.Labels, prometheus.Labels{"tenant": "acme"}) || !slices.Equal(de.Series, want[i]) {
				t.Errorf("DeleteError %+v, want scope acme, tenant=acme and %q", de, want[i])
			}
		}
		if got, want := des[1].Error(), `registry: scope acme: DeleteOnClose{tenant="acme"} deleted none of requests_total{path="/a",tenant="acme"}, requests_total{path="/b",tenant="acme"}: a constant label, or one the vector was curried with, matches no series (give DeleteOnClose the uncurried vector, and no constant label)`; got != want {
			t.Errorf("Error() = %s, want %s", got, want)
		}
		many := &registry.DeleteError{Labels: prometheus.Labels{"k": "v"}, Series: []string{"a", "b", "c", "d", "e"}}
		if got, want := many.Error(), `registry: DeleteOnClose{k="v"} deleted none of a, b, c and 2 more: a constant label, or one the vector was curried with, matches no series (give DeleteOnClose the uncurried vector, and no constant label)`; got != want {
			t.Errorf("Error() = %s, want %s", got, want)
		}
		promtest.Expose(t, reg, append([]string{`env_total{path="/a",tenant="acme"} 1`, `requests_total{path="/a",tenant="acme"} 1`, `requests_total{path="/b",tenant="acme"} 2`}, globex...)...)
	})

	// A vector in which each label is a variable label it was not
	// curried with, and that deleted none, holds no series that carry the
	// labels: Close does not read its series to look for them. Where a
	// label is not, it does.
	t.Run("no look where nothing can be left", func(t *testing.T) {
		for _, tt := range []struct {
			labels prometheus.Labels
			curry  prometheus.Labels
			read   bool
		}{
			{labels: prometheus.Labels{"tenant": "globex"}},
			{labels: prometheus.Labels{"tenant": "globex", "path": "/a"}},
			{labels: prometheus.Labels{"tenant": "globex"}, curry: prometheus.Labels{"path": "/a"}},
			{labels: prometheus.Labels{"tenant": "globex"}, curry: prometheus.Labels{"tenant": "acme"}, read: true},
		} {
			vec, reads := promtest.ReadVec("reads", "tenant", "path")
			if _, err := vec.GetMetricWithLabelValues("acme", "/a"); err != nil {
				t.Fatal(err)
			}
			var d registry.Deleter = vec
			if tt.curry != nil {
				curried, err := vec.CurryWith(tt.curry)
				if err != nil {
					t.Fatal(err)
				}
				d = curried
			}
			s := registry.NewScope(nil)
			s.DeleteOnClose(tt.labels, d)
			if err := s.Close(); err != nil {
				t.Errorf("%v, curried with %v: Close = %v, want nil", tt.labels, tt.curry, err)
			}
			if got := reads.Load() > 0; got != tt.read {
				t.Errorf("%v, curried with %v: Close read the series: %t, want %t", tt.labels, tt.curry, got, tt.read)
			}
		}
		// Each kind of client_golang vector is told apart: curried with
		// the label, it is read, and its one series reported.
		acme := prometheus.Labels{"tenant": "acme"}
		counter := promtest.CounterVec("c", "tenant")
		gauge := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "g", Help: "h"}, []string{"tenant"})
		histogram := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "h", Help: "h"}, []string{"tenant"})
		summary := prometheus.NewSummaryVec(prometheus.SummaryOpts{Name: "s", Help: "h"}, []string{"tenant"})
		for _, tt := range []struct {
			vec     registry.Deleter
			curried func() registry.Deleter // curried with acme, which has a series
		}{
			{counter, func() registry.Deleter { c := counter.MustCurryWith(acme); c.WithLabelValues().Inc(); return c }},
			{gauge, func() registry.Deleter { c := gauge.MustCurryWith(acme); c.WithLabelValues().Inc(); return c }},
			{histogram, func() registry.Deleter {
				c := histogram.MustCurryWith(acme).(*prometheus.HistogramVec)
				c.WithLabelValues().Observe(1)
				return c
			}},
			{summary, func() registry.Deleter {
				c := summary.MustCurryWith(acme).(*prometheus.SummaryVec)
				c.WithLabelValues().Observe(1)
				return c
			}},
		} {
			s := registry.NewScope(nil)
			s.DeleteOnClose(prometheus.Labels{"tenant": "globex"}, tt.vec)
			s.DeleteOnClose(acme, tt.curried())
			if des := deleteErrors(t, s.Close()); len(des) != 1 || len(des[0].Series) != 1 {
				t.Errorf("%T: Close reported %v, want the one series of the curried vector", tt.vec, des)
			}
		}
	})

	// A Deleter of the user's own is not described by DeleteOnClose, even
	// one that embeds a vector: its Describe may block on what the caller
	// holds. A label it lacks is not found then.
	t.Run("a vector of the user's own", func(t *testing.T) {
		s := registry.NewScope(nil)
		vec := promtest.CounterVec("peers", "peer")
		v := undescribed{vec, new(atomic.Int32)}
		vec.WithLabelValues("a").Inc()
		s.DeleteOnClose(prometheus.Labels{"peer": "a"}, v)
		s.DeleteOnClose(prometheus.Labels{"per": "a"}, v)
		if n := v.described.Load(); n != 0 {
			t.Errorf("DeleteOnClose called Describe %d times", n)
		}
		if err := s.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
		if n := v.DeletePartialMatch(prometheus.Labels{"peer": "a"}); n != 0 {
			t.Errorf("%d series left, want none", n)
		}
	})

	// Series written again between a deletion of none and the look for
	// what is left (a worker still running) are no labels that match
	// nothing: the vector is asked once more, deletes them, and Close
	// reports nothing.
	t.Run("series written during Close", func(t *testing.T) {
		vec := promtest.CounterVec("links_total", "link")
		s := registry.NewScope(nil, registry.WithName("west"))
		s.DeleteOnClose(prometheus.Labels{"link": "west"}, rewriting{vec})
		if err := s.Close(); err != nil {
			t.Errorf("Close = %v, want nil", err)
		}
	})

	// A call with the same labels and vectors as one pending, in any
	// order, adds nothing: a reconcile loop that calls DeleteOnClose on
	// every pass leaves one call, which Close runs once, reporting what
	// the curried vector, asked first, did not delete once.
	t.Run("called again", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		requests, _ := shared(reg)
		curried := requests.MustCurryWith(prometheus.Labels{"tenant": "acme"})
		s := registry.NewScope(reg, registry.WithName("acme"))
		for range 1000 {
			s.DeleteOnClose(prometheus.Labels{"tenant": "acme"}, curried, requests)
		}
		s.DeleteOnClose(prometheus.Labels{"tenant": "acme"}, requests, curried, requests)
		des := deleteErrors(t, s.Close())
		if len(des) != 1 || len(des[0].Series) != 2 {
			t.Errorf("Close reported %v, want the curried vector's two series once", des)
		}
		promtest.Expose(t, reg, append([]string{`queue_depth{tenant="acme"} 5`}, globex...)...)
		s = registry.NewScope(reg, registry.WithName("acme"))
		requests.WithLabelValues("acme", "/a").Inc()
		for range 1000 {
			s.DeleteOnClose(prometheus.Labels{"tenant": "acme"}, curried)
		}
		if errs := multierr.Errors(s.Close()); len(errs) != 1 {
			t.Errorf("Close reported %d errors, want the curried vector's once", len(errs))
		}
	})

	// A Deleter of the user's own passed as a value is the same vector as
	// an equal value: a loop that passes it on every pass leaves one call.
	// One holding another pointer is another vector.
	t.Run("called again with a value", func(t *testing.T) {
		var calls, others int
		s := registry.NewScope(nil)
		for range 1000 {
			s.DeleteOnClose(prometheus.Labels{"tenant": "acme"}, counting{&calls})
		}
		s.DeleteOnClose(prometheus.Labels{"tenant": "acme"}, counting{&others})
		if err := s.Close(); err != nil || calls != 1 || others != 1 {
			t.Errorf("Close = %v, with %d and %d calls, want one each", err, calls, others)
		}
	})

	// A Deleter that is a function, made from the method of each of two
	// vectors, is another vector on every call: both calls run.
	t.Run("Deleters that are functions", func(t *testing.T) {
		a := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "a", Help: "h"}, []string{"tenant"})
		b := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "b", Help: "h"}, []string{"tenant"})
		a.WithLabelValues("acme").Set(1)
		b.WithLabelValues("acme").Set(1)
		s := registry.NewScope(nil)
		s.DeleteOnClose(prometheus.Labels{"tenant": "acme"}, deleterFunc(a.DeletePartialMatch))
		s.DeleteOnClose(prometheus.Labels{"tenant": "acme"}, deleterFunc(b.DeletePartialMatch))
		if err := s.Close(); err != nil {
			t.Error(err)
		}
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(a, b)
		promtest.Expose(t, reg)
	})

	// Vectors of two types at one address, a struct and its first field,
	// are two vectors: the second call is no call made again.
	t.Run("vectors at one address", func(t *testing.T) {
		links := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "links", Help: "h"}, []string{"tenant"})
		peers := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "peers", Help: "h"}, []string{"tenant"})
		both := &twoVecs{first: oneVec{links}, second: peers}
		links.WithLabelValues("acme").Set(1)
		peers.WithLabelValues("acme").Set(1)
		s := registry.NewScope(nil)
		s.DeleteOnClose(prometheus.Labels{"tenant": "acme"}, &both.first)
		s.DeleteOnClose(prometheus.Labels{"tenant": "acme"}, both)
		if err := s.Close(); err != nil {
			t.Error(err)
		}
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(links, peers)
		promtest.Expose(t, reg)
	})

	vec := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "v", Help: "h"}, []string{"tenant"})
	misuse := []struct {
		name   string
		opts   []registry.Option // the scope's
		labels prometheus.Labels
		vecs   []registry.Deleter
		want   string
	}{
		{name: "nil labels", vecs: []registry.Deleter{vec}, want: "registry: DeleteOnClose with no labels"},
		{name: "empty labels", labels: prometheus.Labels{}, vecs: []registry.Deleter{vec}, want: "registry: DeleteOnClose with no labels"},
		{name: "no vectors", labels: prometheus.Labels{"tenant": "a"}, want: "registry: DeleteOnClose needs at least one vector"},
		{name: "a nil vector", labels: prometheus.Labels{"tenant": "a"}, vecs: []registry.Deleter{vec, nil}, want: "registry: DeleteOnClose: vector 1 is nil"},
		{name: "a typed-nil vector", labels: prometheus.Labels{"tenant": "a"}, vecs: []registry.Deleter{(*prometheus.GaugeVec)(nil)}, want: "registry: DeleteOnClose: vector 0 is nil"},
		{name: "a zero vector", labels: prometheus.Labels{"tenant": "a"}, vecs: []registry.Deleter{vec, &prometheus.GaugeVec{}},
			want: "registry: DeleteOnClose: vector 1 is a zero *prometheus.GaugeVec: make it with its New function"},
		{name: "a zero MetricVec", labels: prometheus.Labels{"tenant": "a"}, vecs: []registry.Deleter{&prometheus.MetricVec{}},
			want: "registry: DeleteOnClose: vector 0 is a zero *prometheus.MetricVec"},
		{name: "a label the vector lacks", labels: prometheus.Labels{"tenant": "a", "path": "/a", "cluster": "east"},
			vecs: []registry.Deleter{vec, promtest.CounterVec("odd name", "tenant")},
			want: `registry: DeleteOnClose: vector 0, v, has no label "cluster" and no label "path": no series of it can match`},
		{name: "a label of the scope's", opts: []registry.Option{registry.WithLabels(prometheus.Labels{"cluster": "east"})},
			labels: prometheus.Labels{"tenant": "a", "cluster": "east"}, vecs: []registry.Deleter{vec},
			want: `registry: DeleteOnClose: vector 0, v, has no label "cluster": no series of it can match; "cluster" is a label that this scope adds to what is registered through it, not one of the vector's own`},
		{name: "labels of the scope's", opts: []registry.Option{registry.WithLabels(prometheus.Labels{"cluster": "east", "zone": "b"})},
			labels: prometheus.Labels{"tenant": "a", "cluster": "east", "zone": "b"}, vecs: []registry.Deleter{vec},
			want: `registry: DeleteOnClose: vector 0, v, has no label "cluster" and no label "zone": no series of it can match; "cluster" and "zone" are labels that this scope adds to what is registered through it, not the vector's own`},
		{name: "a label of an odd name", labels: prometheus.Labels{"a,b": "1", "tenant": "a"},
			vecs: []registry.Deleter{promtest.CounterVec("odd name", "tenant", "a,b,c")},
			want: `registry: DeleteOnClose: vector 0, "odd name", has no label "a,b": no series of it can match`},
	}
	// DeleteOnClose panics with a clear message on misuse, on an open or
	// closed scope, and deletes nothing.
	for _, tt := range misuse {
		t.Run("misuse: "+tt.name, func(t *testing.T) {
			vec.WithLabelValues("a").Set(1)
			for _, closed := range []bool{false, true} {
				scope := registry.NewScope(nil, tt.opts...)
				if closed {
					scope.Close()
				}
				if msg, ok := promtest.Panic(func() { scope.DeleteOnClose(tt.labels, tt.vecs...) }).(string); !ok || !strings.HasPrefix(msg, tt.want) {
					t.Errorf("closed %v: panicked with %#v, want %q", closed, msg, tt.want)
				}
				scope.Close()
			}
			reg := prometheus.NewRegistry()
			reg.MustRegister(vec)
			promtest.Expose(t, reg, `v{tenant="a"} 1`)
		})
	}
}

// oneVec deletes from a vector; twoVecs, whose first field is a oneVec,
// from two.
type oneVec struct{ v *prometheus.GaugeVec }

func (o *oneVec) DeletePartialMatch(labels prometheus.Labels) int {
	return o.v.DeletePartialMatch(labels)
}

type twoVecs struct {
	first  oneVec
	second *prometheus.GaugeVec
}

func (t *twoVecs) DeletePartialMatch(labels prometheus.Labels) int {
	return t.first.DeletePartialMatch(labels) + t.second.DeletePartialMatch(labels)
}

// counting is a Deleter that counts its calls and deletes nothing.
type counting struct{ calls *int }

func (c counting) DeletePartialMatch(prometheus.Labels) int {
	*c.calls++
	return 0
}

// undescribed is a vector of the user's own whose Describe must not be
// called by DeleteOnClose: it blocks on the lock its user holds. It
// describes nothing, and counts the calls.
type undescribed struct {
	vector
	described *atomic.Int32
}

// A vector is what client_golang's vectors are to a scope: a Collector and a
// Deleter.
type vector interface {
	prometheus.Collector
	registry.Deleter
}

func (u undescribed) Describe(chan<- *prometheus.Desc) { u.described.Add(1) }

// deleterFunc is a function that is a Deleter.
type deleterFunc func(prometheus.Labels) int

func (f deleterFunc) DeletePartialMatch(labels prometheus.Labels) int { return f(labels) }

// rewriting is a vector whose series link="west" a worker writes again just
// after each DeletePartialMatch.
type rewriting struct{ *prometheus.CounterVec }

func (r rewriting) DeletePartialMatch(labels prometheus.Labels) int {
	n := r.CounterVec.DeletePartialMatch(labels)
	r.WithLabelValues("west").Inc()
	return n
}
