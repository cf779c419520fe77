# BatchDiff. `make test` is what CI runs (plus `make docker-check`, see .ci/run).
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Installs the Debian packages given that are not installed yet (apt-get update only then).
define apt_install
missing=; for p in $(1); do \
  dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
done; \
if [ -n "$$missing" ]; then \
  echo "deps: installing$$missing"; \
  $(SUDO) apt-get update -qq; \
  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
fi
endef

.PHONY: deps deps-test deps-loadtest deps-docker build release run install test bench-hardening api-check package-check playground-screenshot bench bench-feed bench-fanout bench-fanout-postgres bench-memory bench-request-memory bench-stores bench-writes bench-small-feeds bench-windows bench-cache bench-pg-writes bench-source bench-merge bench-dk loadtest loadtest-logging soak soak-short docker-check clean

deps:
	@$(call apt_install,libmicrohttpd-dev libsqlite3-dev libpq-dev zlib1g-dev pkg-config)

# What the tests need beyond running: a PostgreSQL the tests start clusters of, nginx in
# front of two servers, headless Chromium for the playground, Node for the JavaScript
# client's tests. Kept out of `make run`.
deps-test: deps
	@$(call apt_install,postgresql nginx chromium gettext-base nodejs)

deps-loadtest: deps
	@$(call apt_install,wrk)

deps-docker: deps
	@$(call apt_install,debootstrap curl python3 procps)

build: deps
	swift build

release: deps
	swift build -c release

run: deps release
	.build/release/batchdiff serve

# Puts the release binary on the PATH: $(PREFIX)/bin/batchdiff (/usr/local/bin by default).
PREFIX ?= /usr/local
install: release
	$(SUDO) install -m 755 .build/release/batchdiff $(PREFIX)/bin/batchdiff

