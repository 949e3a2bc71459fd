package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/multierr"

	"github.com/promscope/promscope/lifecycle"
	"github.com/promscope/promscope/registry"
)

// An eventKind says what happened to a link.
type eventKind int

const (
	linkAdded eventKind = iota + 1
	linkUpdated
	linkDeleted
)

func (k eventKind) String() string {
	switch k {
	case linkAdded:
		return "added"
	case linkUpdated:
		return "updated"
	case linkDeleted:
		return "deleted"
	}
	return fmt.Sprintf("eventKind(%d)", int(k))
}

// A linkEvent is what the event source tells the controller: a link to a
// target cluster was added, updated or deleted. In a real controller it would
// come from an informer on Link resources.
type linkEvent struct {
	kind eventKind
	name string // the target cluster's name
	url  string // the base URL of its API; unused for linkDeleted
}

// A reportKind says what a report is about.
type reportKind int

const (
	attemptFailed reportKind = iota + 1 // a watcher could not be built
	connected                           // a watcher was built and connected
	gaveUp                              // every attempt failed
	deleted                             // a link and all its series are gone
	ignored                             // an event named no known link
)

// A report is what the controller tells its observer. Reports are sent
// synchronously, from the goroutine that did the work, before it goes on: an
// observer that looks at the registry sees the state the report describes.
type report struct {
	kind      reportKind
	link      string
	event     eventKind     // for ignored
	attempt   int           // for attemptFailed, connected and gaveUp
	rebuilt   bool          // for connected: after an update, not the first connect
	services  int           // for connected: what the cache holds
	endpoints int           // for connected
	retryIn   time.Duration // for attemptFailed: the wait before the next attempt
	final     bool          // for attemptFailed: there is no next attempt
	err       error         // why the attempt failed; for connected and deleted, a failed cleanup
}

// controllerOptions configure a controller.
type controllerOptions struct {
	client      *http.Client
	retry       time.Duration                    // wait between attempts
	maxAttempts int                              // attempts per connect before giving up
	since       func(time.Time) time.Duration    // measures probe latency
	notify      func(report)                     // the observer; must not block for long
	debugf      func(format string, args ...any) // verbose log
}

// A controller keeps one cluster watcher per link. Each link has a scope of
// its own, a child of the controller's, which deletes the link's series in
// the shared vectors when it closes, and a lifecycle.Slot holding the link's
// current watcher.
type controller struct {
	opts    controllerOptions
	scope   *registry.Scope // owns the shared vectors and every link's scope
	metrics *linkMetrics

	failures  atomic.Int64 // failed attempts, all links together
	regErrors atomic.Int64 // failed attempts that failed to register a metric
}

// A link is the controller's state for one target cluster.
type link struct {
	name    string
	scope   *registry.Scope
	series  *linkSeries
	slot    *lifecycle.Slot[*clusterWatcher]
	updates chan string // the new base URL; buffered, latest wins
	cancel  context.CancelFunc
	done    chan struct{} // closed when the link's worker has returned
}

// newController registers the shared vectors with reg through a scope of its
// own, which closes again if registration fails.
func newController(reg prometheus.Registerer, opts controllerOptions) (_ *controller, err error) {
	scope := registry.NewScope(reg)
	defer lifecycle.CloseOnError(&err, scope)
	m, err := newLinkMetrics(scope)
	if err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	if opts.since == nil {
		opts.since = time.Since
	}
	if opts.debugf == nil {
		opts.debugf = func(string, ...any) {}
	}
	return &controller{opts: opts, scope: scope, metrics: m}, nil
}

