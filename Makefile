# idvault: `make run` starts the server on the embedded local-dev config; `make test` runs every
# test, installing what the tests need when missing (`make deps`: MailDev, jose, oidc-provider and
# the OpenAPI tools from npm; PostgreSQL, Chromium, age, systemd, fish, zsh, bsdutils, jq, openssl,
# curl and make from Debian's packages).

GO        ?= go
BIN       ?= ./idvault
# `idvault version` prints the release tag when HEAD is one (vX.Y.Z, stamped with -X main.version),
# else "devel"; the commit and the Go version come from the build information Go embeds. No build
# date and no build ID, so the same commit builds to the same bytes (see `make release`).
# REVISION is the commit for builds where Go records none (a git worktree: its .git is a file).
# A tree with no .git of its own (from `git archive`) takes both from .ci/archive-info, which git
# archive fills in (export-subst): the same -X values, so it builds to the same bytes as a clone.
IN_GIT    := $(shell [ "$$(git rev-parse --show-toplevel 2>/dev/null)" = '$(CURDIR)' ] && echo yes)
ifeq ($(IN_GIT),yes)
VERSION   ?= $(shell git describe --tags --exact-match --match 'v[0-9]*.[0-9]*.[0-9]*' 2>/dev/null)
REVISION  ?= $(shell c=$$(git rev-parse HEAD 2>/dev/null) && { git diff --quiet HEAD -- || c=$$c-dirty; echo $$c; })
else
VERSION   ?= $(shell sed -n 's/^refs //p' .ci/archive-info | tr ',' '\n' | sed -n 's/^ *tag: //p' | grep -E -m1 '^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$$')
REVISION  ?= $(shell sed -n 's/^commit \([0-9a-f]\{40\}\)$$/\1/p' .ci/archive-info)
endif
LDFLAGS   := -s -w -buildid= -X main.version=$(VERSION) -X main.revision=$(REVISION)
# -buildvcs=false: the commit comes from REVISION alone, so a clone, a worktree and an archive of
# one commit build to the same bytes (Go would add the commit's time and its own fields in a clone).
BUILDFLAGS := -trimpath -buildvcs=false -ldflags '$(LDFLAGS)'
# Where `make deps` installs the npm tools, and where the tests look for them (app/apptest/external.CacheDir, mailtest.MailDevDir).
TOOLS_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/idvault
MAILDEV_DIR ?= $(TOOLS_CACHE)/maildev
export IDVAULT_MAILDEV_DIR := $(MAILDEV_DIR)
OIDC_DIR    ?= $(TOOLS_CACHE)/oidc
export IDVAULT_OIDC_DIR := $(OIDC_DIR)
OPENAPI_TOOLS_DIR ?= $(TOOLS_CACHE)/openapi-tools
export IDVAULT_OPENAPI_TOOLS_DIR := $(OPENAPI_TOOLS_DIR)

# `make release` cross-compiles these into $(DIST), with SHA256SUMS.
RELEASE_PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
DIST      ?= dist

# `make pg` starts a throwaway PostgreSQL for the exit tool's walkthrough (exit/README.md).
PGDIR     ?= $(or $(TMPDIR),/tmp)/idvault-pg
PGPORT    ?= 54329

.PHONY: help build release notices run test test-short pg pg-stop bench bench-http bench-devices bench-profile lint cover fuzz deps clean

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## build the idvault binary (static, as the release binaries)
	CGO_ENABLED=0 $(GO) build $(BUILDFLAGS) -o $(BIN) .

release: ## static reproducible binaries for linux and darwin, amd64 and arm64, into dist/ with SHA256SUMS
	@rm -rf '$(DIST)' && mkdir -p '$(DIST)'
	@set -e; for p in $(RELEASE_PLATFORMS); do os=$${p%/*}; arch=$${p#*/}; \
	  echo "  $(DIST)/idvault-$$os-$$arch"; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build $(BUILDFLAGS) -o '$(DIST)'/idvault-$$os-$$arch .; \
	done
	@cd '$(DIST)' && sha256sum idvault-* > SHA256SUMS && cat SHA256SUMS

notices: ## rewrite app/cli/THIRD_PARTY_NOTICES (printed by `idvault license`) from the module cache, after a dependency change
	.ci/notices > app/cli/THIRD_PARTY_NOTICES.tmp && mv app/cli/THIRD_PARTY_NOTICES.tmp app/cli/THIRD_PARTY_NOTICES

run: build ## start idvault on the embedded local-dev config (no database needed)
	$(BIN) serve

pg: ## start a throwaway PostgreSQL (127.0.0.1:54329, PGPORT; data in PGDIR); prints the IDVAULT_EXIT__DB to export
	@.ci/pg start '$(PGDIR)' $(PGPORT)

pg-stop: ## stop the PostgreSQL of `make pg` and remove its data
	@.ci/pg stop '$(PGDIR)'

