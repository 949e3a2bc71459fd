package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"go.uber.org/multierr"
)

// A phase is a point of the scenario where the exposition is known.
type phase string

const (
	phaseHealthyUp phase = "healthy links connected"
	phaseRetrying  phase = "attempt failed"
	phaseAllUp     phase = "all links connected"
	phaseUpdated   phase = "healthy links updated"
	phaseDeleted   phase = "flaky links deleted"
)

// A checkpoint is handed to the test-only pace hook at each phase. For
// phaseRetrying, which the failing link's worker reaches after each failed
// attempt, it names the link and the attempt; the worker waits for the hook
// before it retries.
type checkpoint struct {
	phase   phase
	link    string
	attempt int
}

// linkNames name the links in order; beyond them, links are numbered.
var linkNames = [...]string{"east", "west", "north", "south"}

func linkName(i int) string {
	if i < len(linkNames) {
		return linkNames[i]
	}
	return fmt.Sprintf("cluster-%d", i+1)
}

// A plannedLink is one link of the scenario. Links alternate: the first is
// healthy, the second flaky, and so on. A healthy link connects at once and
// is updated later; a flaky link's cluster fails the first -fail-attempts
// connects, and the link is deleted at the end.
type plannedLink struct {
	index  int
	name   string
	flaky  bool
	target *targetCluster
}

// Initial service counts of the fake clusters.
const (
	healthyServices = 3
	flakyServices   = 2
)

// linkState is what the reports said about one link so far.
type linkState struct {
	connects   int                // successful connects, first and rebuilt
	lastAt     int                // the attempt of the last connect
	deleted    bool               // the controller has deleted the link
	err        error              // why the link is lost: every attempt to connect failed
	lastShown  map[string]float64 // the samples the log showed last, by name
	shownFirst bool               // the log has shown the first failed attempt's samples
}

// runScenario plays the scripted story against the controller and checks, at
// every phase, that /metrics shows what it should. It returns nil when the
// story held, or every way in which it did not.
func (p *program) runScenario(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, p.timeout())
	defer cancel()
	var healthy, flaky []*plannedLink
	for _, l := range p.links {
		if l.flaky {
			flaky = append(flaky, l)
		} else {
			healthy = append(healthy, l)
		}
	}
	if p.cfg.failAttempts > 0 {
		p.log.printf("clusterwatcher: %d links; %s %s its first %d %s; retry after %v\n",
			len(p.links), names(flaky), plural(len(flaky), "fails", "fail"),
			p.cfg.failAttempts, plural(p.cfg.failAttempts, "connect", "connects"), p.cfg.retry)
	} else {
		p.log.printf("clusterwatcher: %d links; every cluster answers at once\n", len(p.links))
	}

	steps := []func(context.Context) error{
		func(ctx context.Context) error { return p.addLinks(ctx, healthy, phaseHealthyUp) },
		func(ctx context.Context) error { return p.addLinks(ctx, flaky, phaseAllUp) },
		func(ctx context.Context) error { return p.updateLinks(ctx, healthy) },
		func(ctx context.Context) error { return p.deleteLinks(ctx, flaky, healthy) },
	}
	for _, step := range steps {
		err := step(ctx)
		if err != nil {
			p.problem(err)
		}
		if err != nil || p.problemList() != nil {
			break
		}
	}

	failures, regErrors := p.ctl.stats()
	if regErrors != 0 {
		p.problem(fmt.Errorf("%d registration errors: the retries did not register cleanly", regErrors))
	}
	err := p.problemList()
	verdict := "the story held"
	if err != nil {
		verdict = "the story did not hold"
	}
	gone := 0
	for _, l := range flaky {
		if p.state(l.name).deleted {
			gone++
		}
	}
	p.log.printf("summary: %d links, %d failed %s, %d %s deleted with all %s series, %d registration errors: %s\n",
		len(p.links), failures, plural(int(failures), "attempt", "attempts"),
		gone, plural(gone, "link", "links"), plural(gone, "its", "their"), regErrors, verdict)
	return err
}

// addLinks adds ls and waits until each is connected; flaky ones fail their
// first attempts on the way.
func (p *program) addLinks(ctx context.Context, ls []*plannedLink, done phase) error {
	p.log.printf("== %s %s added\n", plural(len(ls), "link", "links"), names(ls))
	for _, l := range ls {
		if err := p.send(ctx, linkEvent{kind: linkAdded, name: l.name, url: l.target.url()}); err != nil {
			return err
		}
	}
	if err := p.await(ctx, ls, "connect", func(s *linkState) bool { return s.connects >= 1 }); err != nil {
		return err
	}
	mfs := p.gather()
	for _, l := range ls {
		want := 1
		if l.flaky {
			want = p.cfg.failAttempts + 1
		}
		if at := p.state(l.name).lastAt; at != want {
			p.problem(fmt.Errorf("link %s connected at attempt %d, want %d", l.name, at, want))
		}
		p.checkCache(mfs, l)
		p.show(l.name, mfs)
	}
	return p.pace(ctx, checkpoint{phase: done})
}

