#!/usr/bin/env python3
"""Soak: a bounded chaos run of the server on loopback (`make soak`, `make soak-short`).

    scripts/soak.py [SERVER_BINARY]        (default .build/release/batchdiff)
    SOAK_SECONDS=10 scripts/soak.py ...    (default 60)
    SOAK_SEED=N                            (default random; printed at the start)

Starts `SERVER_BINARY serve --port 0` with small limits (32 MiB of feed memory, 64 MiB of
request memory, a 4 MiB body limit, 5 s header and body timeouts, 5 s longest wait,
3000 connections) and, for SOAK_SECONDS, runs at once, in threads of this process:

- writers: list snapshots `[{"id": k, "v": r}, ...]` PUT to feeds f0..f5 (pools of 10,
  200 and 2000 ids; deletes, inserts, moves, changed `v`, now and then a repeated id or a
  whole new list), sometimes an unchanged re-PUT written differently (spaces, member order),
  sometimes a conditional PUT (`If-Match` of the last version seen, a list of tags, `*`, or a
  weak tag that must never match), two writers on f0..f2 so that conditional writes race;
  now and then a DELETE and a re-creation. Every acknowledged version goes into a model:
  (feed, version) -> the canonical JSON of the list (the last 200 versions per feed). Each
  PUT answer's batch is checked against the previous version's content (batch-format §3);
- readers (3 per feed): hold (version, data), from (0, []), and loop on
  `changes?since=version` with and without `&wait=2`, apply each batch with its `values` by
  the fill semantics (batch-format §3; `counts.old` first) and compare the result with the
  model's content for `to`; 410 and 404 start again from (0, []);
- event readers (1 per feed): follow the feed over server-sent events for a few seconds at
  a time, apply each event's batch to the data of the previous event and compare it with the
  model; `gone` and `problem` (a deleted feed) start again from (0, []); the stream is then
  closed or dropped with a TCP reset, and the next resumes with `Last-Event-ID`;
- ETag readers (1 per feed): `GET /feeds/{f}` with `If-None-Match` of the version held: a
  304 only while that is the latest, a 200 with the model's data for its `version` (and
  the exact bytes the writer sent) and an `ETag` naming it;
- POST /diff: two lists of ~20 strings or objects often, two lists of 50,000 strings
  (deletes, inserts, moves) sometimes; each batch is applied to the old list and must give
  the new one (503 `server_busy` with `Retry-After` is an expected answer);
- hostile clients: bodies trickled a byte every 0.5 s and headers trickled likewise (cut off
  at the timeouts), bodies cut off midway (a `Content-Length` never reached, then close),
  malformed JSON (400 `malformed_json`), bodies over the body limit by `Content-Length`, by
  bytes sent and chunked (413), about 1000 idle connections (closed by the header timeout,
  then reopened), and long polls parked on the latest version whose client vanishes with a
  TCP reset;
- a health probe, in a separate process so that this process's threads do not skew it:
  `GET /healthz` on a fresh connection every 50 ms, its latencies recorded;
- the server's VmRSS sampled every 0.25 s (and VmHWM read at the end), its /metrics every
  second.

Every answer is classified by its request kind (the statuses and problem codes each kind
allows, `ALLOWED`, plus the content checks above); the first unexpected ones are printed
with details. Then, with the load stopped: a chunked body over the body limit must be 413
and a chunked body within it must fit alone (one request alone always fits); 20 long polls
parked then reset must leave `batchdiff_long_polls_parked` and `batchdiff_connections_parked`
at 0 within 1.5 s; each feed read whole must match the model. Last, 3 long polls are parked
and the server gets SIGTERM: they must be answered (200 or 503 `shutting_down`) and the
server must exit 0 within 10 s.

The last line is the summary:
    soak: N requests, U unexpected, healthz p99 X ms, peak RSS Y MB (limit Z MB), feeds consistent
("feeds inconsistent" when a content check failed; MB are MiB). The exit status is 1 on any
unexpected answer, a crash or a non-zero exit, healthz p99 over 100 ms, or peak RSS over Z.

Z = --max-feed-memory (32 MiB) + --request-memory (64 MiB) + ALLOWANCE (96 MiB) = 192 MiB.
The allowance is what the process holds beyond the two budgets. Measured: the idle server
is about 30 MB resident (release and debug alike); under this load (feeds holding at most
4 MB, bodies in flight up to 55 MiB as counted) peak RSS was 100 to 112 MB over runs of 60
to 180 s, leveling off (82 MB after 18 s, 112 MB after 180 s), about 80 MB in 10 s debug
runs. So the process's own part (runtime, 1000 connections held open, per-thread malloc
arenas, answers being written) is some 50 MB, as docs/deployment.md says; 96 MiB is about twice
that, so a leak or a budget that does not hold shows and noise does not, even with both
budgets full.

N counts every request sent, and each connection of a hostile client (an idle connection,
a slow sender, a cut-off body, a vanishing long poll) as one.

Python 3 standard library only. The load is sized for a 2-core machine shared with the
server: the point is correctness under chaos, not throughput.
"""
import collections
import http.client
import json
import multiprocessing
import os
import random
import re
import selectors
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback

SECONDS = float(os.environ.get("SOAK_SECONDS", "60"))
SEED = int(os.environ.get("SOAK_SEED") or random.SystemRandom().randrange(1 << 31))

MiB = 1 << 20
FEED_MEMORY = 32 * MiB
REQUEST_MEMORY = 64 * MiB
ALLOWANCE = 96 * MiB
RSS_LIMIT = FEED_MEMORY + REQUEST_MEMORY + ALLOWANCE
BODY_LIMIT = 4 * MiB
HEADER_TIMEOUT = 5
BODY_TIMEOUT = 5
MAX_WAIT = 5
MAX_CONNECTIONS = 3000
HEALTHZ_P99_LIMIT_MS = 100.0

FEEDS = [f"f{i}" for i in range(6)]
POOL = {"f0": 10, "f1": 200, "f2": 2000, "f3": 10, "f4": 200, "f5": 2000}
TWO_WRITERS = {"f0", "f1", "f2"}
READERS_PER_FEED = 3
IDLE_CONNECTIONS = 1000
KEEP_VERSIONS = 200          # versions of each feed kept in the model
MODEL_WAIT = 2.0             # seconds a check waits for a writer to record a version
LONG_POLL = 2                # the readers' wait=
EVENT_HEARTBEAT = 1          # --event-heartbeat: a quiet stream's reader wakes each second
LARGE_DIFF_ITEMS = 50_000
MAX_DETAILS = 10

# What each kind of request may get: status -> the problem code it must carry (None: a
# success, checked by the kind's own content checks). Kinds whose connection the server must
# close without an answer (slow senders, idle connections) are judged by when it closes.
ALLOWED = {
    "put": {200: None, 412: "precondition_failed", 503: "server_busy"},
    "delete": {204: None, 404: "feed_not_found"},
    "changes": {200: None, 404: "feed_not_found", 410: "version_gone"},
    "events": {200: None, 404: "feed_not_found"},
    "get": {200: None, 304: None, 404: "feed_not_found"},
    "diff": {200: None, 503: "server_busy"},
    "malformed": {400: "malformed_json", 503: "server_busy"},
    "oversized": {413: "body_too_large"},
    "oversized-chunked": {413: "body_too_large", 503: "server_busy"},  # others in flight: busy first
    "cut-body": {400: "malformed_json"},      # or closed without an answer
    "healthz": {200: None},
    "metrics": {200: None},
    "quiet-oversized-chunked": {413: "body_too_large"},
    "quiet-chunked": {200: None},
    "shutdown-poll": {200: None, 503: "shutting_down"},
}


