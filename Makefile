# hookinbox build, test and local-stack entry points.
#
# `sam build` runs `make build-<LogicalId>` (Metadata: BuildMethod: makefile)
# with ARTIFACTS_DIR set; run by hand, each function lands in
# bin/<LogicalId>/bootstrap. GOOS/GOARCH default to Lambda's linux/arm64;
# override them for a host build: make build-ReceiverFunction GOOS= GOARCH=
# (empty means the host's).

GOOS   ?= linux
GOARCH ?= arm64

# name is the function's logical ID, taken from the target build-<LogicalId>.
name = $(patsubst build-%,%,$@)
ARTIFACTS_DIR ?= $(CURDIR)/bin/$(name)

# Every AWS::Serverless::Function in template.yaml needs a build-<LogicalId>
# target below (internal/local/deploytest/template_test.go checks it).
FUNCTIONS := ReceiverFunction ProcessorFunction DlqReplayFunction ReconcilerFunction StripeEventBridgeFunction

pkg_ReceiverFunction   := ./functions/receiver
pkg_ProcessorFunction  := ./functions/processor
pkg_DlqReplayFunction  := ./functions/dlq-replay
pkg_ReconcilerFunction := ./functions/reconciler
pkg_StripeEventBridgeFunction := ./functions/stripe-eventbridge

# gobuild builds a bootstrap into $(ARTIFACTS_DIR) as `sam build` wants it.
gobuild = CGO_ENABLED=0 GOOS=$(GOOS) GOARCH=$(GOARCH) go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap

build-ReceiverFunction build-ProcessorFunction build-DlqReplayFunction build-ReconcilerFunction build-StripeEventBridgeFunction:
	$(gobuild) $(pkg_$(name))

# build-floor builds the floor program's bootstrap as the functions are built
# (performance work only: make sizes, hookinbox load); no template function
# deploys it.
build-floor:
	$(gobuild) ./cmd/floor

.DEFAULT_GOAL := test
.PHONY: build sizes test test-adopt test-moto test-iam iam-check test-examples vet lint-template chromium fuzz chaos faults bench dev clean $(FUNCTIONS:%=build-%) build-floor

# build builds every function into bin/<LogicalId>/bootstrap. Each target
# gets its own ARTIFACTS_DIR unless one is given.
build: $(FUNCTIONS:%=build-%)

# sizes builds every function as `sam build` does (linux/arm64) and prints
# its bootstrap's size and the packages it links (reported, not gated).
sizes: build build-floor
	@printf '%-20s %-24s %12s %9s\n' function package bytes packages
	@$(foreach f,$(FUNCTIONS),printf '%-20s %-24s %12s %9s\n' $(f) $(pkg_$(f)) \
		"$$(wc -c < bin/$(f)/bootstrap)" "$$(go list -deps $(pkg_$(f)) | wc -l)";)
	@printf '%-20s %-24s %12s %9s   (the floor: PutItem + SendMessage only)\n' floor ./cmd/floor \
		"$$(wc -c < bin/floor/bootstrap)" "$$(go list -deps ./cmd/floor | wc -l)"

# The emulators (dynalite, local-aws-sqs) are installed from the lock file,
# again only when the lock file is newer than node_modules.
local/node_modules: local/package-lock.json
	@echo "Installing the emulators (dynalite, local-aws-sqs) from local/package-lock.json: npm ci --prefix local"
	npm ci --prefix local --no-audit --no-fund
	@touch $@

# test is THE test command (README, .ci/run): the static checks, then every
# test, integration tests included; they start the emulators themselves.
# Among them, internal/local/adopttest runs docs/adopting.md's commands as
# another user in a fresh module, on the last commit (see test-adopt).
# Many tests wait on emulators and backoffs, so three test binaries run at
# once on two cores; the moto family and the example module run side by side.
test: vet lint-template local/node_modules chromium
	rm -rf $(IAM_RECORD)
	HOOKINBOX_IAM_RECORD=$(IAM_RECORD)/dynalite go test -count=1 -p 3 -timeout 8m ./...
	$(MAKE) --no-print-directory -j2 --output-sync=target test-moto test-examples MOTO_SKIP='$(MOTO_SKIP_IN_TEST)' HOOKINBOX_IAM_RECORD=$(IAM_RECORD)/moto
	$(MAKE) --no-print-directory iam-check

