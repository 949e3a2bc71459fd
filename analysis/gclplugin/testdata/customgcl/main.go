// Command custom-gcl is golangci-lint with the metricleak module plugin
// built in: the binary that `golangci-lint custom` makes from the
// .custom-gcl.yml in the gclplugin package documentation. That command
// clones golangci-lint's repository and adds a blank import of each plugin
// to its main package; this main package does the same job from the module
// proxy. ../../ci.sh builds it in a scratch module that requires
// golangci-lint and replaces the analysis module with this checkout.
package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/golangci/golangci-lint/v2/pkg/commands"
	"github.com/golangci/golangci-lint/v2/pkg/exitcodes"

	// The plugin registers itself with golangci-lint when imported.
	_ "github.com/promscope/promscope/analysis/gclplugin"
)

// version and date are set when linking (-X main.version=...), as
// `golangci-lint custom` sets them.
var version, date string

func main() {
	info := commands.BuildInfo{Version: version, Date: date, Commit: "?", GoVersion: "unknown"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		info.GoVersion = bi.GoVersion
	}
	if err := commands.Execute(info); err != nil {
		fmt.Fprintf(os.Stderr, "The command is terminated due to an error: %v\n", err)
		os.Exit(exitcodes.Failure)
	}
}