// updateLinks makes each of ls's clusters serve one more service and sends
// the link an update, which rebuilds its watcher in its slot.
func (p *program) updateLinks(ctx context.Context, ls []*plannedLink) error {
	p.log.printf("== %s %s updated: %s one more service\n",
		plural(len(ls), "link", "links"), names(ls), plural(len(ls), "its cluster serves", "their clusters serve"))
	for _, l := range ls {
		n, _ := l.target.counts()
		l.target.addService(serviceFor(l.index, n, 1))
		if err := p.send(ctx, linkEvent{kind: linkUpdated, name: l.name, url: l.target.url()}); err != nil {
			return err
		}
	}
	if err := p.await(ctx, ls, "rebuild", func(s *linkState) bool { return s.connects >= 2 }); err != nil {
		return err
	}
	mfs := p.gather()
	for _, l := range ls {
		p.checkCache(mfs, l)
		name := sampleNameFor("endpoint_repairs_total", targetLabel, l.name)
		if v, ok := lookup(seriesOf(mfs, l.name, false), name); !ok || v != 1 {
			p.problem(fmt.Errorf("after its update, /metrics shows %s = %v (present: %t), want 1", name, v, ok))
		}
		p.show(l.name, mfs)
	}
	return p.pace(ctx, checkpoint{phase: phaseUpdated})
}

// deleteLinks deletes ls and checks that every series of theirs is gone from
// every vector, while the series of the others are exactly as before.
func (p *program) deleteLinks(ctx context.Context, ls, others []*plannedLink) error {
	p.log.printf("== %s %s deleted\n", plural(len(ls), "link", "links"), names(ls))
	before := p.gather()
	for _, l := range ls {
		if err := p.send(ctx, linkEvent{kind: linkDeleted, name: l.name}); err != nil {
			return err
		}
	}
	if err := p.await(ctx, ls, "deletion", func(s *linkState) bool { return s.deleted }); err != nil {
		return err
	}
	after := p.gather()
	for _, l := range ls {
		had, families := countSeries(before, l.name)
		if left := seriesOf(after, l.name, true); len(left) > 0 {
			p.problem(fmt.Errorf("link %s is deleted, but /metrics still shows %s", l.name, joinSeries(left)))
			continue
		}
		p.log.printf("    /metrics: no series of %s left (it had %d, in %d families)\n", l.name, had, families)
	}
	for _, l := range others {
		was, is := seriesOf(before, l.name, true), seriesOf(after, l.name, true)
		if joinSeries(was) != joinSeries(is) {
			p.problem(fmt.Errorf("deleting %s changed the series of %s: before: %s; after: %s", names(ls), l.name, joinSeries(was), joinSeries(is)))
			continue
		}
		n, _ := countSeries(after, l.name)
		p.log.printf("    /metrics: the %d series of %s are unchanged\n", n, l.name)
	}
	return p.pace(ctx, checkpoint{phase: phaseDeleted})
}

