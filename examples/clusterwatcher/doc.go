// Command clusterwatcher is a small, honest model of a multicluster
// service-mirror controller, built with promscope, that plays the story in
// which such controllers leak metrics, and shows that they no longer do.
//
// # Overview
//
// A link controller receives link events (added, updated, deleted) for
// target clusters from an in-process event source driven by a scripted
// scenario. For each link it keeps a cluster watcher in a [lifecycle.Slot].
// The watcher's constructor registers service_cache_size and
// endpoints_cache_size, GaugeFuncs reading its cache, through a scope of its
// own labelled cluster=<target>, and only then connects to the target
// cluster, with a real HTTP request. When the connect fails, the deferred
// [lifecycle.CloseOnError] closes the scope, so the retry registers the same
// names cleanly; the slot would clean up even if the constructor forgot to.
//
// Each target cluster is an HTTP server on 127.0.0.1, on an ephemeral port,
// that fails its first connects (a 503, or a connection closed without an
// answer) and then serves a JSON list of services and their endpoints.
//
// Per-link series live in vectors every link shares, as in real controllers:
// gateway_alive, gateway_probes_total{probe_successful},
// gateway_probe_latency_seconds (a histogram) and endpoint_repairs_total, all
// labelled target_cluster_name. Each link has a scope that deletes its series
// when the link is deleted ([registry.Scope.DeleteOnClose]), leaving the
// other links' series alone. The original controller's latency histogram is
// gateway_probe_latency_ms; this one observes seconds, Prometheus's base
// unit, so that promtool finds no problem with the exposition.
//
// The metrics live in a registry the program owns, never the default one,
// and are served with promhttp.
//
// # Usage
//
//	go run ./examples/clusterwatcher [flags]
//
// By default it plays the scenario with two links, east and west; west's
// cluster fails its first 3 connects, east is updated (its cluster serves one
// more service, and the link's watcher is rebuilt in its slot), and west is
// deleted. Each step prints what happened and the lines of /metrics that
// changed; the last line sums up, with the number of registration errors,
// which must be 0. The exit status is 0 when the story held, 1 (with a
// message saying why) when it did not, and 2 for bad flags.
//
// The flags are:
//
//	-listen ADDR       also serve /metrics on ADDR, and keep running until
//	                   SIGINT or SIGTERM; then close every scope and exit
//	-fail-attempts N   connects each flaky cluster fails (default 3)
//	-retry DURATION    wait between attempts (default 50ms)
//	-links N           links in the scenario (default 2); every second one
//	                   is flaky and deleted at the end
//	-v                 log every request to the clusters, show every sample
//
// # Concurrency
//
// The controller handles events in one goroutine and runs one worker
// goroutine per link, which connects and rebuilds the link's watcher. The
// workers report to the scenario synchronously, so what the scenario gathers
// at a report is the state that report describes.
package main
