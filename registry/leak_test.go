package registry_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/registry"
	"github.com/promscope/promscope/registry/registrytest"
)

// leaks collects what WithLeakReport reports.
type leaks chan registry.Leak

func (l leaks) report(leak registry.Leak) { l <- leak }

// wait runs the garbage collector until n leaks have been reported, at most
// cycles times, and returns what was reported, sorted by scope. A cleanup
// runs within a cycle or two of its object becoming unreachable; 20 cycles
// show that none will.
func (l leaks) wait(n, cycles int) []registry.Leak {
	var got []registry.Leak
	for range cycles {
		if len(got) == n {
			break
		}
		runtime.GC()
		select {
		case leak := <-l:
			got = append(got, leak)
		case <-time.After(10 * time.Millisecond):
		}
	}
	slices.SortFunc(got, func(a, b registry.Leak) int { return strings.Compare(a.Scope, b.Scope) })
	return got
}

// line returns where the line after the call is, as a Leak's Created says
// it: the package's import path, the file and the line.
func line() string {
	_, file, n, _ := runtime.Caller(1)
	return fmt.Sprintf("github.com/promscope/promscope/registry/%s:%d", path.Base(file), n+1)
}

// newForgetfulWatcher is the story's failing constructor with its
// CloseOnError left out: its scope is dropped, still registered.
func newForgetfulWatcher(reg prometheus.Registerer, opts ...registry.Option) (string, error) {
	where := line()
	scope := registry.NewScope(reg, append(opts, registry.WithName("watcher"), registry.WithLabels(prometheus.Labels{"cluster": "east"}))...)
	cache := &storyCache{objects: map[string]int{}}
	scope.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "watcher_cache_objects",
		Help: "Objects in the watcher's cache.",
	}, cache.count), &promtest.Unchecked{Name: "watcher_up", Value: 1}, quiet{}, quiet{n: 1})
	//lint:ignore metricleak the leak that the leak report must catch
	return where, errStoryUnreachable
}

// quiet is an unchecked collector that collects nothing.
type quiet struct{ n int }

func (quiet) Describe(chan<- *prometheus.Desc) {}
func (quiet) Collect(chan<- prometheus.Metric) {}

