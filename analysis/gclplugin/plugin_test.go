package gclplugin_test

import (
	"strings"
	"testing"

	"github.com/golangci/plugin-module-register/register"
	"golang.org/x/tools/go/analysis"

	"github.com/promscope/promscope/analysis/gclplugin"
	"github.com/promscope/promscope/analysis/metricleak"
)

// TestRegistered looks the plugin up the way golangci-lint does, by the
// name .golangci.yml gives it, and checks that it hands over
// metricleak.Analyzer, well formed, to run on packages loaded with types.
func TestRegistered(t *testing.T) {
	newPlugin, err := register.GetPlugin("metricleak")
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPlugin(nil)
	if err != nil {
		t.Fatalf("newPlugin(nil): %v", err)
	}
	got, err := p.BuildAnalyzers()
	if err != nil {
		t.Fatalf("BuildAnalyzers: %v", err)
	}
	if len(got) != 1 || got[0] != metricleak.Analyzer {
		t.Fatalf("BuildAnalyzers = %v, want [metricleak.Analyzer]", got)
	}
	if err := analysis.Validate(got); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if mode := p.GetLoadMode(); mode != register.LoadModeTypesInfo {
		t.Errorf("GetLoadMode = %q, want %q", mode, register.LoadModeTypesInfo)
	}
}

// TestNewRejects checks that New refuses settings metricleak.Analyzer
// cannot take, naming the setting.
func TestNewRejects(t *testing.T) {
	for _, tt := range []struct {
		name string
		give any
		want string
	}{
		{"unknown", map[string]any{"nosuch": true}, `unknown setting "nosuch": `},
		{"not a mapping", []any{"nosuch"}, `settings: want a mapping of metricleak's flags to their values, not a list`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := gclplugin.New(tt.give)
			if err == nil {
				t.Fatalf("New(%v) = %v, want an error", tt.give, p)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("New(%v): %v, want %s...", tt.give, err, tt.want)
			}
		})
	}
}
