#!/usr/bin/env python3
"""Pages and windows of a big feed against a small one (`make bench-windows`, release build).

Usage: scripts/bench-windows.py [BINARY]   (default .build/release/batchdiff)

A list feed of ROWS_SMALL rows (default 1,000) and one of ROWS_BIG (default 1,000,000), rows
`{"id": i, "title": "row i", "v": n}`, each made by one PUT on a fresh memory-store server,
then read once (untimed: a version written whole has its rows' order built once). Then, on one
keep-alive connection, SAMPLES times each (default 50; each a question not asked before, so no
answer is reused), timed by the client:
  first window  a new client's first window: changes?since=0&offset=0&limit=50+k
  deep page     GET /feeds/{id}?offset=<count-100+k>&limit=50
  window write  after a one-row PATCH (a random row's `v` raised; untimed), the window's
                changes from the version before: changes?since=<before>&offset=0&limit=50
  window behind a window's changes from five versions back (no answer kept with a write:
                seen through the versions' kept batches): changes?since=<latest-5>&offset=100+k&limit=50
  window put    then, PUT_SAMPLES times (default 10), after a one-row PUT of the whole list (a
                random row's `v` raised; untimed) and PUT_PAUSE seconds (default 0.1) at both
                sizes, the first read of the window's changes from the version before:
                changes?since=<before>&offset=0&limit=50. The pause puts both sizes' reads on
                an idle server: read at once, the small feed's comes while the threads of its
                1 ms PUT still run, the big feed's after a 1 s PUT they left, and the ~0.7 ms
                of waking them (the same at 1,000 rows after any pause) is not the feed's cost.
Printed for each: the median at each size, their ratio big/small (goal at most 2), and the
largest answer in bytes (goal under 16 KB). STORE=sqlite runs the servers on a SQLite file
(in a fresh temporary directory) instead of memory. RUNS (default 3) runs, each on fresh servers;
the ratios' median and spread (min to max) at the end. Python 3 standard library only; all
traffic on 127.0.0.1.
"""
import json, os, random, statistics, sys, tempfile, time

import benchlib

BIN = sys.argv[1] if len(sys.argv) > 1 else ".build/release/batchdiff"
ROWS_SMALL = int(os.environ.get("ROWS_SMALL", "1000"))
ROWS_BIG = int(os.environ.get("ROWS_BIG", "1000000"))
SAMPLES = int(os.environ.get("SAMPLES", "50"))
RUNS = int(os.environ.get("RUNS", "3"))
STORE = os.environ.get("STORE", "memory")
PUT_SAMPLES = int(os.environ.get("PUT_SAMPLES", "10"))
PUT_PAUSE = float(os.environ.get("PUT_PAUSE", "0.1"))
FIGURES = ["first window", "deep page", "window write", "window behind", "window put"]


def call(conn, method, path, data=None):
    """The answer and its seconds; any status but 200 stops the benchmark."""
    return benchlib.ok_request(conn, method, path, data, script="bench-windows")


def measure(rows):
    """Each figure's median seconds and largest answer, on a fresh server with a feed of `rows` rows."""
    with tempfile.TemporaryDirectory(prefix="bench-windows-") as directory, \
            benchlib.Server(BIN, "--body-limit", "268435456", "--max-feed-memory", "8589934592",
                            *(["--store", f"sqlite:{directory}/feeds.db"] if STORE == "sqlite" else [])) as server:
        conn = server.connection(timeout=600)
        data = [{"id": i, "title": f"row {i}", "v": 0} for i in range(rows)]
        answer, _ = call(conn, "PUT", "/feeds/big", json.dumps(data, separators=(",", ":")).encode())
        first = version = json.loads(answer)["version"]
        call(conn, "GET", "/feeds/big?offset=0&limit=1")
        times = {figure: [] for figure in FIGURES}
        largest = {figure: 0 for figure in FIGURES}

        def timed(figure, path):
            answer, seconds = call(conn, "GET", path)
            times[figure].append(seconds)
            largest[figure] = max(largest[figure], len(answer))
            return answer

        rng = random.Random(7)
        for k in range(SAMPLES):
            timed("first window", f"/feeds/big/changes?since=0&offset=0&limit={50 + k}")
            page = json.loads(timed("deep page", f"/feeds/big?offset={rows - 100 + k}&limit=50"))
            assert page["total"] == rows and len(page["data"]) == 50, page
            row = rng.randrange(rows)
            data[row]["v"] += 1
            ops = json.dumps({"ops": [{"op": "upsert", "item": data[row]}]}).encode()
            answer, _ = call(conn, "PATCH", "/feeds/big", ops)
            before, version = version, json.loads(answer)["version"]
            timed("window write", f"/feeds/big/changes?since={before}&offset=0&limit=50")
            behind = json.loads(timed("window behind", f"/feeds/big/changes?since={max(first, version - 5)}&offset={100 + k}&limit=50"))
            assert behind["to"] == version and behind["total"]["new"] == rows, behind
        for k in range(PUT_SAMPLES):
            row = rng.randrange(rows)
            data[row]["v"] += 1
            answer, _ = call(conn, "PUT", "/feeds/big", json.dumps(data, separators=(",", ":")).encode())
            before, version = version, json.loads(answer)["version"]
            time.sleep(PUT_PAUSE)
            window = json.loads(timed("window put", f"/feeds/big/changes?since={before}&offset=0&limit=50"))
            assert window["to"] == version and window["total"]["new"] == rows, window
        return {figure: (statistics.median(times[figure]), largest[figure]) for figure in FIGURES}


def main():
    ratios = {figure: [] for figure in FIGURES}
    figures = {"rows_small": ROWS_SMALL, "rows_big": ROWS_BIG, "samples": SAMPLES, "put_samples": PUT_SAMPLES,
               "put_pause": PUT_PAUSE, "runs": RUNS, "store": STORE, "goal": 2,
               "figures": {figure: {"small_ms": [], "big_ms": [], "largest_answer_bytes": 0} for figure in FIGURES}}
    for run in range(RUNS):
        small, big = measure(ROWS_SMALL), measure(ROWS_BIG)
        for figure in FIGURES:
            ratio = big[figure][0] / small[figure][0]
            ratios[figure].append(ratio)
            kept = figures["figures"][figure]
            kept["small_ms"].append(small[figure][0] * 1000)
            kept["big_ms"].append(big[figure][0] * 1000)
            kept["largest_answer_bytes"] = max(kept["largest_answer_bytes"], small[figure][1], big[figure][1])
            print(f"run {run + 1}: {figure:13}  {ROWS_SMALL:,} rows {small[figure][0] * 1000:.3f} ms, "
                  f"{ROWS_BIG:,} rows {big[figure][0] * 1000:.3f} ms: ratio {ratio:.2f}; "
                  f"largest answer {max(small[figure][1], big[figure][1]):,} bytes", flush=True)
    for figure in FIGURES:
        figures["figures"][figure]["ratio"] = benchlib.distribution(ratios[figure])
    rows = [f"{figure}: {ROWS_BIG:,} / {ROWS_SMALL:,} rows, median of {RUNS} runs (spread): "
            f"{benchlib.spread(ratios[figure])}; goal at most 2" for figure in FIGURES]
    benchlib.report("windows" if STORE == "memory" else f"windows-{STORE}", rows, figures)


if __name__ == "__main__":
    main()