// run handles events until the channel is closed, then removes every link
// still there, newest first, and closes the controller's scope. It returns
// how many links it removed then, and every cleanup error.
func (c *controller) run(events <-chan linkEvent) (removed int, err error) {
	links := map[string]*link{}
	var order []*link
	for ev := range events {
		l := links[ev.name]
		switch {
		case ev.kind == linkAdded && l == nil:
			l = c.addLink(ev.name, ev.url)
			links[ev.name] = l
			order = append(order, l)
		case ev.kind == linkAdded, ev.kind == linkUpdated && l != nil:
			// An add for a known link is an update, as an informer's
			// resync would deliver it.
			l.update(ev.url)
		case ev.kind == linkDeleted && l != nil:
			delete(links, ev.name)
			order = slices.DeleteFunc(order, func(o *link) bool { return o == l })
			c.opts.notify(report{kind: deleted, link: ev.name, err: c.removeLink(l)})
		default:
			c.opts.notify(report{kind: ignored, link: ev.name, event: ev.kind})
		}
	}
	for _, l := range slices.Backward(order) {
		err = multierr.Append(err, c.removeLink(l))
		removed++
	}
	return removed, multierr.Append(err, c.scope.Close())
}

// addLink creates the link's scope and series and starts its worker.
func (c *controller) addLink(name, base string) *link {
	scope := c.scope.Child()
	ctx, cancel := context.WithCancel(context.Background())
	l := &link{
		name:    name,
		scope:   scope,
		series:  c.metrics.forLink(scope, name),
		slot:    lifecycle.NewSlot[*clusterWatcher](scope),
		updates: make(chan string, 1),
		cancel:  cancel,
		done:    make(chan struct{}),
	}
	go c.work(ctx, l, base)
	return l
}

// update hands the worker a new base URL, replacing one not yet taken.
func (l *link) update(base string) {
	select {
	case <-l.updates:
	default:
	}
	l.updates <- base
}

// removeLink stops the worker, then closes the slot (the watcher and its
// gauges) and the link's scope (the link's series in the shared vectors).
func (c *controller) removeLink(l *link) error {
	l.cancel()
	<-l.done
	return multierr.Combine(l.slot.Close(), l.scope.Close())
}

// work connects the link, and rebuilds its watcher on every update, until the
// link is removed or every attempt of a connect fails; a link that gave up
// stays down, with its slot empty, until it is deleted.
func (c *controller) work(ctx context.Context, l *link, base string) {
	defer close(l.done)
	for rebuild := false; ; rebuild = true {
		if !c.connect(ctx, l, base, rebuild) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case base = <-l.updates:
		}
	}
}

// connect builds the link's watcher in its slot, retrying failed attempts,
// and probes the gateway after each attempt. It reports every attempt, and
// returns whether the watcher is up.
func (c *controller) connect(ctx context.Context, l *link, base string, rebuild bool) bool {
	for attempt := 1; attempt <= c.opts.maxAttempts; attempt++ {
		c.opts.debugf("link %s: attempt %d: building the watcher", l.name, attempt)
		w, err := l.slot.Replace(func(scope *registry.Scope) (*clusterWatcher, error) {
			return newClusterWatcher(ctx, scope, l.name, base, c.opts.client)
		})
		if ctx.Err() != nil {
			return false // removed while connecting
		}
		l.series.probed(probeGateway(ctx, c.opts.client, base, c.opts.since))
		if w != nil {
			// A non-nil err here is the previous watcher's failed Close.
			if rebuild {
				l.series.repairs.Inc()
			}
			services, endpoints := w.counts()
			c.opts.notify(report{
				kind: connected, link: l.name, attempt: attempt, rebuilt: rebuild,
				services: services, endpoints: endpoints, err: err,
			})
			return true
		}
		c.failures.Add(1)
		if isRegistrationError(err) {
			c.regErrors.Add(1)
		}
		final := attempt == c.opts.maxAttempts
		c.opts.notify(report{
			kind: attemptFailed, link: l.name, attempt: attempt,
			retryIn: c.opts.retry, final: final, err: err,
		})
		if final {
			break
		}
		timer := time.NewTimer(c.opts.retry)
		select {
		case <-ctx.Done():
			timer.Stop()
			return false
		case <-timer.C:
		}
	}
	c.opts.notify(report{kind: gaveUp, link: l.name, attempt: c.opts.maxAttempts})
	return false
}

// stats returns the failed attempts and registration errors so far.
func (c *controller) stats() (failures, registrationErrors int64) {
	return c.failures.Load(), c.regErrors.Load()
}
