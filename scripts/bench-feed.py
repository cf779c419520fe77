#!/usr/bin/env python3
"""A feed's PUT and first uncached changes against POST /diff of the same pair.

`make bench-feed`, also the last part of `make bench`; release build.

One server (memory store); each run a fresh feed of ITEMS objects `{id, title, price}`,
deleted at the end of its run:
  PUT v1; then, timed, POST /diff of v1 and v2 (one object in ten changed, 20 moved) and
  the PUT of v2 (which stores it and prepares the answer for clients one version behind);
  PUT v3 (ten percent more changed); then, timed, POST /diff of v1 and v3 and the first
  `changes?since=` v1 (two versions behind: nothing prepared, so read, diffed and written).
Prints each run's times and ratios, then each ratio's median and spread over RUNS runs
(after one run that warms the server up).
Goals (issue 12): keep each at most 1.2.
"""
import json, os, random, sys

import benchlib

BIN = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("BATCHDIFF_BIN", ".build/release/batchdiff")
ITEMS = int(os.environ.get("BENCH_ITEMS", "100000"))
RUNS = int(os.environ.get("BENCH_RUNS", "5"))
GOAL = 1.2


def request(conn, method, path, body=None):
    """The answer's bytes and the seconds from sending the request to the answer read."""
    return benchlib.ok_request(conn, method, path, body, script="bench-feed", ok=(200, 204))


def versions(seed):
    """Three versions of the feed, as JSON text: each next one has one object in ten changed and 20 moved."""
    rng = random.Random(seed)
    items = [{"id": f"item-{i}", "title": f"Item number {i}", "price": i % 1000} for i in range(ITEMS)]
    texts = [json.dumps(items, separators=(",", ":"))]
    for version in range(2):
        for index in rng.sample(range(ITEMS), ITEMS // 10):
            items[index] = dict(items[index], title=f"{items[index]['title']} (v{version + 2})")
        for _ in range(20):
            items.insert(rng.randrange(ITEMS), items.pop(rng.randrange(ITEMS)))
        texts.append(json.dumps(items, separators=(",", ":")))
    return [text.encode() for text in texts]


def diff_body(old, new):
    """The body of POST /diff of `old` and `new` (JSON bytes)."""
    return b'{"old":' + old + b',"new":' + new + b"}"


def main():
    put_ratios, changes_ratios = [], []
    with benchlib.Server(BIN) as server:
        conn = server.connection(timeout=120)
        print(f"bench-feed: {ITEMS} objects a version, one in ten changed and 20 moved each, {RUNS} runs", flush=True)
        for run in range(-1, RUNS):  # run -1 warms the server up, and counts for nothing
            v1, v2, v3 = versions(run)
            feed = f"/feeds/bench{run + 1}"
            first = json.loads(request(conn, "PUT", feed, v1)[0])["version"]
            _, post12 = request(conn, "POST", "/diff", diff_body(v1, v2))
            _, put = request(conn, "PUT", feed, v2)
            request(conn, "PUT", feed, v3)
            _, post13 = request(conn, "POST", "/diff", diff_body(v1, v3))
            _, changes = request(conn, "GET", f"{feed}/changes?since={first}")
            request(conn, "DELETE", feed)  # each run on a server that holds no other feed
            if run < 0:
                continue
            put_ratios.append(put / post12)
            changes_ratios.append(changes / post13)
            print(f"run {run + 1}: PUT of v2 {put * 1000:.1f} ms, POST /diff v1 to v2 {post12 * 1000:.1f} ms: ratio {put / post12:.2f}; "
                  f"first changes?since=v1 (after v3) {changes * 1000:.1f} ms, POST /diff v1 to v3 {post13 * 1000:.1f} ms: "
                  f"ratio {changes / post13:.2f}", flush=True)
    benchlib.report("feed", [
        f"feed PUT / POST /diff of the same pair: {benchlib.spread(put_ratios)} over {RUNS} runs; goal at most {GOAL}",
        f"first uncached changes / POST /diff of the same pair: {benchlib.spread(changes_ratios)} over {RUNS} runs; goal at most {GOAL}",
    ], {"items": ITEMS, "runs": RUNS, "goal": GOAL, "put_to_diff": benchlib.distribution(put_ratios),
        "changes_to_diff": benchlib.distribution(changes_ratios)})


if __name__ == "__main__":
    main()
