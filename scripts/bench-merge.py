#!/usr/bin/env python3
"""`changes` with `values=merge` against `values=whole`: bytes and time (`make bench-merge`, release build).

Usage: scripts/bench-merge.py [BINARY]   (default .build/release/batchdiff)

One server (memory store). Rows of ten members `{id, m1..m9}`; each version changes one
member of a tenth of the rows (chosen at random).
  bytes   a feed of SMALL rows (default 2,000), VERSIONS versions (default 20): for each, the
          `changes?since=<the one before>` answer with values=merge and with values=whole,
          as sent and gzip'd (the server's own compression, `Accept-Encoding: gzip`); the
          ratio merge/whole per version, their median (goals <= 0.25 plain, <= 0.5 gzip'd)
  time    a feed of BIG rows (default 100,000): after each of TIMED versions (default 5), the
          first `changes?since=` two versions back (nothing prepared: read, diffed, written)
          with values=merge, then the same with values=whole on a twin feed with the same
          versions (each answer computed once, uncached), in alternating order; ratio of their
          times (goal <= 1.2)
RUNS (default 3) runs; each figure's median and spread (min to max) at the end. Python 3
standard library only.
"""
import gzip, json, os, random, statistics, sys, time

import benchlib

BIN = sys.argv[1] if len(sys.argv) > 1 else ".build/release/batchdiff"
SMALL = int(os.environ.get("SMALL", "2000"))
BIG = int(os.environ.get("BIG", "100000"))
VERSIONS = int(os.environ.get("VERSIONS", "20"))
TIMED = int(os.environ.get("TIMED", "5"))
RUNS = int(os.environ.get("RUNS", "3"))


def history(rows, count, seed):
    """`count` + 1 versions of `rows` rows, as JSON bytes: each next one changes one member of a tenth of the rows."""
    rng = random.Random(seed)
    items = [{"id": i, **{f"m{m}": f"member {m} of row {i}" for m in range(1, 10)}} for i in range(rows)]
    texts = [json.dumps(items, separators=(",", ":")).encode()]
    for version in range(count):
        for index in rng.sample(range(rows), rows // 10):
            items[index] = dict(items[index], **{f"m{rng.randrange(1, 10)}": f"changed in version {version + 2}"})
        texts.append(json.dumps(items, separators=(",", ":")).encode())
    return texts


def get(conn, path, gzipped=False):
    """The answer's bytes (as sent) and the seconds it took."""
    start = time.perf_counter()
    conn.request("GET", path, headers={"Accept-Encoding": "gzip"} if gzipped else {})
    response = conn.getresponse()
    data = response.read()
    seconds = time.perf_counter() - start
    if response.status != 200:
        sys.exit(f"bench-merge: GET {path}: {response.status} {data[:200]!r}")
    if gzipped and response.getheader("Content-Encoding") != "gzip":
        sys.exit(f"bench-merge: GET {path}: not gzip'd")
    return data, seconds


def put(conn, feed, body):
    """The version a PUT of `body` made."""
    data, _ = benchlib.ok_request(conn, "PUT", feed, body, script="bench-merge")
    return json.loads(data)["version"]


def run(server, number):
    conn = server.connection(timeout=300)
    figures = {}
    # Bytes.
    plain, zipped = [], []
    versions = [put(conn, f"/feeds/small{number}", text) for text in history(SMALL, VERSIONS, seed=number)]
    for before in versions[:-1]:
        path = f"/feeds/small{number}/changes?since={before}"
        # The latest stays the same while both are read: each asks of the same pair.
        merge, whole = get(conn, path + "&values=merge")[0], get(conn, path)[0]
        if json.loads(merge)["to"] != versions[-1]:
            sys.exit("bench-merge: the answer is not to the latest")
        plain.append(len(merge) / len(whole))
        zipped.append(len(get(conn, path + "&values=merge", gzipped=True)[0]) / len(get(conn, path, gzipped=True)[0]))
    figures["bytes_ratio"] = statistics.median(plain)
    figures["gzip_bytes_ratio"] = statistics.median(zipped)
    # Time.
    texts = history(BIG, TIMED + 1, seed=100 + number)
    ratios, merge_ms, whole_ms = [], [], []
    made = {"merge": [], "whole": []}
    for index, text in enumerate(texts):
        for kind in ("merge", "whole"):
            made[kind].append(put(conn, f"/feeds/big{number}{kind}", text))
        if index < 2:
            continue
        times = {}
        for kind in (("merge", "whole") if index % 2 else ("whole", "merge")):
            query = "&values=merge" if kind == "merge" else ""
            _, times[kind] = get(conn, f"/feeds/big{number}{kind}/changes?since={made[kind][index - 2]}{query}")
        ratios.append(times["merge"] / times["whole"])
        merge_ms.append(times["merge"] * 1000)
        whole_ms.append(times["whole"] * 1000)
    figures["time_ratio"] = statistics.median(ratios)
    figures["merge_ms"] = statistics.median(merge_ms)
    figures["whole_ms"] = statistics.median(whole_ms)
    for feed in (f"/feeds/small{number}", f"/feeds/big{number}merge", f"/feeds/big{number}whole"):
        benchlib.ok_request(conn, "DELETE", feed, script="bench-merge", ok=(204,))
    return figures


def main():
    runs = []
    with benchlib.Server(BIN, "--body-limit", str(64 << 20), "--max-feed-memory", str(4 << 30)) as server:
        for number in range(1, RUNS + 1):
            figures = run(server, number)
            runs.append(figures)
            print(f"run {number}: " + ", ".join(f"{name} {value:.3f}" for name, value in figures.items()), flush=True)

    def values(name):
        return [figures[name] for figures in runs]
    benchlib.report("merge", [
        f"{SMALL:,} rows of ten members, one member of a tenth of them changed a version, median of {VERSIONS - 1} versions: "
        f"merge / whole bytes {benchlib.spread(values('bytes_ratio'), 3)} (goal <= 0.25), "
        f"gzip'd {benchlib.spread(values('gzip_bytes_ratio'), 3)} (goal <= 0.5)",
        f"{BIG:,} rows, first changes two versions back: merge {benchlib.spread(values('merge_ms'), 1, ' ms')}, "
        f"whole {benchlib.spread(values('whole_ms'), 1, ' ms')}, ratio {benchlib.spread(values('time_ratio'), 2)} (goal <= 1.2)",
    ], {name: benchlib.distribution(values(name)) for name in runs[0]})


if __name__ == "__main__":
    main()
