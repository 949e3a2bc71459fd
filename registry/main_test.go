package registry_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Registration runs Describe in goroutines (client_golang's and ours); every
// test must end with all of them gone.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