def canon(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# ----------------------------------------------------------------------------------------
# Outcomes


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.requests = 0
        self.unexpected = 0
        self.inconsistent = False
        self.details = []
        self.outcomes = collections.Counter()
        self.bad_kinds = collections.Counter()

    def count(self, kind, outcome):
        with self.lock:
            self.requests += 1
            self.outcomes[(kind, outcome)] += 1

    def bad(self, kind, what, inconsistent=False):
        """An unexpected answer. The first MAX_DETAILS are kept, at most 3 of a kind so that
        one flood does not hide the rest; the server's own failures are always kept."""
        with self.lock:
            self.unexpected += 1
            self.inconsistent |= inconsistent
            self.bad_kinds[kind] += 1
            if kind == "server" or (len(self.details) < MAX_DETAILS and self.bad_kinds[kind] <= 3):
                self.details.append(f"[{time.monotonic() - START:7.2f}s] {kind}: {what}")


STATS = Stats()
STOP = threading.Event()
START = time.monotonic()


def short(data, limit=300):
    text = data.decode("utf-8", "replace") if isinstance(data, (bytes, bytearray)) else str(data)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def judge(kind, answer, what):
    """Counts the answer; returns the parsed problem document or None for a success, or
    False (after recording why) when the status or the problem document is not allowed."""
    STATS.count(kind, answer.status)
    allowed = ALLOWED[kind]
    if answer.status not in allowed:
        STATS.bad(kind, f"{what} -> {answer.status} (allowed {sorted(allowed)}): {short(answer.body)}")
        return False
    code = allowed[answer.status]
    if code is None:
        return None
    wrong = problem_error(answer, code)
    if wrong:
        STATS.bad(kind, f"{what} -> {answer.status}: {wrong}: {short(answer.body)}")
        return False
    return json.loads(answer.body)


def problem_error(answer, code):
    ctype = answer.headers.get("content-type", "")
    if not ctype.startswith("application/problem+json"):
        return f"Content-Type {ctype!r}, not a problem document"
    try:
        doc = json.loads(answer.body)
    except ValueError:
        return "the problem document is not JSON"
    if doc.get("status") != answer.status or doc.get("code") != code or doc.get("type") != "urn:batchdiff:" + code:
        return f"expected code {code}"
    if code == "server_busy" and "retry-after" not in answer.headers:
        return "server_busy without Retry-After"
    if code == "version_gone" and (type(doc.get("latest")) is not int):
        return "version_gone without an integer latest"
    return None


# ----------------------------------------------------------------------------------------
# HTTP


class Answer:
    __slots__ = ("status", "headers", "body", "seconds")

    def __init__(self, status, headers, body, seconds):
        self.status, self.headers, self.body, self.seconds = status, headers, body, seconds


class Conn:
    """A keep-alive connection, opened again when the server closed it or when it has been
    idle for a second (the header timeout closes a connection idle for 5 s: reusing one
    close to that would race the close)."""

    def __init__(self, port):
        self.port = port
        self.http = None
        self.last = 0.0

    def close(self):
        if self.http is not None:
            self.http.close()
            self.http = None

    def request(self, method, path, body=None, headers=None, timeout=30.0):
        now = time.monotonic()
        if self.http is None or now - self.last > 1.0:
            self.close()
            self.http = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        elif self.http.sock is not None:
            self.http.sock.settimeout(timeout)
        else:
            self.http.timeout = timeout
        start = time.monotonic()
        try:
            try:
                self.http.request(method, path, body=body, headers=headers or {})
            except (BrokenPipeError, ConnectionResetError):
                # Refused from its head (413, 503 server_busy), a request is answered before
                # its body is read and the connection closed (errors.md §2.3): the sender
                # sees a broken pipe, but the answer is there to read.
                pass
            response = self.http.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException):
            self.close()
            raise
        self.last = time.monotonic()
        if response.will_close:
            self.close()
        headers = {k.lower(): v for k, v in response.getheaders()}
        return Answer(response.status, headers, data, self.last - start)


def raw_answer(sock):
    """Reads one HTTP answer from a raw socket; None when the connection closes first."""
    response = http.client.HTTPResponse(sock)
    try:
        response.begin()
    except (http.client.RemoteDisconnected, http.client.BadStatusLine, ConnectionResetError, BrokenPipeError):
        return None
    try:
        data = response.read()
    except (http.client.IncompleteRead, ConnectionResetError) as error:
        data = getattr(error, "partial", b"")
    return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, data, 0.0)


def reset_close(sock):
    """Closes with a TCP reset (SO_LINGER {1, 0}): the client vanishes."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    sock.close()


# ----------------------------------------------------------------------------------------
# Batches (docs/batch-format.md §2 and §3, lists only)


class BatchError(Exception):
    pass


def identity(item):
    """batch-format §1.2: an object's `id` when a string or a number, else the item itself."""
    if isinstance(item, dict):
        key = item.get("id")
        if isinstance(key, (str, int, float)) and not isinstance(key, bool):
            return (0, key)
        return (1, canon(item))
    if isinstance(item, (str, int, float)) and not isinstance(item, bool):
        return (0, item)
    return (1, canon(item))


def fill(old_len, batch):
    """Where each new row comes from, by the fill semantics: per new position, ("i", k) for
    the k-th insert or ("o", i, r) for old row i (r: its index in rows.reloaded, else -1).
    Raises BatchError for a batch that does not fit (batch-format §3, §2.5, §4)."""
    if not isinstance(batch, dict) or "sections" in batch:
        raise BatchError("not a list batch")
    rows, counts = batch.get("rows"), batch.get("counts")
    if not isinstance(rows, dict) or not isinstance(counts, dict):
        raise BatchError("rows or counts missing")
    deleted, inserted, reloaded, moved = (rows.get(k, []) for k in ("deleted", "inserted", "reloaded", "moved"))
    if counts.get("old") != old_len:
        raise BatchError(f"counts.old is {counts.get('old')} but the old list has {old_len} rows")
    new_len = counts.get("new")
    if type(new_len) is not int or new_len < 0:
        raise BatchError(f"counts.new is {new_len!r}")
    for name, indexes in (("deleted", deleted), ("inserted", inserted), ("reloaded", reloaded),
                          ("moved[].from", [m.get("from") for m in moved])):
        if any(type(i) is not int for i in indexes):
            raise BatchError(f"rows.{name} holds a non-integer")
        if any(b <= a for a, b in zip(indexes, indexes[1:])):
            raise BatchError(f"rows.{name} is not strictly ascending")
    source = [None] * new_len
    gone = bytearray(old_len)

    def take_old(i, what):
        if not 0 <= i < old_len:
            raise BatchError(f"{what} {i} outside the old list of {old_len}")
        if gone[i]:
            raise BatchError(f"old row {i} named twice ({what})")
        gone[i] = 1

    def take_new(t, what):
        if type(t) is not int or not 0 <= t < new_len:
            raise BatchError(f"{what} {t!r} outside the new list of {new_len}")
        if source[t] is not None:
            raise BatchError(f"new position {t} named twice ({what})")

    for k, t in enumerate(inserted):
        take_new(t, "insert")
        source[t] = ("i", k)
    for i in deleted:
        take_old(i, "delete")
    for move in moved:
        take_old(move["from"], "move source")
        take_new(move.get("to"), "move destination")
        source[move["to"]] = ("o", move["from"], -1)
    reload_of = {}
    for k, i in enumerate(reloaded):
        if not 0 <= i < old_len:
            raise BatchError(f"reload {i} outside the old list of {old_len}")
        if gone[i]:
            raise BatchError(f"old row {i} is reloaded and deleted or moved away")
        reload_of[i] = k
    i = 0
    for p in range(new_len):
        if source[p] is None:
            while i < old_len and gone[i]:
                i += 1
            if i == old_len:
                raise BatchError(f"the fill runs out of old rows at new position {p}")
            source[p] = ("o", i, reload_of.get(i, -1))
            i += 1
    while i < old_len and gone[i]:
        i += 1
    if i < old_len:
        raise BatchError(f"the fill leaves old row {i} without a new position")
    return source


