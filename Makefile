# Orders consumer: Azure Functions custom handler (Go) → Cosmos DB, idempotent.
SHELL := /bin/bash
# The Go release everything is built and tested with; the go command fetches it
# from the module proxy once (about 76 MB). The machines' own go1.26.8 has
# reachable standard-library vulnerabilities (docs/security.md), and Go before
# 1.27 can fail a -fuzztime run at its deadline with no failing input
# (golang/go#75804). `GOTOOLCHAIN=local make …` uses the installed Go instead.
export GOTOOLCHAIN ?= go1.27.3
GO    ?= go
BIN   := bin/handler
LOCALRUN := bin/localrun

.PHONY: build run serve http-demo test test-unit test-race emulator-start emulator-stop clean vet

## build: the executable host.json names (static, for the Functions host)
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o $(BIN) ./cmd/handler

## run: build, start the local Cosmos emulator (unless COSMOS_ENDPOINT is set), run the handler
##      under the Functions host emulator over the default stream (2000 orders with duplicates,
##      bursts, lost completions, mismatches, invalid messages), print the summary, stop what it
##      started; non-zero exit when the invariant fails. While it runs, the HTTP triggers answer on
##      127.0.0.1:7071 (left out if that port is taken). More: make run RUN_ARGS='-kill-handler 3 -v'
run: build
	$(GO) build -o $(LOCALRUN) ./testbed/cmd/localrun
	./testbed/scripts/run-local.sh $(RUN_ARGS)

## serve: build, start the local Cosmos emulator (unless COSMOS_ENDPOINT is set), run the handler
##        under the host emulator with its HTTP triggers on http://127.0.0.1:7071/api and the
##        queues, no stream; prints the base URL and a curl line per route; Ctrl-C stops what it
##        started. More: make serve SERVE_ARGS='-function-key dev-key -v -http-addr 127.0.0.1:7072'
serve: build
	$(GO) build -o $(LOCALRUN) ./testbed/cmd/localrun
	./testbed/scripts/run-local.sh -serve $(SERVE_ARGS)

## http-demo: every answer of the HTTP API with curl -i against the host emulator, two clients
##            (function keys partner-a, partner-b): 201, 409 in flight, the replay, 200 under a
##            new key, 409 order-id-taken, 422 reused key, 411 chunked, GET 200 and 404, each one
##            checked; starts the local Cosmos emulator unless COSMOS_ENDPOINT is set (a loopback
##            http:// one: the 409 in flight needs the proxy in front of it); docs/http-api.md
http-demo: build
	$(GO) build -o $(LOCALRUN) ./testbed/cmd/localrun
	./testbed/scripts/http-demo.sh

## test: everything CI runs (starts the emulator unless COSMOS_ENDPOINT is set)
test: vet check-infra
	./scripts/test.sh

test-race:
	$(GO) test -race -count=1 ./...

## vet: gofmt, go.mod tidy, go vet and staticcheck (pinned in scripts/staticcheck.sh), no finding allowed
vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	@$(GO) mod tidy -diff || { echo "go.mod or go.sum is not tidy: run go mod tidy"; exit 1; }
	$(GO) vet ./...
	./scripts/staticcheck.sh

emulator-start:
	./scripts/emulator.sh start

emulator-stop:
	./scripts/emulator.sh stop

clean:
	-./scripts/emulator.sh stop
	rm -rf bin .emulator

.PHONY: publish deploy check-infra

## deploy: deploy bicep/main.bicep to resource group RG as environment ENV_NAME (retries once on the
##         transient "principal not found" and on 412 "exclusive lock"), publish bin/handler with
##         401/403 back-off, wait
##         until the app runs. More template parameters: DEPLOY_ARGS='deployerPrincipalId=... hostingPlan=FlexConsumption'
deploy:
	@test -n "$(RG)" -a -n "$(ENV_NAME)" || { echo "usage: make deploy RG=<resource-group> ENV_NAME=<environment-name> [DEPLOY_ARGS='name=value ...']"; exit 2; }
	./bicep/deploy/deploy.sh "$(RG)" "$(ENV_NAME)" $(DEPLOY_ARGS)

## publish: build bin/handler for linux/amd64 and deploy it to APP (RG optional); docs/deploy.md
publish:
	@test -n "$(APP)" || { echo "usage: make publish APP=<function-app-name> [RG=<resource-group>]"; exit 2; }
	./bicep/deploy/publish.sh "$(APP)" $(RG)

