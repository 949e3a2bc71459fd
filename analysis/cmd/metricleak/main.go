package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"golang.org/x/tools/go/analysis/singlechecker"

	"github.com/promscope/promscope/analysis/metricleak"
)

func main() {
	defer func() {
		if r := recover(); r != nil {
			os.Exit(crashed(os.Stderr, r, debug.Stack()))
		}
	}()
	singlechecker.Main(metricleak.Analyzer)
}

// crashed reports a panic that ends the command to w, and returns the exit
// status. A panic of Go's export data reader over what a newer Go compiled
// (go vet run by a newer Go than built metricleak) is one line that says
// what to do; any other is printed as the runtime prints a panic, with the
// stack of the goroutine that panicked.
func crashed(w io.Writer, r any, stack []byte) int {
	if msg := fmt.Sprint(r); strings.Contains(msg, "export data version") {
		_, _ = fmt.Fprintf(w, "metricleak: built with %s, it cannot read what a newer Go compiled (%s): build it with the Go that runs it\n", runtime.Version(), msg)
		return 1
	}
	_, _ = fmt.Fprintf(w, "panic: %v\n\n%s", r, stack)
	return 2
}