# chromium: the console's browser test (cli's TestConsoleInABrowser)
# drives Debian's chromium, headless and offline. make test installs it
# when it is missing, as root with apt-get (a fresh CI machine); otherwise
# it says how. HOOKINBOX_CHROMIUM names another Chromium or Chrome.
chromium:
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || [ -n "$$HOOKINBOX_CHROMIUM" ] || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "Installing chromium for the console's browser test: apt-get install -y chromium"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else \
	    echo "chromium is not installed: the console's browser test needs it (Debian: sudo apt-get install chromium; or set HOOKINBOX_CHROMIUM to a Chromium or Chrome binary)"; \
	    exit 1; \
	  fi; }

# test-iam checks IAM as deployed, alone: the tests that run the
# functions record every AWS request each makes (on both emulator
# families, through a recording proxy: internal/local/iamcheck), then
# iam-check checks them against each function's role in the SAM-translated
# template.yaml, both ways: every request allowed, every grant used (or
# explained in the function's Metadata UnexercisedGrants), and the check
# fails without any one granted action. make test records its whole run.
IAM_RECORD ?= $(CURDIR)/bin/iam-record
IAM_PKGS := ./internal/local/pipelinetest/ ./internal/processor/ ./internal/replay/ ./internal/reconcile/ ./internal/lambdafn/ ./cli/
IAM_MOTO_PKGS := ./internal/local/pipelinetest/ ./internal/processor/
test-iam: local/node_modules
	rm -rf $(IAM_RECORD)
	HOOKINBOX_IAM_RECORD=$(IAM_RECORD)/dynalite go test -count=1 -timeout 8m -skip '$(MOTO_SKIP_IN_TEST)' $(IAM_PKGS)
	@command -v moto_server >/dev/null || { echo "moto_server is not installed: pip install 'moto[server]'"; exit 1; }
	HOOKINBOX_IAM_RECORD=$(IAM_RECORD)/moto HOOKINBOX_EMULATORS=moto go test -count=1 -timeout 8m -skip '$(MOTO_SKIP_IN_TEST)' $(IAM_MOTO_PKGS)
	$(MAKE) --no-print-directory iam-check

# iam-check checks the requests recorded in $(IAM_RECORD).
iam-check:
	HOOKINBOX_IAM_CHECK=$(IAM_RECORD) go test -count=1 -run '^TestRecordedRequests' ./internal/local/iamcheck/

# test-examples builds and tests examples/custom-business, a module of its
# own that imports only hookinbox's public packages (the adoption path):
# gofmt, vet, its unit, template and pipeline tests, cfn-lint of its template.
test-examples: local/node_modules
	@unformatted="$$(gofmt -l examples)"; \
	if [ -n "$$unformatted" ]; then echo "gofmt -l reports:"; echo "$$unformatted"; exit 1; fi
	cd examples/custom-business && go vet ./... && env -u HOOKINBOX_IAM_RECORD go test -count=1 ./...
	cfn-lint --include-checks I -- examples/custom-business/template.yaml

# test-adopt runs the adoption test alone (make test runs it too):
# docs/adopting.md's commands, sections 1 to 4, in a fresh module outside
# the repository, as a user who is not root (nobody, when run as root),
# with hookinbox in a read-only module cache served from this checkout's
# committed tree. Commit first: it serves HEAD. That user's build cache is
# a hard-linked copy of yours; hookinbox's dependencies still compile once
# more, under the new module cache's paths.
test-adopt:
	go test -count=1 -v -timeout 20m ./internal/local/adopttest/

# test-moto runs the inbox and effects conformance suites, the queue,
# shop and pipeline tests on the second emulator family, moto_server
# (HOOKINBOX_EMULATORS=moto; pip install "moto[server]", CI machines have
# it). Tests that moto cannot show skip themselves, naming the quirk
# (devstacktest.SkipOnMoto; docs/reliability.md). make test leaves out the
# 200-checkout pipeline tests and the GoPay flood measurement, which take
# about a minute each on moto; make test-moto runs them too.
MOTO_PKGS := ./internal/inbox/ ./effects/ ./internal/queue/ ./internal/shop/ ./internal/processor/ ./internal/local/pipelinetest/
MOTO_SKIP_IN_TEST := TestPipeline200CheckoutsDeliveredTwiceShuffled|TestPipeline200CheckoutsEveryMessageDuplicated|TestGoPayFloodDoesNotHoldUpOtherProviders
MOTO_SKIP ?=
test-moto:
	@command -v moto_server >/dev/null || { echo "moto_server is not installed: pip install 'moto[server]' (make test runs both emulator families; CI machines have it)"; exit 1; }
	HOOKINBOX_EMULATORS=moto go test -count=1 -timeout 5m $(if $(MOTO_SKIP),-skip '$(MOTO_SKIP)') $(MOTO_PKGS)

