#!/usr/bin/env python3
"""The stores side by side (`make bench-stores`, release build).

For each store (memory, an SQLite file, a throwaway PostgreSQL cluster started here with
Debian's `initdb`/`pg_ctl`, on loopback), one server in turn, the same work: a feed of
10,000 items, then VERSIONS PUTs of a new version (one item in ten changed, a few moved),
then an uncached `changes?since=<v>` for each retained version (every answer computed:
the old version read from the store and diffed). Prints the median time of each, and its
ratio to the memory store's in the same run; with RUNS runs, the median ratio and its
spread. Goals (issue 11): SQLite at most 2x memory, PostgreSQL at most 3x.
"""
import json, os, random, shutil, statistics, sys, tempfile

import benchlib

BIN = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("BATCHDIFF_BIN", ".build/release/batchdiff")
ITEMS = int(os.environ.get("BENCH_ITEMS", "10000"))
VERSIONS = int(os.environ.get("BENCH_VERSIONS", "30"))
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
GOALS = {"sqlite": 2.0, "postgres": 3.0}


def request(conn, method, path, body=None):
    """The answer's bytes and its seconds; any status but 200 stops the benchmark."""
    return benchlib.ok_request(conn, method, path, body, script="bench-stores")


def snapshots():
    """The feed's versions: 10,000 items, then one item in ten changed and 20 moved each time."""
    rng = random.Random(3)
    items = [{"id": i, "title": f"item {i}", "price": i % 100, "rev": 0} for i in range(ITEMS)]
    yield json.dumps(items).encode()
    for version in range(VERSIONS):
        for index in rng.sample(range(ITEMS), ITEMS // 10):
            items[index] = dict(items[index], rev=version + 1)
        for _ in range(20):
            items.insert(rng.randrange(ITEMS), items.pop(rng.randrange(ITEMS)))
        yield json.dumps(items).encode()


def measure(store):
    """Median PUT and uncached `changes` times (seconds) on one server with `store`."""
    with benchlib.Server(BIN, "--store", store, "--max-versions", str(VERSIONS + 2)) as server:
        conn = server.connection(timeout=60)
        puts, versions = [], []
        for body in snapshots():
            answer, seconds = request(conn, "PUT", "/feeds/bench", body)
            puts.append(seconds)
            versions.append(json.loads(answer)["version"])
        changes = [request(conn, "GET", f"/feeds/bench/changes?since={v}")[1] for v in versions[1:-1]]
        return statistics.median(puts[1:]), statistics.median(changes)


def main():
    cluster = benchlib.Cluster()
    work = tempfile.mkdtemp(prefix="batchdiff-bench-sqlite-")
    ratios = {"sqlite": ([], []), "postgres": ([], [])}
    times_ms = {name: {"put": [], "changes": []} for name in ("memory", "sqlite", "postgres")}
    try:
        for run in range(RUNS):
            # A fresh database each run: the same work on the same empty store.
            database = f"bench{run}"
            cluster.run("psql", "-h", cluster.dir, "-p", str(cluster.port), "-U", "postgres", "-q", "-c", f"CREATE DATABASE {database}")
            stores = {
                "memory": "memory",
                "sqlite": f"sqlite:{work}/feeds-{run}.db",
                "postgres": cluster.database_uri(database),
            }
            times = {name: measure(store) for name, store in stores.items()}
            base_put, base_changes = times["memory"]
            for name, (put, changes) in times.items():
                times_ms[name]["put"].append(put * 1000)
                times_ms[name]["changes"].append(changes * 1000)
                line = f"run {run + 1}: {name:8} PUT {put * 1000:7.2f} ms  uncached changes {changes * 1000:7.2f} ms"
                if name != "memory":
                    ratios[name][0].append(put / base_put)
                    ratios[name][1].append(changes / base_changes)
                    line += f"  ratio to memory: PUT {put / base_put:.2f}, changes {changes / base_changes:.2f}"
                print(line, flush=True)
    finally:
        cluster.close()
        shutil.rmtree(work, ignore_errors=True)
    spread = benchlib.spread
    rows = [f"{name} vs memory, {ITEMS} items, median of {RUNS} runs (spread): PUT {spread(put)}, "
            f"uncached changes {spread(changes)}; goal at most {GOALS[name]:.0f}x" for name, (put, changes) in ratios.items()]
    figures = {"items": ITEMS, "versions": VERSIONS, "runs": RUNS, "goals": GOALS,
               "ms": {name: {kind: benchlib.distribution(values) for kind, values in kinds.items()} for name, kinds in times_ms.items()},
               "ratio_to_memory": {name: {"put": benchlib.distribution(put), "changes": benchlib.distribution(changes)}
                                   for name, (put, changes) in ratios.items()}}
    benchlib.report("stores", rows, figures)


if __name__ == "__main__":
    main()
