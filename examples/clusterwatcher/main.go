package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/multierr"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run is the whole command: it parses args, plays the scenario, and returns
// the exit status: 0 when the story held, 1 when it did not, 2 for bad flags.
func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return execute(ctx, cfg, prometheus.NewPedanticRegistry(), hooks{}, stdout, stderr)
}

// config is what the flags say.
type config struct {
	listen       string
	failAttempts int
	retry        time.Duration
	links        int
	verbose      bool
}

// Limits of the flags, which keep every loop of the program bounded.
const (
	maxFailAttempts = 1000
	maxRetry        = time.Minute
	maxLinks        = 100
)

const usageHead = `usage: clusterwatcher [flags]

clusterwatcher plays a multicluster service-mirror story against fake target
clusters on 127.0.0.1: links are added, one cluster fails its first connects
and is retried, a link is updated and another deleted. At each step it shows
what /metrics exposes, and checks that promscope keeps it right: no
registration errors on retry, no series left of a deleted link.

flags:
`

// parseFlags parses args. For bad flags it prints the problem and the usage
// to stderr and returns an error; for -h it prints the usage and returns
// flag.ErrHelp.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("clusterwatcher", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.listen, "listen", "", "also serve /metrics on `ADDR` (such as 127.0.0.1:9100), and keep running until interrupted")
	fs.IntVar(&cfg.failAttempts, "fail-attempts", 3, fmt.Sprintf("each flaky cluster fails its first `N` connects (0 to %d)", maxFailAttempts))
	fs.DurationVar(&cfg.retry, "retry", 50*time.Millisecond, fmt.Sprintf("wait `DURATION` between attempts (0 to %v)", maxRetry))
	fs.IntVar(&cfg.links, "links", 2, fmt.Sprintf("play the scenario with `N` links (2 to %d); every second one is flaky and deleted at the end", maxLinks))
	fs.BoolVar(&cfg.verbose, "v", false, "verbose: log every request to the clusters and show every sample")
	fs.Usage = func() {
		_, _ = fmt.Fprint(fs.Output(), usageHead)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return cfg, err // fs has printed it, with the usage
	}
	var bad []string
	if fs.NArg() > 0 {
		bad = append(bad, fmt.Sprintf("unexpected arguments: %s", strings.Join(fs.Args(), " ")))
	}
	if cfg.failAttempts < 0 || cfg.failAttempts > maxFailAttempts {
		bad = append(bad, fmt.Sprintf("-fail-attempts must be between 0 and %d, not %d", maxFailAttempts, cfg.failAttempts))
	}
	if cfg.retry < 0 || cfg.retry > maxRetry {
		bad = append(bad, fmt.Sprintf("-retry must be between 0 and %v, not %v", maxRetry, cfg.retry))
	}
	if cfg.links < 2 || cfg.links > maxLinks {
		bad = append(bad, fmt.Sprintf("-links must be between 2 and %d, not %d", maxLinks, cfg.links))
	}
	if len(bad) > 0 {
		for _, b := range bad {
			_, _ = fmt.Fprintf(stderr, "clusterwatcher: %s\n", b)
		}
		fs.Usage()
		return cfg, errors.New(strings.Join(bad, "; "))
	}
	return cfg, nil
}

// hooks are the test-only knobs of a program; the command uses the zero
// value.
type hooks struct {
	since   func(time.Time) time.Duration                  // probe latency; nil is time.Since
	pace    func(ctx context.Context, cp checkpoint) error // called at each checkpoint; the scenario waits for it
	timeout time.Duration                                  // bounds the scenario; 0 derives it from the config
}

// execute plays the scenario with the metrics in reg, serving them on
// cfg.listen if set and then until ctx is done, and shuts down cleanly. It
// returns the exit status.
func execute(ctx context.Context, cfg config, reg *prometheus.Registry, h hooks, stdout, stderr io.Writer) int {
	p, err := newProgram(cfg, reg, stdout, h)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "clusterwatcher: %v\n", err)
		return 1
	}
	if cfg.listen != "" {
		ln, err := net.Listen("tcp", cfg.listen)
		if err != nil {
			_, _ = fmt.Fprintf(stderr, "clusterwatcher: serving /metrics: %v\n", multierr.Append(err, p.shutdownError()))
			return 1
		}
		p.serveMetrics(ln)
		p.log.printf("serving /metrics on http://%s/metrics\n", ln.Addr())
	}
	story := p.runScenario(ctx)
	if story == nil && cfg.listen != "" {
		p.log.printf("the story held; still serving /metrics until interrupted (SIGINT or SIGTERM)\n")
		<-ctx.Done()
		p.log.printf("interrupted: shutting down\n")
	}
	removed, err := p.shutdown()
	if err == nil {
		p.log.printf("shutdown: removed %d %s, closed every scope; /metrics is empty\n", removed, plural(removed, "link", "links"))
	}
	if story != nil {
		_, _ = fmt.Fprintf(stderr, "clusterwatcher: the story did not hold: %v\n", story)
	}
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "clusterwatcher: shutdown: %v\n", err)
	}
	if story != nil || err != nil {
		return 1
	}
	return 0
}

// requestTimeout bounds each request to a target cluster.
const requestTimeout = 2 * time.Second

// maxAttempts is how many attempts a connect makes before giving up.
func maxAttempts(cfg config) int { return cfg.failAttempts + 3 }

