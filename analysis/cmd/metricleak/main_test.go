package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommand builds the command and runs it the two ways the README gives,
// on the analyzer's testdata laid out as a GOPATH tree.
func TestCommand(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "metricleak")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	gopath, err := filepath.Abs(filepath.Join("..", "..", "metricleak", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, name string, args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = filepath.Join(gopath, "src")
		cmd.Env = append(os.Environ(), "GOPATH="+gopath, "GO111MODULE=off", "GOFLAGS=", "GOWORK=off")
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
	const report = "mirror.go:24:3: service_cache_size and endpoints_cache_size registered at kube.go:22 (via kube.NewAPI) stay registered"

	t.Run("standalone, it prints the reports and exits with status 3", func(t *testing.T) {
		out, code := run(t, bin, "mirror")
		if code != 3 || !strings.Contains(out, report) {
			t.Errorf("metricleak mirror: exit status %d, want 3; output:\n%s", code, out)
		}
	})
	t.Run("standalone, it exits with status 0 when it finds nothing", func(t *testing.T) {
		out, code := run(t, bin, "kube")
		if code != 0 || out != "" {
			t.Errorf("metricleak kube: exit status %d, want 0; output:\n%s", code, out)
		}
	})
	t.Run("as go vet's tool, go vet prints the reports and fails", func(t *testing.T) {
		out, code := run(t, "go", "vet", "-vettool="+bin, "mirror")
		if code == 0 || !strings.Contains(out, report) {
			t.Errorf("go vet -vettool: exit status %d, want non-zero; output:\n%s", code, out)
		}
	})
}
