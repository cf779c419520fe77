#!/usr/bin/env python3
"""Five hardening figures measured against ONE `batchdiff` binary, for a before/after comparison.

Usage: scripts/hardening-figures.py BINARY [--only NAME ...]

Run it once against an old build and once against a new build and compare the lines. Each
scenario starts its own server (`BINARY serve --host 127.0.0.1 --port 0 --log-level warning ...`,
benchlib.Server), reads the port from its `batchdiff listening on http://127.0.0.1:PORT` line, and
stops it at the end. All traffic stays on 127.0.0.1; every loop is bounded in count and time. One line is
printed per figure (`NAME: ...`), or `NAME: failed: <reason>`.

Scenarios:
  etag-rmw        20 read-modify-write rounds: a gzip GET, then a PUT with If-Match set to the
                  ETag exactly as received; counts the writes that succeeded (200) and the 412s.
  slow-readers    20 raw sockets with a 4 KiB receive buffer read an 8 MB feed 512 bytes at a
                  time for 10 s (half asking for gzip); growth of the server's resident memory.
  health-slots    --max-connections 8 with 8 event streams open: do /healthz and /readyz still
                  answer 200 within 2 s?
  max-changes     six different maxChanges values (all far above the answer's size) on one
                  since: how many answers are computed (batchdiff_feed_answers_computed_total)
                  and how long it takes.
  pretty-streams  1000 event streams of a 4.x MB pretty-printed feed that never read, then one
                  PUT: how long it takes and how much the resident memory grows.

Resident memory is read by benchlib (from /proc/PID/status). Python 3 standard library only.
"""
import argparse
import gzip
import http.client
import json
import os
import resource
import socket
import tempfile
import time

import benchlib

HOST = "127.0.0.1"
BIG_BODY_LIMIT = "67108864"
SCENARIOS = ["etag-rmw", "slow-readers", "health-slots", "max-changes", "pretty-streams"]
FIGURES = {}  # each scenario's figures, for the JSON report


# --- server and HTTP helpers -------------------------------------------------------------------

def serve(binary, *extra):
    """One `batchdiff serve` process (benchlib.Server), its stderr kept aside (shown if it does not
    start); killed 15 s after SIGTERM at the end."""
    return benchlib.Server(binary, *extra, stderr=tempfile.TemporaryFile(), timeout=30, stop_timeout=15)


def request(server, method, path, body=None, headers=None, timeout=30):
    """One request on a fresh connection: (status, headers as a dict of lower-case names, raw body)."""
    return benchlib.fetch(server.port, method, path, body, headers, timeout)


def decoded(headers, data):
    if "gzip" in headers.get("content-encoding", "").lower():
        return gzip.decompress(data)
    return data


def put_feed(server, feed, body, timeout=30, headers=None):
    status, response_headers, data = request(server, "PUT", f"/feeds/{feed}", body, headers, timeout)
    if status != 200:
        raise RuntimeError(f"PUT /feeds/{feed} answered {status}: {data[:200]!r}")
    return json.loads(decoded(response_headers, data))["version"]


def metric(server, name):
    """The value of a metric in /metrics (summed over its label sets), or None when it is missing."""
    status, headers, data = request(server, "GET", "/metrics", timeout=15)
    if status != 200:
        return None
    return benchlib.metric(decoded(headers, data), name)


def raw_socket(server, request_bytes, rcvbuf=None, timeout=10):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        if rcvbuf is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        sock.settimeout(timeout)
        sock.connect((HOST, server.port))
        sock.sendall(request_bytes)
    except BaseException:
        sock.close()
        raise
    return sock


def read_head(sock, timeout=10, limit=65536):
    """Bytes up to the end of a response head (or whatever came before the timeout)."""
    deadline = time.monotonic() + timeout
    data = b""
    while b"\r\n\r\n" not in data and len(data) < limit:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        sock.settimeout(remaining)
        try:
            chunk = sock.recv(4096)
        except socket.timeout:
            break
        if not chunk:
            break
        data += chunk
    return data


def close_all(sockets):
    for sock in sockets:
        try:
            sock.close()
        except Exception:
            pass


def raise_nofile(wanted):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft


# --- scenarios ---------------------------------------------------------------------------------