// A program is the wiring: the registry it owns, the fake clusters, the
// controller, its event source and the scenario's view of what happened.
type program struct {
	cfg    config
	hooks  hooks
	reg    *prometheus.Registry
	log    *logger
	client *http.Client
	links  []*plannedLink
	ctl    *controller
	events chan linkEvent
	ctlEnd chan controllerEnd // receives run's result

	srv    *http.Server  // nil unless serveMetrics was called
	served chan struct{} // closed when srv.Serve has returned

	shutdownOnce sync.Once
	removed      int   // set by shutdownOnce
	shutdownErr  error // set by shutdownOnce

	mu         sync.Mutex
	linkStates map[string]*linkState // guarded by mu
	changed    chan struct{}         // guarded by mu; closed and replaced on every report
	problems   []error               // guarded by mu
}

type controllerEnd struct {
	removed int
	err     error
}

// newProgram starts the fake clusters and the controller, with the
// controller's vectors registered in reg.
func newProgram(cfg config, reg *prometheus.Registry, out io.Writer, h hooks) (*program, error) {
	p := &program{
		cfg:        cfg,
		hooks:      h,
		reg:        reg,
		log:        &logger{w: out, verbose: cfg.verbose},
		events:     make(chan linkEvent),
		ctlEnd:     make(chan controllerEnd, 1),
		linkStates: map[string]*linkState{},
		changed:    make(chan struct{}),
	}
	p.client = &http.Client{
		Timeout: requestTimeout,
		// A fresh connection per request: the fake clusters count
		// requests, and a transport retrying a request on a dropped
		// keep-alive connection would make them count twice.
		Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
	}
	for i := range cfg.links {
		l := &plannedLink{index: i, name: linkName(i), flaky: i%2 == 1}
		services, fail := healthyServices, 0
		if l.flaky {
			services, fail = flakyServices, cfg.failAttempts
		}
		t, err := startTarget(l.name, fail, servicesFor(i, services), p.log)
		if err != nil {
			return nil, multierr.Append(err, p.closeTargets())
		}
		l.target = t
		p.links = append(p.links, l)
	}
	ctl, err := newController(reg, controllerOptions{
		client:      p.client,
		retry:       cfg.retry,
		maxAttempts: maxAttempts(cfg),
		since:       h.since,
		notify:      p.observe,
		debugf:      p.log.debugf,
	})
	if err != nil {
		return nil, multierr.Append(err, p.closeTargets())
	}
	p.ctl = ctl
	go func() {
		removed, err := ctl.run(p.events)
		p.ctlEnd <- controllerEnd{removed, err}
	}()
	return p, nil
}

// serveMetrics serves the registry's metrics at /metrics on ln until
// shutdown.
func (p *program) serveMetrics(ln net.Listener) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(p.reg, promhttp.HandlerOpts{}))
	p.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	p.served = make(chan struct{})
	go func() {
		defer close(p.served)
		_ = p.srv.Serve(ln) // ErrServerClosed once shutdown runs
	}()
}

// shutdown stops the controller, which closes every link's slot and scope and
// then its own scope; then it stops the clusters and the metrics server, and
// checks that the registry is empty. It returns how many links were still
// there. A second call returns what the first did.
func (p *program) shutdown() (removed int, err error) {
	p.shutdownOnce.Do(func() {
		close(p.events)
		end := <-p.ctlEnd
		p.removed, p.shutdownErr = end.removed, end.err
		p.shutdownErr = multierr.Append(p.shutdownErr, p.closeTargets())
		p.client.CloseIdleConnections()
		if p.srv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			p.shutdownErr = multierr.Append(p.shutdownErr, p.srv.Shutdown(ctx))
			cancel()
			<-p.served
		}
		mfs, err := p.reg.Gather()
		p.shutdownErr = multierr.Append(p.shutdownErr, err)
		if len(mfs) > 0 {
			var left []string
			for _, mf := range mfs {
				left = append(left, mf.GetName())
			}
			p.shutdownErr = multierr.Append(p.shutdownErr, fmt.Errorf("every scope is closed, but /metrics still shows %s", strings.Join(left, ", ")))
		}
	})
	return p.removed, p.shutdownErr
}

// shutdownError shuts down and returns only the error.
func (p *program) shutdownError() error {
	_, err := p.shutdown()
	return err
}

func (p *program) closeTargets() error {
	ts := make([]*targetCluster, 0, len(p.links))
	for _, l := range p.links {
		ts = append(ts, l.target)
	}
	return closeTargets(ts)
}

// gather gathers the registry, recording a failure as a problem.
func (p *program) gather() []*dto.MetricFamily {
	mfs, err := p.reg.Gather()
	if err != nil {
		p.problem(fmt.Errorf("gathering /metrics: %w", err))
	}
	return mfs
}

// timeout bounds the scenario.
func (p *program) timeout() time.Duration {
	if p.hooks.timeout > 0 {
		return p.hooks.timeout
	}
	return scenarioTimeout(p.cfg)
}

// A logger writes the phased log, one whole line or block at a time.
type logger struct {
	mu      sync.Mutex
	w       io.Writer
	verbose bool
}

func (l *logger) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = fmt.Fprintf(l.w, format, args...)
}

// lines writes lines as one block.
func (l *logger) lines(lines []string) {
	if len(lines) == 0 {
		return
	}
	l.printf("%s\n", strings.Join(lines, "\n"))
}

// debugf writes a line only with -v.
func (l *logger) debugf(format string, args ...any) {
	if l.verbose {
		l.printf("    | "+format+"\n", args...)
	}
}
