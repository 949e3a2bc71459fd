package metricleak_test

import (
	"fmt"
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/promscope/promscope/analysis/metricleak"
)

// TestAnalyzer runs the analyzer over one testdata package per rule. Each
// package holds the reported cases, with the expected message in a want
// comment on the return, and the silent ones beside them; want comments on
// function declarations check the facts carried across packages, and a
// .golden file beside a package's file is that file after its suggested
// fixes.
func TestAnalyzer(t *testing.T) {
	for _, tt := range []struct {
		name string
		pkg  string
	}{
		// A constructor of another package hands its registrations over
		// through a fact.
		{"facts", "kube"},
		// The original bug is reported at the return, and its fix is not.
		{"original", "mirror"},
		// Register and MustRegister leave their collectors behind unless
		// unregistered.
		{"direct", "direct"},
		// promauto registers on the default registry or With's, not
		// With(nil)'s.
		{"promauto", "promautocase"},
		// A scope closed on the error path, deferred, or owned by the caller
		// undoes its registrations.
		{"scope", "scope"},
		// A deferred cleanup that runs on error undoes the registration.
		{"defers", "defers"},
		// An owner returned, stored where it outlives the call, or kept as a
		// method value is handed on.
		{"handon", "handon"},
		// A set of registrations left behind is reported once, at the
		// first return that leaves it.
		{"onereport", "onereport"},
		// A branch on the error of a function that never fails is never
		// taken.
		{"neverfails", "neverfails"},
		// A constructor that registers after its last error return leaves
		// nothing when it fails; one that registers first and then fails
		// is reported.
		{"callee", "kv"},
		// A call that failed registered nothing, or its callee left behind
		// what is reported in the callee: returns on that failure are not
		// reported, also after its error is merged with others'.
		{"failed", "failed"},
		// A return that gives a registering call's error, alone or joined
		// with errors.Join, gives an error when that call failed: what the
		// others registered stays, though the return hands it back.
		{"joined", "joined"},
		// //lint:ignore and //lint:file-ignore silence reports, given a
		// reason.
		{"ignore", "ignore"},
		// The plain leaks get a fix that undoes the registrations before
		// the returns.
		{"fixes", "fixes"},
		// Reports name the metrics as the registry sees them, with the
		// prefixes of client_golang's wrappers.
		{"prefixes", "prefixed"},
		// A collector that describes nothing cannot be unregistered: the
		// report says to register it later, with no fix.
		{"unchecked", "unchecked"},
		// A registry made in the call goes away with what is in it: made
		// here, by a callee, or held in a field of an object made here.
		{"made registries", "fresh"},
		// A function of another package that makes a registry says so in
		// a fact.
		{"made registries of another package", "freshuse"},
		// A function that registers collectors of its own through the
		// registerer its caller gave it, and hands them to nobody, says so
		// in its fact.
		{"hands nothing back", "sqlstore"},
		// A call to one leaves them with that registerer: nothing the
		// caller holds can unregister them.
		{"left with the caller's registerer", "listener"},
		// Collectors that getters of package variables hand out, in a
		// fresh slice or through a method that returns its receiver, are
		// the program's; those they make anew are the caller's.
		{"getters", "shared"},
		// The getters say so in facts.
		{"getters' facts", "getters"},
		// Code in the Go 1.27 language is analysed (with Go 1.27; with an
		// older Go the package has no code).
		{"go1.27", "go127"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			results := analysistest.RunWithSuggestedFixes(t, analysistest.TestData(), metricleak.Analyzer, tt.pkg)
			checkRelated(t, results)
		})
	}
}

// checkRelated checks that the related positions of the reports are the
// lines that end with a "// related" comment, a return that leaves the same
// registrations behind, or with "// related: registered", a call that made
// some of them, and that each says which it is.
func checkRelated(t *testing.T, results []*analysistest.Result) {
	t.Helper()
	says := map[string]string{
		"// related":             "this return leaves the same registrations behind",
		"// related: registered": "also registered here, at ",
	}
	for _, r := range results {
		fset := r.Action.Package.Fset
		want := map[string]string{}
		for _, f := range r.Action.Package.Syntax {
			for _, group := range f.Comments {
				for _, c := range group.List {
					if msg, ok := says[c.Text]; ok {
						p := fset.Position(c.Pos())
						want[fmt.Sprintf("%s:%d", filepath.Base(p.Filename), p.Line)] = msg
					}
				}
			}
		}
		got := map[string]bool{}
		for _, d := range r.Diagnostics {
			for _, rel := range d.Related {
				p := fset.Position(rel.Pos)
				pos := fmt.Sprintf("%s:%d", filepath.Base(p.Filename), p.Line)
				got[pos] = true
				msg, ok := want[pos]
				switch {
				case !ok:
					t.Errorf("%s: a report has this position as related, which is not marked so", pos)
				case !strings.HasPrefix(rel.Message, msg):
					t.Errorf("%s: related position says %q, want %q", pos, rel.Message, msg)
				}
			}
		}
		for pos := range want {
			if !got[pos] {
				t.Errorf("%s: no report has this position as a related one", pos)
			}
		}
	}
}

