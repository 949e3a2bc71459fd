package promscope_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The README's quick start must be the code of ExampleNewScope, which go test
// compiles and runs; this keeps the two from drifting apart.
func TestReadmeQuickStartIsExampleNewScope(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile("registry/example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```go\npackage watcher\n.*?\n(// Watcher watches.*?)```").FindSubmatch(readme)
	if block == nil {
		t.Fatal("README.md has no quick start block starting with package watcher and the Watcher type")
	}
	code := string(block[1])
	if !strings.Contains(string(example), code) {
		t.Errorf("the README quick start differs from the code in registry/example_test.go; copy it again:\n%s", code)
	}
}