def apply_values(old, batch, values):
    """The new list from the old one, the batch and a feed answer's `values`."""
    src = fill(len(old), batch)
    try:
        ins, rel = values["rows"]["inserted"], values["rows"]["reloaded"]
    except (KeyError, TypeError):
        raise BatchError("values.rows.inserted or values.rows.reloaded missing")
    if len(ins) != len(batch["rows"].get("inserted", [])) or len(rel) != len(batch["rows"].get("reloaded", [])):
        raise BatchError("values not aligned with rows.inserted / rows.reloaded")
    new = []
    for s in src:
        if s[0] == "i":
            new.append(ins[s[1]])
        elif s[2] >= 0:
            item = rel[s[2]]
            if identity(item) != identity(old[s[1]]):
                raise BatchError(f"reloaded row {s[1]} gets content of another identity: {short(canon(item), 100)}")
            new.append(item)
        else:
            new.append(old[s[1]])
    return new


def check_against_new(old, batch, new):
    """For answers without `values` (POST /diff, PUT): applying the batch to old, with the
    content taken from new, must give new: inserted rows are new[to]; a reloaded row must
    land where new has an item of its identity; every other row must land unchanged."""
    src = fill(len(old), batch)
    if len(src) != len(new):
        raise BatchError(f"counts.new is {len(src)} but the new list has {len(new)} rows")
    for p, s in enumerate(src):
        if s[0] == "i":
            continue
        before = old[s[1]]
        if s[2] >= 0:
            if identity(before) != identity(new[p]):
                raise BatchError(f"old row {s[1]} reloaded lands at {p}, where the new list has another identity")
        elif before != new[p]:
            raise BatchError(f"old row {s[1]} ({short(canon(before), 80)}) lands unchanged at {p}, "
                             f"where the new list has {short(canon(new[p]), 80)}")


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"row {i}: got {short(canon(x), 80)}, model {short(canon(y), 80)}"
    return f"lengths {len(a)} and {len(b)}"


# ----------------------------------------------------------------------------------------
# The model of acknowledged versions


class Model:
    """(feed, version) -> the canonical JSON of the list (and the exact body when a writer sent
    it in another form), for the versions writers saw acknowledged. `floor` is the oldest
    version a read sent now may answer: the newest acknowledged, and past it once a DELETE
    was acknowledged."""

    def __init__(self):
        self.cond = threading.Condition()
        self.versions = {feed: collections.OrderedDict() for feed in FEEDS}
        self.top = dict.fromkeys(FEEDS, 0)
        self.floor_of = dict.fromkeys(FEEDS, 0)

    def floor(self, feed):
        with self.cond:
            return self.floor_of[feed]

    def record(self, feed, version, canonical, raw):
        """Records a version; returns the content it had already if that differs."""
        with self.cond:
            known = self.versions[feed].get(version)
            if known is not None:
                return None if known[0] == canonical else known[0]
            self.versions[feed][version] = (canonical, None if raw == canonical else raw)
            while len(self.versions[feed]) > KEEP_VERSIONS:
                self.versions[feed].popitem(last=False)
            self.top[feed] = max(self.top[feed], version)
            self.floor_of[feed] = max(self.floor_of[feed], version)
            self.cond.notify_all()
            return None

    def deleted(self, feed):
        with self.cond:
            self.floor_of[feed] = max(self.floor_of[feed], self.top[feed] + 1)

    def wait(self, feed, version, timeout=MODEL_WAIT):
        deadline = time.monotonic() + timeout
        with self.cond:
            while version not in self.versions[feed]:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)
            return self.versions[feed][version]


MODEL = Model()


# ----------------------------------------------------------------------------------------
# Load


class Worker(threading.Thread):
    def __init__(self, port, name, seed):
        super().__init__(name=name, daemon=True)
        self.port = port
        self.rng = random.Random(seed)
        self.conn = Conn(port)

    def run(self):
        while not STOP.is_set():
            try:
                self.step()
            except (OSError, http.client.HTTPException) as error:
                if not STOP.is_set():
                    kind = self.name.split("-")[0]
                    STATS.count(kind, "connection error")
                    STATS.bad(kind, f"{self.name}: connection error: {error!r}")
                    STOP.wait(0.2)
            except Exception:
                STATS.bad("client", f"{self.name}: exception (a soak.py bug?): " + traceback.format_exc(limit=4))
                STOP.wait(0.5)
        self.conn.close()

    def pause(self, low, high):
        STOP.wait(self.rng.uniform(low, high))


