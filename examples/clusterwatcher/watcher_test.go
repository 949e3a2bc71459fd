package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/registry/registrytest"
)

func newTestClient() *http.Client {
	return &http.Client{Timeout: requestTimeout, Transport: &http.Transport{DisableKeepAlives: true}}
}

func startTestTarget(t *testing.T, failFirst int) *targetCluster {
	t.Helper()
	target, err := startTarget("west", failFirst, servicesFor(1, 2), &logger{w: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = target.Close() })
	return target
}

func TestTargetFailsItsFirstAttemptsThenServesItsServices(t *testing.T) {
	target := startTestTarget(t, 3)
	client := newTestClient()
	tests := []struct {
		give      int // the attempt
		wantErr   string
		wantReady bool
	}{
		{give: 1, wantErr: "503 Service Unavailable"},
		{give: 2, wantErr: "EOF"},
		{give: 3, wantErr: "503 Service Unavailable"},
		{give: 4, wantReady: true},
		{give: 5, wantReady: true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("attempt %d", tt.give), func(t *testing.T) {
			list, err := fetchServices(t.Context(), client, target.url())
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("fetchServices: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.HasSuffix(err.Error(), tt.wantErr)):
				t.Fatalf("fetchServices error = %v, want one ending in %q", err, tt.wantErr)
			case tt.wantErr == "":
				got, _ := json.Marshal(list)
				want := `{"services":[{"name":"web","endpoints":["10.2.0.1:8080","10.2.0.2:8080"]},{"name":"api","endpoints":["10.2.1.1:8080","10.2.1.2:8080"]}]}`
				if string(got) != want {
					t.Errorf("services = %s, want %s", got, want)
				}
			}
			ok, _ := probeGateway(t.Context(), client, target.url(), fixedLatency)
			if ok != tt.wantReady {
				t.Errorf("gateway ready = %t, want %t", ok, tt.wantReady)
			}
		})
	}
}

func TestClusterWatcherIsRecycleSafe(t *testing.T) {
	const rounds, fails = 10, 5
	target := startTestTarget(t, fails)
	client := newTestClient()
	var failed, built int
	registrytest.VerifyRecycle(t, rounds, func(reg prometheus.Registerer) (*clusterWatcher, error) {
		w, err := newClusterWatcher(t.Context(), reg, "west", target.url(), client)
		if err != nil {
			failed++
			if isRegistrationError(err) {
				t.Errorf("round %d: a registration error: %v", failed+built, err)
			}
			return nil, err
		}
		built++
		if services, endpoints := w.counts(); services != 2 || endpoints != 4 {
			t.Errorf("the watcher caches %d services and %d endpoints, want 2 and 4", services, endpoints)
		}
		return w, nil
	})
	if failed != fails || built != rounds-fails {
		t.Errorf("%d builds failed and %d succeeded, want %d and %d", failed, built, fails, rounds-fails)
	}
}

func TestIsRegistrationError(t *testing.T) {
	are := prometheus.AlreadyRegisteredError{}
	tests := []struct {
		name string
		give error
		want bool
	}{
		{"a wrapped errRegistration", fmt.Errorf("%w: %w", errRegistration, errors.New("inconsistent help")), true},
		{"an AlreadyRegisteredError", are, true},
		{"an AlreadyRegisteredError combined with others", errors.Join(errors.New("close"), fmt.Errorf("x: %w", are)), true},
		{"a connect error", errors.New("connect to 127.0.0.1:1: EOF"), false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is "+map[bool]string{true: "one", false: "not one"}[tt.want], func(t *testing.T) {
			if got := isRegistrationError(tt.give); got != tt.want {
				t.Errorf("isRegistrationError(%v) = %t, want %t", tt.give, got, tt.want)
			}
		})
	}
}
