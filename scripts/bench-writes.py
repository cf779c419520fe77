#!/usr/bin/env python3
"""Writes of one row to a big feed, PATCH against PUT (`make bench-writes`, release build).

Usage: scripts/bench-writes.py [BINARY]   (default .build/release/batchdiff)

Rows are `{"id": i, "title": "row i", "v": n}`; a one-row version is a PATCH of one upsert
(a random row's `v` raised by one) or a PUT of the whole array with that one row changed.
Every figure is measured RUNS times, each run on a fresh server, feed and store; its median
and spread (min to max) are printed, and at the end a table, one line a figure:
  PATCH time  PATCHES one-row PATCHes of random rows on a ROWS_SMALL-row feed and on a
              ROWS_BIG-row feed (memory store; each feed made by one PUT, then 5 untimed
              PATCHes), each timed by the client on one keep-alive connection: the median
              latency at each size and their ratio, big/small (goal at most 2); then the
              same on a SQLite file (a fresh one each run).
  sectioned   the same on sectioned feeds: SECTIONS_SMALL sections of ROWS_SMALL/SECTIONS_SMALL
              rows and SECTIONS_BIG of ROWS_BIG/SECTIONS_BIG, one random row of a random section
              upserted each time (every answer carries each section's row counts).
  memory      resident memory and batchdiff_feed_bytes per one-row version of a
              ROWS_BIG-row feed, by PATCH and by PUT (memory store, --max-versions 64): the
              feed, 5 warm-up versions, a reading, VERSIONS_MEM more versions, a reading
              (each after a GET /metrics and 1 s); growth / VERSIONS_MEM.
  store       bytes the store takes per one-row version of a ROWS_STORE-row feed, by PUT
              and by PATCH (--max-versions 64): the first version, server stopped (SIGTERM),
              measured; STORE_VERSIONS more, stopped, measured again; growth / STORE_VERSIONS.
              SQLite: the file with its -wal and -shm, after `PRAGMA wal_checkpoint(TRUNCATE)`,
              and the bytes of the versions' bodies in it (sum of length(body); the file
              grows by whole pages, so a few small versions may not grow it at all).
              PostgreSQL (a throwaway cluster started here, as bench-stores does,
              benchlib.Cluster): pg_total_relation_size of batchdiff_versions and
              batchdiff_kept_answers, no VACUUM, and the bodies' pg_column_size.
  busy feed   BUSY_PUTS PUTs of BUSY_ROWS objects with uuid4 ids, before each one `v` of
              BUSY_ROWS/10 random rows raised (default flags): resident memory as the last
              PUT is answered, then a second after a GET /metrics, batchdiff_feed_bytes, and
              the PUTs' median time.
  sorted      a feed created sorted (`?orderBy=-score`) of ROWS_SMALL and of ROWS_BIG rows
              `{"id": i, "score": n - i, "title": "row i"}`: PATCHES one-upsert PATCHes, each
              giving a row of the bottom tenth a score above every other or one of the top
              tenth a score below every other (each row moves about 0.9 n places), timed as
              above: the medians and their ratio, big/small (goal at most 2). Then PUT of
              ROWS_BIG such rows with one `v` raised each time, SORTED_PUTS times after an
              untimed first: listed in order to a sorted feed, shuffled to a sorted feed, and
              in order to a feed that is not sorted (the baseline): the medians, and in order
              against the baseline (about 1: a PUT in order costs no sort).
BENCH_ONLY=busy runs the busy feed alone, BENCH_ONLY=sorted the sorted feeds alone.
The PATCH-time and memory servers run with --body-limit 268435456 --max-feed-memory 8589934592
(the store ones with that body limit). A binary without PATCH (it answers 405) gets
"n/a (no PATCH)" for those figures; the others are measured all the same.
Environment (defaults): BENCH_RUNS 3, ROWS_SMALL 1000, ROWS_BIG 1000000, PATCHES 30,
VERSIONS_MEM 20 (at most 50), ROWS_STORE 100000, STORE_VERSIONS 20 (at most 50),
BUSY_ROWS 100000, BUSY_PUTS 100, SECTIONS_SMALL 10, SECTIONS_BIG 1000, SORTED_PUTS 5. Python 3 standard library only; all traffic on 127.0.0.1.
"""
import functools, os, random, shutil, socket, sqlite3, statistics, subprocess, sys, tempfile, time, uuid