class Writer(Worker):
    def __init__(self, port, feed, seed, deletes):
        super().__init__(port, f"writer-{feed}-{seed % 100}", seed)
        self.feed, self.pool, self.deletes = feed, POOL[feed], deletes
        self.items = None
        self.seen = None

    def mutate(self):
        rng, pool = self.rng, self.pool
        if self.items is None or rng.random() < 0.03:
            ids = rng.sample(range(pool), rng.randint(max(1, pool // 2), pool))
            return [{"id": i, "v": rng.randrange(1000)} for i in ids]
        items = list(self.items)
        k = max(1, len(items) // 20)
        for _ in range(rng.randint(0, k)):
            j = rng.randrange(len(items))
            items[j] = {"id": items[j]["id"], "v": items[j]["v"] + 1}
        for _ in range(rng.randint(0, k)):
            if len(items) > 1:
                del items[rng.randrange(len(items))]
        present = {item["id"] for item in items}
        free = [i for i in range(pool) if i not in present]
        for i in rng.sample(free, min(len(free), rng.randint(0, k))):
            items.insert(rng.randint(0, len(items)), {"id": i, "v": rng.randrange(1000)})
        for _ in range(rng.randint(0, k)):
            items.insert(rng.randint(0, len(items) - 1), items.pop(rng.randrange(len(items))))
        if rng.random() < 0.05:  # a repeated identity (batch-format §1.5)
            items.insert(rng.randint(0, len(items)), {"id": rng.choice(items)["id"], "v": rng.randrange(1000)})
        return items

    def step(self):
        rng = self.rng
        roll = rng.random()
        if self.deletes and roll < 0.012:
            self.delete()
        elif self.items is not None and roll < 0.1:
            self.put(reformat=True)
        else:
            self.items = self.mutate()
            self.put(reformat=False)
        self.pause(0.05, 0.3)

    def delete(self):
        answer = self.conn.request("DELETE", f"/feeds/{self.feed}")
        if judge("delete", answer, f"DELETE /feeds/{self.feed}") is not False and answer.status == 204:
            MODEL.deleted(self.feed)

    def put(self, reformat):
        rng, feed, items = self.rng, self.feed, self.items
        canonical = canon(items)
        raw = canonical
        if reformat:  # the same snapshot written otherwise: JSON-equal (batch-format §1.3)
            raw = json.dumps([{"v": item["v"], "id": item["id"]} for item in items], separators=(", ", ": "))
        headers = {"Content-Type": "application/json"}
        condition, weak = None, False
        if self.seen is not None and rng.random() < 0.25:
            pick = rng.random()
            if pick < 0.7:
                condition = f'"{self.seen}"'
            elif pick < 0.8:
                condition = f'"1", "{self.seen}"'
            elif pick < 0.9:
                condition = "*"
            else:
                condition, weak = f'W/"{self.seen}"', True  # weak tags never match (feeds §3.5)
            headers["If-Match"] = condition
        floor = MODEL.floor(feed)
        what = f"PUT /feeds/{feed} ({len(items)} items{', reformatted' if reformat else ''}" + \
               (f", If-Match: {condition}" if condition else "") + ")"
        answer = self.conn.request("PUT", f"/feeds/{feed}", raw.encode(), headers)
        doc = judge("put", answer, what)
        if doc is False:
            return
        if answer.status == 412:
            if condition is None:
                STATS.bad("put", f"{what} -> 412 without If-Match")
            return
        if answer.status == 503:
            self.pause(0.5, 1.0)
            return
        doc = json.loads(answer.body)
        version = doc.get("version")
        if doc.get("feed") != feed or type(version) is not int or answer.headers.get("etag") != f'"{version}"':
            STATS.bad("put", f"{what} -> 200 with feed/version/ETag wrong: {answer.headers.get('etag')} {short(answer.body)}")
            return
        if weak:
            STATS.bad("put", f"{what} -> 200: a weak If-Match matched", inconsistent=True)
        if version < floor:
            STATS.bad("put", f"{what} -> version {version}, older than {floor} acknowledged before it was sent",
                      inconsistent=True)
        self.seen = version
        if doc.get("changed") is True:
            clash = MODEL.record(feed, version, canonical, raw)
            if clash is not None:
                STATS.bad("put", f"{what} -> version {version}, which another write was acknowledged with "
                                 f"other content (versions name one content forever)", inconsistent=True)
                return
            self.check_put_batch(what, version, doc, items)
        elif doc.get("changed") is False:
            rows, counts = doc.get("rows", {}), doc.get("counts", {})
            if any(rows.get(k) for k in ("deleted", "inserted", "reloaded", "moved")) or \
                    counts.get("old") != len(items) or counts.get("new") != len(items):
                STATS.bad("put", f"{what} -> changed: false with a non-empty batch: {short(answer.body)}", inconsistent=True)
            entry = MODEL.wait(feed, version)
            if entry is None:
                STATS.bad("put", f"{what} -> changed: false at version {version}, which no writer saw acknowledged",
                          inconsistent=True)
            elif entry[0] != canonical:
                STATS.bad("put", f"{what} -> changed: false at version {version}, whose content differs: "
                                 f"{first_difference(json.loads(entry[0]), items)}", inconsistent=True)
        else:
            STATS.bad("put", f"{what} -> 200 without changed: {short(answer.body)}")

    def check_put_batch(self, what, version, doc, items):
        """The answer's batch goes from the previous version (version - 1, or nothing for a
        series' first version) to the snapshot sent (feeds §3.6)."""
        old = []
        if doc.get("counts", {}).get("old") != 0:
            entry = MODEL.wait(self.feed, version - 1)
            if entry is None:
                STATS.bad("put", f"{what} -> version {version} with counts.old {doc.get('counts')}, "
                                 f"but version {version - 1} was never acknowledged", inconsistent=True)
                return
            old = json.loads(entry[0])
        try:
            check_against_new(old, doc, items)
        except BatchError as error:
            STATS.bad("put", f"{what} -> version {version}: the batch from {version - 1} does not give the "
                             f"snapshot: {error}", inconsistent=True)


class Reader(Worker):
    def __init__(self, port, feed, seed):
        super().__init__(port, f"reader-{feed}-{seed % 100}", seed)
        self.feed = feed
        self.version, self.data = 0, []

    def step(self):
        feed, since = self.feed, self.version
        wait = self.rng.random() < 0.5
        path = f"/feeds/{feed}/changes?since={since}" + (f"&wait={LONG_POLL}" if wait else "")
        floor = MODEL.floor(feed)
        answer = self.conn.request("GET", path, timeout=LONG_POLL + 30 if wait else 30)
        what = f"GET {path}"
        doc = judge("changes", answer, what)
        if doc is False:
            self.version, self.data = 0, []
            self.pause(0.1, 0.3)
            return
        if answer.status == 410:
            if doc["latest"] < floor:
                STATS.bad("changes", f"{what} -> 410 with latest {doc['latest']}, older than {floor} "
                                     f"acknowledged before it was sent", inconsistent=True)
            self.version, self.data = 0, []
            return
        if answer.status == 404:
            self.version, self.data = 0, []
            self.pause(0.1, 0.3)
            return
        doc = json.loads(answer.body)
        to = doc.get("to")
        if doc.get("feed") != feed or doc.get("from") != since or type(to) is not int:
            STATS.bad("changes", f"{what} -> 200 with feed/from/to wrong: {short(answer.body)}", inconsistent=True)
            self.version, self.data = 0, []
            return
        if to < floor:
            STATS.bad("changes", f"{what} -> to {to}, older than {floor} acknowledged before it was sent",
                      inconsistent=True)
        if wait and to == since and since != 0:
            if answer.seconds < LONG_POLL - 0.1:
                STATS.bad("changes", f"{what} -> the empty batch after {answer.seconds:.2f} s, before the wait ended")
            elif answer.seconds > LONG_POLL + 3:
                STATS.bad("changes", f"{what} -> the empty batch after {answer.seconds:.2f} s (wait={LONG_POLL})")
        new = applied("changes", what, feed, self.data, doc)
        if new is None:
            self.version, self.data = 0, []
            return
        self.version, self.data = to, new
        if to == since and not wait:
            self.pause(0.05, 0.2)


def applied(kind, what, feed, data, doc):
    """`data` with the batch and values of `doc` applied, when that gives the model's
    content for its `to`; else None, with the reason recorded."""
    to = doc["to"]
    try:
        new = apply_values(data, doc, doc.get("values"))
    except BatchError as error:
        STATS.bad(kind, f"{what} -> to {to}: the batch does not apply to the data of {doc['from']}: {error}",
                  inconsistent=True)
        return None
    entry = MODEL.wait(feed, to)
    if entry is None:
        STATS.bad(kind, f"{what} -> to {to}, a version no writer saw acknowledged", inconsistent=True)
        return None
    if canon(new) != entry[0]:
        STATS.bad(kind, f"{what} -> to {to}: applying the batch and values gives other data than the "
                        f"model's: {first_difference(new, json.loads(entry[0]))}", inconsistent=True)
        return None
    return new


class EventReader(Worker):
    """A feed followed over server-sent events (feeds.md §6.1): each event applied to the
    data of the previous one and checked against the model; a stream lives a few seconds,
    then its client closes it or vanishes with a reset, and resumes with Last-Event-ID."""

    def __init__(self, port, feed, seed):
        super().__init__(port, f"events-{feed}-{seed % 100}", seed)
        self.feed = feed
        self.version, self.data = 0, []

    def step(self):
        feed = self.feed
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=EVENT_HEARTBEAT + 10)
        headers = {"Accept": "text/event-stream"}
        if self.version:
            headers["Last-Event-ID"] = str(self.version)
        what = f"stream of {feed} from {self.version}"
        try:
            conn.request("GET", f"/feeds/{feed}/changes?since=0", headers=headers)
            response = conn.getresponse()
            if response.status != 200:
                answer = Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read(), 0.0)
                if judge("events", answer, what) is not False:
                    self.version, self.data = 0, []
                self.pause(0.1, 0.3)
                return
            STATS.count("events", "stream opened")
            ends = time.monotonic() + self.rng.uniform(1, 6)
            fields, data = {}, []
            while not STOP.is_set() and time.monotonic() < ends:
                line = response.readline()
                if not line:
                    STATS.count("events", "stream ended by the server")
                    return
                line = line.decode().rstrip("\n")
                if line:
                    if not line.startswith(":"):
                        field, _, value = line.partition(":")
                        value = value[1:] if value.startswith(" ") else value
                        if field == "data":
                            data.append(value)
                        else:
                            fields[field] = value
                    continue
                if data and not self.event(fields.get("event", "message"), fields.get("id"), "\n".join(data), what):
                    return
                fields, data = {}, []
        finally:
            if conn.sock is not None and self.rng.random() < 0.5:
                reset_close(conn.sock)
                STATS.count("events", "reset by the client")
            conn.close()

    def event(self, kind, event_id, data, what):
        """Applies one event; returns whether the stream goes on."""
        doc = json.loads(data)
        if kind in ("gone", "problem"):
            code = {"gone": "version_gone", "problem": "feed_not_found"}[kind]
            STATS.count("events", kind)
            if doc.get("code") != code or (kind == "gone" and event_id != "0"):
                STATS.bad("events", f"{what}: event {kind} (id {event_id}) with {short(data.encode())}")
            self.version, self.data = 0, []
            return False
        to = doc.get("to")
        if kind != "message" or doc.get("feed") != self.feed or doc.get("from") != self.version or event_id != str(to):
            STATS.bad("events", f"{what}: event {kind} id {event_id} wrong: {short(data.encode())}", inconsistent=True)
            self.version, self.data = 0, []
            return False
        # An event may be older than a version acknowledged since (the next one brings it):
        # what is checked is that it applies and gives the model's data.
        STATS.count("events", "event")
        new = applied("events", what, self.feed, self.data, doc)
        if new is None:
            self.version, self.data = 0, []
            return False
        self.version, self.data = to, new
        return True


class EtagReader(Worker):
    def __init__(self, port, feed, seed):
        super().__init__(port, f"etag-{feed}", seed)
        self.feed = feed
        self.held = None

    def step(self):
        feed, held, rng = self.feed, self.held, self.rng
        headers, star = {}, False
        if held is not None:
            pick = rng.random()
            if pick < 0.6:
                headers["If-None-Match"] = f'"{held}"'
            elif pick < 0.8:
                headers["If-None-Match"] = f'W/"{held}"'  # compared weakly (feeds §4)
            elif pick < 0.95:
                headers["If-None-Match"] = f'"1", "{held}"'
            else:
                headers["If-None-Match"], star = "*", True
        floor = MODEL.floor(feed)
        answer = self.conn.request("GET", f"/feeds/{feed}", headers=headers)
        what = f"GET /feeds/{feed}" + (f" (If-None-Match: {headers['If-None-Match']})" if headers else "")
        doc = judge("get", answer, what)
        if doc is False or answer.status == 404:
            self.held = None
        elif answer.status == 304:
            tag = answer.headers.get("etag", "")
            if held is None:
                STATS.bad("get", f"{what} -> 304 without If-None-Match")
            elif not star and tag != f'"{held}"':
                STATS.bad("get", f"{what} -> 304 with ETag {tag}")
            elif not star and held < floor:
                STATS.bad("get", f"{what} -> 304, but {floor} was acknowledged (or the feed deleted) before it "
                                 f"was sent", inconsistent=True)
            elif star and not (tag.strip('"').isdigit() and int(tag.strip('"')) >= floor):
                STATS.bad("get", f"{what} -> 304 with ETag {tag}, older than {floor}", inconsistent=True)
        else:
            self.check_data(what, answer, held, floor, star)
        self.pause(0.1, 0.3)

    def check_data(self, what, answer, held, floor, star):
        doc = json.loads(answer.body)
        version = doc.get("version")
        self.held = None
        if doc.get("feed") != self.feed or type(version) is not int or answer.headers.get("etag") != f'"{version}"':
            STATS.bad("get", f"{what} -> 200 with feed/version/ETag wrong: {answer.headers.get('etag')} {short(answer.body)}")
            return
        if version == held or star:
            STATS.bad("get", f"{what} -> 200 for the version the tag names ({version}), not 304", inconsistent=True)
        if version < floor:
            STATS.bad("get", f"{what} -> version {version}, older than {floor} acknowledged before it was sent",
                      inconsistent=True)
        entry = MODEL.wait(self.feed, version)
        if entry is None:
            STATS.bad("get", f"{what} -> version {version}, which no writer saw acknowledged", inconsistent=True)
            return
        if canon(doc.get("data")) != entry[0]:
            STATS.bad("get", f"{what} -> version {version} with other data than the model's: "
                             f"{first_difference(doc.get('data') or [], json.loads(entry[0]))}", inconsistent=True)
            return
        sent = compact(entry[1] or entry[0]).encode()
        if sent not in answer.body:  # feeds §4: data is the PUT's body, compact
            STATS.bad("get", f"{what} -> version {version}: data is not the body of its PUT, compact",
                      inconsistent=True)
            return
        self.held = version


WORDS = [f"w{i}" for i in range(30)]


def small_lists(rng):
    old = [rng.choice(WORDS) for _ in range(rng.randint(5, 25))]
    new = [w for w in old if rng.random() > 0.2]
    for _ in range(rng.randint(0, 6)):
        new.insert(rng.randint(0, len(new)), rng.choice(WORDS))
    for _ in range(rng.randint(0, 4)):
        if new:
            new.insert(rng.randint(0, len(new) - 1), new.pop(rng.randrange(len(new))))
    if rng.random() < 0.4:  # objects with an id: changed content gives reloads
        old = [{"id": w, "n": rng.randrange(3)} for w in old]
        new = [{"id": w, "n": rng.randrange(3)} for w in new]
    return old, new


def large_lists(rng):
    universe = [f"k{i:05x}" for i in range(LARGE_DIFF_ITEMS + LARGE_DIFF_ITEMS // 10)]
    rng.shuffle(universe)
    old = universe[:LARGE_DIFF_ITEMS]
    new = [x for x in old if rng.random() > 0.05]
    for x in universe[LARGE_DIFF_ITEMS:LARGE_DIFF_ITEMS + LARGE_DIFF_ITEMS // 20]:
        new.insert(rng.randrange(len(new) + 1), x)
    for _ in range(LARGE_DIFF_ITEMS // 50):
        new.insert(rng.randrange(len(new)), new.pop(rng.randrange(len(new))))
    return old, new


class Differ(Worker):
    def __init__(self, port, seed, large):
        super().__init__(port, f"diff-{'large' if large else 'small'}-{seed % 100}", seed)
        self.large = large

    def step(self):
        rng = self.rng
        if self.large:
            # Both large differs send near the same 2-second tick, so that they often
            # overlap: the second one alone does not fit beside the first (503 server_busy).
            STOP.wait(2.0 - (time.monotonic() - START) % 2.0 + rng.uniform(0, 0.03) + (2.0 if rng.random() < 0.3 else 0))
            if STOP.is_set():
                return
            old, new, body = rng.choice(LARGE)
            moves = True
        else:
            old, new = small_lists(rng)
            moves = rng.random() < 0.8
            body = json.dumps({"old": old, "new": new, "options": {"moves": moves}}).encode()
        what = f"POST /diff ({len(old)} -> {len(new)} items, moves {moves})"
        answer = self.conn.request("POST", "/diff", body, {"Content-Type": "application/json"}, timeout=120)
        doc = judge("diff", answer, what)
        if doc is None:
            batch = json.loads(answer.body)
            try:
                if not moves and batch["rows"].get("moved"):
                    raise BatchError("moves with options.moves false")
                check_against_new(old, batch, new)
            except (BatchError, KeyError, TypeError) as error:
                STATS.bad("diff", f"{what} -> a batch that does not give the new list: {error}")
        if not self.large:
            self.pause(0.03, 0.1)


LARGE = []


# ----------------------------------------------------------------------------------------
# Hostile clients


class Hostile(Worker):
    def connect(self):
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        sock.settimeout(10)
        return sock

    def closed_or_answer(self, sock, timeout):
        """Waits up to timeout for the server to close or answer: (closed, answer)."""
        sock.settimeout(timeout)
        try:
            data = sock.recv(65536, socket.MSG_PEEK)
        except socket.timeout:
            return False, None
        except (ConnectionResetError, BrokenPipeError):
            return True, None
        if not data:
            return True, None
        sock.settimeout(10)
        return True, raw_answer(sock)


class SlowSender(Hostile):
    """A body, then headers, trickled a byte every 0.5 s: the server must close the
    connection at its body (or header) timeout, with no answer."""

    def step(self):
        feed = self.rng.choice(FEEDS)
        slow_body = self.rng.random() < 0.6
        body = json.dumps([{"id": f"slow-{i}", "v": i} for i in range(4)]).encode()
        sock = self.connect()
        start = time.monotonic()
        if slow_body:
            kind, limit = "slow-body", BODY_TIMEOUT
            sock.sendall(b"PUT /feeds/%s HTTP/1.1\r\nHost: soak\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\n\r\n" % (feed.encode(), len(body)))
            start, trickle = time.monotonic(), body
        else:
            kind, limit = "slow-headers", HEADER_TIMEOUT
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: soak\r\nX-Slow: ")
            trickle = b"a" * 1000
        closed, answer = False, None
        for byte in trickle:
            closed, answer = self.closed_or_answer(sock, 0.5)
            if closed or STOP.is_set():
                break
            try:
                sock.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
        seconds = time.monotonic() - start
        sock.close()
        if STOP.is_set() and not closed:
            return
        STATS.count(kind, answer.status if answer else "closed")
        if answer is not None and answer.status < 400:
            STATS.bad(kind, f"trickled to /feeds/{feed}: answered {answer.status} {short(answer.body)}",
                      inconsistent=200 <= answer.status < 300)
        elif not limit - 0.5 <= seconds <= limit + 3:
            STATS.bad(kind, f"closed after {seconds:.2f} s (timeout {limit} s)")


class CutBody(Hostile):
    """A Content-Length never reached: the body stops (a whole JSON value, or half of one),
    then the client closes, resets, or half-closes and waits. Nothing may be stored."""

    def step(self):
        rng = self.rng
        feed = rng.choice(FEEDS)
        items = [{"id": f"cut-{i}", "v": i} for i in range(rng.randint(1, 50))]
        if rng.random() < 0.7:
            path, body = f"/feeds/{feed}", json.dumps(items).encode()
        else:
            path, body = "/diff", json.dumps({"old": ["a"], "new": items}).encode()
        sent = body if rng.random() < 0.5 else body[: len(body) // 2]
        sock = self.connect()
        sock.sendall(b"%s %s HTTP/1.1\r\nHost: soak\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                     % (b"PUT" if path != "/diff" else b"POST", path.encode(), len(body) + 100, sent))
        how = rng.random()
        if how < 0.4:
            sock.close()
            STATS.count("cut-body", "closed by the client")
        elif how < 0.7:
            reset_close(sock)
            STATS.count("cut-body", "reset by the client")
        else:
            sock.shutdown(socket.SHUT_WR)
            closed, answer = self.closed_or_answer(sock, BODY_TIMEOUT + 5)
            sock.close()
            if answer is not None:
                judge("cut-body", answer, f"a body cut short to {path}, then half-closed")
            elif not closed:
                STATS.count("cut-body", "left open")
                STATS.bad("cut-body", f"a body cut short to {path}, then half-closed: still open after "
                                      f"{BODY_TIMEOUT + 5} s")
            else:
                STATS.count("cut-body", "closed")
        self.pause(0.1, 0.3)


MALFORMED = [
    b'[{"id":1,"v":2}',
    b'[{"id":1,"v":2}] x',
    b'["\xff\xfe"]',
    b"[" * 600 + b"]" * 600,
    b'["\\ud800"]',
    b"",
    b'[{"id":1,"v":2},]',
    b'{"old": ["a"], "new": ["b"]',
    b"[1, 2, tru]",
]


class Malformed(Worker):
    def step(self):
        rng = self.rng
        body = rng.choice(MALFORMED)
        if rng.random() < 0.6:
            method, path = "PUT", f"/feeds/{rng.choice(FEEDS)}"
        else:
            method, path = "POST", "/diff"
        answer = self.conn.request(method, path, body, {"Content-Type": "application/json"})
        judge("malformed", answer, f"{method} {path} with {short(body, 40)!r}")
        self.pause(0.05, 0.2)


class Oversized(Hostile):
    """Bodies over --body-limit: announced by Content-Length, sent whole, or chunked."""

    def step(self):
        rng = self.rng
        feed = rng.choice(FEEDS)
        pick = rng.random()
        head = b"PUT /feeds/%s HTTP/1.1\r\nHost: soak\r\nContent-Type: application/json\r\n" % feed.encode()
        sock = self.connect()
        try:
            if pick < 0.4:
                kind, what = "oversized", f"PUT /feeds/{feed} with Content-Length {BODY_LIMIT + 1}, no body"
                sock.sendall(head + b"Content-Length: %d\r\n\r\n" % (BODY_LIMIT + 1))
            elif pick < 0.7:
                kind, what = "oversized", f"PUT /feeds/{feed} with a body of {len(OVERSIZED)} bytes"
                try:
                    sock.sendall(head + b"Content-Length: %d\r\n\r\n" % len(OVERSIZED) + OVERSIZED)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # answered and closed before the whole body was read
            else:
                kind, what = "oversized-chunked", f"PUT /feeds/{feed} with a chunked body of {len(OVERSIZED)} bytes"
                try:
                    sock.sendall(head + b"Transfer-Encoding: chunked\r\n\r\n" + chunked(OVERSIZED))
                except (BrokenPipeError, ConnectionResetError):
                    pass
            answer = raw_answer(sock)
        finally:
            sock.close()
        if answer is None:
            STATS.count(kind, "closed")
            STATS.bad(kind, f"{what}: closed without an answer")
        else:
            judge(kind, answer, what)
        self.pause(0.5, 1.5)


OVERSIZED = json.dumps([{"id": f"big-{i}", "v": "x" * 40} for i in range(BODY_LIMIT // 50 + 1000)]).encode()


def compact(text):
    """JSON `text` without the whitespace between its tokens, strings as they are (feeds §4)."""
    out, in_string, escaped = [], False, False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in " \t\r\n":
            continue
        out.append(char)
    return "".join(out)


def chunked(body, size=65536):
    return b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + size]), body[i:i + size])
                    for i in range(0, len(body), size)) + b"0\r\n\r\n"


class Idle(Hostile):
    """About IDLE_CONNECTIONS connections that send nothing: each must be closed at the
    header timeout (not sooner, not much later); then it is opened again."""

    def run(self):
        selector = selectors.DefaultSelector()
        opened = {}
        try:
            while not STOP.is_set():
                now = time.monotonic()
                for _ in range(min(25, IDLE_CONNECTIONS - len(opened))):
                    try:
                        sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
                    except OSError as error:
                        STATS.count("idle", "connect error")
                        STATS.bad("idle", f"connect: {error!r}")
                        break
                    sock.setblocking(False)
                    opened[sock] = time.monotonic()
                    selector.register(sock, selectors.EVENT_READ)
                for key, _ in selector.select(timeout=0.05):
                    sock = key.fileobj
                    try:
                        data = sock.recv(4096)
                    except (ConnectionResetError, BlockingIOError):
                        data = b""
                    seconds = time.monotonic() - opened.pop(sock)
                    selector.unregister(sock)
                    sock.close()
                    STATS.count("idle", "answered" if data else "closed")
                    if data:
                        STATS.bad("idle", f"an idle connection got {short(data, 100)!r}")
                    elif not HEADER_TIMEOUT - 0.5 <= seconds <= HEADER_TIMEOUT + 3:
                        STATS.bad("idle", f"an idle connection closed after {seconds:.2f} s "
                                          f"(header timeout {HEADER_TIMEOUT} s)")
                for sock, since in list(opened.items()):
                    if now - since > HEADER_TIMEOUT + 3:
                        STATS.count("idle", "left open")
                        STATS.bad("idle", f"an idle connection still open after {now - since:.1f} s")
                        selector.unregister(sock)
                        del opened[sock]
                        sock.close()
        except Exception:
            STATS.bad("idle", "client exception (a soak.py bug?): " + traceback.format_exc(limit=4))
        finally:
            for sock in opened:
                sock.close()


def park(port, feed, version, wait):
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(b"GET /feeds/%s/changes?since=%d&wait=%d HTTP/1.1\r\nHost: soak\r\n\r\n"
                 % (feed.encode(), version, wait))
    return sock


def latest(conn, feed):
    answer = conn.request("GET", f"/feeds/{feed}")
    STATS.count("get", answer.status)
    return json.loads(answer.body)["version"] if answer.status == 200 else None


class Vanisher(Worker):
    """Long polls parked on the latest version (wait=5) whose clients vanish with a reset."""

    def step(self):
        feed = self.rng.choice(FEEDS)
        version = latest(self.conn, feed)
        if version is None:
            self.pause(0.1, 0.3)
            return
        socks = [park(self.port, feed, version, MAX_WAIT) for _ in range(5)]
        self.pause(0.2, 1.0)
        for sock in socks:
            reset_close(sock)
            STATS.count("vanish", "reset by the client")
        self.pause(0.1, 0.5)


# ----------------------------------------------------------------------------------------
# Probes


def healthz_probe(port, stop, seconds, results):
    """In a separate process: GET /healthz on a fresh connection every 50 ms."""
    latencies, failures = [], []
    deadline = time.monotonic() + seconds
    while not stop.is_set() and time.monotonic() < deadline:
        start = time.monotonic()
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.request("GET", "/healthz")
            response = conn.getresponse()
            response.read()
            conn.close()
            latencies.append(time.monotonic() - start)
            if response.status != 200:
                failures.append(f"GET /healthz -> {response.status}")
        except (OSError, http.client.HTTPException) as error:
            failures.append(f"GET /healthz: {error!r} after {time.monotonic() - start:.2f} s")
        stop.wait(max(0.0, 0.05 - (time.monotonic() - start)))
    results.send((latencies, failures))
    results.close()


def status_kb(pid, field):
    try:
        with open(f"/proc/{pid}/status") as status:
            match = re.search(field + r":\s+(\d+) kB", status.read())
        return int(match.group(1)) if match else 0
    except OSError:
        return 0


def metrics(conn):
    answer = conn.request("GET", "/metrics")
    judge("metrics", answer, "GET /metrics")
    values = {}
    for line in answer.body.decode().splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            try:
                values[name] = float(value)
            except ValueError:
                pass
    return values


class Monitor(threading.Thread):
    """VmRSS every 0.25 s, /metrics every second, and whether the server still runs."""

    def __init__(self, server, port):
        super().__init__(name="monitor", daemon=True)
        self.server, self.conn = server, Conn(port)
        self.peak_kb = 0
        self.steps = []  # peak VmRSS in each tenth of the run, to tell a plateau from a leak
        self.maxima = collections.Counter()

    def run(self):
        ticks = 0
        while not STOP.is_set():
            rss = status_kb(self.server.pid, "VmRSS")
            self.peak_kb = max(self.peak_kb, rss)
            step = min(9, int((time.monotonic() - START) / SECONDS * 10))
            self.steps += [0] * (step + 1 - len(self.steps))
            self.steps[step] = max(self.steps[step], rss)
            if self.server.poll() is not None:
                STATS.bad("server", f"the server exited during the run with status {self.server.returncode}")
                STOP.set()
                return
            ticks += 1
            if ticks % 4 == 0:
                try:
                    for name, value in metrics(self.conn).items():
                        if name in ("batchdiff_feed_bytes", "batchdiff_request_bytes_in_flight",
                                    "batchdiff_connections_parked", "batchdiff_long_polls_parked",
                                    "batchdiff_work_queue_depth"):
                            self.maxima[name] = max(self.maxima[name], value)
                except (OSError, http.client.HTTPException) as error:
                    STATS.count("metrics", "connection error")
                    STATS.bad("metrics", f"GET /metrics: {error!r}")
            STOP.wait(0.25)
        self.conn.close()


# ----------------------------------------------------------------------------------------
# The run


def start_server(binary, log):
    out = tempfile.NamedTemporaryFile("w+", prefix="soak-stdout-", delete=False)
    server = subprocess.Popen(
        [binary, "serve", "--host", "127.0.0.1", "--port", "0", "--log-level", "warning",
         "--max-feed-memory", str(FEED_MEMORY), "--request-memory", str(REQUEST_MEMORY),
         "--max-connections", str(MAX_CONNECTIONS), "--body-limit", str(BODY_LIMIT),
         "--header-timeout", str(HEADER_TIMEOUT), "--body-timeout", str(BODY_TIMEOUT),
         "--max-wait", str(MAX_WAIT), "--event-heartbeat", str(EVENT_HEARTBEAT)],
        stdout=out, stderr=log, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with open(out.name) as first:
            match = re.search(r"listening on http://127\.0\.0\.1:(\d+)", first.readline())
        if match:
            return server, int(match.group(1)), out.name
        if server.poll() is not None:
            break
        time.sleep(0.05)
    raise SystemExit(f"soak: the server did not start (status {server.poll()}); stderr:\n{tail(log.name)}")


def tail(path, lines=30):
    try:
        with open(path, errors="replace") as log:
            return "".join(log.readlines()[-lines:])
    except OSError:
        return ""


def quiet_checks(port):
    """With the load stopped: deterministic checks that need the request budget to itself.
    A hostile client's body may still hold its reservation until the server's body timeout
    (a body cut short, then half-closed): the checks wait for the budget to be free, and a
    reservation that outlives the body timeout is reported."""
    conn, start = Conn(port), time.monotonic()
    while metrics(conn).get("batchdiff_request_bytes_in_flight", 0) != 0:
        if time.monotonic() - start > BODY_TIMEOUT + 2:
            STATS.bad("quiet-wait", f"request bodies still hold the budget {BODY_TIMEOUT + 2} s after the load stopped")
            break
        time.sleep(0.1)
    conn.close()
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    try:
        sock.sendall(b"PUT /feeds/f0 HTTP/1.1\r\nHost: soak\r\nContent-Type: application/json\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n" + chunked(OVERSIZED))
    except (BrokenPipeError, ConnectionResetError):
        pass
    answer = raw_answer(sock)
    sock.close()
    what = f"alone: PUT /feeds/f0, chunked, {len(OVERSIZED)} bytes (over the body limit)"
    if answer is None:
        STATS.count("quiet-oversized-chunked", "closed")
        STATS.bad("quiet-oversized-chunked", f"{what}: closed without an answer")
    else:
        judge("quiet-oversized-chunked", answer, what)
    old, new, _ = LARGE[0]
    pad = "-" + "p" * 15  # ~2.5 MB: within the body limit, over the budget at 40 (or 64) a body byte
    old, new = [x + pad for x in old], [x + pad for x in new]
    body = json.dumps({"old": old, "new": new}, separators=(",", ":")).encode()
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    sock.sendall(b"POST /diff HTTP/1.1\r\nHost: soak\r\nContent-Type: application/json\r\n"
                 b"Transfer-Encoding: chunked\r\n\r\n" + chunked(body))
    answer = raw_answer(sock)
    sock.close()
    if answer is not None and answer.status == 200:
        try:
            check_against_new(old, json.loads(answer.body), new)
        except BatchError as error:
            STATS.bad("quiet-chunked", f"chunked POST /diff: a batch that does not give the new list: {error}")
    what = (f"alone: POST /diff, chunked, {len(body)} bytes (within the body limit, over --request-memory "
            f"as counted: one request alone always fits)")
    if answer is None:
        STATS.count("quiet-chunked", "closed")
        STATS.bad("quiet-chunked", f"{what}: closed without an answer")
    else:
        judge("quiet-chunked", answer, what)


def vanish_check(port):
    """20 long polls parked, then reset: within 1.5 s nothing is parked any more."""
    conn = Conn(port)
    feed = next((f for f in FEEDS if latest(conn, f) is not None), None)
    if feed is None:
        STATS.bad("vanish-check", "no feed exists at the end of the run")
        return
    version = latest(conn, feed)
    socks = [park(port, feed, version, MAX_WAIT) for _ in range(20)]
    time.sleep(0.5)
    before = metrics(conn)
    for sock in socks:
        reset_close(sock)
        STATS.count("vanish", "reset by the client")
    time.sleep(1.5)
    after = metrics(conn)
    if before.get("batchdiff_long_polls_parked", 0) < 20:
        STATS.bad("vanish-check", f"20 long polls parked on {feed}@{version}, but batchdiff_long_polls_parked is "
                                  f"{before.get('batchdiff_long_polls_parked')} (did the feed change?)")
    names = ("batchdiff_long_polls_parked", "batchdiff_connections_parked", "batchdiff_request_bytes_in_flight")
    stuck = {name: after.get(name, 0) for name in names if after.get(name, 0) != 0}
    if stuck:  # how long until it drains, if ever: a slow release or a leak
        start, now = time.monotonic(), {}
        while time.monotonic() - start < 10:
            time.sleep(0.25)
            now = metrics(conn)
            if all(now.get(name, 0) == 0 for name in stuck):
                break
        for name, value in stuck.items():
            later = (f"0 after {1.5 + time.monotonic() - start:.1f} s" if now.get(name, 0) == 0
                     else f"still {now.get(name)} after {1.5 + time.monotonic() - start:.1f} s")
            if name == "batchdiff_request_bytes_in_flight" and now.get(name, 0) != 0:
                later += "; " + probe_request_budget(conn)
            STATS.bad("vanish-check", f"{name} is {value} 1.5 s after the load stopped and 20 parked clients "
                                      f"reset their connections ({later})")
    conn.close()


def probe_request_budget(conn):
    """Whether the request budget itself still holds bytes, or only the gauge says so: one
    more small body in and out, and the gauge records the budget's true total on release."""
    answer = conn.request("POST", "/diff", b'{"old": ["a"], "new": ["b"]}', {"Content-Type": "application/json"})
    STATS.count("diff", answer.status)
    gauge = metrics(conn).get("batchdiff_request_bytes_in_flight")
    if gauge == 0:
        return "after one more small POST /diff it reads 0: the budget was free, the gauge stale"
    return f"after one more small POST /diff it still reads {gauge}: the budget holds bytes no request holds"


def final_reads(port):
    """Each feed read whole at the end, against the model."""
    conn = Conn(port)
    for feed in FEEDS:
        answer = conn.request("GET", f"/feeds/{feed}/changes?since=0")
        doc = judge("changes", answer, f"final GET /feeds/{feed}/changes?since=0")
        if answer.status != 200 or doc is False:
            continue
        doc = json.loads(answer.body)
        entry = MODEL.wait(feed, doc["to"])
        try:
            data = apply_values([], doc, doc.get("values"))
        except BatchError as error:
            STATS.bad("changes", f"final since=0 of {feed}: {error}", inconsistent=True)
            continue
        if entry is None or canon(data) != entry[0]:
            STATS.bad("changes", f"final since=0 of {feed}: version {doc['to']} is not the model's",
                      inconsistent=True)
    conn.close()


def shutdown(server, port):
    """3 long polls parked, then SIGTERM: they are answered, the server exits 0 within 10 s."""
    conn = Conn(port)
    feed = next((f for f in FEEDS if latest(conn, f) is not None), None)
    conn.close()
    socks = []
    if feed is not None:
        version = latest(Conn(port), feed)
        socks = [park(port, feed, version, MAX_WAIT) for _ in range(3)]
        time.sleep(0.3)
    server.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 10
    for sock in socks:
        sock.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            answer = raw_answer(sock)
        except socket.timeout:
            answer = None
        sock.close()
        if answer is None:
            STATS.count("shutdown-poll", "no answer")
            STATS.bad("shutdown-poll", "a long poll parked at SIGTERM got no answer")
        else:
            judge("shutdown-poll", answer, "a long poll parked at SIGTERM")
    try:
        code = server.wait(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
        STATS.bad("server", "still running 10 s after SIGTERM (killed)")
        return
    if code != 0:
        STATS.bad("server", f"exited with status {code} after SIGTERM")


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else ".build/release/batchdiff"
    if not os.access(binary, os.X_OK):
        raise SystemExit(f"soak: no server binary at {binary} (make release, or pass its path)")
    rng = random.Random(SEED)
    LARGE.extend((old, new, json.dumps({"old": old, "new": new}, separators=(",", ":")).encode())
                 for old, new in (large_lists(random.Random(rng.random())) for _ in range(3)))
    log = tempfile.NamedTemporaryFile("w+", prefix="soak-stderr-", delete=False)
    server, port, out_name = start_server(binary, log)
    print(f"soak: {binary} on port {port} (pid {server.pid}) for {SECONDS:g} s, seed {SEED}; "
          f"server log {log.name}", flush=True)

    # The probe process is forked before any thread starts.
    context = multiprocessing.get_context("fork")
    probe_stop = context.Event()
    probe_results, probe_end = context.Pipe(duplex=False)
    probe = context.Process(target=healthz_probe, args=(port, probe_stop, SECONDS + 60, probe_end), daemon=True)
    probe.start()
    probe_end.close()

    seeds = iter(range(SEED, SEED + 1000))
    workers = [Monitor(server, port)]
    for feed in FEEDS:
        workers.append(Writer(port, feed, next(seeds), deletes=True))
        if feed in TWO_WRITERS:
            workers.append(Writer(port, feed, next(seeds), deletes=False))
        workers += [Reader(port, feed, next(seeds)) for _ in range(READERS_PER_FEED)]
        workers.append(EtagReader(port, feed, next(seeds)))
        workers.append(EventReader(port, feed, next(seeds)))
    workers += [Differ(port, next(seeds), large=False), Differ(port, next(seeds), large=False),
                Differ(port, next(seeds), large=True), Differ(port, next(seeds), large=True)]
    workers += [SlowSender(port, f"slow-{i}", next(seeds)) for i in range(3)]
    workers += [CutBody(port, "cut-body", next(seeds)), Malformed(port, "malformed", next(seeds)),
                Oversized(port, "oversized", next(seeds)), Idle(port, "idle", next(seeds)),
                Vanisher(port, "vanish", next(seeds))]
    for worker in workers:
        worker.start()
    STOP.wait(SECONDS)
    STOP.set()
    for worker in workers:
        worker.join(timeout=30)
        if worker.is_alive():
            STATS.bad("client", f"thread {worker.name} did not stop within 30 s of the end")
    monitor = workers[0]

    alive = server.poll() is None
    if alive:
        try:
            quiet_checks(port)
            vanish_check(port)
            final_reads(port)
        except (OSError, http.client.HTTPException) as error:
            STATS.bad("end", f"connection error in the checks after the load: {error!r}")
    probe_stop.set()
    latencies, failures = probe_results.recv() if probe_results.poll(30) else ([], ["the probe sent nothing"])
    probe.join(timeout=10)
    for _ in latencies:
        STATS.count("healthz", 200)
    for failure in failures:
        STATS.count("healthz", "failed")
        STATS.bad("healthz", failure)
    peak_kb = max(monitor.peak_kb, status_kb(server.pid, "VmHWM"), status_kb(server.pid, "VmRSS"))
    if alive:
        shutdown(server, port)
    elif server.returncode is None or server.returncode != 0:
        pass  # already recorded by the monitor

    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000 if latencies else float("inf")
    peak = peak_kb * 1024
    outcomes = collections.defaultdict(list)
    for (kind, outcome), n in sorted(STATS.outcomes.items(), key=lambda e: (e[0][0], str(e[0][1]))):
        outcomes[kind].append(f"{outcome} x{n}")
    print("answers: " + "; ".join(f"{kind} {', '.join(v)}" for kind, v in sorted(outcomes.items())))
    print("server maxima: " + ", ".join(f"{k} {v:.0f}" for k, v in sorted(monitor.maxima.items())) +
          f"; healthz probes {len(latencies)}, max {latencies[-1] * 1000 if latencies else 0:.1f} ms")
    print("peak RSS by tenth of the run (MB): " + " ".join(f"{kb / 1024:.0f}" for kb in monitor.steps))
    failed = STATS.unexpected > 0 or p99 > HEALTHZ_P99_LIMIT_MS or peak > RSS_LIMIT
    if STATS.details:
        print(f"{STATS.unexpected} unexpected (" +
              ", ".join(f"{kind} {n}" for kind, n in STATS.bad_kinds.most_common()) + "), the first:")
        for detail in STATS.details:
            print("  " + detail)
    if p99 > HEALTHZ_P99_LIMIT_MS:
        print(f"healthz p99 {p99:.1f} ms is over {HEALTHZ_P99_LIMIT_MS:.0f} ms")
    if peak > RSS_LIMIT:
        print(f"peak RSS {peak / MiB:.0f} MB is over the limit of {RSS_LIMIT / MiB:.0f} MB")
    if failed:
        print(f"server stderr (last lines of {log.name}):\n{tail(log.name)}", end="")
    else:
        for name in (log.name, out_name):
            os.unlink(name)
    print(f"soak: {STATS.requests} requests, {STATS.unexpected} unexpected, healthz p99 {p99:.1f} ms, "
          f"peak RSS {peak / MiB:.0f} MB (limit {RSS_LIMIT / MiB:.0f} MB), "
          f"feeds {'inconsistent' if STATS.inconsistent else 'consistent'}", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