// TestFixesAreFinal analyses each package again after its suggested fixes,
// as its .golden files hold it: no function that had a fix is reported any
// more, so that -fix run a second time changes nothing.
func TestFixesAreFinal(t *testing.T) {
	goldens, err := filepath.Glob(filepath.Join(analysistest.TestData(), "src", "*", "*.go.golden"))
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no .golden files (%v)", err)
	}
	pkgs := map[string]bool{}
	for _, g := range goldens {
		pkgs[filepath.Base(filepath.Dir(g))] = true
	}
	for pkg := range pkgs {
		t.Run(pkg, func(t *testing.T) {
			t.Parallel()
			var rec recorder // the want comments are checked by TestAnalyzer
			fixed := map[string]bool{}
			for _, r := range analysistest.Run(&rec, analysistest.TestData(), metricleak.Analyzer, pkg) {
				for _, d := range r.Diagnostics {
					if len(d.SuggestedFixes) > 0 {
						fixed[enclosing(r, d.Pos)] = true
					}
				}
			}
			if len(fixed) == 0 {
				t.Fatal("no report has a fix")
			}
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS(analysistest.TestData())); err != nil {
				t.Fatal(err)
			}
			for _, g := range goldens {
				if filepath.Base(filepath.Dir(g)) != pkg {
					continue
				}
				src, err := os.ReadFile(g)
				if err == nil {
					err = os.WriteFile(filepath.Join(dir, "src", pkg, strings.TrimSuffix(filepath.Base(g), ".golden")), src, 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			for _, r := range analysistest.Run(&rec, dir, metricleak.Analyzer, pkg) {
				for _, d := range r.Diagnostics {
					if fn := enclosing(r, d.Pos); fixed[fn] {
						t.Errorf("%s: %s is reported after its fix: %s", r.Action.Package.Fset.Position(d.Pos), fn, d.Message)
					}
				}
			}
		})
	}
}

// enclosing names the function declaration of r's package that holds pos.
func enclosing(r *analysistest.Result, pos token.Pos) string {
	for _, f := range r.Action.Package.Syntax {
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Pos() <= pos && pos < fd.End() {
				return fd.Name.Name
			}
		}
	}
	return ""
}

// TestPanic checks that a panic while analysing one function is reported
// as an internal error naming it, and that the other functions are still
// checked (the package also holds the shape that once panicked); and that
// a panic while building a package's SSA is reported as an internal error
// naming the package, which is skipped, while the run goes on (crash, in
// the same run, still gets its reports).
func TestPanic(t *testing.T) {
	restore := metricleak.SetTestHook(func(step string) {
		if step == "Explode" || step == "package unbuildable" {
			panic("boom")
		}
	})
	defer restore()
	analysistest.Run(t, analysistest.TestData(), metricleak.Analyzer, "crash", "unbuildable")
}

// TestCommands checks that a package main is checked only with -commands.
func TestCommands(t *testing.T) {
	t.Run("with", func(t *testing.T) {
		setFlag(t, "commands", "true")
		analysistest.Run(t, analysistest.TestData(), metricleak.Analyzer, "daemon")
	})
	// Without the flag, the same package gives no report: the want
	// comments are all unmet, and nothing else is wrong.
	t.Run("without", func(t *testing.T) {
		var rec recorder
		for _, r := range analysistest.Run(&rec, analysistest.TestData(), metricleak.Analyzer, "daemon") {
			if len(r.Diagnostics) != 0 {
				t.Errorf("%d reports in package main without -commands, want none: %v", len(r.Diagnostics), r.Diagnostics)
			}
		}
		if len(rec) == 0 {
			t.Error("no want comment was unmet: the package has nothing to report with -commands either")
		}
		for _, msg := range rec {
			if !strings.Contains(msg, "no diagnostic was reported matching") {
				t.Error(msg)
			}
		}
	})
}

// setFlag sets a flag of the analyzer for the rest of the test.
func setFlag(t *testing.T, name, value string) {
	t.Helper()
	f := metricleak.Analyzer.Flags.Lookup(name)
	if f == nil {
		t.Fatalf("the analyzer has no flag -%s", name)
	}
	old := f.Value.String()
	if err := f.Value.Set(value); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Value.Set(old) })
}

// recorder is an analysistest.Testing that keeps the errors it is given.
type recorder []string

func (r *recorder) Errorf(format string, args ...any) {
	*r = append(*r, fmt.Sprintf(format, args...))
}

// TestDoc checks that the analyzer's Doc is its title followed by the
// package documentation, as plain text.
func TestDoc(t *testing.T) {
	doc := metricleak.Analyzer.Doc
	title, body, ok := strings.Cut(doc, "\n\n")
	if !ok || title != "report error returns that leave registered Prometheus metrics behind" {
		t.Errorf("Doc starts with %q, want the title and a blank line", title)
	}
	for _, want := range []string{"Package metricleak defines", "# Suppressing a report", "\t//lint:ignore metricleak the process exits when this fails"} {
		if !strings.Contains(body, want) {
			t.Errorf("Doc lacks %q", want)
		}
	}
	for line := range strings.Lines(body) {
		if strings.HasPrefix(line, "//") || strings.HasPrefix(line, "package ") {
			t.Errorf("Doc has a line of Go source: %q", line)
		}
	}
}