// observe is the controller's observer. It runs in the goroutine that did
// the work, so what it gathers is the state the report describes.
func (p *program) observe(r report) {
	p.mu.Lock()
	s := p.stateLocked(r.link)
	p.mu.Unlock()
	switch r.kind {
	case attemptFailed:
		next := fmt.Sprintf("retrying in %v", r.retryIn)
		if r.final {
			next = "giving up"
		}
		p.log.printf("    %-5s attempt %d failed: %v; %s\n", r.link, r.attempt, r.err, next)
		mfs := p.gather()
		left := cacheSeries(mfs, r.link)
		if len(left) > 0 {
			p.problem(fmt.Errorf("after attempt %d of %s failed, /metrics still shows %s", r.attempt, r.link, joinSeries(left)))
		}
		p.mu.Lock()
		first := !s.shownFirst
		s.shownFirst = true
		p.mu.Unlock()
		if first {
			p.show(r.link, mfs)
			if len(left) == 0 {
				p.log.printf("              (no service_cache_size or endpoints_cache_size for %s: the failed attempt's scope is closed)\n", r.link)
			}
		}
		if err := p.pace(context.Background(), checkpoint{phase: phaseRetrying, link: r.link, attempt: r.attempt}); err != nil {
			p.problem(err)
		}
	case connected:
		if r.rebuilt {
			p.log.printf("    %-5s watcher rebuilt in its slot (attempt %d): %d services, %d endpoints cached\n", r.link, r.attempt, r.services, r.endpoints)
		} else {
			p.log.printf("    %-5s attempt %d: connected: %d services, %d endpoints cached\n", r.link, r.attempt, r.services, r.endpoints)
		}
		if r.err != nil {
			p.problem(fmt.Errorf("link %s: closing its previous watcher: %w", r.link, r.err))
		}
	case deleted:
		p.log.printf("    %-5s deleted: its slot and scope are closed\n", r.link)
		if r.err != nil {
			p.problem(fmt.Errorf("deleting link %s: %w", r.link, r.err))
		}
	case ignored:
		p.problem(fmt.Errorf("the controller ignored %s event for unknown link %s", r.event, r.link))
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	switch r.kind {
	case connected:
		s.connects++
		s.lastAt = r.attempt
	case gaveUp:
		s.err = fmt.Errorf("all %d attempts to connect failed", r.attempt)
	case deleted:
		s.deleted = true
	}
	close(p.changed)
	p.changed = make(chan struct{})
}

// await waits until done holds for every link of ls, failing early if one of
// them is lost.
func (p *program) await(ctx context.Context, ls []*plannedLink, what string, done func(*linkState) bool) error {
	for {
		p.mu.Lock()
		changed := p.changed
		var waiting []string
		var err error
		for _, l := range ls {
			s := p.stateLocked(l.name)
			if s.err != nil {
				err = multierr.Append(err, fmt.Errorf("link %s: %w", l.name, s.err))
			} else if !done(s) {
				waiting = append(waiting, l.name)
			}
		}
		p.mu.Unlock()
		switch {
		case err != nil:
			return err
		case len(waiting) == 0:
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("waiting for the %s of %s: %w", what, strings.Join(waiting, ", "), context.Cause(ctx))
		}
	}
}

// send hands ev to the controller.
func (p *program) send(ctx context.Context, ev linkEvent) error {
	select {
	case p.events <- ev:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("sending link %s %s: %w", ev.name, ev.kind, context.Cause(ctx))
	}
}

// pace calls the test-only pace hook, if any.
func (p *program) pace(ctx context.Context, cp checkpoint) error {
	if p.hooks.pace == nil {
		return nil
	}
	if err := p.hooks.pace(ctx, cp); err != nil {
		return fmt.Errorf("pace at %s: %w", cp.phase, err)
	}
	return nil
}

// checkCache checks that the watcher's gauges show what l's cluster serves.
func (p *program) checkCache(mfs []*dto.MetricFamily, l *plannedLink) {
	services, endpoints := l.target.counts()
	ss := seriesOf(mfs, l.name, false)
	for _, want := range []struct {
		name  string
		value int
	}{
		{"service_cache_size", services},
		{"endpoints_cache_size", endpoints},
	} {
		name := sampleNameFor(want.name, "cluster", l.name)
		if v, ok := lookup(ss, name); !ok || v != float64(want.value) {
			p.problem(fmt.Errorf("/metrics shows %s = %v (present: %t), want %d", name, v, ok, want.value))
		}
	}
}

// show prints the samples of target that are new or changed since the last
// time, or all of them with -v.
func (p *program) show(target string, mfs []*dto.MetricFamily) {
	ss := seriesOf(mfs, target, p.cfg.verbose)
	p.mu.Lock()
	s := p.stateLocked(target)
	var lines []string
	for _, x := range ss {
		if v, ok := s.lastShown[x.name]; !ok || v != x.value || p.cfg.verbose {
			lines = append(lines, x.String())
		}
	}
	s.lastShown = make(map[string]float64, len(ss))
	for _, x := range ss {
		s.lastShown[x.name] = x.value
	}
	p.mu.Unlock()
	for i, line := range lines {
		lead := "              "
		if i == 0 {
			lead = "    /metrics: "
		}
		lines[i] = lead + line
	}
	p.log.lines(lines)
}

// problem records a way in which the story did not hold.
func (p *program) problem(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.problems = append(p.problems, err)
}

// problemList returns the problems so far, combined.
func (p *program) problemList() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return multierr.Combine(p.problems...)
}

// state returns a copy of what is known about link name.
func (p *program) state(name string) linkState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return *p.stateLocked(name)
}

// stateLocked returns the state of link name, creating it. Callers hold p.mu.
func (p *program) stateLocked(name string) *linkState {
	s := p.linkStates[name]
	if s == nil {
		s = &linkState{}
		p.linkStates[name] = s
	}
	return s
}

// cacheSeries returns the watcher gauges of target in mfs.
func cacheSeries(mfs []*dto.MetricFamily, target string) []series {
	var out []series
	for _, x := range seriesOf(mfs, target, false) {
		if strings.HasPrefix(x.name, "service_cache_size{") || strings.HasPrefix(x.name, "endpoints_cache_size{") {
			out = append(out, x)
		}
	}
	return out
}

// countSeries counts the series of target in mfs (a histogram is one
// series), and the families they are in.
func countSeries(mfs []*dto.MetricFamily, target string) (series, families int) {
	for _, mf := range mfs {
		n := 0
		for _, m := range mf.GetMetric() {
			if belongsTo(m, target) {
				n++
			}
		}
		series += n
		if n > 0 {
			families++
		}
	}
	return series, families
}

// sampleNameFor formats name{label="value"}.
func sampleNameFor(name, label, value string) string {
	return fmt.Sprintf("%s{%s=%q}", name, label, value)
}

func joinSeries(ss []series) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = s.String()
	}
	return strings.Join(parts, ", ")
}

func names(ls []*plannedLink) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = l.name
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// scenarioTimeout bounds the whole scenario: every attempt of every link
// waiting its retry and its request timeout in turn, and a margin.
func scenarioTimeout(cfg config) time.Duration {
	perAttempt := cfg.retry + 2*requestTimeout
	return 30*time.Second + time.Duration(cfg.links*maxAttempts(cfg))*perAttempt
}
