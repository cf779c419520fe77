#!/usr/bin/env python3
"""Many small feeds in one server (`make bench-small-feeds`, release build, memory store).

Usage: scripts/bench-small-feeds.py [BINARY]   (default .build/release/batchdiff)

FEEDS feeds (default 1,000,000) named `user-<n>-inbox`, each written twice: a first version
of ROWS rows (default 20) `{"id": i, "title": ..., "price": ..., "read": false}`, about
1.2 KB of JSON, then a second with one row changed (two versions each). The server runs
with `--max-feed-memory MAX_FEED_MEMORY` (default 17179869184: nothing is evicted, and
every answer a write keeps for reuse stays) and `--log-level warning`. WRITERS threads (default 4) write
on their own keep-alive connections. Printed:
  - resident memory and `batchdiff_feed_bytes` at the end, and each per feed;
  - the time of `GET /feeds?after=<a random feed>&limit=100` and of
    `GET /feeds/<a random feed>/changes?since=<its first version>` (each a fresh question,
    median and 99th percentile of SAMPLES, default 300);
  - the writes' rate (both versions, all writers).
Python 3 standard library only; all traffic on 127.0.0.1.
"""
import json, os, random, statistics, sys, threading, time

import benchlib

BIN = sys.argv[1] if len(sys.argv) > 1 else ".build/release/batchdiff"
FEEDS = int(os.environ.get("FEEDS", "1000000"))
ROWS = int(os.environ.get("ROWS", "20"))
WRITERS = int(os.environ.get("WRITERS", "4"))
SAMPLES = int(os.environ.get("SAMPLES", "300"))
MAX_FEED_MEMORY = os.environ.get("MAX_FEED_MEMORY", "17179869184")


def rows(user, changed=None):
    """The rows of user `user`'s feed (one marked read when `changed` is its index)."""
    return [{"id": i, "title": f"Message {i} for user {user}", "price": 12.5 + i,
             "read": i == changed} for i in range(ROWS)]


def body(data):
    """`data` as compact JSON bytes."""
    return json.dumps(data, separators=(",", ":")).encode()


def call(conn, method, path, data=None):
    """The answer and its seconds; any status but 200 stops the benchmark."""
    return benchlib.ok_request(conn, method, path, data, script="bench-small-feeds")


def feed_bytes(conn):
    """batchdiff_feed_bytes from /metrics."""
    text, _ = call(conn, "GET", "/metrics")
    return benchlib.metric(text, "batchdiff_feed_bytes")


def median_p99(times):
    """`median X ms, p99 Y ms` of `times` (seconds)."""
    return f"median {statistics.median(times) * 1000:.3f} ms, p99 {benchlib.percentile(times, 0.99) * 1000:.3f} ms"


def main():
    with benchlib.Server(BIN, "--max-feed-memory", MAX_FEED_MEMORY) as server:
        conn = server.connection(timeout=600)
        time.sleep(0.5)
        rss_start, bytes_start = server.rss_mb(), feed_bytes(conn)
        first_versions = [0] * FEEDS

        def write(start):
            writer = server.connection(timeout=600)
            for user in range(start, FEEDS, WRITERS):
                answer, _ = call(writer, "PUT", f"/feeds/user-{user}-inbox", body(rows(user)))
                first_versions[user] = json.loads(answer)["version"]
                call(writer, "PUT", f"/feeds/user-{user}-inbox", body(rows(user, changed=user % ROWS)))
            writer.close()

        started = time.perf_counter()
        threads = [threading.Thread(target=write, args=(start,)) for start in range(WRITERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        seconds = time.perf_counter() - started
        time.sleep(1)
        conn.close()  # idle through the writes: the server may have closed it
        conn = server.connection(timeout=600)
        rss_end, bytes_end = server.rss_mb(), feed_bytes(conn)
        rng = random.Random(1)
        pages, reads = [], []
        for _ in range(SAMPLES):
            user = rng.randrange(FEEDS)
            answer, elapsed = call(conn, "GET", f"/feeds?after=user-{user}-inbox&limit=100")
            assert len(json.loads(answer)["feeds"]) > 0 or user == FEEDS - 1
            pages.append(elapsed)
            user = rng.randrange(FEEDS)
            _, elapsed = call(conn, "GET", f"/feeds/user-{user}-inbox/changes?since={first_versions[user]}")
            reads.append(elapsed)
    grown_mb = rss_end - rss_start
    benchlib.report("small-feeds", [
        f"{FEEDS:,} feeds of {ROWS} rows ({len(body(rows(0))):,} bytes of JSON), two versions each, memory store, "
        f"--max-feed-memory {int(MAX_FEED_MEMORY):,}, release build",
        f"  resident memory: {grown_mb:,.0f} MB more ({rss_end:,.0f} MB in all); {grown_mb * 1048576 / FEEDS:,.0f} bytes a feed",
        f"  batchdiff_feed_bytes: {(bytes_end - bytes_start) / 2**20:,.0f} MB; {(bytes_end - bytes_start) / FEEDS:,.0f} bytes a feed",
        f"  writes: {2 * FEEDS / seconds:,.0f} PUTs a second ({WRITERS} writers, {seconds:.0f} s)",
        f"  GET /feeds?after=...&limit=100: {median_p99(pages)}",
        f"  changes?since=<first version> of a random feed: {median_p99(reads)}",
    ], {"feeds": FEEDS, "rows": ROWS, "writers": WRITERS, "samples": SAMPLES, "max_feed_memory": int(MAX_FEED_MEMORY),
        "resident_mb": rss_end, "resident_growth_mb": grown_mb, "resident_bytes_a_feed": grown_mb * 1048576 / FEEDS,
        "feed_bytes_a_feed": (bytes_end - bytes_start) / FEEDS, "puts_a_second": 2 * FEEDS / seconds,
        "page_ms": {"median": statistics.median(pages) * 1000, "p99": benchlib.percentile(pages, 0.99) * 1000},
        "read_ms": {"median": statistics.median(reads) * 1000, "p99": benchlib.percentile(reads, 0.99) * 1000}})


if __name__ == "__main__":
    main()