func TestLeakReport(t *testing.T) {
	places := []struct {
		name, fn, want string
	}{
		{name: "a method", fn: "example.com/a/b.(*T).M", want: "example.com/a/b"},
		{name: "a command", fn: "main.main.func1", want: "main"},
		{name: "an external test package", fn: "example.com/a/b_test.TestX", want: "example.com/a/b"},
		{name: "a dot in the last element", fn: "gopkg.in/yaml%2ev3.Marshal", want: "gopkg.in/yaml.v3"},
		{name: "a generic method's closure", fn: "example.com/dot%2epkg.(*T[...]).M.func1", want: "example.com/dot.pkg"},
		{name: "an escaped percent sign", fn: "example.com/a%25b/c.F", want: "example.com/a%b/c"},
		{name: "a broken escape", fn: "example.com/a%zz.F", want: "example.com/a%zz"},
	}
	for _, tt := range places {
		// Where a scope was made is said by its package's import path,
		// decoded from the runtime's name of the function that made it.
		t.Run("made in "+tt.name, func(t *testing.T) {
			if got := registry.PackageOf(tt.fn); got != tt.want {
				t.Errorf("PackageOf(%q) = %q, want %q", tt.fn, got, tt.want)
			}
		})
	}

	// A failing constructor without CloseOnError is reported once, with
	// its scope's name, where it was made, and everything it exposes:
	// checked metrics, unchecked ones by what they collect, and those
	// that collect nothing by their number. Leak.Close takes it all back.
	t.Run("reported once, reclaimed", func(t *testing.T) {
		ch := make(leaks, 4)
		reg := prometheus.NewPedanticRegistry()
		where, _ := newForgetfulWatcher(reg, registry.WithLeakReport(ch.report))
		got := ch.wait(1, 500)
		want := []string{"watcher_cache_objects", "watcher_up", "2 unchecked collectors"}
		if len(got) != 1 || got[0].Scope != `watcher{cluster="east"}` || got[0].Created != where || !slices.Equal(got[0].Metrics, want) {
			t.Fatalf("reported %+v, want watcher made at %s with %q", got, where, want)
		}
		if s := got[0].String(); s != fmt.Sprintf(`registry: scope watcher{cluster="east"} made at %s was dropped without Close; it still exposes %s`, where, strings.Join(want, ", ")) {
			t.Errorf("String() = %s", s)
		}
		if more := ch.wait(1, 20); len(more) != 0 {
			t.Errorf("reported again: %+v", more)
		}
		if err := got[0].Close(); err != nil {
			t.Errorf("Leak.Close = %v", err)
		}
		registrytest.VerifyNone(t, reg)
		unnamed := registry.Leak{Created: "example.com/a/b.go:1", Metrics: []string{"m"}}
		if s, want := unnamed.String(), "registry: a scope with no name, labels or prefix made at example.com/a/b.go:1 was dropped without Close; it still exposes m"; s != want {
			t.Errorf("String() = %s, want %s", s, want)
		}
		if err := (registry.Leak{}).Close(); err != nil {
			t.Errorf("Close of a Leak no report gave = %v", err)
		}
	})

	// A report names metrics as the ownership page does: quoted when they
	// are not plain.
	t.Run("quoted names", func(t *testing.T) {
		ch := make(leaks, 1)
		func() {
			s := registry.NewScope(nil, registry.WithLeakReport(ch.report))
			s.MustRegister(promtest.Gauge("a, b", 1))
		}()
		got := ch.wait(1, 500)
		if len(got) != 1 || !slices.Equal(got[0].Metrics, []string{`"a, b"`}) {
			t.Fatalf("reported %+v, want \"a, b\"", got)
		}
		if err := got[0].Close(); err != nil {
			t.Error(err)
		}
	})

	// A closed scope, one that owns nothing, one whose registrations its
	// outer scope's Close took back, and one whose registrations
	// Unregister took back are never reported.
	t.Run("nothing to report", func(t *testing.T) {
		ch := make(leaks, 4)
		reg := prometheus.NewPedanticRegistry()
		func() {
			closed := registry.NewScope(reg, registry.WithLeakReport(ch.report))
			closed.MustRegister(promtest.Gauge("jobs", 1))
			closed.Close()
			registry.NewScope(reg, registry.WithLeakReport(ch.report))
			outer := registry.NewScope(reg, registry.WithLeakReport(ch.report))
			outer.Child().MustRegister(promtest.Gauge("inner", 1))
			outer.Close()
			emptied := registry.NewScope(reg, registry.WithLeakReport(ch.report))
			g := promtest.Gauge("emptied", 1)
			emptied.MustRegister(g)
			emptied.Unregister(g)
		}()
		if got := ch.wait(1, 20); len(got) != 0 {
			t.Errorf("reported %+v", got)
		}
	})

	// A scope dropped with a DeleteOnClose pending is reported with the
	// series it would delete, once, by itself or by the dropped scope it
	// is nested in; one whose series are gone already is not. Leak.Close
	// deletes them.
	t.Run("deletions pending", func(t *testing.T) {
		ch := make(leaks, 4)
		reg := prometheus.NewPedanticRegistry()
		vec := promtest.CounterVec("requests_total", "link", "code")
		reg.MustRegister(vec)
		for _, link := range []string{"west", "east"} {
			vec.WithLabelValues(link, "200").Inc()
			vec.WithLabelValues(link, "500").Inc()
		}
		// A deleteLogger is a Deleter and no Collector: it cannot be asked
		// what series it holds.
		log := promtest.NewParent(nil)
		func() {
			scope := registry.NewScope(reg, registry.WithName("links"), registry.WithLeakReport(ch.report))
			scope.Child().DeleteOnClose(prometheus.Labels{"link": "west"}, vec)
			registry.NewScope(reg, registry.WithLeakReport(ch.report)).DeleteOnClose(prometheus.Labels{"link": "north"}, vec)
			registry.NewScope(reg, registry.WithName("blind"), registry.WithLeakReport(ch.report)).DeleteOnClose(prometheus.Labels{"link": "south"}, deleteLogger{vec, log})
		}()
		got := ch.wait(3, 50)
		if len(got) != 2 {
			t.Fatalf("reported %+v", got)
		}
		// A vector that cannot be asked counts as holding such series.
		if got[0].Scope != "blind" || strings.Join(got[0].Metrics, ",") != `{link="south"}` {
			t.Errorf("reported %+v", got[0])
		}
		if err := got[0].Close(); err != nil || !slices.Equal(log.Log(), []string{"delete link=south: 0"}) {
			t.Errorf("Leak.Close = %v, log %q, want nil and one deletion", err, log.Log())
		}
		// The outer scope or the one nested in it, whichever was
		// reported first: both have the name links.
		if got[1].Scope != "links" || strings.Join(got[1].Metrics, ",") != `requests_total{link="west"}` {
			t.Errorf("reported %+v", got[1])
		}
		if err := got[1].Close(); err != nil {
			t.Fatal(err)
		}
		promtest.Expose(t, reg, `requests_total{code="200",link="east"} 1`, `requests_total{code="500",link="east"} 1`)
	})

	// A dropped scope whose pending DeleteOnClose has no series to
	// delete is closed, not reported, after one read of the vector's
	// series.
	t.Run("deletions with nothing left", func(t *testing.T) {
		ch := make(leaks, 1)
		vec, reads := promtest.ReadVec("reads", "l")
		for _, v := range []string{"a", "b", "c"} {
			if _, err := vec.GetMetricWithLabelValues(v); err != nil {
				t.Fatal(err)
			}
		}
		program := registry.NewScope(nil, registry.WithName("program"), registry.WithLeakReport(ch.report))
		func() { program.Child(registry.WithName("gone")).DeleteOnClose(prometheus.Labels{"l": "x"}, vec) }()
		page := func() string {
			rec := httptest.NewRecorder()
			registry.Handler(program).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
			return rec.Body.String()
		}
		for i := 0; i < 500 && strings.Contains(page(), "gone"); i++ {
			runtime.GC()
			time.Sleep(time.Millisecond)
		}
		if p := page(); strings.Contains(p, "gone") {
			t.Fatalf("the dropped scope is still there: %q", p)
		}
		if got := ch.wait(1, 5); len(got) != 0 {
			t.Errorf("reported %+v", got)
		}
		if n := reads.Load(); n != 3 {
			t.Errorf("the vector's series were read %d times, want 3: once each", n)
		}
	})

	// A nested scope dropped without Close is reported while the scope
	// around it is still open, and the outer scope's Close still takes
	// back what it left.
	t.Run("nested, outer open", func(t *testing.T) {
		ch := make(leaks, 4)
		reg := prometheus.NewPedanticRegistry()
		outer := registry.NewScope(reg, registry.WithName("program"), registry.WithLeakReport(ch.report))
		outer.MustRegister(promtest.Gauge("up", 1))
		func() { outer.Child(registry.WithName("link")).MustRegister(promtest.Gauge("jobs", 1), quiet{}) }()
		got := ch.wait(1, 500)
		if len(got) != 1 || got[0].Scope != "program/link" || !slices.Equal(got[0].Metrics, []string{"jobs", "1 unchecked collector"}) {
			t.Fatalf("reported %+v, want program/link with jobs and 1 unchecked collector", got)
		}
		if err := outer.Close(); err != nil {
			t.Error(err)
		}
		registrytest.VerifyNone(t, reg)
	})

	// When the outer scope leaks too, each metric is reported once: by
	// the outer scope, whose Leak.Close takes back the nested one too, or
	// by the nested scope and then, with what is left, the outer one.
	t.Run("nested, outer leaked", func(t *testing.T) {
		ch := make(leaks, 4)
		reg := prometheus.NewPedanticRegistry()
		func() {
			outer := registry.NewScope(reg, registry.WithName("program"), registry.WithLeakReport(ch.report))
			outer.MustRegister(promtest.Gauge("up", 1))
			outer.Child(registry.WithName("link")).MustRegister(promtest.Gauge("jobs", 1))
		}()
		got := ch.wait(2, 50)
		var named []string
		for _, l := range got {
			named = append(named, l.Metrics...)
		}
		slices.Sort(named)
		if len(got) == 0 || got[0].Scope != "program" || !slices.Equal(named, []string{"jobs", "up"}) {
			t.Fatalf("reported %+v, want jobs and up once each, up by program", got)
		}
		if err := got[0].Close(); err != nil {
			t.Error(err)
		}
		registrytest.VerifyNone(t, reg)
	})

	// A nested scope reported while the scope around it was open is not
	// named again when that one is dropped too: the outer scope's report
	// names what is left, and its Leak.Close takes back both.
	t.Run("nested, reported before outer", func(t *testing.T) {
		ch := make(leaks, 4)
		reg := prometheus.NewPedanticRegistry()
		var first []registry.Leak
		func() {
			outer := registry.NewScope(reg, registry.WithName("program"), registry.WithLeakReport(ch.report))
			outer.MustRegister(promtest.Gauge("up", 1))
			func() { outer.Child(registry.WithName("link")).MustRegister(promtest.Gauge("jobs", 1)) }()
			first = ch.wait(1, 500)
			runtime.KeepAlive(outer)
		}()
		if len(first) != 1 || first[0].Scope != "program/link" || !slices.Equal(first[0].Metrics, []string{"jobs"}) {
			t.Fatalf("reported %+v, want program/link with jobs", first)
		}
		got := ch.wait(2, 50)
		if len(got) != 1 || got[0].Scope != "program" || !slices.Equal(got[0].Metrics, []string{"up"}) {
			t.Fatalf("then reported %+v, want program with up", got)
		}
		if err := got[0].Close(); err != nil {
			t.Error(err)
		}
		registrytest.VerifyNone(t, reg)
	})

	// A dropped scope whose only content is a DeleteOnClose with no
	// series to delete is not reported, but closed: a later component's
	// series with those labels stay when the program scope closes.
	t.Run("dropped with nothing to delete", func(t *testing.T) {
		ch := make(leaks, 4)
		reg := prometheus.NewPedanticRegistry()
		program := registry.NewScope(reg, registry.WithName("program"), registry.WithLeakReport(ch.report))
		links := promtest.CounterVec("links_total", "link")
		reg.MustRegister(links)
		for range 10 {
			func() {
				program.Child(registry.WithName("west")).DeleteOnClose(prometheus.Labels{"link": "west"}, links)
			}()
		}
		for range 100 {
			if got := ch.wait(1, 1); len(got) != 0 {
				t.Fatalf("reported %+v", got)
			}
			if !strings.Contains(body(serve(registry.Handler(program), "GET", "/")), "program/west") {
				break
			}
		}
		links.WithLabelValues("west").Inc()
		if err := program.Close(); err != nil {
			t.Fatal(err)
		}
		promtest.Expose(t, reg, `links_total{link="west"} 1`)
	})

	// Series that arrive, with the labels of a dropped scope's pending
	// DeleteOnClose, once the scope was found to have none to delete are
	// somebody else's: closing it deletes none of them.
	t.Run("series arriving as a dropped scope closes", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		var x registry.Index // so that the dropped scope is watched
		program := registry.NewScope(reg, registry.WithName("program"), registry.WithIndex(&x))
		links := &arriving{CounterVec: promtest.CounterVec("links_total", "link"), labels: []string{"west"}}
		reg.MustRegister(links.CounterVec)
		func() {
			program.Child(registry.WithName("west")).DeleteOnClose(prometheus.Labels{"link": "west"}, links)
		}()
		for i := 0; strings.Contains(body(serve(registry.Handler(program), "GET", "/")), "program/west"); i++ {
			if i == 100 {
				t.Fatal("the dropped scope is still open")
			}
			runtime.GC()
			time.Sleep(time.Millisecond)
		}
		promtest.Expose(t, reg, `links_total{link="west"} 1`)
		if err := program.Close(); err != nil {
			t.Fatal(err)
		}
	})

	// A dropped scope whose pending DeleteOnClose is on a Deleter that
	// cannot be asked for its series (no Collector) may have series to
	// delete: it is not closed as idle, and the program scope's Close
	// deletes them.
	t.Run("dropped with a Deleter that cannot be asked", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		var x registry.Index
		program := registry.NewScope(reg, registry.WithName("program"), registry.WithIndex(&x))
		links := promtest.CounterVec("links_total", "link")
		reg.MustRegister(links)
		func() {
			program.Child(registry.WithName("west")).DeleteOnClose(prometheus.Labels{"link": "west"}, blind{links})
		}()
		links.WithLabelValues("west").Inc()
		for range 5 {
			runtime.GC()
			time.Sleep(2 * time.Millisecond)
		}
		if err := program.Close(); err != nil {
			t.Fatal(err)
		}
		promtest.Expose(t, reg)
	})

	// A scope dropped while its Register waits for a slow parent is not
	// closed as idle under it: the registration it returns nil for is
	// the scope's, and the scope is reported once it is dropped.
	t.Run("dropped during a slow Register", func(t *testing.T) {
		ch := make(leaks, 1)
		parent := promtest.NewParent(promtest.On("register", "worker_up", 0, promtest.Block))
		program := registry.NewScope(parent, registry.WithName("program"), registry.WithLeakReport(ch.report))
		registered := make(chan error)
		go func() {
			registered <- program.Child(registry.WithName("worker")).Register(promtest.Gauge("worker_up", 1))
		}()
		<-parent.Entered
		for range 10 {
			runtime.GC()
			time.Sleep(2 * time.Millisecond)
		}
		parent.Release()
		if err := <-registered; err != nil {
			t.Fatal(err)
		}
		got := ch.wait(1, 50)
		if len(got) != 1 || got[0].Scope != "program/worker" || !slices.Equal(got[0].Metrics, []string{"worker_up"}) {
			t.Fatalf("reported %+v, want program/worker with worker_up", got)
		}
		promtest.Expose(t, parent.Reg, "worker_up{} 1")
		if err := program.Close(); err != nil {
			t.Fatal(err)
		}
	})

	// A scope dropped with a collector whose Collect blocks (an exporter
	// waiting on its backend) holds up no other runtime cleanup of the
	// program while its leak is decided, and is reported once Collect
	// returns.
	t.Run("a blocking Collect", func(t *testing.T) {
		ch := make(leaks, 1)
		reg := prometheus.NewPedanticRegistry()
		release := make(chan struct{})
		func() {
			s := registry.NewScope(reg, registry.WithName("exporter"), registry.WithLeakReport(ch.report))
			s.MustRegister(blocking(release))
		}()
		runtime.GC() // the scope's cleanup is queued, and blocks
		other := make(chan struct{})
		func() {
			x := new([64]byte)
			runtime.AddCleanup(x, func(c chan struct{}) { close(c) }, other)
		}()
		ran := false
		for range 200 {
			runtime.GC()
			select {
			case <-other:
				ran = true
			case <-time.After(5 * time.Millisecond):
			}
			if ran {
				break
			}
		}
		close(release)
		if !ran {
			t.Error("another cleanup of the program did not run while the leak was decided")
		}
		got := ch.wait(1, 500)
		if len(got) != 1 || got[0].Scope != "exporter" || !slices.Equal(got[0].Metrics, []string{"1 unchecked collector"}) {
			t.Fatalf("reported %+v, want exporter with 1 unchecked collector", got)
		}
		if err := got[0].Close(); err != nil {
			t.Error(err)
		}
	})

	// A Scope copied into a component's struct, as a value, is not
	// dropped while the copy is in use, though the pointer NewScope
	// returned is gone: it is reported when the copy is dropped too.
	t.Run("copied by value", func(t *testing.T) {
		ch := make(leaks, 4)
		reg := prometheus.NewPedanticRegistry()
		type component struct{ scope registry.Scope }
		c := &component{scope: *registry.NewScope(reg, registry.WithName("copied"), registry.WithLeakReport(ch.report))}
		c.scope.MustRegister(promtest.Gauge("in_use", 1))
		if got := ch.wait(1, 20); len(got) != 0 {
			t.Fatalf("reported while the copy is in use: %+v", got)
		}
		promtest.Expose(t, reg, "in_use{} 1")
		runtime.KeepAlive(c)
		got := ch.wait(1, 500)
		if len(got) != 1 || got[0].Scope != "copied" || !slices.Equal(got[0].Metrics, []string{"in_use"}) {
			t.Fatalf("reported %+v once the copy was dropped, want copied with in_use", got)
		}
		if err := got[0].Close(); err != nil {
			t.Error(err)
		}
		registrytest.VerifyNone(t, reg)
	})
}

// blocking is an unchecked collector whose Collect waits until the channel
// is closed, and then collects nothing.
type blocking chan struct{}

func (blocking) Describe(chan<- *prometheus.Desc)   {}
func (b blocking) Collect(chan<- prometheus.Metric) { <-b }

// arriving is a vector on which a series with labels arrives just after its
// first Collect, which collects nothing: another component's, right after a
// dropped scope's pending DeleteOnClose was found to have nothing to delete.
type arriving struct {
	*prometheus.CounterVec
	labels []string
	once   sync.Once
}

func (a *arriving) Collect(ch chan<- prometheus.Metric) {
	first := false
	a.once.Do(func() { first = true })
	if first {
		a.WithLabelValues(a.labels...).Inc()
		return
	}
	a.CounterVec.Collect(ch)
}

// blind is a Deleter that is no Collector: a scope cannot ask it for the
// series it holds.
type blind struct{ vec *prometheus.CounterVec }

func (b blind) DeletePartialMatch(labels prometheus.Labels) int {
	return b.vec.DeletePartialMatch(labels)
}
