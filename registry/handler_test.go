package registry_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/internal/promtest"
	"github.com/promscope/promscope/registry"
)

// serve runs h for one request and returns the response.
func serve(h http.Handler, method, target string, header ...string) *http.Response {
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(r *http.Response) string {
	b, _ := io.ReadAll(r.Body)
	return string(b)
}

func TestHandler(t *testing.T) {
	// The page lists the tree of scopes, one line a scope, indented by
	// depth, each with where it was made, what it owns and the series it
	// deletes on close, with the headers of a plain text page that must
	// not be sniffed.
	t.Run("tree", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		rootAt := line()
		root := registry.NewScope(reg, registry.WithName("mirror"), registry.WithPrefix("mirror_"),
			registry.WithLeakReport(func(registry.Leak) {}))
		root.MustRegister(promtest.Gauge("links", 2))
		eastAt := line()
		east := registry.NewScope(root, registry.WithName("east"), registry.WithLabels(prometheus.Labels{"cluster": "east"}))
		east.MustRegister(promtest.Gauge("service_cache_size", 3), promtest.CounterVec("events_total", "kind"))
		east.DeleteOnClose(prometheus.Labels{"cluster": "east", "link": "a\nb"}, promtest.CounterVec("link_errors_total", "cluster", "link"),
			deleteLogger{Deleter: promtest.CounterVec("hidden_total", "cluster", "link")}) // no Collector: no name
		westAt := line()
		west := registry.NewScope(prometheus.WrapRegistererWith(prometheus.Labels{"cluster": "west"}, root), registry.WithName("west"))
		probeAt := line()
		probe := west.Child(registry.WithName("probe"))
		probe.MustRegister(&promtest.Unchecked{Name: "probe_rtt", Value: 1})
		root.Child(registry.WithName("gone")).Close()

		resp := serve(registry.Handler(root), http.MethodGet, "/")
		want := strings.Join([]string{
			`mirror prefix="mirror_" (made at ` + rootAt + `): 1 collector: mirror_links`,
			`  mirror/east{cluster="east"} prefix="mirror_" (made at ` + eastAt + `): 2 collectors: mirror_service_cache_size, mirror_events_total; deletes on close: link_errors_total{cluster="east",link="a\nb"}, {cluster="east",link="a\nb"}`,
			`  mirror/west{cluster="west"} prefix="mirror_" (made at ` + westAt + `): 0 collectors`,
			`    mirror/west/probe{cluster="west"} prefix="mirror_" (made at ` + probeAt + `): 1 collector: 1 unchecked`,
		}, "\n") + "\n"
		if got := body(resp); got != want {
			t.Errorf("the page is\n%s\nwant\n%s", got, want)
		}
		if ct, ns := resp.Header.Get("Content-Type"), resp.Header.Get("X-Content-Type-Options"); !strings.HasPrefix(ct, "text/plain") || ns != "nosniff" {
			t.Errorf("Content-Type %q, X-Content-Type-Options %q", ct, ns)
		}
	})

	// Every scope is one line, and no name passes for another or for what
	// is written around it: a name holding a space, anything unprintable
	// or not UTF-8, or a character names and labels are joined with, is
	// quoted as in a Go string literal, in String, on the page and in
	// JSON.
	t.Run("quoted names", func(t *testing.T) {
		root := registry.NewScope(nil, registry.WithName("a\nb\\c\x00é"), registry.WithLabels(prometheus.Labels{"l": "x\r\ny"}))
		root.Child(registry.WithName("\xff")).MustRegister(promtest.Gauge("jobs", 1))
		got := body(serve(registry.Handler(root), http.MethodGet, "/"))
		want := `"a\nb\\c\x00é"{l="x\r\ny"}: 0 collectors` + "\n" + `  "a\nb\\c\x00é"/"\xff"{l="x\r\ny"}: 1 collector: jobs` + "\n"
		if got != want {
			t.Errorf("the page is %q, want %q", got, want)
		}

		// A scope of an Index is shown with where it was made, which
		// the test leaves out from here on.
		var x registry.Index
		at := line()
		a := registry.NewScope(nil, registry.WithIndex(&x))
		a.Child(registry.WithName("b"))
		if got, want := body(serve(registry.Handler(a), http.MethodGet, "/")), "(unnamed scope) (made at "+at+"): 0 collectors\n"; !strings.HasPrefix(got, want) {
			t.Errorf("the page is %q, want it to begin %q", got, want)
		}
		for _, name := range []string{"  b", "a/b", `west{cluster="east"}`, "x (closed)", "(unnamed scope)", "y: 1 collector: z", "a\xff", "a\xfe", "é"} {
			registry.NewScope(nil, registry.WithIndex(&x), registry.WithName(name))
		}
		registry.NewScope(nil, registry.WithIndex(&x), registry.WithName("west"), registry.WithLabels(prometheus.Labels{"cluster": "east"}))
		got = regexp.MustCompile(` \(made at [^)]*\)`).ReplaceAllString(body(serve(registry.Handler(&x), http.MethodGet, "/")), "")
		want = strings.Join([]string{
			"(unnamed scope): 0 collectors",
			"  b: 0 collectors",
			`"  b": 0 collectors`,
			`"a/b": 0 collectors`,
			`"west{cluster=\"east\"}": 0 collectors`,
			`"x (closed)": 0 collectors`,
			`"(unnamed scope)": 0 collectors`,
			`"y: 1 collector: z": 0 collectors`,
			`"a\xff": 0 collectors`,
			`"a\xfe": 0 collectors`,
			`é: 0 collectors`,
			`west{cluster="east"}: 0 collectors`,
		}, "\n") + "\n"
		if got != want {
			t.Errorf("the page is\n%s\nwant\n%s", got, want)
		}
		var p struct{ Scopes []struct{ Scope string } }
		if err := json.Unmarshal([]byte(body(serve(registry.Handler(&x), http.MethodGet, "/?format=json"))), &p); err != nil {
			t.Fatal(err)
		}
		var scopes []string
		for _, s := range p.Scopes {
			scopes = append(scopes, s.Scope)
		}
		if want := []string{"", `"  b"`, `"a/b"`, `"west{cluster=\"east\"}"`, `"x (closed)"`, `"(unnamed scope)"`, `"y: 1 collector: z"`, `"a\xff"`, `"a\xfe"`, "é", `west{cluster="east"}`}; !slices.Equal(scopes, want) {
			t.Errorf("the JSON page's scopes are %q, want %q", scopes, want)
		}

		// Metric names are quoted the same way wherever a message
		// writes them: the page, Close's UnregisterError and
		// DeleteError, MustRegister's collision, and the String of the
		// collector that code registering straight on the parent meets.
		reg := prometheus.NewRegistry()
		s := registry.NewScope(reg, registry.WithName("s"))
		odd := promtest.Gauge("a, b", 1)
		s.MustRegister(odd)
		vec := promtest.CounterVec("v x", "l")
		curried := vec.MustCurryWith(prometheus.Labels{"l": "1"})
		curried.WithLabelValues().Inc()
		s.DeleteOnClose(prometheus.Labels{"l": "1"}, curried)
		if got := body(serve(registry.Handler(s), http.MethodGet, "/")); got != `s: 1 collector: "a, b"; deletes on close: "v x"{l="1"}`+"\n" {
			t.Errorf("the page is %q", got)
		}
		v := promtest.Panic(func() { s.MustRegister(promtest.Gauge("a, b", 2)) })
		if err, _ := v.(error); err == nil || !strings.HasPrefix(err.Error(), `registry: scope s: "a, b" is already registered by this scope:`) {
			t.Errorf("MustRegister panicked with %v", v)
		}
		reg.Unregister(odd)
		msgs := strings.Split(s.Close().Error(), "; ")
		slices.Sort(msgs)
		wantMsgs := []string{
			`registry: scope s: DeleteOnClose{l="1"} deleted none of "v x"{l="1"}: a constant label, or one the vector was curried with, matches no series (give DeleteOnClose the uncurried vector, and no constant label)`,
			`registry: scope s: unregister "a, b": somebody else unregistered it`,
		}
		if !slices.Equal(msgs, wantMsgs) {
			t.Errorf("Close = %q, want %q", msgs, wantMsgs)
		}
		reg = prometheus.NewRegistry()
		labelled := registry.NewScope(reg, registry.WithName("t"), registry.WithLabels(prometheus.Labels{"c": "x"}))
		labelled.MustRegister(promtest.Gauge("a, b", 1))
		var are prometheus.AlreadyRegisteredError
		if !errors.As(reg.Register(prometheus.NewGauge(prometheus.GaugeOpts{Name: "a, b", Help: promtest.Help("a, b"), ConstLabels: prometheus.Labels{"c": "x"}})), &are) ||
			fmt.Sprint(are.ExistingCollector) != `registry: "a, b", registered through promscope scope t{c="x"}` {
			t.Errorf("the outsider met %v", are.ExistingCollector)
		}
	})

	// The page answers GET and HEAD, and any other method with 405 and an
	// Allow header.
	t.Run("methods", func(t *testing.T) {
		h := registry.Handler(registry.NewScope(nil, registry.WithName("x")))
		for _, m := range []string{http.MethodGet, http.MethodHead} {
			if r := serve(h, m, "/"); r.StatusCode != http.StatusOK {
				t.Errorf("%s: %d", m, r.StatusCode)
			}
		}
		if r := serve(h, http.MethodHead, "/"); body(r) != "" {
			t.Error("HEAD has a body")
		}
		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, "PATCH", "OPTIONS"} {
			if r := serve(h, m, "/"); r.StatusCode != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s: %d, Allow %q", m, r.StatusCode, r.Header.Get("Allow"))
			}
		}
	})

	// With format=json, or an Accept header asking for JSON, the page is
	// the same tree as JSON.
	t.Run("json", func(t *testing.T) {
		root := registry.NewScope(nil, registry.WithName("mirror"))
		root.MustRegister(promtest.Gauge("links", 1))
		east := root.Child(registry.WithName("east"))
		east.MustRegister(&promtest.Unchecked{Name: "u", Value: 1}, promtest.Gauge("jobs", 1))
		east.DeleteOnClose(prometheus.Labels{"link": "east"}, promtest.CounterVec("link_errors_total", "link"))
		for _, r := range []*http.Response{
			serve(registry.Handler(root), http.MethodGet, "/?format=json"),
			serve(registry.Handler(root), http.MethodGet, "/", "Accept", "application/json"),
		} {
			var got struct{ Scopes []page }
			b := body(r)
			if err := json.Unmarshal([]byte(b), &got); err != nil || r.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("%v, Content-Type %q", err, r.Header.Get("Content-Type"))
			}
			if len(got.Scopes) != 1 || got.Scopes[0].Scope != "mirror" || !strings.Contains(b, `"created":""`) ||
				got.Scopes[0].State != "open" || got.Scopes[0].Collectors != 1 ||
				len(got.Scopes[0].Scopes) != 1 || got.Scopes[0].Scopes[0].Scope != "mirror/east" || got.Scopes[0].Scopes[0].Unchecked != 1 ||
				strings.Join(got.Scopes[0].Scopes[0].Metrics, ",") != "jobs" ||
				got.Scopes[0].Deletes == nil || strings.Join(got.Scopes[0].Scopes[0].Deletes, ",") != `link_errors_total{link="east"}` {
				t.Errorf("the page is %+v", got)
			}
		}
		// format=text is text whatever Accept says; an empty format is
		// none, so Accept decides; any other format is refused.
		if r := serve(registry.Handler(root), http.MethodGet, "/?format=text", "Accept", "application/json"); !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") || !strings.HasPrefix(body(r), "mirror: 1 collector") {
			t.Errorf("format=text: Content-Type %q", r.Header.Get("Content-Type"))
		}
		if r := serve(registry.Handler(root), http.MethodGet, "/?format=", "Accept", "application/json"); r.StatusCode != http.StatusOK || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("an empty format with Accept: application/json: %d, Content-Type %q, want JSON", r.StatusCode, r.Header.Get("Content-Type"))
		}
		for _, f := range []string{"JSON", "xml"} {
			if r := serve(registry.Handler(root), http.MethodGet, "/?format="+f); r.StatusCode != http.StatusBadRequest || !strings.Contains(body(r), `registry: format must be json or text, not "`+f+`"`) {
				t.Errorf("format=%s: %d %q, want 400 naming the formats", f, r.StatusCode, body(r))
			}
		}
		// A page of no scopes lists none, as an empty list of scopes
		// nested in a scope does.
		if got := body(serve(registry.Handler(&registry.Index{}), http.MethodGet, "/?format=json")); got != `{"scopes":[]}`+"\n" {
			t.Errorf("the page of an empty Index is %q, want an empty list", got)
		}
	})

	// An Accept header gets JSON when it names application/json with a
	// quality above zero and no lower than text/plain's; otherwise text.
	for _, tt := range []struct {
		name, accept string
		json         bool
	}{
		{name: "json", accept: "application/json", json: true},
		{name: "json preferred", accept: "text/plain;q=0.5, Application/JSON", json: true},
		{name: "json as good as text", accept: "application/json, text/plain", json: true},
		{name: "json refused", accept: "application/json;q=0, text/plain"},
		{name: "json refused alone", accept: "application/json;q=0"},
		{name: "text preferred", accept: "text/plain, application/json;q=0.9"},
		{name: "anything preferred", accept: "*/*;q=0.8, application/json;q=0.5"},
		{name: "any text preferred", accept: "application/json;q=0.5, text/*;q=0.9"},
		{name: "text/plain over text/*", accept: "text/*;q=0.9, text/plain;q=0.1, application/json;q=0.5", json: true},
		{name: "a browser", accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"},
		{name: "another type", accept: "application/jsonx"},
		{name: "a bad quality of text ignored", accept: "text/plain;q=NaN, application/json;q=0.5", json: true},
		{name: "a quality above 1 ignored", accept: "application/json;q=2"},
		{name: "a quality in hex ignored", accept: "application/json;q=0x1p-1"},
		{name: "too many decimals ignored", accept: "application/json;q=0.0001, text/plain;q=0"},
		{name: "the smallest quality", accept: "application/json;q=0.001, text/plain;q=0", json: true},
		{name: "a comma in a quoted parameter", accept: `application/json;profile="a,b", text/plain;q=0.5`, json: true},
	} {
		t.Run("accept: "+tt.name, func(t *testing.T) {
			ct := serve(registry.Handler(registry.NewScope(nil)), http.MethodGet, "/", "Accept", tt.accept).Header.Get("Content-Type")
			if got := ct == "application/json"; got != tt.json {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}

	// An Index lists every outermost scope made with it, a leaked one
	// too, from NewScope until its Close completes.
	t.Run("index", func(t *testing.T) {
		var x registry.Index
		reg := prometheus.NewPedanticRegistry()
		keptAt := line()
		kept := registry.NewScope(reg, registry.WithName("kept"), registry.WithIndex(&x))
		var leakedAt string
		func() {
			leakedAt = line()
			registry.NewScope(reg, registry.WithName("leaked"), registry.WithIndex(&x)).MustRegister(promtest.Gauge("jobs", 1))
		}()
		registry.NewScope(reg, registry.WithName("closed"), registry.WithIndex(&x)).Close()
		innerAt := line()
		inner := kept.Child(registry.WithName("inner"), registry.WithIndex(&registry.Index{}))
		// Scopes dropped while they own nothing are closed, and leave
		// the index or the scope they are nested in.
		func() {
			emptied := registry.NewScope(reg, registry.WithName("emptied"), registry.WithIndex(&x))
			g := promtest.Gauge("gone", 1)
			emptied.MustRegister(g)
			emptied.Unregister(g)
		}()
		where := line()
		program := registry.NewScope(reg, registry.WithName("program"), registry.WithIndex(&x), registry.WithLeakReport(func(registry.Leak) {}))
		func() { program.Child(registry.WithName("dropped")) }()
		// A dropped scope that had an empty scope nested in it goes too,
		// once that one has: the runtime may find the outer one garbage
		// first.
		func() { program.Child(registry.WithName("pair")).Child(registry.WithName("inner")) }()
		func() { registry.NewScope(reg, registry.WithName("ghost"), registry.WithIndex(&x)).Child() }()
		// So is one whose parent panics as the collector of its
		// unchecked ones is unregistered: the panic, on the runtime's
		// goroutine, does not end the program.
		func() {
			p := promtest.NewParent(promtest.On("unregister", "", -1, promtest.Panicking))
			stuck := registry.NewScope(p, registry.WithName("stuck"), registry.WithIndex(&x))
			u := &promtest.Unchecked{Name: "u"}
			stuck.MustRegister(u)
			stuck.Unregister(u)
		}()
		want := "kept (made at " + keptAt + "): 0 collectors\n  kept/inner (made at " + innerAt + "): 0 collectors\n" +
			"leaked (made at " + leakedAt + "): 1 collector: jobs\nprogram (made at " + where + "): 0 collectors\n"
		var got string
		for range 100 {
			runtime.GC() // the handles dropped are garbage by now, and their cleanups run soon after
			if got = body(serve(registry.Handler(&x), http.MethodGet, "/")); got == want {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if got != want {
			t.Errorf("the page is %q, want %q", got, want)
		}
		runtime.KeepAlive(inner)
		runtime.KeepAlive(program)
	})

	// A page being written holds no lock of the scope's: Register,
	// Unregister and Close go on while the client reads slowly.
	t.Run("no lock while writing", func(t *testing.T) {
		scope := registry.NewScope(nil)
		scope.MustRegister(promtest.Gauge("a", 1))
		w := &stalledWriter{ResponseRecorder: httptest.NewRecorder(), entered: make(chan struct{}), proceed: make(chan struct{})}
		done := make(chan struct{})
		go func() {
			registry.Handler(scope).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
			close(done)
		}()
		<-w.entered
		g := promtest.Gauge("b", 1)
		if err := scope.Register(g); err != nil || !scope.Unregister(g) || scope.Close() != nil {
			t.Error("the scope did not work while the page was written")
		}
		close(w.proceed)
		<-done
	})

	// A zero scope has an empty page, a closed one, one made in a closed
	// scope and one whose Close the parent interrupted say so;
	// Handler(nil) panics with the package prefix.
	t.Run("edges", func(t *testing.T) {
		closed := registry.NewScope(nil)
		closed.Close()
		late := closed.Child()
		interrupted := registry.NewScope(promtest.NewParent(promtest.On("unregister", "jobs", 0, promtest.Panicking)))
		interrupted.Child().MustRegister(promtest.Gauge("older", 1))
		interrupted.MustRegister(promtest.Gauge("jobs", 1))
		promtest.Panic(func() { interrupted.Close() })
		for _, tt := range []struct {
			give registry.Scopes
			want string
		}{
			{give: closed, want: "(unnamed scope) (closed): 0 collectors\n"},
			{give: late, want: "(unnamed scope) (closed): 0 collectors\n"},
			{give: interrupted, want: "(unnamed scope) (closing): 1 collector: jobs\n  (unnamed scope) (closing): 1 collector: older\n"},
			{give: &registry.Scope{}, want: ""},
			{give: &registry.Index{}, want: ""},
		} {
			if got := body(serve(registry.Handler(tt.give), http.MethodGet, "/")); got != tt.want {
				t.Errorf("the page is %q, want %q", got, tt.want)
			}
		}
		for _, give := range []registry.Scopes{nil, (*registry.Scope)(nil), (*registry.Index)(nil)} {
			if msg, ok := promtest.Panic(func() { registry.Handler(give) }).(string); !ok || !strings.HasPrefix(msg, "registry: ") {
				t.Errorf("Handler(%#v) panicked with %#v", give, msg)
			}
		}
	})
}

// stalledWriter is a ResponseWriter whose first Write says it started, then
// waits.
type stalledWriter struct {
	*httptest.ResponseRecorder
	entered, proceed chan struct{}
}

func (w *stalledWriter) Write(b []byte) (int, error) {
	close(w.entered)
	<-w.proceed
	return w.ResponseRecorder.Write(b)
}

// A page is one scope as Handler's JSON shows it.
type page struct {
	Scope      string   `json:"scope"`
	Created    string   `json:"created"`
	State      string   `json:"state"`
	Collectors int      `json:"collectors"`
	Metrics    []string `json:"metrics"`
	Unchecked  int      `json:"unchecked"`
	Deletes    []string `json:"deletes"`
	Scopes     []page   `json:"scopes"`
}
