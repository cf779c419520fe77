#!/usr/bin/env python3
"""Memory per request byte (`make bench-request-memory`, release build).

For each workload, a fresh server (with the allocator settings it always starts with)
answers one `POST /diff`, and the growth of its peak resident memory (VmHWM) is printed
as a multiple of the body's size, over several runs (median, min to max):
  - zeros: 7,000,000 zeros a side (28 MB), the worst case: items of two bytes each;
  - objects: 100,000 objects {id, title, price, tags} a side with 5% changed (about 26 MB).
Usage: scripts/bench-request-memory.py [BINARY] (default .build/release/batchdiff);
RUNS (default 3).
"""
import json, os, random, statistics, subprocess, sys, time

import benchlib

BINARY = sys.argv[1] if len(sys.argv) > 1 else ".build/release/batchdiff"
RUNS = int(os.environ.get("RUNS", "3"))


def workloads():
    """(name, body of POST /diff) of each workload."""
    zeros = ",".join(["0"] * 7_000_000)
    yield "zeros, 7,000,000 a side", ('{"old":[' + zeros + '],"new":[' + zeros + "]}").encode()
    rng = random.Random(1)
    old = [{"id": i, "title": f"Item number {i} " + "x" * 40, "price": round(rng.random() * 100, 2), "tags": ["alpha", "beta"]}
           for i in range(100_000)]
    new = [dict(item) for item in old]
    for index in rng.sample(range(100_000), 5_000):
        new[index]["price"] += 1
    yield "objects, 100,000 a side, 5% changed", json.dumps({"old": old, "new": new}).encode()


def one_request(body):
    """On a fresh server, one POST /diff of `body`: (peak memory growth / body size, seconds)."""
    with benchlib.Server(BINARY, "--body-limit", str(64 << 20), stderr=subprocess.DEVNULL) as server:
        before = server.peak_mb()
        connection = server.connection(timeout=300)
        started = time.time()
        connection.request("POST", "/diff", body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        response.read()
        assert response.status == 200, response.status
        return (server.peak_mb() - before) * 1048576 / len(body), time.time() - started


def main():
    rows, figures = [], {"runs": RUNS}
    for name, body in workloads():
        results = [one_request(body) for _ in range(RUNS)]
        factors = [factor for factor, _ in results]
        seconds = statistics.median(t for _, t in results)
        rows.append(f"{name}, {len(body) / 1e6:.1f} MB body: peak memory grows by "
                    f"{benchlib.spread(factors, 1, unit='x the body', note=f' over {RUNS} runs')}, request {seconds:.2f} s")
        figures[name] = {"body_mb": len(body) / 1e6, "growth_to_body": benchlib.distribution(factors), "request_seconds": seconds}
    benchlib.report("request-memory", rows, figures)


if __name__ == "__main__":
    main()