import benchlib
from benchlib import Cluster, timed_request

BIN = sys.argv[1] if len(sys.argv) > 1 else ".build/release/batchdiff"
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
ROWS_SMALL = int(os.environ.get("ROWS_SMALL", "1000"))
ROWS_BIG = int(os.environ.get("ROWS_BIG", "1000000"))
PATCHES = int(os.environ.get("PATCHES", "30"))
VERSIONS_MEM = int(os.environ.get("VERSIONS_MEM", "20"))
ROWS_STORE = int(os.environ.get("ROWS_STORE", "100000"))
STORE_VERSIONS = int(os.environ.get("STORE_VERSIONS", "20"))
BUSY_ROWS = int(os.environ.get("BUSY_ROWS", "100000"))
BUSY_PUTS = int(os.environ.get("BUSY_PUTS", "100"))
SECTIONS_SMALL = int(os.environ.get("SECTIONS_SMALL", "10"))
SECTIONS_BIG = int(os.environ.get("SECTIONS_BIG", "1000"))
SORTED_PUTS = int(os.environ.get("SORTED_PUTS", "5"))

BIG = ["--body-limit", "268435456", "--max-feed-memory", "8589934592"]
KEEP = ["--max-versions", "64"]  # at least 10 more than any count of versions made here
WARM_UP = 5
TIMEOUT = 600  # seconds for one request: a PUT of a million rows takes seconds
ROW = '{"id":%s,"title":"row %d","v":%d}'
STORE_SIZE_SQL = ("SELECT pg_total_relation_size('batchdiff_versions')"
                  " + coalesce(pg_total_relation_size(to_regclass('batchdiff_kept_answers')), 0)")
# The bytes the versions' bodies take as stored (compressed by TOAST when it does).
STORE_KEPT_SQL = "SELECT coalesce(sum(pg_column_size(body)), 0) FROM batchdiff_versions"


class NoPatch(Exception):
    """The binary answers PATCH with 405: it has none."""


def serve(*flags):
    """`BIN serve FLAGS` (benchlib.Server), stopped by SIGTERM at the end of its `with` block."""
    try:
        return benchlib.Server(BIN, *flags, stop_timeout=120)
    except RuntimeError as error:
        sys.exit(f"bench-writes: {error}")


def connect(server):
    """A keep-alive connection, without Nagle's delay."""
    conn = server.connection(timeout=TIMEOUT)
    conn.connect()
    conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return conn


def reading(server, conn):
    """(Resident memory in KB, batchdiff_feed_bytes) after a GET /metrics and a second's settle."""
    call(conn, "GET", "/metrics")
    time.sleep(1)
    rss = server.rss_mb() * 1024
    return rss, benchlib.metric(call(conn, "GET", "/metrics")[0], "batchdiff_feed_bytes") or 0


def call(conn, method, path, body=None):
    """The answer's bytes and the seconds from sending the request to the answer read."""
    status, data, seconds = timed_request(conn, method, path, body)
    if method == "PATCH" and status in (405, 501):
        raise NoPatch()
    if status != 200:
        sys.exit(f"bench-writes: {method} {path}: {status} {data[:300]!r}")
    return data, seconds


@functools.lru_cache(maxsize=None)
def numbered(count):
    """The ids (as JSON) and rows of a fresh feed of `count` rows `{"id": i, ...}`, built once."""
    ids = tuple(map(str, range(count)))
    return ids, tuple([ROW % (key, index, 0) for index, key in enumerate(ids)])