deps: ## install what the tests need if missing (MailDev 2.2.1, jose, oidc-provider and the OpenAPI tools from npm; PostgreSQL, chromium, age, systemd, fish, zsh, bsdutils, jq, openssl, curl and make from Debian's packages)
	@.ci/install-maildev "$(MAILDEV_DIR)"
	@.ci/install-oidc "$(OIDC_DIR)"
	@.ci/install-openapi-tools "$(OPENAPI_TOOLS_DIR)"
	@.ci/install-postgres
	@.ci/install-chromium
	@.ci/install-age
	@.ci/install-debian-tools

test: deps ## run every test (race detector on), with the external test servers
	IDVAULT_REQUIRE_EXTERNAL=1 $(GO) test -race -count=1 -timeout 15m ./...

test-short: ## the in-process tests only (go test -short): no idvault binary, PostgreSQL, MailDev, node or chromium starts
	$(GO) test -short -count=1 ./...

# BENCH_DUMP=small (the default) makes BenchmarkGenerateDump (exit/dump) generate 1/100 of the
# target size; `make bench BENCH_DUMP=full` generates the target, 100 000 users and about
# 1 000 000 key publishes (several minutes more). -p 1: one package's benchmarks at a time, so
# that no benchmark shares the machine with another package's.
BENCH_DUMP ?= small
# The table of BenchmarkHTTPLoad goes into the performance page, between its markers, and nowhere
# else in it; the prose around it is written by hand.
BENCH_PAGE := $(CURDIR)/app/PERFORMANCE.md
BENCH_SHOW := sed -n '/^<!-- bench-table/,/^<!-- \/bench-table -->/p' $(BENCH_PAGE)
# BenchmarkDecryptTable (app/e2e, `idvault exit decrypt-table`) runs on BENCH_TABLE_ROWS rows:
# 200 000 by default, which keeps its four runs and the psql pipeline within a few minutes on
# two cores; `make bench BENCH_TABLE_ROWS=1000000` is the issue's figure (the benchmark's own
# default when run alone). Its figures go to bench-exit-table.md, printed after the table.
BENCH_TABLE_ROWS ?= 200000
BENCH_EXIT_TABLE := $(CURDIR)/bench-exit-table.md
bench: ## run every benchmark, write the performance table into app/PERFORMANCE.md and print it, then decrypt-table's (bench-exit-table.md)
	@rm -f $(BENCH_EXIT_TABLE)
	IDVAULT_BENCH_DUMP=$(BENCH_DUMP) IDVAULT_BENCH_PAGE=$(BENCH_PAGE) IDVAULT_BENCH_TABLE_ROWS=$(BENCH_TABLE_ROWS) \
	  IDVAULT_BENCH_EXIT_TABLE=$(BENCH_EXIT_TABLE) $(GO) test -p 1 -run '^$$' -bench . -benchmem -count=1 -timeout 60m ./...
	@echo; echo '$$ make bench: app/PERFORMANCE.md'; $(BENCH_SHOW)
	@if [ -f $(BENCH_EXIT_TABLE) ]; then cat $(BENCH_EXIT_TABLE); fi

bench-http: ## only the performance table (into app/PERFORMANCE.md; each figure beside its baseline, in one run)
	IDVAULT_BENCH_PAGE=$(BENCH_PAGE) $(GO) test -run '^$$' -bench '^BenchmarkHTTPLoad$$' -count=1 -timeout 10m ./app/loadgen/
	@$(BENCH_SHOW)

bench-devices: ## what each performance device gives the identity rows: a server with all, one per device switched off, in turns
	$(GO) test -run '^$$' -bench '^BenchmarkDevices$$' -count=1 -timeout 30m ./app/loadgen/

ROW ?= known
bench-profile: ## CPU profile of one row of the table, the server alone (ROW=known, known-bare, new, public-new, list, stream or decrypt-1k)
	IDVAULT_LOAD_ONLY=$(ROW) IDVAULT_LOAD_NO_BARE=1 $(GO) test -run '^$$' -bench '^BenchmarkHTTPLoad$$' -count=1 -timeout 10m \
	  -o loadgen.test -cpuprofile cpu-$(ROW).out ./app/loadgen/
	$(GO) tool pprof -top -cum -nodecount=45 loadgen.test cpu-$(ROW).out

lint: ## gofmt, go vet, staticcheck (the version go.mod pins as a tool), and the dependency direction check
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	@.ci/depcheck

cover: ## test coverage report (coverage.html)
	$(GO) test -count=1 -coverprofile=coverage.out ./...
	$(GO) tool cover -func=coverage.out | tail -1
	$(GO) tool cover -html=coverage.out -o coverage.html

FUZZTIME ?= 60s
fuzz: ## run every fuzz target for FUZZTIME each (default 60s)
	@.ci/fuzz-all $(FUZZTIME)

clean: ## remove build outputs
	rm -f $(BIN) coverage.out coverage.html bench-exit-table.md loadgen.test cpu-*.out
	rm -rf $(DIST)