test: deps-test build
	scripts/layout-check.py
	scripts/test-venv.sh >/dev/null
	swift test
	scripts/api-check.sh
	scripts/package-check.sh
	BATCHDIFF=.build/debug/batchdiff node --test clients/js/test/*.test.js
	scripts/playground-check.py .build/debug/batchdiff
	scripts/readme-check.py .build/debug/batchdiff
	SOAK_SECONDS=10 scripts/soak.py .build/debug/batchdiff

# The playground in headless Chromium, and a fresh screenshot of it for the README.
playground-screenshot: deps-test build
	PLAYGROUND_SCREENSHOT=docs/playground.png scripts/playground-check.py .build/debug/batchdiff

api-check: build
	scripts/api-check.sh

package-check: deps
	scripts/package-check.sh

# The server keeps freed memory for reuse (mallopt at start); the benchmark gets the same
# allocator settings from the environment.
BENCH_ENV := GLIBC_TUNABLES=glibc.malloc.mmap_threshold=268435456:glibc.malloc.trim_threshold=536870912

# The differ and the whole POST /diff, three runs and each figure's median and spread
# (scripts/bench.py runs), then a feed's PUT and changes against POST /diff (bench-feed).
# Each benchmark prints its summary and writes its figures to .build/bench/NAME.json.
bench: release
	$(BENCH_ENV) scripts/bench.py runs .build/release/BatchDiffBenchmark .build/release/batchdiff
	$(MAKE) bench-feed

# A feed's PUT and its first uncached changes, each against POST /diff of the same pair
# (100,000 objects; five runs, a fresh feed each). Also the last part of `make bench`.
bench-feed: release
	scripts/bench.py feed .build/release/batchdiff

# The figures of the hardening issue (ETags, slow readers, health slots, maxChanges, streams
# of a pretty-printed feed) for one binary; run it on an earlier build too to compare.
bench-hardening: release
	scripts/bench.py hardening .build/release/batchdiff

# 10,000 long polls, then 10,000 event streams, parked on one feed and woken by one PUT
# (three runs); /healthz meanwhile.
bench-fanout: release
	scripts/bench.py fanout .build/release/batchdiff

# The same wakes on a server on PostgreSQL, run after run with one in memory: times, their
# ratio, the store calls during each wake, and clients not answered with the new version.
bench-fanout-postgres: deps-test release
	FANOUT_STORE=postgres scripts/bench.py fanout .build/release/batchdiff

bench-memory: release
	scripts/bench.py memory

# Peak memory per request byte of one POST /diff (zeros and objects), several runs.
bench-request-memory: release
	scripts/bench.py request-memory .build/release/batchdiff

# PUT and uncached changes on a 10,000-item feed: memory vs SQLite vs PostgreSQL (a
# throwaway cluster), ratios to memory in the same run, three runs.
bench-stores: deps-test release
	scripts/bench.py stores

# One-row writes, PATCH against PUT: latency, memory and store growth per version; three runs.
bench-writes: deps-test release
	scripts/bench.py writes .build/release/batchdiff

# Writes a second to many small feeds (PUT) and to a few big ones (PATCH), PostgreSQL against
# memory, driven by wrk.
bench-pg-writes: deps-test deps-loadtest release
	scripts/bench.py pg-writes .build/release/batchdiff

# Feeds that follow PostgreSQL (a throwaway cluster, wal_level=logical): commit to answer,
# row changes a second, CPU per change with 1,000 feeds made against ten, a 1,000,000-row
# feed's one-row commit against a 1,000-row one's; three runs.
bench-source: deps-test release
	scripts/bench.py source .build/release/batchdiff

# changes with values=merge against values=whole: bytes (2,000 rows of ten members, one of a
# tenth changed a version; plain and gzip'd) and time (100,000 rows); three runs.
bench-merge: release
	scripts/bench.py merge .build/release/batchdiff

# Many small feeds in one server: memory per feed, listing and reads (FEEDS, default 1,000,000).
bench-small-feeds: release
	scripts/bench.py small-feeds .build/release/batchdiff

# Pages and windows of a 1,000,000-row feed against a 1,000-row one: a new client's first
# window, a deep page, a window's changes after a one-row write; three runs.
bench-windows: release
	scripts/bench.py windows .build/release/batchdiff

# Followers of one feed through the caching nginx template: upstream requests per version
# for 300 and 3,000 followers (nginx from make deps-test).
bench-cache: deps-test release
	scripts/bench.py cache .build/release/batchdiff

# The differ against DifferenceKit built beside it, same workloads, same run. DK is a
# checkout of DifferenceKit (never committed here).
bench-dk: deps
	@if [ -z "$(DK)" ] || [ ! -f "$(DK)/Package.swift" ]; then \
	  echo "bench-dk: DK must be a DifferenceKit checkout, e.g."; \
	  echo "  git clone https://github.com/ra1028/DifferenceKit ../DifferenceKit && make bench-dk DK=../DifferenceKit"; \
	  exit 2; fi
	mkdir -p .build/bench-dk
	ln -sfn "$$(realpath "$(DK)")" .build/bench-dk/DifferenceKit
	ln -sfn "$$(pwd)" .build/bench-dk/BatchDiff
	@# SwiftPM keeps the plan of a path dependency's sources: files added since would be missing.
	rm -f .build/bench-dk/build/release.yaml
	swift build -c release --package-path bench/dk --scratch-path .build/bench-dk/build
	$(BENCH_ENV) .build/bench-dk/build/release/bench-dk

loadtest: deps-loadtest release
	scripts/loadtest.sh

# What access logging costs: the server at its default level against the same server at
# --log-level warning (as the "floor"), paired rounds, five per run.
loadtest-logging: deps-loadtest release
	BASELINE_ARGS='serve --host 127.0.0.1 --port {PORT} --log-level warning' \
	  LOADTEST_ROUNDS=$${LOADTEST_ROUNDS:-5} LOADTEST_SECONDS=$${LOADTEST_SECONDS:-8} scripts/loadtest.sh

# A bounded chaos run on loopback (scripts/soak.py): writers, readers checking every batch
# against a model, /diff, hostile clients, a health probe and the memory bound, at once.
soak: release
	scripts/soak.py .build/release/batchdiff

soak-short: build
	SOAK_SECONDS=10 scripts/soak.py .build/debug/batchdiff

docker-check: deps-docker
	scripts/docker-check.sh

clean:
	rm -rf .build
