package gclplugin

import (
	"flag"
	"maps"
	"testing"
	"time"

	"golang.org/x/tools/go/analysis"
)

// flagged returns an analyzer with a flag of each common kind, one of them
// named with a capital, and each set away from its default, as a previous
// configuration might have left it.
func flagged(t *testing.T) *analysis.Analyzer {
	a := &analysis.Analyzer{Name: "leakcheck"}
	a.Flags.Bool("commands", false, "check package main too")
	a.Flags.Int("depth", 3, "how deep to look")
	a.Flags.String("mode", "fast", "how to look")
	a.Flags.Duration("timeout", time.Second, "how long to look")
	a.Flags.Bool("dryRun", false, "look only")
	for name, value := range earlier {
		if err := a.Flags.Set(name, value); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

// defaults and earlier are the values of flagged's flags before it sets
// them, and after.
var (
	defaults = map[string]string{"commands": "false", "depth": "3", "mode": "fast", "timeout": "1s", "dryRun": "false"}
	earlier  = map[string]string{"commands": "true", "depth": "9", "mode": "slow", "timeout": "1m0s", "dryRun": "true"}
)

// values returns the current value of each of a's flags.
func values(a *analysis.Analyzer) map[string]string {
	m := map[string]string{}
	a.Flags.VisitAll(func(f *flag.Flag) { m[f.Name] = f.Value.String() })
	return m
}

// TestConfigure gives configure settings as golangci-lint passes them (a
// mapping decoded from YAML, keys lowercased) and checks the flags: after
// success, each at its default unless set; after an error, all as they
// were, and the error says which setting is wrong and why.
func TestConfigure(t *testing.T) {
	for _, tt := range []struct {
		name    string
		give    any
		want    map[string]string // the flags set away from their defaults
		wantErr string
	}{
		{name: "none", give: nil},
		{name: "empty", give: map[string]any{}},
		{name: "bool", give: map[string]any{"commands": true}, want: map[string]string{"commands": "true"}},
		{
			name: "every kind",
			give: map[string]any{"commands": true, "depth": 5, "mode": "slow", "timeout": "2m", "dryrun": true},
			want: map[string]string{"commands": "true", "depth": "5", "mode": "slow", "timeout": "2m0s", "dryRun": "true"},
		},
		{name: "default given", give: map[string]any{"depth": 3}},
		{name: "string for a bool", give: map[string]any{"commands": "true"}, want: map[string]string{"commands": "true"}},
		{name: "number for a string", give: map[string]any{"mode": 7}, want: map[string]string{"mode": "7"}},
		{name: "whole float for an int", give: map[string]any{"depth": 7.0}, want: map[string]string{"depth": "7"}},
		{
			name:    "unknown",
			give:    map[string]any{"comands": true},
			wantErr: `unknown setting "comands": the settings are leakcheck's flags: commands, depth, dryRun, mode, timeout`,
		},
		{name: "null", give: map[string]any{"commands": nil}, wantErr: `setting "commands": no value given`},
		{name: "list", give: map[string]any{"mode": []any{"slow"}}, wantErr: `setting "mode": want a single value, not a list`},
		{name: "mapping", give: map[string]any{"mode": map[string]any{"x": 1}}, wantErr: `setting "mode": want a single value, not a mapping`},
		{
			name:    "bad bool",
			give:    map[string]any{"commands": "yes"},
			wantErr: `setting "commands": invalid value "yes" for -commands (a boolean): parse error`,
		},
		{
			name:    "bad int",
			give:    map[string]any{"depth": 1.5},
			wantErr: `setting "depth": invalid value 1.5 for -depth (an int): parse error`,
		},
		{
			name:    "bad duration",
			give:    map[string]any{"timeout": 5},
			wantErr: `setting "timeout": invalid value 5 for -timeout (a duration): parse error`,
		},
		{
			// commands is set before depth fails, and is put back.
			name:    "bad after good",
			give:    map[string]any{"commands": false, "depth": "deep"},
			wantErr: `setting "depth": invalid value "deep" for -depth (an int): parse error`,
		},
		{
			name:    "a list",
			give:    []any{"commands"},
			wantErr: `settings: want a mapping of leakcheck's flags to their values, not a list`,
		},
		{
			name:    "a string",
			give:    "commands",
			wantErr: `settings: want a mapping of leakcheck's flags to their values, not a string`,
		},
		{
			name:    "not encodable",
			give:    map[string]any{"mode": func() {}},
			wantErr: `settings: encoding settings: json: unsupported type: func()`,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := flagged(t)
			err := configure(a, tt.give)
			want := earlier
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("configure(%v): %v", tt.give, err)
				}
				want = maps.Clone(defaults)
				maps.Copy(want, tt.want)
			} else if err == nil || err.Error() != tt.wantErr {
				t.Errorf("configure(%v): %v, want %s", tt.give, err, tt.wantErr)
			}
			if got := values(a); !maps.Equal(got, want) {
				t.Errorf("flags after configure(%v) = %v, want %v", tt.give, got, want)
			}
		})
	}
}

// TestConfigureNoFlags checks the error for an analyzer without flags.
func TestConfigureNoFlags(t *testing.T) {
	a := &analysis.Analyzer{Name: "leakcheck"}
	if err := configure(a, nil); err != nil {
		t.Errorf("configure(nil): %v", err)
	}
	err := configure(a, map[string]any{"commands": true})
	const want = `unknown setting "commands": leakcheck has no settings`
	if err == nil || err.Error() != want {
		t.Errorf("configure: %v, want %s", err, want)
	}
}
