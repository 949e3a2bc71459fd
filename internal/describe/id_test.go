package describe

import "testing"

// TestIDOf checks that idOf reads only the format it knows, so that ID
// falls back to the name for any other.
func TestIDOf(t *testing.T) {
	for _, c := range []struct {
		s, id string
		ok    bool
	}{
		{`Desc{fqName: "a", help: "h", constLabels: {}, variableLabels: {}}`, `"a"`, true},
		{`Desc{fqName: "a", help: "h", unit: "s", constLabels: {x="1",y="2"}, variableLabels: {v}}`, `"a""1""2"`, true},
		{`Desc{fqName: "a", help: "h, constLabels: {x=\"1\"}", constLabels: {}, variableLabels: {}}`, `"a"`, true},
		{`Desc{name: "a", constLabels: {}}`, "", false},
		{`Desc{fqName: "a", help: h, constLabels: {}}`, "", false},
		{`Desc{fqName: "a", help: "h", variableLabels: {v}, constLabels: {}}`, "", false},
		{`Desc{fqName: "a", help: "h", constLabels: {x=1}}`, "", false},
		{`Desc{fqName: "a", help: "h", constLabels: {x="1"`, "", false},
		{`Desc{fqName: "a", help: "h", constLabels: x}`, "", false},
	} {
		if id, ok := idOf(c.s); id != c.id || ok != c.ok {
			t.Errorf("idOf(%s) = %q, %t; want %q, %t", c.s, id, ok, c.id, c.ok)
		}
	}
}
