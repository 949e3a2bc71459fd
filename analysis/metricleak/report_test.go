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
