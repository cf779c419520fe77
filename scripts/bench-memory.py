#!/usr/bin/env python3
"""Feed memory and changes-since timing (`make bench-memory`, release build).

One feed, 100 versions of 100,000 items, one item in ten changed per version: prints the
server's resident memory after all writes (target: under 300 MB) and the time of
`changes?since=<oldest retained>` (median of several), next to the time of the PUT of a
version as a reference measured in the same run.

Then many feeds: the time of a small PUT with one feed held, and again with 20,000 feeds
of 3 versions each held (a write must not cost more as feeds are added).
"""
import http.client, json, os, random, re, signal, statistics, subprocess, sys, time

BIN = os.environ.get("BATCHDIFF_BIN", ".build/release/batchdiff")
ITEMS = int(os.environ.get("BENCH_ITEMS", "100000"))
VERSIONS = int(os.environ.get("BENCH_VERSIONS", "100"))
FEEDS = int(os.environ.get("BENCH_FEEDS", "20000"))


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as status:
        return int(re.search(r"VmRSS:\s+(\d+)", status.read()).group(1)) / 1024


def request(conn, method, path, body=None):
    start = time.perf_counter()
    conn.request(method, path, body=body, headers={"Content-Type": "application/json"} if body else {})
    response = conn.getresponse()
    data = response.read()
    return response.status, data, time.perf_counter() - start


def start_server(*arguments):
    """A release server on a free port, and a connection to it."""
    server = subprocess.Popen([BIN, "serve", "--host", "127.0.0.1", "--port", "0", "--log-level", "warning", *arguments],
                              stdout=subprocess.PIPE, text=True)
    port = int(re.search(r":(\d+)$", server.stdout.readline().strip()).group(1))
    return server, http.client.HTTPConnection("127.0.0.1", port, timeout=120)


def stop_server(server):
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=30)


def one_big_feed():
    server, conn = start_server("--max-versions", str(VERSIONS + 1), "--max-feed-memory", str(2 << 30))
    try:
        rng = random.Random(7)
        versions = [0] * ITEMS
        put_times = []
        rss_before = rss_mb(server.pid)
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
        rss = rss_mb(server.pid)
        status, data, _ = request(conn, "GET", "/feeds/bench/changes?since=0")
        timings = []
        for _ in range(7):
            status, data, seconds = request(conn, "GET", f"/feeds/bench/changes?since={oldest}")
            assert status == 200, (status, data[:200])
            timings.append(seconds)
        answer = json.loads(data)
        print(f"feed of {VERSIONS} versions x {ITEMS} items, one item in ten changed per version (release build)")
        print(f"  resident memory: {rss:.0f} MB after all writes (server at start: {rss_before:.0f} MB; target < 300 MB)")
        print(f"  PUT of one version (2 MB body), median: {statistics.median(put_times) * 1000:.1f} ms")
        print(f"  changes?since={oldest} (oldest retained -> {answer['to']}), first: {timings[0] * 1000:.1f} ms, "
              f"then cached: {statistics.median(timings[1:]) * 1000:.2f} ms; "
              f"{len(answer['rows']['reloaded'])} reloads, {len(answer['values']['rows']['reloaded'])} values, {len(data) / 1e6:.1f} MB answer")
        print(f"  ratio: the first changes?since answer takes {timings[0] / statistics.median(put_times):.2f} of a PUT's time")
    finally:
        stop_server(server)


def many_feeds():
    server, conn = start_server()
    try:
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
        print(f"many feeds: a small PUT, median of 300 (release build)")
        print(f"  with 1 feed held: {alone:.3f} ms; with {FEEDS + 1} feeds of 3 versions held: {crowded:.3f} ms; ratio {crowded / alone:.2f}")
    finally:
        stop_server(server)


if __name__ == "__main__":
    one_big_feed()
    many_feeds()
