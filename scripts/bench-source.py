#!/usr/bin/env python3
"""Feeds that follow PostgreSQL (`make bench-source`, release build): commit to answer, throughput, cost.

Usage: scripts/bench-source.py [BINARY]   (default .build/release/batchdiff)

A throwaway cluster (Debian's PostgreSQL, `wal_level=logical`, on loopback) holds
`todos(id, owner, title, rank, n)`: OWNERS users (default 1,000) of ROWS rows each (default
20), and `big(id, grp, v)`: group 1 of BIG rows (default 1,000,000), group 2 of 1,000. The
shapes: `todos-{owner}` (rows by rank, id) and `big-{grp}` (rows by v, id). Each run starts a
memory-store server following the cluster (each on a new slot), and measures:
  commit to answer  a long poll parked on todos-1, then one single-row UPDATE of its rows
                    (sent to a psql session kept open), timed from the send to the long
                    poll's answer; SAMPLES times (default 50): p50 and p99 (goal p99 <= 100 ms)
  throughput        every user's feed made, then UPDATES single-row updates (default 20,000)
                    of random users' rows, in transactions of 10 (one DO block); row changes a
                    second from its start until the server applied them all (goal >= 5,000);
                    then every feed compared with its SELECT; the baseline: the same DO block
                    alone, before the run's server starts (what the database itself takes)
  CPU per change    the server's CPU time (utime + stime) for 2,000 updates of ten users'
                    rows, in transactions of 10, with every feed made, against a fresh server
                    with only those ten made (goal ratio <= 2: the feeds a row belongs to are
                    found by its values, not searched for)
  cost              a one-row commit to big-1 (BIG rows) against one to big-2 (1,000 rows):
                    commit to long-poll answer, median of SAMPLES each, ratio (goal <= 2)
RUNS (default 3) runs; each figure's median and spread (min to max) at the end. Python 3
standard library only.
"""
import json, os, random, statistics, subprocess, sys, threading, time

import benchlib

BIN = sys.argv[1] if len(sys.argv) > 1 else ".build/release/batchdiff"
OWNERS = int(os.environ.get("OWNERS", "1000"))
ROWS = int(os.environ.get("ROWS", "20"))
BIG = int(os.environ.get("BIG", "1000000"))
UPDATES = int(os.environ.get("UPDATES", "20000"))
SAMPLES = int(os.environ.get("SAMPLES", "50"))
RUNS = int(os.environ.get("RUNS", "3"))

SHAPES = {"shapes": [
    {"feed": "todos-{owner}", "table": "todos", "columns": ["id", "title", "rank", "n"], "where": {"owner": "{owner}"}, "orderBy": ["rank", "id"]},
    {"feed": "big-{grp}", "table": "big", "columns": ["id", "v"], "where": {"grp": "{grp}"}, "orderBy": ["v", "id"]},
]}


class Session:
    """A psql session kept open: each statement sent is run at once (autocommit)."""

    def __init__(self, cluster):
        self.process = subprocess.Popen(cluster.command("psql", "-q", "-h", cluster.dir, "-p", str(cluster.port), "-U", "postgres",
                                                        "-d", "postgres", "-v", "ON_ERROR_STOP=1"),
                                        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        benchlib.kill_at_exit(self.process)

    def send(self, sql):
        self.process.stdin.write(sql + "\n")
        self.process.stdin.flush()

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=30)


def get_json(server, path, timeout=30):
    status, _, body = benchlib.fetch(server.port, "GET", path, timeout=timeout)
    if status != 200:
        sys.exit(f"bench-source: GET {path}: {status} {body[:300]!r}")
    return json.loads(body)


def metric(server, name):
    _, _, body = benchlib.fetch(server.port, "GET", "/metrics")
    return benchlib.metric(body, name) or 0


def cpu_seconds(pid):
    """The process's user and system CPU time, in seconds."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def commit_to_answer(server, session, feed, sql_for):
    """Seconds from sending one commit to feed's parked long poll answering, SAMPLES times."""
    times = []
    version = get_json(server, f"/feeds/{feed}")["version"]
    for index in range(SAMPLES):
        answered = {}
        def poll():
            answered["body"] = get_json(server, f"/feeds/{feed}/changes?since={version}&wait=10", timeout=20)
            answered["at"] = time.perf_counter()
        thread = threading.Thread(target=poll)
        thread.start()
        time.sleep(0.05)  # parked by then
        sent = time.perf_counter()
        session.send(sql_for(index))
        thread.join()
        if answered["body"]["to"] != version + 1:
            sys.exit(f"bench-source: {feed}: expected one version after {version}, got {answered['body']['to']}")
        version = answered["body"]["to"]
        times.append(answered["at"] - sent)
    return times