class Feed:
    """A feed's rows as JSON texts, each row's `v` raised by `bump`; `body` joins them."""

    def __init__(self, ids, rows=None):
        self.ids = ids
        self.rows = list(rows) if rows is not None else [ROW % (key, index, 0) for index, key in enumerate(ids)]
        self.v = {}

    @classmethod
    def numbered(cls, count):
        return cls(*numbered(count))

    def body(self):
        return ("[" + ",".join(self.rows) + "]").encode()

    def bump(self, index):
        self.v[index] = self.v.get(index, 0) + 1
        self.rows[index] = ROW % (self.ids[index], index, self.v[index])
        return self.rows[index]

    def write(self, conn, path, method, rng):
        """One new version with one random row changed, by a PATCH of one upsert or a whole PUT: its seconds."""
        row = self.bump(rng.randrange(len(self.rows)))
        if method == "PATCH":
            return call(conn, "PATCH", path, ('{"ops":[{"op":"upsert","item":%s}]}' % row).encode())[1]
        return call(conn, "PUT", path, self.body())[1]


# --- the figures: one run each ------------------------------------------------------------------

def patch_time(run, store=()):
    """Median PATCH latency (seconds) on the small feed and on the big one (`store`: the server's store flags)."""
    rng = random.Random(run)
    medians = []
    with serve(*BIG, *store) as server:
        for name, count in (("small", ROWS_SMALL), ("big", ROWS_BIG)):
            feed, path = Feed.numbered(count), f"/feeds/{name}"
            conn = connect(server)
            call(conn, "PUT", path, feed.body())
            for _ in range(WARM_UP):
                feed.write(conn, path, "PATCH", rng)
            medians.append(statistics.median(feed.write(conn, path, "PATCH", rng) for _ in range(PATCHES)))
            conn.close()
    return medians


def sectioned_patch_time(run):
    """Median PATCH latency (seconds) of one row of a sectioned feed: SECTIONS_SMALL sections of
    ROWS_SMALL/SECTIONS_SMALL rows, and SECTIONS_BIG of ROWS_BIG/SECTIONS_BIG."""
    rng = random.Random(run)
    medians = []
    with serve(*BIG) as server:
        for name, sections, count in (("small", SECTIONS_SMALL, ROWS_SMALL), ("big", SECTIONS_BIG, ROWS_BIG)):
            per = count // sections
            text = lambda s, r, v: '{"id":%d,"title":"row %d","v":%d}' % (s * per + r, r, v)
            body = '{"sections":[%s]}' % ",".join(
                '{"id":"s%d","title":"Section %d","items":[%s]}' % (s, s, ",".join(text(s, r, 0) for r in range(per)))
                for s in range(sections))
            conn, path = connect(server), f"/feeds/sectioned-{name}"
            call(conn, "PUT", path, body.encode())
            times = []
            for step in range(WARM_UP + PATCHES):
                s, r = rng.randrange(sections), rng.randrange(per)
                patch = '{"ops":[{"op":"upsert","section":"s%d","item":%s}]}' % (s, text(s, r, step + 1))
                times.append(call(conn, "PATCH", path, patch.encode())[1])
            medians.append(statistics.median(times[WARM_UP:]))
            conn.close()
    return medians


