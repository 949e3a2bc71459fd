# Targets for local work; .ci/run runs the same checks on a clean machine.
GOLANGCI_LINT ?= go run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0
BENCH_COUNT ?= 10
FUZZTIME ?= 60s

.PHONY: all test lint bench cover fuzz tidy

all: lint test

test:
	go test -race ./...

lint:
	test -z "$$(gofmt -l .)" || (gofmt -l . && exit 1)
	go vet ./...
	go mod tidy -diff
	$(GOLANGCI_LINT) run ./...

# bench runs every benchmark once per round, BENCH_COUNT rounds, so that noise
# on a shared machine falls on the raw and scope variants alike; then the
# 100,000-cycle memory soak. BENCHMARKS.md shows how to read bench.txt with
# benchstat.
bench:
	rm -f bench.txt
	for i in $$(seq $(BENCH_COUNT)); do \
		go test -run '^$$' -bench . -benchmem -benchtime 500ms -count 1 ./... | tee -a bench.txt; \
	done
	! grep -E '^(FAIL|panic:)' bench.txt
	go test -run '^TestFailedConstructorSoak$$' -v ./registry -soak

cover:
	go test -race -coverprofile=cover.out ./...
	go tool cover -func=cover.out | tail -n 1

fuzz:
	go test -run '^$$' -fuzz FuzzScope -fuzztime $(FUZZTIME) ./registry

tidy:
	go mod tidy