def wait_for_changes(server, target, timeout=300):
    """Waits until the server applied `target` row changes in all; returns when it did."""
    deadline = time.monotonic() + timeout
    while metric(server, "batchdiff_source_row_changes_total") < target:
        if time.monotonic() > deadline:
            sys.exit("bench-source: the server did not apply the updates in time")
        time.sleep(0.01)
    return time.perf_counter()


def update_block(owners, count, per_transaction=10, seed=1):
    """A DO block of `count` single-row updates of random rows of `owners`, committed every `per_transaction`."""
    return f"""DO $$
        DECLARE i int; target int; owners int[] := {owners};
        BEGIN
          PERFORM setseed({seed / 10});
          FOR i IN 1..{count} LOOP
            target := (owners[1 + floor(random() * array_length(owners, 1))::int] - 1) * {ROWS} + 1 + floor(random() * {ROWS})::int;
            UPDATE todos SET n = n + 1 WHERE id = target;
            IF i % {per_transaction} = 0 THEN COMMIT; END IF;
          END LOOP;
        END $$;"""


def check_feeds(server, cluster):
    """Every user's feed equals its SELECT."""
    expected = json.loads(cluster.query("postgres", f"""
        SELECT json_object_agg(owner, rows) FROM (SELECT owner, json_agg(json_build_object('id', id, 'title', title, 'rank', rank, 'n', n)
        ORDER BY rank, id) AS rows FROM todos GROUP BY owner) AS owners"""))
    for owner in range(1, OWNERS + 1):
        if get_json(server, f"/feeds/todos-{owner}")["data"] != expected[str(owner)]:
            sys.exit(f"bench-source: todos-{owner} differs from its SELECT")


def server_for(cluster, shapes_path, slot):
    """A server following the cluster on a slot of its own (made at its start, from there on)."""
    return benchlib.Server(BIN, "--source-database", cluster.uri, "--shapes", shapes_path, "--source-slot", slot,
                           "--max-feed-memory", str(8 << 30), "--max-wait", "30")


def run(cluster, shapes_path, number):
    figures = {}
    started = time.perf_counter()
    cluster.query("postgres", update_block(f"ARRAY(SELECT generate_series(1, {OWNERS}))", UPDATES, seed=number))
    figures["database_alone_row_changes_per_s"] = UPDATES / (time.perf_counter() - started)
    with server_for(cluster, shapes_path, f"bench{number}all") as server:
        session = Session(cluster)
        latency = commit_to_answer(server, session, "todos-1", lambda i: f"UPDATE todos SET n = n + 1 WHERE id = {1 + i % ROWS};")
        figures["commit_p50_ms"] = statistics.median(latency) * 1000
        figures["commit_p99_ms"] = benchlib.percentile(latency, 0.99) * 1000
        started = time.perf_counter()
        for owner in range(1, OWNERS + 1):
            get_json(server, f"/feeds/todos-{owner}")
        figures["feeds_made_s"] = time.perf_counter() - started
        before = metric(server, "batchdiff_source_row_changes_total")
        started = time.perf_counter()
        done = threading.Thread(target=cluster.query, args=("postgres", update_block(f"ARRAY(SELECT generate_series(1, {OWNERS}))", UPDATES, seed=number)))
        done.start()
        finished = wait_for_changes(server, before + UPDATES)
        done.join()
        figures["row_changes_per_s"] = UPDATES / (finished - started)
        check_feeds(server, cluster)
        # CPU with every feed made.
        before, cpu = metric(server, "batchdiff_source_row_changes_total"), cpu_seconds(server.pid)
        cluster.query("postgres", update_block("ARRAY[1,2,3,4,5,6,7,8,9,10]", 2000, seed=number))
        wait_for_changes(server, before + 2000)
        cpu_all = cpu_seconds(server.pid) - cpu
        session.close()
    with server_for(cluster, shapes_path, f"bench{number}ten") as server:
        for owner in range(1, 11):
            get_json(server, f"/feeds/todos-{owner}")
        before, cpu = metric(server, "batchdiff_source_row_changes_total"), cpu_seconds(server.pid)
        cluster.query("postgres", update_block("ARRAY[1,2,3,4,5,6,7,8,9,10]", 2000, seed=number))
        wait_for_changes(server, before + 2000)
        cpu_ten = cpu_seconds(server.pid) - cpu
        figures["cpu_all_us_per_change"] = cpu_all / 2000 * 1e6
        figures["cpu_ten_us_per_change"] = cpu_ten / 2000 * 1e6
        figures["cpu_ratio"] = cpu_all / cpu_ten
        # Cost: one-row commits to a big feed and a small one.
        started = time.perf_counter()
        get_json(server, "/feeds/big-1", timeout=300)
        figures["big_feed_made_s"] = time.perf_counter() - started
        get_json(server, "/feeds/big-2")
        session = Session(cluster)
        big = commit_to_answer(server, session, "big-1", lambda i: f"UPDATE big SET v = v + 1 WHERE id = {1 + (i * 7919) % BIG};")
        small = commit_to_answer(server, session, "big-2", lambda i: f"UPDATE big SET v = v + 1 WHERE id = {BIG + 1 + (i * 7) % 1000};")
        session.close()
        figures["big_commit_ms"] = statistics.median(big) * 1000
        figures["small_commit_ms"] = statistics.median(small) * 1000
        figures["big_small_ratio"] = statistics.median(big) / statistics.median(small)
    return figures


