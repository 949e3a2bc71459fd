package gclplugin

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/golangci/plugin-module-register/register"
	"golang.org/x/tools/go/analysis"
)

// configure sets every flag of a to its default, then each flag that
// settings names to the value given, so that the flags follow these
// settings alone, whatever an earlier call set. settings is the plugin's
// settings as golangci-lint read them from its configuration: nil, or a
// mapping of flag names to single values. On an error the flags keep the
// values they had.
func configure(a *analysis.Analyzer, settings any) error {
	all, err := register.DecodeSettings[json.RawMessage](settings)
	if err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	var raw map[string]json.RawMessage
	switch k := kind(all); k {
	case "null":
	case "mapping":
		if err := json.Unmarshal(all, &raw); err != nil {
			return fmt.Errorf("settings: %w", err)
		}
	default:
		return fmt.Errorf("settings: want a mapping of %s's flags to their values, not a %s", a.Name, k)
	}

	type assignment struct {
		key   string
		flag  *flag.Flag
		value string
	}
	var todo []assignment
	for _, key := range slices.Sorted(maps.Keys(raw)) {
		f := lookup(&a.Flags, key)
		if f == nil {
			return unknownSetting(a, key)
		}
		v, err := flagText(raw[key])
		if err != nil {
			return fmt.Errorf("setting %q: %w", key, err)
		}
		todo = append(todo, assignment{key, f, v})
	}

	before := map[*flag.Flag]string{}
	a.Flags.VisitAll(func(f *flag.Flag) { before[f] = f.Value.String() })
	if err = set(&a.Flags, func(f *flag.Flag) string { return f.DefValue }); err == nil {
		for _, s := range todo {
			if err = s.flag.Value.Set(s.value); err != nil {
				err = fmt.Errorf("setting %q: invalid value %s for -%s%s: %w",
					s.key, raw[s.key], s.flag.Name, typeName(s.flag), err)
				break
			}
		}
	}
	if err != nil {
		_ = set(&a.Flags, func(f *flag.Flag) string { return before[f] })
	}
	return err
}

// set sets every flag in fs to value(flag).
func set(fs *flag.FlagSet, value func(*flag.Flag) string) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if e := f.Value.Set(value(f)); e != nil {
			err = errors.Join(err, fmt.Errorf("setting -%s to %q: %w", f.Name, value(f), e))
		}
	})
	return err
}

// lookup finds the flag that a setting names. golangci-lint's
// configuration loader lowercases every key, so a flag whose name has
// capitals is found regardless of case.
func lookup(fs *flag.FlagSet, name string) *flag.Flag {
	if f := fs.Lookup(name); f != nil {
		return f
	}
	var found *flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		if found == nil && strings.EqualFold(f.Name, name) {
			found = f
		}
	})
	return found
}

// unknownSetting describes a setting that names none of a's flags, and
// lists those it could name.
func unknownSetting(a *analysis.Analyzer, key string) error {
	var names []string
	a.Flags.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if len(names) == 0 {
		return fmt.Errorf("unknown setting %q: %s has no settings", key, a.Name)
	}
	return fmt.Errorf("unknown setting %q: the settings are %s's flags: %s", key, a.Name, strings.Join(names, ", "))
}

// flagText turns a setting's value into the text a command line would give
// its flag: a string as it is, a boolean or a number as written.
func flagText(v json.RawMessage) (string, error) {
	switch k := kind(v); k {
	case "string":
		var s string
		err := json.Unmarshal(v, &s)
		return s, err
	case "boolean", "number":
		return string(v), nil
	case "null":
		return "", errors.New("no value given")
	default:
		return "", fmt.Errorf("want a single value, not a %s", k)
	}
}

// kind names the kind of JSON value v holds: mapping, list, string,
// boolean, number or null.
func kind(v json.RawMessage) string {
	s := strings.TrimSpace(string(v))
	if s == "" {
		return "null"
	}
	switch s[0] {
	case '{':
		return "mapping"
	case '[':
		return "list"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// typeName says, in parentheses, what kind of value flag f takes: " (a
// boolean)", " (an int)", or "" when the flag does not say.
func typeName(f *flag.Flag) string {
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return " (a boolean)"
	}
	switch name, _ := flag.UnquoteUsage(f); name {
	case "", "value":
		return ""
	case "int", "uint":
		return " (an " + name + ")"
	default:
		return " (a " + name + ")"
	}
}
