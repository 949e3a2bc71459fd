package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCommand builds the command and runs it the two ways the README gives,
// on the analyzer's testdata laid out as a GOPATH tree, and on a module.
func TestCommand(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "metricleak")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	testdata, err := filepath.Abs(filepath.Join("..", "..", "metricleak", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	gopathEnv := func(gopath string) []string {
		return append(os.Environ(), "GOPATH="+gopath, "GO111MODULE=off", "GOFLAGS=", "GOWORK=off")
	}
	const report = "mirror.go:28:3: service_cache_size and endpoints_cache_size registered at kube/kube.go:29 (via kube.NewAPI) stay registered"

	// Standalone, it prints the reports and exits with status 3.
	t.Run("reports", func(t *testing.T) {
		out, code := run(t, filepath.Join(testdata, "src"), gopathEnv(testdata), bin, "mirror")
		if code != 3 || !strings.Contains(out, report) {
			t.Errorf("metricleak mirror: exit status %d, want 3; output:\n%s", code, out)
		}
	})
	// Standalone, it exits with status 0 when it finds nothing.
	t.Run("clean", func(t *testing.T) {
		out, code := run(t, filepath.Join(testdata, "src"), gopathEnv(testdata), bin, "kube")
		if code != 0 || out != "" {
			t.Errorf("metricleak kube: exit status %d, want 0; output:\n%s", code, out)
		}
	})
	// In a module where it finds nothing, it exits with status 0 too.
	t.Run("module", func(t *testing.T) {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "go.mod"), "module example.com/clean\n\ngo 1.22\n")
		write(t, filepath.Join(dir, "clean.go"), "package clean\n\nimport \"errors\"\n\n// Open fails.\nfunc Open() error { return errors.New(\"closed\") }\n")
		env := append(os.Environ(), "GOFLAGS=", "GOWORK=off", "GO111MODULE=on")
		out, code := run(t, dir, env, bin, "./...")
		if code != 0 || out != "" {
			t.Errorf("metricleak ./... in a clean module: exit status %d, want 0; output:\n%s", code, out)
		}
	})
	// As go vet's tool, go vet prints the reports and fails.
	t.Run("vet", func(t *testing.T) {
		out, code := run(t, filepath.Join(testdata, "src"), gopathEnv(testdata), "go", "vet", "-vettool="+bin, "mirror")
		if code == 0 || !strings.Contains(out, report) {
			t.Errorf("go vet -vettool: exit status %d, want non-zero; output:\n%s", code, out)
		}
	})
	// With -fix, it applies the suggested fixes, silently: the result is
	// the golden file, builds, and leaves only the leaks without a fix.
	t.Run("fix", func(t *testing.T) {
		gopath := t.TempDir()
		if err := os.CopyFS(gopath, os.DirFS(testdata)); err != nil {
			t.Fatal(err)
		}
		src := filepath.Join(gopath, "src")
		pkgs := []string{"fixes", "mirror", "direct", "promautocase", "handon", "onereport", "failed"}
		if out, code := run(t, src, gopathEnv(gopath), bin, append([]string{"-fix"}, pkgs...)...); code != 0 || out != "" {
			t.Fatalf("metricleak -fix: exit status %d, want 0 and no output; output:\n%s", code, out)
		}
		for _, p := range pkgs {
			file := filepath.Join(p, p+".go")
			got, err := os.ReadFile(filepath.Join(src, file))
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(testdata, "src", file+".golden"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s after metricleak -fix differs from %s.golden:\n%s", file, file, got)
			}
		}
		if out, code := run(t, src, gopathEnv(gopath), "go", append([]string{"vet"}, pkgs...)...); code != 0 {
			t.Fatalf("go vet on the fixed packages: exit status %d:\n%s", code, out)
		}
		out, _ := run(t, src, gopathEnv(gopath), bin, "fixes")
		for _, fixed := range []string{"(via kube.NewAPI) stay registered when this or 2 other returns", "requests_total and up", "ready and starts_total"} {
			if strings.Contains(out, fixed) {
				t.Errorf("after -fix, still reported: %q in\n%s", fixed, out)
			}
		}
	})
}

// TestNewerGo runs a metricleak built with Go 1.26 as the tool of Go 1.27's
// go vet, which compiles what it reads with a newer export data format:
// each package fails, and nothing panics (with the golang.org/x/tools that
// go.mod requires, Go's export data reader panics, and crashed says what to
// do instead; newer ones fail without). It runs where the go command can
// fetch or find Go 1.27.3, and not under -short.
func TestNewerGo(t *testing.T) {
	const newer = "go1.27.3"
	if testing.Short() || !strings.HasPrefix(runtime.Version(), "go1.26") {
		t.Skipf("needs Go 1.26 to build, and no -short (Go %s)", runtime.Version())
	}
	dir := t.TempDir()
	env := append(os.Environ(), "GOTOOLCHAIN="+newer, "GOFLAGS=", "GOWORK=off", "GO111MODULE=on")
	if out, code := run(t, dir, env, "go", "version"); code != 0 {
		t.Skipf("no %s: %s", newer, out)
	}
	bin := filepath.Join(t.TempDir(), "metricleak")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	write(t, filepath.Join(dir, "go.mod"), "module example.com/newer\n\ngo 1.22\n")
	write(t, filepath.Join(dir, "newer.go"), "package newer\n\nimport \"errors\"\n\n// Open fails.\nfunc Open() error { return errors.New(\"closed\") }\n")
	out, code := run(t, dir, env, "go", "vet", "-vettool="+bin, "./...")
	if code == 0 || strings.Contains(out, "panic:") || strings.Contains(out, "goroutine ") {
		t.Errorf("go vet with %s: exit status %d, want non-zero, with no panic; output:\n%s", newer, code, out)
	}
}

// TestCrashed checks what the command says when it panics: one line that
// says what to do for export data it cannot read, with status 1, and for
// anything else the panic and its stack, as the runtime prints them, with
// status 2.
func TestCrashed(t *testing.T) {
	for _, tt := range []struct {
		give any
		code int
		want string
	}{
		{`cannot decode "fmt", export data version 5 is greater than maximum supported version 2`, 1,
			"metricleak: built with " + runtime.Version() + `, it cannot read what a newer Go compiled (cannot decode "fmt", export data version 5 is greater than maximum supported version 2): build it with the Go that runs it` + "\n"},
		{errors.New("boom"), 2, "panic: boom\n\nthe stack"},
	} {
		var b bytes.Buffer
		if code := crashed(&b, tt.give, []byte("the stack")); code != tt.code || b.String() != tt.want {
			t.Errorf("crashed(%v) = %d, printing %q; want %d, %q", tt.give, code, b.String(), tt.code, tt.want)
		}
	}
}

// run runs name with args in dir and returns its output and exit status.
func run(t *testing.T, dir string, env []string, name string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	}
	t.Fatalf("%s: %v\n%s", name, err, out)
	return "", 0
}

func write(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
