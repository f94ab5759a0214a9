# Orders consumer: Azure Functions custom handler (Go) → Cosmos DB, idempotent.
SHELL := /bin/bash
GO    ?= go
BIN   := bin/handler

.PHONY: build run test test-unit test-race emulator-start emulator-stop clean vet

## build: the executable host.json names (static, for the Functions host)
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o $(BIN) ./cmd/handler

## run: start the local emulator and run the handler against it
run: build
	./infra/run-local.sh

## test: everything CI runs (starts the emulator unless COSMOS_ENDPOINT is set)
test: vet
	./infra/test.sh

test-race:
	$(GO) test -race -count=1 ./...

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet ./...

emulator-start:
	./infra/emulator.sh start

emulator-stop:
	./infra/emulator.sh stop

clean:
	-./infra/emulator.sh stop
	rm -rf bin .emulator
