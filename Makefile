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

bench:
	go test -run '^$$' -bench . -benchmem -count $(BENCH_COUNT) ./... | tee bench.txt

cover:
	go test -race -coverprofile=cover.out ./...
	go tool cover -func=cover.out | tail -n 1

fuzz:
	go test -run '^$$' -fuzz FuzzScope -fuzztime $(FUZZTIME) ./registry

tidy:
	go mod tidy