def etag_rmw(binary):
    rounds = 20
    with serve(binary) as server:
        items = [{"id": i, "title": f"row {i}"} for i in range(200)]
        put_feed(server, "f", json.dumps(items))
        succeeded = precondition_failed = 0
        other = []
        gzipped = 0
        for round_number in range(rounds):
            status, headers, data = request(server, "GET", "/feeds/f", headers={"Accept-Encoding": "gzip"})
            if status != 200:
                other.append(f"GET {status}")
                continue
            if "gzip" in headers.get("content-encoding", "").lower():
                gzipped += 1
            etag = headers.get("etag")
            snapshot = json.loads(decoded(headers, data))["data"]
            snapshot.append({"id": 200 + round_number, "title": f"row {200 + round_number}"})
            put_headers = {"If-Match": etag} if etag is not None else {}
            status, _, _ = request(server, "PUT", "/feeds/f", json.dumps(snapshot), put_headers)
            if status == 200:
                succeeded += 1
            elif status == 412:
                precondition_failed += 1
            else:
                other.append(str(status))
        FIGURES["etag-rmw"] = {"rounds": rounds, "succeeded": succeeded, "precondition_failed": precondition_failed,
                               "other_answers": other, "gzipped_gets": gzipped}
        line = f"etag-rmw: {succeeded} of {rounds} conditional writes succeeded (412: {precondition_failed})"
        if other:
            line += f" (other answers: {', '.join(other[:5])})"
        if gzipped < rounds:
            line += f" ({gzipped} of {rounds} GETs were gzip-compressed)"
        return line


def stored_and_warm(server, feed, body, warm_path):
    """PUTs `body` as `feed`, GETs `warm_path` once (its answer is made and kept), and
    returns the server's resident memory then, in MB."""
    put_feed(server, feed, body, timeout=60)
    status, _, _ = request(server, "GET", warm_path, timeout=60)
    if status != 200:
        raise RuntimeError(f"warm-up GET {warm_path} answered {status}")
    return server.rss_mb()


def slow_readers(binary):
    readers = 20
    with serve(binary, "--body-limit", BIG_BODY_LIMIT) as server:
        items = [{"id": f"item-{i}", "title": f"Title of row {i} in a big feed", "n": i} for i in range(110_000)]
        body = json.dumps(items, separators=(",", ":")).encode()
        del items
        before = stored_and_warm(server, "f", body, "/feeds/f")
        sockets = []
        all_ok = True
        try:
            for index in range(readers):
                head = "GET /feeds/f HTTP/1.1\r\nHost: x\r\n"
                if index % 2:
                    head += "Accept-Encoding: gzip\r\n"
                sockets.append(raw_socket(server, (head + "\r\n").encode(), rcvbuf=4096))
            for sock in sockets:
                first = b""
                deadline = time.monotonic() + 30
                while len(first) < 12 and time.monotonic() < deadline:
                    sock.settimeout(max(0.1, deadline - time.monotonic()))
                    try:
                        chunk = sock.recv(512 - len(first))
                    except socket.timeout:
                        break
                    if not chunk:
                        break
                    first += chunk
                if not first.startswith(b"HTTP/1.1 200"):
                    all_ok = False
            end = time.monotonic() + 10
            while time.monotonic() < end:
                time.sleep(min(2, max(0, end - time.monotonic())))
                for sock in sockets:
                    sock.settimeout(1)
                    try:
                        sock.recv(512)
                    except (socket.timeout, OSError):
                        pass
            after = server.rss_mb()
        finally:
            close_all(sockets)
        FIGURES["slow-readers"] = {"readers": readers, "feed_mb": len(body) / 1e6, "resident_growth_mb": after - before,
                                   "all_got_200": all_ok}
        return (f"slow-readers: {readers} readers of an {len(body) / 1e6:.1f} MB feed grew resident memory "
                f"by {after - before:.1f} MB (all got 200: {'yes' if all_ok else 'no'})")


def health_slots(binary):
    slots = 8
    with serve(binary, "--max-connections", str(slots), "--event-heartbeat", "60") as server:
        version = put_feed(server, "h", json.dumps([{"id": i} for i in range(3)]))
        time.sleep(0.5)  # let the server release the PUT's connection
        sockets = []
        try:
            streams_open = 0
            for _ in range(slots):
                sock = raw_socket(server, (f"GET /feeds/h/changes?since={version} HTTP/1.1\r\nHost: x\r\n"
                                           "Accept: text/event-stream\r\n\r\n").encode())
                sockets.append(sock)
                if read_head(sock, timeout=10).startswith(b"HTTP/1.1 200"):
                    streams_open += 1
            answered = {}
            for path in ("/healthz", "/readyz"):
                answered[path] = 0
                for _ in range(3):
                    try:
                        status, _, _ = request(server, "GET", path, timeout=2)
                        if status == 200:
                            answered[path] += 1
                    except (OSError, http.client.HTTPException):
                        pass
        finally:
            close_all(sockets)
        FIGURES["health-slots"] = {"slots": slots, "streams_open": streams_open,
                                   "healthz_200_of_3": answered["/healthz"], "readyz_200_of_3": answered["/readyz"]}
        return (f"health-slots: /healthz {answered['/healthz']} of 3, /readyz {answered['/readyz']} of 3 answered 200 "
                f"within 2 s with {streams_open} streams in {slots} slots")