## check-infra: offline Bicep parse + policy rules, function app config vs contract (own module, cgo)
check-infra:
	cd tools/bicepcheck && $(GO) test -count=1 ./...

.PHONY: local-stack local-stack-down

## local-stack: on a machine with Docker, start Azurite, the Service Bus emulator and the Cosmos
##              DB emulator (local/compose.yaml) for `func start`; docs/local-stack.md
local-stack:
	./local/stack.sh up

local-stack-down:
	./local/stack.sh down

.PHONY: chaos

## chaos: fault-injection run: at least 10,000 messages (duplicates, bursts, lost completions,
##        mismatches, invalid) through the handler under the host emulator, a loopback proxy
##        injecting 429/503/408/slow/dropped/lost-answer faults into its Cosmos requests, 5 SIGKILLs,
##        HTTP orders from two clients racing for orderIds, with kills and lost answers aimed at key
##        completions, PublishOrderEvents on the emulated change feed with its own kills and refused
##        topic sends; prints the figures (docs/evidence/chaos.md), non-zero exit on any invariant violation, and
##        keeps the handler's log, the host emulator's lines and the report in .local/logs/.
##        More: make chaos CHAOS_ARGS='-messages 20000 -kills 8 -seed 7'
chaos: build
	$(GO) build -o bin/chaos ./testbed/cmd/chaos
	./testbed/scripts/chaos.sh $(CHAOS_ARGS)

.PHONY: plant
## plant: a bug only the history check catches, planted (testbed/plants/PLANT.patch, built with
##        go build -overlay) and run: exits 0 when the run fails on the history check alone.
##        make plant PLANT=read-cache; PLANT_RUN=chaos PLANT_ARGS='-messages 2000 -seed 7' for make chaos
plant: build
	$(GO) build -o $(LOCALRUN) ./testbed/cmd/localrun
	$(GO) build -o bin/chaos ./testbed/cmd/chaos
	./testbed/scripts/plant.sh

.PHONY: soak

## soak: make chaos over SOAK_SEEDS seeds in a row (default 10), a new random seed each, SOAK_ARGS
##       passed to every run; one line per seed (messages, faults, kills, recovery after each
##       outage, wall time, load), stops at the first failing run and names its kept logs.
##       About 4 min a seed. More: make soak SOAK_SEEDS=20 SOAK_ARGS='-messages 20000'
soak: build
	$(GO) build -o bin/chaos ./testbed/cmd/chaos
	./testbed/scripts/soak.sh

.PHONY: bench fuzz vulncheck mutate flake-proof

## flake-proof: go test -race ./... 3 times in a row in two copies side by side, then with -cpu 1
##              (RUNS=3); about 40 min on 2 cores; docs/evidence/testing.md has the figures
flake-proof:
	./scripts/flake-proof.sh

## bench: measure and rewrite docs/evidence/benchmarks.md: Cosmos round trips per message; single and
##        batch invocations against a plain azcosmos loop at 0, 5 and 20 ms from Cosmos (a delay
##        proxy in front of the emulator); the HTTP API's round trips, RU and p50/p99 on each path
##        (first, replay, resend, orderId taken, GET); in-process CPU and allocations; start
##        time and memory of bin/handler. Starts an emulator on port 18095 (COSMOS_EMULATOR_PORT)
##        unless COSMOS_ENDPOINT is set; about 10 min on a busy machine.
##        More: make bench BENCH_FLAGS='-rounds 9 -latencies 0,20ms,50ms'
bench: build
	./testbed/scripts/bench.sh $(BENCH_FLAGS)

## fuzz: every fuzz target for FUZZTIME each (default 10s, what make test runs); docs/fuzzing.md
fuzz:
	./scripts/fuzz.sh $(FUZZTIME)

## mutate: mutation testing (go-gremlins, pinned) of every package of the deployed handler (orders/,
##         handler/, cosmos/, idempotency/, retrying/, internal/…, cmd/handler/), one package at a
##         time, one worker; prints each package's efficacy
##         and fails under its floor; a mutant that hangs is reported TIMED OUT. Not part of
##         make test (about an hour); docs/evidence/testing.md has the figures.
##         More: make mutate MUTATE_PACKAGES="idempotency orders"
mutate:
	./scripts/mutate.sh $(MUTATE_PACKAGES)

## vulncheck: govulncheck against an offline database built from the pinned golang.org/x/vulndb
##            module (cached in .local/); fails on reachable findings not in
##            scripts/vulncheck-accepted.txt (docs/security.md). CI runs it.
vulncheck:
	./scripts/vulncheck.sh
