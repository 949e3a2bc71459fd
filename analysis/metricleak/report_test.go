package metricleak

import (
	"go/types"
	"testing"

	"golang.org/x/tools/go/analysis"
)

// TestDisplaySite checks how a message names where metrics were
// registered: a file of the package checked by its name, one of the same
// module by its path in the module, others by their package's import path.
// The testdata is a GOPATH tree, which has no module, so the module case is
// checked here.
func TestDisplaySite(t *testing.T) {
	c := &checker{pass: &analysis.Pass{
		Pkg:    types.NewPackage("example.com/shop/cart", "cart"),
		Module: &analysis.Module{Path: "example.com/shop"},
	}}
	for _, tt := range []struct {
		give string
		want string
	}{
		{"example.com/shop/cart/cart.go:12", "cart.go:12"},
		{"example.com/shop/cart/internal/db/db.go:3", "cart/internal/db/db.go:3"},
		{"example.com/shop/kube/api.go:31", "kube/api.go:31"},
		{"github.com/org/kube/api.go:31", "github.com/org/kube/api.go:31"},
		{"example.com/shopping/api.go:31", "example.com/shopping/api.go:31"},
	} {
		if got := c.displaySite(tt.give); got != tt.want {
			t.Errorf("displaySite(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
	c.pass.Module = nil
	if got, want := c.displaySite("example.com/shop/kube/api.go:31"), "example.com/shop/kube/api.go:31"; got != want {
		t.Errorf("without a module, displaySite = %q, want %q", got, want)
	}
}

// TestNameList checks how a message lists the metrics it is about: the
// first five names, how many more there are, and, when some have no name
// the analyzer can read, that there are others.
func TestNameList(t *testing.T) {
	seven := []string{"a", "b", "c", "d", "e", "f", "g"}
	for _, tt := range []struct {
		names   []string
		unnamed bool
		want    string
	}{
		{nil, false, "the metrics"},
		{nil, true, "the metrics"},
		{[]string{"a"}, false, "a"},
		{[]string{"a"}, true, "a and other metrics"},
		{[]string{"a", "b", "c"}, false, "a, b and c"},
		{[]string{"a", "b", "c"}, true, "a, b, c and other metrics"},
		{seven, false, "a, b, c, d, e and 2 more"},
		{seven, true, "a, b, c, d, e and 2 more, and other metrics"},
	} {
		if got := nameList(tt.names, tt.unnamed); got != tt.want {
			t.Errorf("nameList(%q, %v) = %q, want %q", tt.names, tt.unnamed, got, tt.want)
		}
	}
}