def max_changes(binary):
    counter = "batchdiff_feed_answers_computed_total"
    values = [5_000_000 + k for k in range(6)]
    budget = 100  # seconds; no new request starts after that
    with serve(binary) as server:
        items = [{"id": i, "v": 0} for i in range(3000)]
        put_feed(server, "m", json.dumps(items))
        put_feed(server, "m", json.dumps(items[::-1]))
        before = metric(server, counter)
        bodies = set()
        statuses = []
        start = time.monotonic()
        for value in values:
            if time.monotonic() - start > budget:
                break
            status, headers, data = request(server, "GET", f"/feeds/m/changes?since=0&maxChanges={value}", timeout=120)
            statuses.append(status)
            bodies.add(decoded(headers, data))
        seconds = time.monotonic() - start
        after = metric(server, counter)
        computed = "n/a (metric missing)" if before is None or after is None else f"{after - before:.0f}"
        FIGURES["max-changes"] = {"values_asked": len(statuses), "answers_computed": None if computed.startswith("n/a") else after - before,
                                  "seconds": seconds, "distinct_bodies": len(bodies), "statuses": statuses}
        which = "six" if len(statuses) == len(values) else f"{len(statuses)} of six (time budget)"
        line = (f"max-changes: {which} maxChanges values on one since computed {computed} answers in {seconds:.1f} s "
                f"(distinct bodies: {len(bodies)})")
        if any(status != 200 for status in statuses):
            line += f" (statuses: {', '.join(map(str, statuses))})"
        return line


def pretty_streams(binary):
    streams = 1000
    raise_nofile(streams + 1024)  # before the server starts, so that it inherits the limit too
    with serve(binary, "--body-limit", BIG_BODY_LIMIT) as server:
        items = [{"id": i, "title": f"Row {i} of a pretty feed", "tags": ["a b", "c"]} for i in range(45_000)]
        body = json.dumps(items, indent=1)
        before = stored_and_warm(server, "pretty", body, "/feeds/pretty/changes?since=0")
        sockets = []
        try:
            stream_request = (b"GET /feeds/pretty/changes?since=0 HTTP/1.1\r\nHost: x\r\n"
                              b"Accept: text/event-stream\r\n\r\n")
            open_deadline = time.monotonic() + 40
            for _ in range(streams):
                if time.monotonic() > open_deadline:
                    break
                try:
                    sockets.append(raw_socket(server, stream_request, rcvbuf=4096, timeout=10))
                except OSError:
                    pass
            opened = len(sockets)
            wait_deadline = time.monotonic() + 60
            gauge = metric(server, "batchdiff_event_streams")
            if gauge is None:
                time.sleep(10)
            else:
                while gauge is not None and gauge < opened and time.monotonic() < wait_deadline:
                    time.sleep(1)
                    gauge = metric(server, "batchdiff_event_streams")
            items[len(items) // 2]["title"] = "A changed title"
            start = time.monotonic()
            put_feed(server, "pretty", json.dumps(items, indent=1), timeout=120)
            put_seconds = time.monotonic() - start
            time.sleep(3)
            after = server.rss_mb()
        finally:
            close_all(sockets)
        FIGURES["pretty-streams"] = {"streams": opened, "feed_mb": len(body) / 1e6, "put_seconds": put_seconds,
                                     "resident_growth_mb": after - before, "streams_counted": gauge}
        line = (f"pretty-streams: {opened} stalled streams of a {len(body) / 1e6:.1f} MB pretty feed, one PUT "
                f"(took {put_seconds:.1f} s): resident memory grew by {after - before:.1f} MB")
        if gauge is None:
            line += " (no batchdiff_event_streams metric)"
        elif gauge < opened:
            line += f" (only {gauge:.0f} streams counted by the server)"
        return line


RUNNERS = {
    "etag-rmw": etag_rmw,
    "slow-readers": slow_readers,
    "health-slots": health_slots,
    "max-changes": max_changes,
    "pretty-streams": pretty_streams,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary", metavar="BINARY", help="the batchdiff binary to measure")
    parser.add_argument("--only", metavar="NAME", nargs="+", action="extend", choices=SCENARIOS,
                        help="run only these scenarios (repeatable)")
    arguments = parser.parse_args()
    if not os.access(arguments.binary, os.X_OK):
        parser.error(f"{arguments.binary} is not an executable file")
    selected = [name for name in SCENARIOS if not arguments.only or name in arguments.only]
    lines = []
    for name in selected:
        try:
            line = RUNNERS[name](arguments.binary)
        except Exception as error:  # one scenario's failure must not stop the others
            reason = str(error) or type(error).__name__
            line = f"{name}: failed: {type(error).__name__}: {reason}" if str(error) else f"{name}: failed: {reason}"
        print(line, flush=True)  # as each scenario ends: they take minutes in all
        lines.append(line)
    benchlib.report("hardening", lines, {"binary": os.path.realpath(arguments.binary), **FIGURES}, echo=False)


if __name__ == "__main__":
    main()
