package gclplugin

import (
	"github.com/golangci/plugin-module-register/register"
	"golang.org/x/tools/go/analysis"

	"github.com/promscope/promscope/analysis/metricleak"
)

// init registers the plugin under the analyzer's name. This is the one
// init function in promscope, and it is here because the module plugin
// system leaves no other way: a custom golangci-lint binary only imports
// this package for its side effects (a blank import in its main package)
// and then looks the plugin up by name in register's table, so the entry
// has to be made while the package initialises. It only adds that entry;
// the analyzer is configured later, when golangci-lint calls [New].
func init() {
	register.Plugin(metricleak.Analyzer.Name, New)
}

// New is the plugin's constructor, which golangci-lint calls with the
// settings given to the plugin in .golangci.yml. It sets the flags of
// [metricleak.Analyzer] from them (see the package documentation) and
// returns a plugin that hands golangci-lint that analyzer.
func New(settings any) (register.LinterPlugin, error) {
	if err := configure(metricleak.Analyzer, settings); err != nil {
		return nil, err
	}
	return plugin{metricleak.Analyzer}, nil
}

// plugin is what golangci-lint asks for the analyzers to run and for how
// to load the packages they run on.
type plugin struct{ analyzer *analysis.Analyzer }

var _ register.LinterPlugin = plugin{}

// BuildAnalyzers returns the one analyzer, configured by [New].
func (p plugin) BuildAnalyzers() ([]*analysis.Analyzer, error) {
	return []*analysis.Analyzer{p.analyzer}, nil
}

// GetLoadMode asks for type information: the analyzer builds SSA and
// imports facts from the packages a package depends on, which needs their
// types, not only their syntax.
func (plugin) GetLoadMode() string { return register.LoadModeTypesInfo }
