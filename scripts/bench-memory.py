#!/usr/bin/env python3
"""Feed memory and changes-since timing (`make bench-memory`, release build).

One feed, 100 versions of 100,000 items, one item in ten changed per version: prints the
server's resident memory after all writes (target: under 300 MB) and the time of
`changes?since=<oldest retained>` (median of several), next to the time of the PUT of a
version as a reference measured in the same run.

Then many feeds: the time of a small PUT with one feed held, and again with 20,000 feeds
of 3 versions each held (a write must not cost more as feeds are added).
"""
import json, os, random, statistics, sys

import benchlib
from benchlib import timed_request as request

BIN = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("BATCHDIFF_BIN", ".build/release/batchdiff")
ITEMS = int(os.environ.get("BENCH_ITEMS", "100000"))
VERSIONS = int(os.environ.get("BENCH_VERSIONS", "100"))
FEEDS = int(os.environ.get("BENCH_FEEDS", "20000"))


def one_big_feed():
    """The big feed's summary lines and figures."""
    with benchlib.Server(BIN, "--max-versions", str(VERSIONS + 1), "--max-feed-memory", str(2 << 30)) as server:
        conn = server.connection(timeout=120)
        rng = random.Random(7)
        versions = [0] * ITEMS
        put_times = []
        rss_before = server.rss_mb()
        for version in range(1, VERSIONS + 1):
            if version > 1:
                for index in rng.sample(range(ITEMS), ITEMS // 10):
                    versions[index] = version
            body = json.dumps([{"id": i, "v": v} for i, v in enumerate(versions)], separators=(",", ":"))
            status, data, seconds = request(conn, "PUT", "/feeds/bench", body)
            assert status == 200, status
            put_times.append(seconds)
            if version == 1:
                oldest = json.loads(data)["version"]  # a series starts at a clock reading
        rss = server.rss_mb()
        status, data, _ = request(conn, "GET", "/feeds/bench/changes?since=0")
        timings = []
        for _ in range(7):
            status, data, seconds = request(conn, "GET", f"/feeds/bench/changes?since={oldest}")
            assert status == 200, (status, data[:200])
            timings.append(seconds)
    answer = json.loads(data)
    put, cached = statistics.median(put_times), statistics.median(timings[1:])
    rows = [
        f"feed of {VERSIONS} versions x {ITEMS} items, one item in ten changed per version (release build)",
        f"  resident memory: {rss:.0f} MB after all writes (server at start: {rss_before:.0f} MB; target < 300 MB)",
        f"  PUT of one version (2 MB body), median: {put * 1000:.1f} ms",
        f"  changes?since={oldest} (oldest retained -> {answer['to']}), first: {timings[0] * 1000:.1f} ms, "
        f"then cached: {cached * 1000:.2f} ms; "
        f"{len(answer['rows']['reloaded'])} reloads, {len(answer['values']['rows']['reloaded'])} values, {len(data) / 1e6:.1f} MB answer",
        f"  ratio: the first changes?since answer takes {timings[0] / put:.2f} of a PUT's time",
    ]
    return rows, {"versions": VERSIONS, "items": ITEMS, "resident_mb": rss, "resident_at_start_mb": rss_before,
                  "put_ms": put * 1000, "first_changes_ms": timings[0] * 1000, "cached_changes_ms": cached * 1000,
                  "first_changes_to_put": timings[0] / put}


def many_feeds():
    """The many feeds' summary lines and figures."""
    with benchlib.Server(BIN) as server:
        conn = server.connection(timeout=120)

        def small_put_ms():
            times = []
            for round in range(300):
                status, _, seconds = request(conn, "PUT", "/feeds/probe", json.dumps([round, round + 1]))
                assert status == 200, status
                times.append(seconds)
            return statistics.median(times) * 1000
        alone = small_put_ms()
        for feed in range(FEEDS):
            for version in range(3):
                status, _, _ = request(conn, "PUT", f"/feeds/f{feed}", json.dumps(list(range(version + 3))))
                assert status == 200, status
        crowded = small_put_ms()
    rows = [
        f"many feeds: a small PUT, median of 300 (release build)",
        f"  with 1 feed held: {alone:.3f} ms; with {FEEDS + 1} feeds of 3 versions held: {crowded:.3f} ms; ratio {crowded / alone:.2f}",
    ]
    return rows, {"feeds": FEEDS + 1, "small_put_ms_alone": alone, "small_put_ms_crowded": crowded, "ratio": crowded / alone}


def main():
    big_rows, big = one_big_feed()
    many_rows, many = many_feeds()
    benchlib.report("memory", big_rows + many_rows, {"one_big_feed": big, "many_feeds": many})


if __name__ == "__main__":
    main()
