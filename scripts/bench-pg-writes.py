#!/usr/bin/env python3
"""Writes per second to many small feeds, PostgreSQL against memory (`make bench-pg-writes`).

Usage: scripts/bench-pg-writes.py [BINARY]   (default .build/release/batchdiff)

wrk (C, `make deps-loadtest`) sends PUTs from THREADS threads over CONNECTIONS keep-alive
connections for SECONDS seconds: each request writes one of FEEDS feeds (`w<thread>-<n>`,
the feeds of each thread taken in turn), a list of 20 rows (about 1.3 KB of JSON) with one
row's `v` set to the request's number, so every PUT makes a new version (stored as its change
from the one before). The same load runs against a server on a throwaway PostgreSQL cluster
(`fsync` on, benchlib.Cluster) and against one on the memory store, RUNS times each; printed:
PUTs a second (every answer must be 200, else the run stops) and their ratio,
PostgreSQL / memory. Defaults: THREADS 2, CONNECTIONS 32, SECONDS 10, FEEDS 1000 (so each feed gets several versions), RUNS 3.

Then the same for big feeds: BIG_FEEDS feeds (default 4) of BIG_ROWS rows (default 100,000,
about 4 MB of JSON each) are PUT once, and the load is one-row PATCHes (an upsert of a
random row, `v` set to the request's number, each wrk thread its own random rows), each
feed's writes taking turns: what a big
feed's writes a second cost when each version is stored as its change.
"""
import json, os, re, shutil, sys, tempfile

import benchlib

BIN = sys.argv[1] if len(sys.argv) > 1 else ".build/release/batchdiff"
THREADS = int(os.environ.get("THREADS", "2"))
CONNECTIONS = int(os.environ.get("CONNECTIONS", "32"))
SECONDS = int(os.environ.get("SECONDS", "10"))
FEEDS = int(os.environ.get("FEEDS", "1000"))
RUNS = int(os.environ.get("RUNS", "3"))
BIG_FEEDS = int(os.environ.get("BIG_FEEDS", "4"))
BIG_ROWS = int(os.environ.get("BIG_ROWS", "100000"))

# What both loads share: each wrk thread's number (`id`), a request counter, and the count
# of answers other than 200 printed at the end.
THREADED = """
local counter = 0
local threads = 0
function setup(thread)
  thread:set("id", threads)
  threads = threads + 1
end
function done(summary, latency, requests)
  io.write(string.format("non-200: %d\\n", summary.errors.status))
end
"""

# Each thread writes its own feeds in turn; each body changes one row's `v`.
LUA = THREADED + """
function init(args)
  rows = {}
  for i = 1, 19 do
    rows[i] = string.format('{"id":%d,"title":"Message %d for the user","price":%d.5,"read":false}', i, i, i)
  end
  fixed = table.concat(rows, ",")
end
function request()
  counter = counter + 1
  local feed = string.format("/feeds/w%d-%d", id, counter % FEEDS)
  local body = '[{"id":0,"title":"Message 0 for the user","price":0.5,"v":' .. counter .. '},' .. fixed .. ']'
  return wrk.format("PUT", feed, {["Content-Type"] = "application/json"}, body)
end
""".replace("FEEDS", str(FEEDS))

# One-row PATCHes of random rows of the big feeds `big-<n>`.
BIG_LUA = THREADED + """
function init(args)
  math.randomseed(1 + id)
  counter = id * 1000000000
end
function request()
  counter = counter + 1
  local feed = string.format("/feeds/big-%d", math.random(0, BIG_FEEDS - 1))
  local row = math.random(0, BIG_ROWS - 1)
  local body = string.format('{"ops":[{"op":"upsert","item":{"id":%d,"title":"row %d","v":%d}}]}', row, row, counter)
  return wrk.format("PATCH", feed, {["Content-Type"] = "application/json"}, body)
end
""".replace("BIG_FEEDS", str(BIG_FEEDS)).replace("BIG_ROWS", str(BIG_ROWS))


def create_big_feeds(server):
    """PUTs the big feeds' first versions."""
    body = json.dumps([{"id": row, "title": f"row {row}", "v": 0} for row in range(BIG_ROWS)]).encode()
    for feed in range(BIG_FEEDS):
        status, _, answer = benchlib.fetch(server.port, "PUT", f"/feeds/big-{feed}?idKey=id", body, timeout=120)
        if status != 200:
            sys.exit(f"bench-pg-writes: PUT /feeds/big-{feed}: {status} {answer[:200]!r}")


def load(server, script):
    """wrk's requests a second and the number of answers other than 200."""
    rate, output = benchlib.wrk(server.url(), script, THREADS, CONNECTIONS, SECONDS)
    return rate, int(re.search(r"non-200: (\d+)", output).group(1))


def main():
    if shutil.which("wrk") is None:
        sys.exit("bench-pg-writes: wrk is not installed: run make deps-loadtest")
    scripts = {}
    for workload, text in (("small", LUA), ("big", BIG_LUA)):
        with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as file:
            file.write(text)
            scripts[workload] = file.name
    cluster = benchlib.Cluster()
    rates = {(workload, store): [] for workload in scripts for store in ("postgres", "memory")}
    try:
        for run in range(RUNS):
            for workload, script in scripts.items():
                database = f"writes_{workload}_{run}"
                cluster.query("postgres", f"CREATE DATABASE {database}")
                for store, flags in (("postgres", ["--store", cluster.database_uri(database)]), ("memory", [])):
                    with benchlib.Server(BIN, *flags, timeout=30) as server:
                        if workload == "big":
                            create_big_feeds(server)
                        rate, failed = load(server, script)
                    if failed:
                        sys.exit(f"bench-pg-writes: {failed} answers other than 200 from the {store} store ({workload} feeds)")
                    rates[workload, store].append(rate)
                    print(f"run {run + 1}, {workload} feeds, {store}: {rate:,.0f} writes a second", flush=True)
    finally:
        cluster.close()
        for script in scripts.values():
            os.unlink(script)

    rows, figures = [], {"threads": THREADS, "connections": CONNECTIONS, "seconds": SECONDS, "feeds": FEEDS, "runs": RUNS,
                         "big_feeds": BIG_FEEDS, "big_rows": BIG_ROWS}
    for workload, title in (("small", f"{FEEDS:,} feeds a thread of 20 rows, a one-row change a PUT"),
                            ("big", f"{BIG_FEEDS} feeds of {BIG_ROWS:,} rows, a one-row PATCH each write")):
        postgres, memory = rates[workload, "postgres"], rates[workload, "memory"]
        ratios = [p / m for p, m in zip(postgres, memory)]
        rows += ["", f"{title}, wrk -t{THREADS} -c{CONNECTIONS} -d{SECONDS}s, median of {RUNS} (min to max):",
                 f"  PostgreSQL: {benchlib.spread(postgres, 0, comma=True)} writes a second",
                 f"  memory:     {benchlib.spread(memory, 0, comma=True)} writes a second",
                 f"  PostgreSQL / memory: {benchlib.spread(ratios, 2, comma=True)}"]
        figures[workload] = {"postgres_writes_a_second": benchlib.distribution(postgres),
                             "memory_writes_a_second": benchlib.distribution(memory),
                             "postgres_to_memory": benchlib.distribution(ratios)}
    benchlib.report("pg-writes", rows, figures)


if __name__ == "__main__":
    main()
