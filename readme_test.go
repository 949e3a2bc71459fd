package promscope_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The Markdown files and the package documentation of the repository are
// checked here: their Go snippets must be code that go test compiles, their
// relative links must lead somewhere, and the README must stay a front door.

// readmeLimit is the most the README may weigh, in bytes.
const readmeLimit = 10 * 1024

func TestReadme(t *testing.T) {
	// The README stays at most 10 KB.
	t.Run("size", func(t *testing.T) {
		fi, err := os.Stat("README.md")
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > readmeLimit {
			t.Errorf("README.md is %d bytes, more than %d", fi.Size(), readmeLimit)
		}
	})
}

func TestSnippets(t *testing.T) {
	// Every Go snippet of a Markdown file or a package comment is, line by
	// line, code of a Go file of the module, which go test compiles; a line
	// "..." stands for any lines.
	code := testFiles(t)
	for file, snippets := range snippets(t) {
		for i, snippet := range snippets {
			if !foundIn(body(snippet), code) {
				t.Errorf("%s: snippet %d is not code that go test compiles:\n%s", file, i+1, strings.Join(snippet, "\n"))
			}
		}
	}
}

func TestLinks(t *testing.T) {
	// Every relative link of a Markdown file leads to a file or directory
	// of the repository, and to a heading of it when it names one.
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, file := range files(t, ".md") {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(text), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			if path == "" {
				path = file
			} else {
				path = filepath.Join(filepath.Dir(file), path)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: link %s leads nowhere", file, target)
				continue
			}
			if anchor != "" && !hasHeading(t, path, anchor) {
				t.Errorf("%s: link %s names no heading of %s", file, target, path)
			}
		}
	}
}

func TestNamedTests(t *testing.T) {
	// Every test, fuzz test or benchmark that a Markdown file of the
	// library names, such as GUARANTEES.md's "Proved by" lines, is a
	// function or type declared in the module.
	decl := regexp.MustCompile(`(?m)^(?:func|type) (\w+)`)
	declared := map[string]bool{}
	for _, file := range files(t, ".go") {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range decl.FindAllStringSubmatch(string(text), -1) {
			declared[m[1]] = true
		}
	}
	named := regexp.MustCompile("`((?:Test|Fuzz|Benchmark)\\w*)`")
	for _, file := range files(t, ".md") {
		if strings.HasPrefix(file, "analysis"+string(filepath.Separator)) {
			continue // they name the analysis module's tests
		}
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range named.FindAllStringSubmatch(string(text), -1) {
			if !declared[m[1]] {
				t.Errorf("%s names %s, which the module does not declare", file, m[1])
			}
		}
	}
}

// body returns snippet without its package clause and imports: a snippet
// may be a whole file, while the code it is taken from is in a test
// package of its own.
func body(snippet []string) []string {
	if len(snippet) == 0 || !strings.HasPrefix(snippet[0], "package ") {
		return snippet
	}
	snippet = snippet[1:]
	if len(snippet) > 0 && snippet[0] == "import (" {
		for i, l := range snippet {
			if l == ")" {
				return snippet[i+1:]
			}
		}
	}
	return snippet
}

// files returns the files of the library module whose names end with
// suffix, outside testdata and hidden directories; with the Markdown files
// of the analysis module too, whose Go files its own tests check.
func files(t *testing.T, suffix string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		inAnalysis := strings.HasPrefix(path, "analysis"+string(filepath.Separator))
		if !d.IsDir() && strings.HasSuffix(path, suffix) && (suffix == ".md" || !inAnalysis) {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// testFiles returns the lines of every Go file of the library module,
// trimmed, without blank lines.
func testFiles(t *testing.T) [][]string {
	t.Helper()
	var out [][]string
	for _, file := range files(t, ".go") {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, lines(string(text)))
	}
	return out
}

// snippets returns the Go snippets of the Markdown files and the package
// comments, by file, each as its lines, trimmed, without blank lines.
func snippets(t *testing.T) map[string][][]string {
	t.Helper()
	out := map[string][][]string{}
	fence := regexp.MustCompile("(?s)```go\n(.*?)```")
	for _, file := range files(t, ".md") {
		if strings.HasPrefix(file, "analysis"+string(filepath.Separator)) {
			continue // code metricleak analyses: its testdata (ignore) holds what they show
		}
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range fence.FindAllStringSubmatch(string(text), -1) {
			out[file] = append(out[file], lines(m[1]))
		}
	}
	for _, file := range files(t, "doc.go") {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc == nil {
			continue
		}
		// A code block of a doc comment is a run of lines indented
		// with a tab, blank lines between them included.
		var block []string
		flush := func() {
			if len(block) > 0 {
				out[file] = append(out[file], lines(strings.Join(block, "\n")))
			}
			block = nil
		}
		for _, l := range strings.Split(f.Doc.Text(), "\n") {
			switch {
			case strings.HasPrefix(l, "\t"):
				block = append(block, l)
			case l == "" && block != nil:
			default:
				flush()
			}
		}
		flush()
	}
	return out
}

// lines returns the lines of text, trimmed, without blank lines.
func lines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// foundIn reports whether snippet is, in some file of code, a run of lines,
// each "..." of the snippet standing for any lines.
func foundIn(snippet []string, code [][]string) bool {
	for _, file := range code {
		for start := range file {
			if matchAt(snippet, file, start) {
				return true
			}
		}
	}
	return false
}

// matchAt reports whether snippet matches file from line i on.
func matchAt(snippet, file []string, i int) bool {
	if len(snippet) == 0 {
		return true
	}
	if snippet[0] == "..." {
		for j := i; j <= len(file); j++ {
			if matchAt(snippet[1:], file, j) {
				return true
			}
		}
		return false
	}
	return i < len(file) && file[i] == snippet[0] && matchAt(snippet[1:], file, i+1)
}

// hasHeading reports whether the Markdown file path has a heading whose
// anchor, as GitHub makes it, is anchor.
func hasHeading(t *testing.T, path, anchor string) bool {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	drop := regexp.MustCompile(`[^\p{L}\p{N}\- _]`)
	for _, l := range strings.Split(string(text), "\n") {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(l, "#"))
		slug := strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(title), ""), " ", "-")
		if slug == anchor {
			return true
		}
	}
	return false
}
