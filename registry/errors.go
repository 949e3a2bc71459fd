package registry

import (
	"errors"
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	// ErrClosed is returned by [Scope.Register] once the scope is closed.
	// Nothing is passed to the parent then.
	ErrClosed = errors.New("registry: scope is closed")

	// ErrNilCollector is wrapped by the error [Scope.Register] returns for a
	// nil collector.
	ErrNilCollector = errors.New("registry: nil collector")

	// ErrNotRegistered is wrapped by the [UnregisterError] that
	// [Scope.Close] reports for a collector that was no longer the scope's
	// to remove: somebody else unregistered it, or replaced it in the
	// parent with an equal collector of their own, which Close leaves
	// alone.
	ErrNotRegistered = errors.New("registry: collector is not registered by this scope")
)

// UnregisterError reports a collector that [Scope.Close] could not remove as
// its own. Close combines one per such collector with go.uber.org/multierr, so
// use [errors.As] on the combined error to get at them and [errors.Is] with
// [ErrNotRegistered] to test for the cause.
type UnregisterError struct {
	// Metrics are the fully-qualified names the collector exposed,
	// sorted.
	Metrics []string
	// Err is the cause. It wraps ErrNotRegistered, and the parent's error
	// where the parent returned one.
	Err error
}

// Error implements error.
func (e *UnregisterError) Error() string {
	return fmt.Sprintf("registry: unregister %s: %v", strings.Join(e.Metrics, ", "), e.Err)
}

// Unwrap returns the cause, so that errors.Is and errors.As see through.
func (e *UnregisterError) Unwrap() error { return e.Err }

// translate rewrites an AlreadyRegisteredError coming back from the parent so
// that it names the user's collectors, not the members that scopes register
// in their place. Every other error is returned unchanged.
func translate(err error, c prometheus.Collector, m *member) error {
	are, ok := err.(prometheus.AlreadyRegisteredError) //nolint:errorlint // client_golang returns it unwrapped, by value.
	if !ok {
		return err
	}
	if are.NewCollector == m {
		are.NewCollector = c
	}
	are.ExistingCollector = unwrapMember(are.ExistingCollector)
	if _, nested := c.(*member); !nested {
		// A user is asking, not a scope nested on this one (which needs
		// its own member back, see unwrapMember): name the user's
		// collector however deeply the scopes nest.
		for {
			m, ok := are.ExistingCollector.(*member)
			if !ok {
				break
			}
			u := m.user()
			if u == nil {
				break
			}
			are.ExistingCollector = u
		}
	}
	return are
}