def sorted_patch_time(run):
    """Median PATCH latency (seconds) of one upsert that moves its row about 0.9 n places, on
    a feed sorted by `-score` of ROWS_SMALL rows and of ROWS_BIG."""
    rng = random.Random(run)
    medians = []
    row = '{"id":%d,"score":%d,"title":"row %d"}'
    with serve(*BIG) as server:
        for name, count in (("small", ROWS_SMALL), ("big", ROWS_BIG)):
            conn, path = connect(server), f"/feeds/sorted-{name}"
            scores = list(range(count, 0, -1))  # by id; the feed lists the rows by score, highest first
            call(conn, "PUT", path + "?orderBy=-score", ("[" + ",".join(row % (i, scores[i], i) for i in range(count)) + "]").encode())
            top, bottom = count, 1
            times = []
            for step in range(WARM_UP + PATCHES):
                # A row of the bottom tenth to the top, or one of the top tenth to the bottom,
                # chosen by its place now: the scores ranked highest first.
                ranked = sorted(range(count), key=lambda i: -scores[i]) if count <= ROWS_SMALL else None
                tenth = max(1, count // 10)
                if step % 2 == 0:
                    top += 1
                    i = ranked[-1 - rng.randrange(tenth)] if ranked else min(rng.sample(range(count), 64), key=lambda i: scores[i])
                    scores[i] = top
                else:
                    bottom -= 1
                    i = ranked[rng.randrange(tenth)] if ranked else max(rng.sample(range(count), 64), key=lambda i: scores[i])
                    scores[i] = bottom
                patch = '{"ops":[{"op":"upsert","item":%s}]}' % (row % (i, scores[i], i))
                times.append(call(conn, "PATCH", path, patch.encode())[1])
            medians.append(statistics.median(times[WARM_UP:]))
            conn.close()
    return medians


def sorted_put_time(run):
    """Median PUT latency (seconds) of ROWS_BIG rows to a sorted feed listed in order, to one
    listed shuffled, and to a feed that is not sorted listed in order."""
    rng = random.Random(run)
    rows = ['{"id":%d,"score":%d,"v":%%d}' % (i, ROWS_BIG - i) for i in range(ROWS_BIG)]
    v = [0] * ROWS_BIG
    medians = []
    with serve(*BIG) as server:
        for name, query, shuffled in (("in-order", "?orderBy=-score", False), ("shuffled", "?orderBy=-score", True), ("unsorted", "", False)):
            conn, path = connect(server), f"/feeds/{name}"
            order = list(range(ROWS_BIG))
            times = []
            for put in range(1 + SORTED_PUTS):
                v[rng.randrange(ROWS_BIG)] += 1
                if shuffled:
                    rng.shuffle(order)
                body = ("[" + ",".join(rows[i] % v[i] for i in order) + "]").encode()
                times.append(call(conn, "PUT", path + (query if put == 0 else ""), body)[1])
            medians.append(statistics.median(times[1:]))
            conn.close()
    return medians


def sorted_rows():
    """The sorted feeds' rows of the table (``sorted_patch_time``, ``sorted_put_time``), RUNS runs each."""
    small, big = repeat("sorted PATCH time (ms)", lambda run: [seconds * 1000 for seconds in sorted_patch_time(run)],
                        [f"{ROWS_SMALL:,} rows", f"{ROWS_BIG:,} rows"])
    ratios = None if small is None else [b / s for b, s in zip(big, small)]
    in_order, shuffled, unsorted = repeat("sorted PUT time (ms)", lambda run: [seconds * 1000 for seconds in sorted_put_time(run)],
                                          ["in order", "shuffled", "not sorted"])
    label = f"PUT of {ROWS_BIG:,} rows"
    return [
        (f"sorted PATCH moving one row far, {ROWS_SMALL:,}-row feed, median latency", spread(small, "ms", 3)),
        (f"sorted PATCH moving one row far, {ROWS_BIG:,}-row feed, median latency", spread(big, "ms", 3)),
        (f"sorted PATCH moving one row far, latency ratio {ROWS_BIG:,} / {ROWS_SMALL:,} rows",
         spread(ratios, "x") + ("" if ratios is None else "; goal at most 2")),
        (f"{label} to a sorted feed, listed in order, median", spread(in_order, "ms", 1)),
        (f"{label} to a sorted feed, listed shuffled, median", spread(shuffled, "ms", 1)),
        (f"{label} to a feed not sorted, median", spread(unsorted, "ms", 1)),
        (f"{label}: sorted in order / not sorted", spread([a / b for a, b in zip(in_order, unsorted)], "x")),
        (f"{label}: sorted shuffled / not sorted", spread([a / b for a, b in zip(shuffled, unsorted)], "x")),
    ]


def memory(run, method):
    """Growth of resident memory (KB) and of batchdiff_feed_bytes (KB) per one-row version."""
    rng = random.Random(run)
    feed, path = Feed.numbered(ROWS_BIG), "/feeds/big"
    with serve(*BIG, *KEEP) as server:
        conn = connect(server)
        call(conn, "PUT", path, feed.body())
        for _ in range(WARM_UP):
            feed.write(conn, path, method, rng)
        rss, feed_bytes = reading(server, conn)
        for _ in range(VERSIONS_MEM):
            feed.write(conn, path, method, rng)
        rss_after, feed_bytes_after = reading(server, conn)
    return (rss_after - rss) / VERSIONS_MEM, (feed_bytes_after - feed_bytes) / 1024 / VERSIONS_MEM


def store_growth(run, store, size, method):
    """Bytes the store grows by per one-row version, by each of `size`'s readings (a tuple):
    measured with the server stopped."""
    rng = random.Random(run)
    feed, path = Feed.numbered(ROWS_STORE), "/feeds/stored"
    flags = ["--store", store, BIG[0], BIG[1], *KEEP]
    with serve(*flags) as server:
        call(connect(server), "PUT", path, feed.body())
    before = size()
    with serve(*flags) as server:
        conn = connect(server)
        for _ in range(STORE_VERSIONS):
            feed.write(conn, path, method, rng)
    return [(after - earlier) / STORE_VERSIONS for after, earlier in zip(size(), before)]


def sqlite_size(file):
    """(The file's bytes, the bytes of the versions' bodies in it.)"""
    with sqlite3.connect(file) as database:
        database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        kept = database.execute("SELECT coalesce(sum(length(body)), 0) FROM versions").fetchone()[0]
    database.close()
    return sum(os.path.getsize(part) for part in (file, file + "-wal", file + "-shm") if os.path.exists(part)), kept


def busy(run):
    """Resident memory (KB) as the busy feed's last PUT is answered and a second after a
    GET /metrics, batchdiff_feed_bytes (KB), and the PUTs' median time (ms)."""
    rng = random.Random(run)
    feed = Feed(['"%s"' % uuid.UUID(int=rng.getrandbits(128), version=4) for _ in range(BUSY_ROWS)])
    with serve() as server:
        conn = connect(server)
        times = []
        for _ in range(BUSY_PUTS):
            for index in rng.sample(range(BUSY_ROWS), BUSY_ROWS // 10):
                feed.bump(index)
            times.append(call(conn, "PUT", "/feeds/busy", feed.body())[1] * 1000)
        at_end = server.rss_mb() * 1024
        rss, feed_bytes = reading(server, conn)
    return at_end, rss, feed_bytes / 1024, statistics.median(times)


def busy_rows():
    """The busy feed's rows of the table (``busy``), RUNS runs."""
    at_end, rss, feed_bytes, put = repeat("busy feed (KB, ms)", busy, ["resident at the end", "resident settled", "batchdiff_feed_bytes", "PUT"])
    label = f"busy feed, {BUSY_PUTS} PUTs of {BUSY_ROWS:,} uuid rows ({BUSY_ROWS // 10:,} changed each)"
    return [
        (f"{label}: resident memory as the last PUT is answered", spread([kb / 1024 for kb in at_end], "MB", 1)),
        (f"{label}: resident memory a second later", spread([kb / 1024 for kb in rss], "MB", 1)),
        (f"{label}: batchdiff_feed_bytes at the end", spread([kb / 1024 for kb in feed_bytes], "MB", 1)),
        (f"{label}: PUT median", spread(put, "ms", 1)),
    ]


# --- runs and the table -------------------------------------------------------------------------

FIGURES = {}  # each measurement's values by run, for the JSON report: {name: {label: distribution}}


def spread(values, unit, digits=2):
    """`median unit (min to max)`, or `n/a (no PATCH)` for a figure the binary could not give."""
    return "n/a (no PATCH)" if values is None else benchlib.spread(values, digits, f" {unit}")


def repeat(name, measure, labels):
    """`measure(run)` RUNS times (a tuple of figures each), printed as it goes: each figure's values, or None without PATCH."""
    values = [[] for _ in labels]
    for run in range(RUNS):
        try:
            figures = measure(run)
        except NoPatch:
            print(f"{name}, run {run + 1}: n/a (no PATCH: the binary answers 405)", flush=True)
            FIGURES[name] = dict.fromkeys(labels)
            return [None for _ in labels]
        for value, figure in zip(values, figures):
            value.append(figure)
        print(f"{name}, run {run + 1}: " + ", ".join(f"{label} {figure:.2f}" for label, figure in zip(labels, figures)), flush=True)
    FIGURES[name] = {label: benchlib.distribution(value) for label, value in zip(labels, values)}
    return values


def main():
    if not (os.path.isfile(BIN) and os.access(BIN, os.X_OK)):
        sys.exit(f"bench-writes: {BIN} is not an executable (give the binary as the first argument)")
    if max(VERSIONS_MEM, STORE_VERSIONS) > 50 or min(VERSIONS_MEM, STORE_VERSIONS, PATCHES, RUNS) < 1:
        sys.exit("bench-writes: VERSIONS_MEM and STORE_VERSIONS must be 1 to 50 (64 versions are kept), PATCHES and BENCH_RUNS at least 1")
    print(f"binary: {os.path.realpath(BIN)}")
    print(f"runs {RUNS}; ROWS_SMALL {ROWS_SMALL:,}, ROWS_BIG {ROWS_BIG:,}, PATCHES {PATCHES}, VERSIONS_MEM {VERSIONS_MEM}, "
          f"ROWS_STORE {ROWS_STORE:,}, STORE_VERSIONS {STORE_VERSIONS}, BUSY_ROWS {BUSY_ROWS:,}, BUSY_PUTS {BUSY_PUTS}", flush=True)
    table = []
    if os.environ.get("BENCH_ONLY") == "busy":
        return print_table(busy_rows(), "writes-busy")
    if os.environ.get("BENCH_ONLY") == "sorted":
        return print_table(sorted_rows(), "writes-sorted")

    def latencies(label, small, big):
        table.append((f"PATCH of one row, {ROWS_SMALL:,}-row feed{label}, median latency", spread(small, "ms", 3)))
        table.append((f"PATCH of one row, {ROWS_BIG:,}-row feed{label}, median latency", spread(big, "ms", 3)))
        ratios = None if small is None else [b / s for b, s in zip(big, small)]
        table.append((f"PATCH of one row{label}, latency ratio {ROWS_BIG:,} / {ROWS_SMALL:,} rows",
                      spread(ratios, "x") + ("" if ratios is None else "; goal at most 2")))

    sizes = [f"{ROWS_SMALL:,} rows", f"{ROWS_BIG:,} rows"]
    latencies("", *repeat("PATCH time (ms)", lambda run: [seconds * 1000 for seconds in patch_time(run)], sizes))
    # The same on a SQLite file (a fresh one each run).
    with tempfile.TemporaryDirectory(prefix="batchdiff-bench-writes-") as directory:
        sqlite = lambda run: ("--store", f"sqlite:{directory}/patch-{run}.db")
        latencies(", SQLite", *repeat("PATCH time, SQLite (ms)", lambda run: [seconds * 1000 for seconds in patch_time(run, sqlite(run))], sizes))

    small, big = repeat("sectioned PATCH time (ms)", lambda run: [seconds * 1000 for seconds in sectioned_patch_time(run)],
                        [f"{SECTIONS_SMALL} x {ROWS_SMALL // SECTIONS_SMALL:,}", f"{SECTIONS_BIG:,} x {ROWS_BIG // SECTIONS_BIG:,}"])
    table.append((f"PATCH of one row, sectioned {SECTIONS_SMALL} x {ROWS_SMALL // SECTIONS_SMALL:,} rows, median latency", spread(small, "ms", 3)))
    table.append((f"PATCH of one row, sectioned {SECTIONS_BIG:,} x {ROWS_BIG // SECTIONS_BIG:,} rows, median latency", spread(big, "ms", 3)))
    ratios = None if small is None else [b / s for b, s in zip(big, small)]
    table.append(("PATCH of one row, sectioned, latency ratio big / small", spread(ratios, "x")))

    for method in ("PATCH", "PUT"):
        rss, feed_bytes = repeat(f"memory per version by {method} (KB)", functools.partial(memory, method=method),
                                 ["resident", "batchdiff_feed_bytes"])
        table.append((f"resident memory per one-row version by {method}, {ROWS_BIG:,} rows", spread(rss, "KB", 1)))
        table.append((f"batchdiff_feed_bytes per one-row version by {method}, {ROWS_BIG:,} rows", spread(feed_bytes, "KB", 1)))

    work = tempfile.mkdtemp(prefix="batchdiff-bench-writes-")
    cluster = None
    try:
        try:
            cluster = Cluster()
        except (SystemExit, subprocess.CalledProcessError, OSError) as error:
            print(f"bench-writes: no PostgreSQL cluster ({error}): its figures are left out", flush=True)
        for method in ("PUT", "PATCH"):
            def sqlite(run):
                file = f"{work}/feeds-{method}-{run}.db"
                return [bytes / 1024 for bytes in store_growth(run, f"sqlite:{file}", lambda: sqlite_size(file), method)]
            growth, kept = repeat(f"SQLite growth per version by {method} (KB)", sqlite, ["file", "bodies"])
            table.append((f"SQLite file growth per one-row version by {method}, {ROWS_STORE:,} rows", spread(growth, "KB", 1)))
            table.append((f"SQLite bytes of versions' bodies per one-row version by {method}, {ROWS_STORE:,} rows", spread(kept, "KB", 2)))
        for method in ("PUT", "PATCH") if cluster else ():
            def postgres(run):
                database = f"bench_{method.lower()}_{run}"
                cluster.query("postgres", f"CREATE DATABASE {database}")
                size = lambda: (int(cluster.query(database, STORE_SIZE_SQL)), int(cluster.query(database, STORE_KEPT_SQL)))
                return [bytes / 1024 for bytes in store_growth(run, cluster.database_uri(database), size, method)]
            growth, kept = repeat(f"PostgreSQL growth per version by {method} (KB)", postgres, ["tables", "bodies"])
            table.append((f"PostgreSQL growth per one-row version by {method}, {ROWS_STORE:,} rows", spread(growth, "KB", 1)))
            table.append((f"PostgreSQL bytes of versions' bodies per one-row version by {method}, {ROWS_STORE:,} rows", spread(kept, "KB", 2)))
    finally:
        if cluster:
            cluster.close()
        shutil.rmtree(work, ignore_errors=True)

    table += sorted_rows()
    table += busy_rows()

    print_table(table, "writes")


def print_table(table, name):
    """Prints the table, a line a figure under a heading, as the report `name`."""
    print()
    width = max(len(label) for label, _ in table)
    benchlib.report(name, [f"{os.path.basename(BIN)}, median of {RUNS} run{'s' * (RUNS != 1)} (min to max):"] +
                    [f"{label.ljust(width)}  {figure}" for label, figure in table],
                    {"runs": RUNS, "rows_small": ROWS_SMALL, "rows_big": ROWS_BIG, "patches": PATCHES, "versions_mem": VERSIONS_MEM,
                     "rows_store": ROWS_STORE, "store_versions": STORE_VERSIONS, "busy_rows": BUSY_ROWS, "busy_puts": BUSY_PUTS,
                     "sections_small": SECTIONS_SMALL, "sections_big": SECTIONS_BIG, "figures": FIGURES})


if __name__ == "__main__":
    main()