def main():
    cluster = benchlib.Cluster(settings="-c wal_level=logical -c max_wal_size=4GB")
    try:
        shapes_path = os.path.join(cluster.dir, "shapes.json")
        with open(shapes_path, "w") as file:
            json.dump(SHAPES, file)
        os.chmod(cluster.dir, 0o755)
        cluster.query("postgres", f"""
            CREATE TABLE todos (id int PRIMARY KEY, owner int NOT NULL, title text NOT NULL, rank int NOT NULL, n int NOT NULL DEFAULT 0);
            INSERT INTO todos SELECT i, 1 + (i - 1) / {ROWS}, 'todo ' || i, i % 7, 0 FROM generate_series(1, {OWNERS * ROWS}) AS i;
            CREATE INDEX ON todos (owner);
            CREATE TABLE big (id int PRIMARY KEY, grp int NOT NULL, v int NOT NULL);
            INSERT INTO big SELECT i, CASE WHEN i <= {BIG} THEN 1 ELSE 2 END, i FROM generate_series(1, {BIG + 1000}) AS i;
            CREATE INDEX ON big (grp);
            ANALYZE""")
        runs = []
        for number in range(1, RUNS + 1):
            figures = run(cluster, shapes_path, number)
            runs.append(figures)
            print(f"run {number}: " + ", ".join(f"{name} {value:.2f}" for name, value in figures.items()), flush=True)
    finally:
        cluster.close()
    def values(name):
        return [figures[name] for figures in runs]
    rows = [
        f"commit to long-poll answer, todos-1: p50 {benchlib.spread(values('commit_p50_ms'), 1, ' ms')}, "
        f"p99 {benchlib.spread(values('commit_p99_ms'), 1, ' ms')} (goal p99 <= 100 ms)",
        f"{OWNERS:,} feeds of {ROWS} rows made by their first reads: {benchlib.spread(values('feeds_made_s'), 2, ' s')}",
        f"{UPDATES:,} single-row updates in transactions of 10, every feed made: "
        f"{benchlib.spread(values('row_changes_per_s'), 0, ' row changes/s', comma=True)} (goal >= 5,000); every feed equal to its SELECT; "
        f"the DO block alone, no server: {benchlib.spread(values('database_alone_row_changes_per_s'), 0, ' row changes/s', comma=True)}",
        f"server CPU per row change, ten users' rows: every feed made {benchlib.spread(values('cpu_all_us_per_change'), 1, ' us')}, "
        f"only the ten made {benchlib.spread(values('cpu_ten_us_per_change'), 1, ' us')}, ratio {benchlib.spread(values('cpu_ratio'), 2)} (goal <= 2)",
        f"one-row commit to answer: {BIG:,}-row feed {benchlib.spread(values('big_commit_ms'), 1, ' ms')}, "
        f"1,000-row feed {benchlib.spread(values('small_commit_ms'), 1, ' ms')}, ratio {benchlib.spread(values('big_small_ratio'), 2)} (goal <= 2)",
        f"the {BIG:,}-row feed made by its first read: {benchlib.spread(values('big_feed_made_s'), 2, ' s')}",
    ]
    benchlib.report("source", rows, {name: benchlib.distribution(values(name)) for name in runs[0]})


if __name__ == "__main__":
    main()