# vet: gofmt, go vet and staticcheck (pinned in go.mod, run with go tool).
vet:
	@unformatted="$$(gofmt -l $$(go list -f '{{.Dir}}' ./...))"; \
	if [ -n "$$unformatted" ]; then echo "gofmt -l reports:"; echo "$$unformatted"; exit 1; fi
	go vet ./...
	go tool staticcheck ./...

# lint-template: cfn-lint (pip install cfn-lint; CI machines have it) on
# template.yaml, informational checks included, zero findings; a finding
# that is right to keep is justified inline in the template's Metadata
# (cfn-lint: config: ignore_checks) next to the resource.
lint-template:
	@command -v cfn-lint >/dev/null || { echo "cfn-lint is not installed: pip install cfn-lint (make test needs it; CI machines have it)"; exit 1; }
	cfn-lint --include-checks I -- template.yaml

# fuzz runs every fuzz target (func Fuzz... in a _test.go file) for
# FUZZTIME each, one after the other. make test runs only their seed
# corpora (every go test does), which is deterministic; a finding is written
# to <package>/testdata/fuzz/<Fuzz...>/ by go test: fix it and commit the
# file as a regression case.
FUZZTIME ?= 30s
fuzz:
	@set -e; for dir in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
	  for fn in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$dir/*_test.go); do \
	    echo "go test -run '^$$' -fuzz '^$$fn\$$' -fuzztime $(FUZZTIME) $$dir"; \
	    go test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) $$dir; \
	  done; \
	done

# chaos is the duplicate-proof test on the committed corpus: 1,000 events
# (testdata/chaos/events.jsonl, made by `hookinbox chaos --generate 1000
# --seed 20261130`), each delivered twice in shuffled order by 16 senders,
# compared with one in-order delivery. make test runs 40 of them
# (TestChaosSmallCorpusMatchesTheReference). CHAOS_ARGS adds flags, e.g.
# CHAOS_ARGS='--delay-jitter 2s --seed 7'.
CHAOS_EVENTS ?= testdata/chaos/events.jsonl
chaos: local/node_modules
	go build -o bin/hookinbox ./cmd/hookinbox
	bin/hookinbox chaos --events $(CHAOS_EVENTS) --dup 2 --concurrency 16 $(CHAOS_ARGS)

# faults runs every fault scenario of docs/reliability.md through
# toxiproxy (pinned in go.mod): the first FAULT_EVENTS events of the
# corpus, twice each, shuffled, 16 senders, under each fault in turn;
# HOOKINBOX_EMULATORS=moto make faults runs them on moto. Every scenario
# runs even when one fails; the target fails at the end, naming them.
FAULTS := dynamodb-latency dynamodb-timeouts sqs-send-refused connection-resets slow-business-api
FAULT_EVENTS ?= 200
faults: local/node_modules
	go build -o bin/hookinbox ./cmd/hookinbox
	head -n $(FAULT_EVENTS) $(CHAOS_EVENTS) > bin/chaos-faults.jsonl
	@failed=; for f in $(FAULTS); do \
	  echo "bin/hookinbox chaos --events bin/chaos-faults.jsonl --dup 2 --concurrency 16 --delay-jitter 3s --seed 1 --fault $$f $(CHAOS_ARGS)"; \
	  bin/hookinbox chaos --events bin/chaos-faults.jsonl --dup 2 --concurrency 16 --delay-jitter 3s --seed 1 --fault $$f $(CHAOS_ARGS) || failed="$$failed $$f"; \
	done; \
	if [ -n "$$failed" ]; then echo "make faults: failed:$$failed"; exit 1; fi

# bench prints every performance figure of docs/performance.md (a few
# minutes; timings depend on the machine and its load, so read the ratios
# measured side by side) and saves the Go benchmarks in benchstat form in
# $(BENCH_DIR): compare two runs with `benchstat old/hotpath.txt new/hotpath.txt`.
BENCH_DIR ?= bin/bench
# A step that fails fails the target, although its output goes through tee.
bench: SHELL := /bin/bash
bench: .SHELLFLAGS := -o pipefail -c
bench: local/node_modules sizes
	@mkdir -p $(BENCH_DIR)
	@echo "== hot paths (benchstat form: $(BENCH_DIR)/hotpath.txt)"
	go test -run '^$$' -bench . -benchmem -count 5 ./internal/receiver ./internal/verify | tee $(BENCH_DIR)/hotpath.txt
	go test -run '^$$' -bench ProcessOneMessage -benchmem -count 5 ./internal/processor | tee -a $(BENCH_DIR)/hotpath.txt
	@echo "== 20 Stripe checkouts beside 500 made-up GoPay ids against alone ($(BENCH_DIR)/gopay-flood.txt)"
	go test -run '^$$' -bench GoPayFlood -benchtime 1x -count 1 ./internal/processor | tee $(BENCH_DIR)/gopay-flood.txt
	@echo "== processor throughput per batch size, beside lease+finish ($(BENCH_DIR)/processor.txt)"
	go test -run '^$$' -bench ProcessorBatch -benchtime 20x -count 3 ./internal/local/pipelinetest | tee $(BENCH_DIR)/processor.txt
	@echo "== the receiver's handler beside the floor's, in process, 8 senders ($(BENCH_DIR)/receiver-floor.txt)"
	go test -run '^$$' -bench ReceiverBesideFloor -benchtime 400x -count 5 ./internal/local/pipelinetest | tee $(BENCH_DIR)/receiver-floor.txt
	@echo "== cold start under aws-lambda-rie, exec to first answer, 20 each ($(BENCH_DIR)/coldstart.txt)"
	go test -run '^$$' -bench ColdStart -benchtime 20x -count 1 -timeout 20m ./internal/local/pipelinetest | tee $(BENCH_DIR)/coldstart.txt
	@echo "== Lambda's init phase, exec to the first request for an event, 20 each, 3 times ($(BENCH_DIR)/init.txt)"
	go test -run '^$$' -bench Init -benchtime 20x -count 3 ./internal/local/pipelinetest | tee $(BENCH_DIR)/init.txt
	@echo "== the processor bootstrap's peak memory: 10 events of 6 MB, 2 destinations, one batch ($(BENCH_DIR)/memory.txt)"
	go test -run '^$$' -bench ProcessorPeakMemory -benchtime 1x -count 3 ./internal/destination/ | tee $(BENCH_DIR)/memory.txt
	@echo "== requests, capacity and dollars per event"
	@go test -count=1 -v -run RequestsAndCapacity ./internal/local/pipelinetest | sed -n 's/^        //; /^| /p' | tee $(BENCH_DIR)/cost.md
	@echo "== hookinbox load: the receiver's bootstrap beside the floor's, 2 copies each under aws-lambda-rie, alternating rounds, 3 runs ($(BENCH_DIR)/load.txt)"
	go build -o bin/hookinbox ./cmd/hookinbox
	bin/hookinbox load --runs 3 --copies 2 --concurrency 4 --count 1000 --rounds 3 --dup 0.1 --benchstat $(BENCH_DIR)/load-bench.txt | tee $(BENCH_DIR)/load.txt
	@echo "== hookinbox load --null: the floor beside itself, how far one run's ratios stray on this machine ($(BENCH_DIR)/load-null.txt)"
	bin/hookinbox load --null --runs 3 --copies 2 --concurrency 4 --count 1000 --rounds 3 --dup 0.1 | tee $(BENCH_DIR)/load-null.txt
	@echo "== hookinbox load at a fixed rate, below both targets' capacity ($(BENCH_DIR)/load-rate.txt)"
	bin/hookinbox load --copies 2 --rate 150 --concurrency 16 --count 750 --rounds 5 --dup 0.1 --benchstat $(BENCH_DIR)/load-rate-bench.txt | tee $(BENCH_DIR)/load-rate.txt

# make dev ARGS='--addr 127.0.0.1:4000 --rie' runs the local stack in the
# foreground until Ctrl-C (see `bin/hookinbox dev --help`). It installs the
# emulators from local/'s lock file, builds bin/hookinbox and, for --rie,
# the pinned aws-lambda-rie (go tool).
dev: local/node_modules
	@echo "Building bin/hookinbox (the first build compiles the AWS SDK; it takes a minute)"
	go build -o bin/hookinbox ./cmd/hookinbox
	$(if $(findstring --rie,$(ARGS)),@echo "Building the pinned aws-lambda-rie: go tool -n aws-lambda-rie" && go tool -n aws-lambda-rie >/dev/null)
	bin/hookinbox dev $(ARGS)

clean:
	rm -rf bin .aws-sam
