#!/usr/bin/env python3
"""Five hardening figures measured against ONE `batchdiff` binary, for a before/after comparison.

Usage: scripts/hardening-figures.py BINARY [--only NAME ...]

Run it once against an old build and once against a new build and compare the lines. Each
scenario starts its own server (`BINARY serve --host 127.0.0.1 --port 0 --log-level warning ...`),
reads the port from its `batchdiff listening on http://127.0.0.1:PORT` line, and kills it at the
end. All traffic stays on 127.0.0.1; every loop is bounded in count and time. One line is
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

Resident memory is VmRSS from /proc/PID/status. Python 3 standard library only.
"""
import argparse
import gzip
import http.client
import json
import os
import re
import resource
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time

HOST = "127.0.0.1"
BIG_BODY_LIMIT = "67108864"
SCENARIOS = ["etag-rmw", "slow-readers", "health-slots", "max-changes", "pretty-streams"]


# --- server and HTTP helpers -------------------------------------------------------------------

class Server:
    """One `batchdiff serve` process on a free port; `stop()` kills it."""

    def __init__(self, binary, *extra, startup_timeout=30):
        self.stderr = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [binary, "serve", "--host", HOST, "--port", "0", "--log-level", "warning", *extra],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.stderr)
        self.pid = self.process.pid
        self.port = None
        deadline = time.monotonic() + startup_timeout
        buffered = b""
        try:
            while self.port is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise RuntimeError(f"no 'listening' line within {startup_timeout} s{self.stderr_tail()}")
                ready, _, _ = select.select([self.process.stdout], [], [], min(remaining, 0.5))
                if not ready:
                    if self.process.poll() is not None:
                        raise RuntimeError(f"server exited with {self.process.returncode}{self.stderr_tail()}")
                    continue
                chunk = os.read(self.process.stdout.fileno(), 4096)
                if not chunk:
                    self.process.wait(timeout=5)
                    raise RuntimeError(f"server exited with {self.process.returncode}{self.stderr_tail()}")
                buffered += chunk
                match = re.search(rb"listening on http://[^\s:]+:(\d+)", buffered)
                if match:
                    self.port = int(match.group(1))
        except BaseException:
            self.stop()
            raise
        # Keep draining stdout so that the server never blocks on a full pipe.
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        try:
            while os.read(self.process.stdout.fileno(), 65536):
                pass
        except OSError:
            pass

    def stderr_tail(self):
        try:
            self.stderr.seek(0)
            text = self.stderr.read().decode("utf-8", "replace").strip()
        except Exception:
            return ""
        return f" (stderr: {text[-300:]})" if text else ""

    def rss_mb(self):
        with open(f"/proc/{self.pid}/status") as status:
            return int(re.search(r"VmRSS:\s+(\d+)", status.read()).group(1)) / 1024

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pass
        try:
            self.process.stdout.close()
        except Exception:
            pass
        self.stderr.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False


def request(server, method, path, body=None, headers=None, timeout=30):
    """One request on a fresh connection: (status, headers as a dict of lower-case names, raw body)."""
    conn = http.client.HTTPConnection(HOST, server.port, timeout=timeout)
    try:
        all_headers = dict(headers or {})
        if body is not None:
            if isinstance(body, str):
                body = body.encode()
            all_headers.setdefault("Content-Type", "application/json")
        conn.request(method, path, body=body, headers=all_headers)
        response = conn.getresponse()
        data = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data
    finally:
        conn.close()


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
    text = decoded(headers, data).decode("utf-8", "replace")
    total = None
    for match in re.finditer(rf"^{re.escape(name)}(?:\{{[^}}]*\}})?\s+(\S+)", text, re.M):
        try:
            total = (total or 0) + float(match.group(1))
        except ValueError:
            pass
    return total


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
    with Server(binary) as server:
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
    with Server(binary, "--body-limit", BIG_BODY_LIMIT) as server:
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
        return (f"slow-readers: {readers} readers of an {len(body) / 1e6:.1f} MB feed grew resident memory "
                f"by {after - before:.1f} MB (all got 200: {'yes' if all_ok else 'no'})")


def health_slots(binary):
    slots = 8
    with Server(binary, "--max-connections", str(slots), "--event-heartbeat", "60") as server:
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
        return (f"health-slots: /healthz {answered['/healthz']} of 3, /readyz {answered['/readyz']} of 3 answered 200 "
                f"within 2 s with {streams_open} streams in {slots} slots")


def max_changes(binary):
    counter = "batchdiff_feed_answers_computed_total"
    values = [5_000_000 + k for k in range(6)]
    budget = 100  # seconds; no new request starts after that
    with Server(binary) as server:
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
        which = "six" if len(statuses) == len(values) else f"{len(statuses)} of six (time budget)"
        line = (f"max-changes: {which} maxChanges values on one since computed {computed} answers in {seconds:.1f} s "
                f"(distinct bodies: {len(bodies)})")
        if any(status != 200 for status in statuses):
            line += f" (statuses: {', '.join(map(str, statuses))})"
        return line


def pretty_streams(binary):
    streams = 1000
    raise_nofile(streams + 1024)  # before the server starts, so that it inherits the limit too
    with Server(binary, "--body-limit", BIG_BODY_LIMIT) as server:
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
    for name in selected:
        try:
            line = RUNNERS[name](arguments.binary)
        except Exception as error:  # one scenario's failure must not stop the others
            reason = str(error) or type(error).__name__
            line = f"{name}: failed: {type(error).__name__}: {reason}" if str(error) else f"{name}: failed: {reason}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
