# Targets for local work; .ci/run runs the same checks on a clean machine.
GOLANGCI_LINT ?= go run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0
# Go 1.27's gofmt: the analyzer's testdata holds Go 1.27 syntax.
GOFMT ?= $(shell GOTOOLCHAIN=go1.27.3 go env GOROOT)/bin/gofmt
BENCH_COUNT ?= 8
BENCHSTAT ?= go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
FUZZTIME ?= 60s

.PHONY: all test lint bench benchstat cover fuzz tidy

all: lint test

test:
	go test -race ./...
	cd analysis && go test -race ./...

lint:
	test -z "$$($(GOFMT) -l .)" || ($(GOFMT) -l . && exit 1)
	go vet ./...
	go mod tidy -diff
	$(GOLANGCI_LINT) run ./...
	cd analysis && go vet ./... && go mod tidy -diff && $(GOLANGCI_LINT) run ./...

# bench runs every benchmark once per round, BENCH_COUNT rounds, so that noise
# on a shared machine falls on the raw and scope variants alike; then the
# 100,000-cycle memory soak. benchstat then puts the variants side by side.
bench:
	rm -f bench.txt
	for i in $$(seq $(BENCH_COUNT)); do \
		go test -run '^$$' -bench . -benchmem -benchtime 500ms -count 1 ./... | tee -a bench.txt; \
	done
	! grep -E '^(FAIL|panic:)' bench.txt
	go test -run 'Soak$$' -v ./registry -soak

# benchstat reads bench.txt: each raw baseline beside its scope variant; a
# component's scope nested in a program scope beside one on the registry,
# and one made through a wrapper of the program scope beside a Child; with
# and without leak reports; Close per collector, and Len and Unregister per
# collector of one metric name, Unregister of unchecked, value or unowned
# collectors, and DeleteOnClose on n vectors, at n=100 beside n=10000; a
# colliding MustRegister in a tree of n registrations beside raw; a labelled
# scrape of one collector of n metrics beside raw, at n=100 and n=10000; the
# Close of a DeleteOnClose that finds nothing in a vector of n series beside
# raw DeletePartialMatch; a registry of 10,000 scopes; a registry's Gather
# after 100,000 recycled unchecked collectors.
benchstat:
	$(BENCHSTAT) -filter '-.name:/^(CloseScaling|RegisterCloseNested|RegisterCloseWrapped|RegisterCloseLeakReport|GatherScopes|GatherAfterUncheckedRecycles|SameNameScaling|GatherManyDescs|DeleteNone|UnregisterScaling|CollisionScaling|DeleteOnCloseScaling)$$/' -col /impl bench.txt
	$(BENCHSTAT) -filter '.name:RegisterCloseNested' -col /impl bench.txt
	$(BENCHSTAT) -filter '.name:RegisterCloseWrapped' -col /impl bench.txt
	$(BENCHSTAT) -filter '.name:RegisterCloseLeakReport' -col /impl bench.txt
	$(BENCHSTAT) -filter '.name:CloseScaling' -row /scope -col /n bench.txt
	$(BENCHSTAT) -filter '.name:SameNameScaling' -row /op -col /n bench.txt
	$(BENCHSTAT) -filter '.name:UnregisterScaling' -row /op -col /n bench.txt
	$(BENCHSTAT) -filter '.name:DeleteOnCloseScaling' -col /n bench.txt
	$(BENCHSTAT) -filter '.name:CollisionScaling' -row /n -col /impl bench.txt
	$(BENCHSTAT) -filter '.name:GatherScopes' -row /shape -col /impl bench.txt
	$(BENCHSTAT) -filter '.name:GatherManyDescs' -row /n -col /impl bench.txt
	$(BENCHSTAT) -filter '.name:DeleteNone' -row /n -col /impl bench.txt
	$(BENCHSTAT) -filter '.name:GatherAfterUncheckedRecycles' -col /shape bench.txt

cover:
	go test -race -coverprofile=cover.out ./...
	go tool cover -func=cover.out | tail -n 1

fuzz:
	go test -run '^$$' -fuzz FuzzScope -fuzztime $(FUZZTIME) -fuzzminimizetime 200x ./registry

tidy:
	go mod tidy
