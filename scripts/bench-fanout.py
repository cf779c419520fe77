#!/usr/bin/env python3
"""Fan-out: N clients parked on one feed, then one PUT; how soon the last one has its answer.

For each of RUNS runs, against one release server on loopback:
  - N long polls (`changes?since=<latest>&wait=60`) are parked, then one PUT is made, and
    the time from the PUT's answer to the last long poll's answer arriving is measured;
  - N event streams (`Accept: text/event-stream`) are opened and parked the same way, and
    the time from the PUT's answer to the last stream's event arriving is measured;
  - GET /healthz is timed on fresh connections while they are parked.
Before the runs, a fresh server per kind gives the resident memory that N parked
long polls, then N parked streams, add to it (a fresh one: memory freed by a wake-up is kept
for reuse, so a later reading would mix in the last run's).
Prints each figure's median and spread over the runs, and streams / long polls.

With FANOUT_STORE=postgres, the runs are made on a server whose store is a throwaway
PostgreSQL cluster (Debian's, on loopback) and, alternately, on one in memory: each wake's
time on both, the ratio PostgreSQL / memory, the store calls the server made during each
wake, and how many clients got anything but the new version (none may).

Env: FANOUT_CLIENTS (default 10000), FANOUT_RUNS (default 3), FANOUT_STORE (memory or postgres).
Usage: scripts/bench-fanout.py <batchdiff binary>
"""
import json
import os
import resource
import select
import socket
import statistics
import sys
import tempfile
import time

import benchlib
from benchlib import spread

CLIENTS = int(os.environ.get("FANOUT_CLIENTS", "10000"))
RUNS = int(os.environ.get("FANOUT_RUNS", "3"))
STORE = os.environ.get("FANOUT_STORE", "memory")


def fail(message):
    """Prints `message` as a failure and stops with status 1."""
    print(f"bench-fanout: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def start_server(binary, store=()):
    """A server with room for every client, parked as long as a run takes; its log kept aside."""
    try:
        return benchlib.Server(binary, "--max-connections", str(2 * CLIENTS + 100), "--event-heartbeat", "120",
                               "--max-wait", "120", *store, stderr=tempfile.TemporaryFile())
    except RuntimeError as error:
        fail(f"the server did not listen: {error}")


def http(port, method, path, body=None):
    """The answer's bytes of a request on a fresh connection (`body` sent as JSON); an answer that is not 2xx stops the run."""
    status, _, data = benchlib.fetch(port, method, path, None if body is None else json.dumps(body).encode())
    if not 200 <= status < 300:
        fail(f"{method} {path}: {status} {data[:200]!r}")
    return data


def metric(port, name):
    """The value of metric `name` (with its labels, if any: `name{...}`), summed over them."""
    return benchlib.metric(http(port, "GET", "/metrics"), name)


def healthz_ms(port, probes=20):
    """The median of `probes` GET /healthz, each on a fresh connection, in ms."""
    times = []
    for _ in range(probes):
        started = time.perf_counter()
        http(port, "GET", "/healthz")
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def open_clients(port, request):
    """CLIENTS connections to `port`, each having sent `request`, non-blocking."""
    clients = []
    for _ in range(CLIENTS):
        client = socket.create_connection(("127.0.0.1", port))
        client.sendall(request)
        client.setblocking(False)
        clients.append(client)
    return clients


def wait_parked(port, gauge):
    """Returns once `gauge` counts CLIENTS; fails after 60 s."""
    deadline = time.time() + 60
    while time.time() < deadline:
        if metric(port, gauge) == CLIENTS:
            return
        time.sleep(0.2)
    fail(f"{gauge} did not reach {CLIENTS}")


def drain(clients, marker, timeout=30):
    """Reads every client until its bytes hold `marker`, or an answer that is not 200;
    returns when the last one did, and how many got such an answer."""
    poller = select.epoll()
    waiting = {}
    buffers = {}
    for client in clients:
        poller.register(client.fileno(), select.EPOLLIN)
        waiting[client.fileno()] = client
        buffers[client.fileno()] = b""
    last = time.perf_counter()
    failed = 0
    deadline = time.time() + timeout
    while waiting and time.time() < deadline:
        for fd, _ in poller.poll(1):
            client = waiting.get(fd)
            if client is None:
                continue
            try:
                chunk = client.recv(65536)
            except BlockingIOError:
                continue
            buffers[fd] += chunk
            refused = buffers[fd].startswith(b"HTTP/1.1 ") and not buffers[fd].startswith(b"HTTP/1.1 200") and b"\r\n\r\n" in buffers[fd]
            if marker in buffers[fd] or refused or b"event: problem" in buffers[fd]:
                failed += marker not in buffers[fd]
                last = time.perf_counter()
                poller.unregister(fd)
                del waiting[fd]
            elif not chunk:
                fail(f"a client's connection closed before {marker!r}: {buffers[fd][-300:]!r}")
    poller.close()
    if waiting:
        fail(f"{len(waiting)} of {CLIENTS} clients did not receive {marker!r} within {timeout} s")
    return last, failed


def parked_memory_kb(binary, streams):
    """Resident memory per parked client (KB) that CLIENTS parked clients add to a fresh server."""
    with start_server(binary) as server:
        port = server.port
        version = json.loads(http(port, "PUT", "/feeds/crowd", [0]))["version"]
        idle = server.rss_mb() * 1024
        path = f"/feeds/crowd/changes?since={version}" + ("" if streams else "&wait=120")
        accept = "Accept: text/event-stream\r\n" if streams else ""
        clients = open_clients(port, f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{accept}\r\n".encode())
        wait_parked(port, "batchdiff_event_streams" if streams else "batchdiff_long_polls_parked")
        held = server.rss_mb() * 1024
        for client in clients:
            client.close()
        return (held - idle) / CLIENTS


def fan_out(port, feed, version, streams):
    """CLIENTS long polls (or streams) parked on `feed` at `version`, then one PUT: its Wake."""
    path = f"/feeds/{feed}/changes?since={version}" + ("" if streams else "&wait=120")
    accept = "Accept: text/event-stream\r\n" if streams else ""
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{accept}\r\n".encode()
    clients = open_clients(port, request)
    wait_parked(port, "batchdiff_event_streams" if streams else "batchdiff_long_polls_parked")
    if streams:
        drain(clients, b"retry: 1000")  # each stream's head and first line are in
    during = healthz_ms(port)
    # A client counts as parked before its first read of the feed is answered: the wake is
    # measured once those reads are done.
    calls = settled(lambda: metric(port, "batchdiff_store_call_seconds_count") or 0)
    written = json.loads(http(port, "PUT", f"/feeds/{feed}", [1, 2, 3, time.time_ns()]))["version"]
    acknowledged = time.perf_counter()
    marker = f"id: {written}".encode() if streams else f'"to":{written}'.encode()
    last, failed = drain(clients, marker)
    calls = (metric(port, "batchdiff_store_call_seconds_count") or 0) - calls
    for client in clients:
        client.close()
    return Wake((last - acknowledged) * 1000, during, written, int(calls), failed)


class Wake:
    """One fan-out: ms from the PUT's answer to the last client's, /healthz ms meanwhile,
    the version written, the store calls made during it, the clients not answered with it."""

    def __init__(self, ms, health, version, calls, failed):
        self.ms, self.health, self.version, self.calls, self.failed = ms, health, version, calls, failed


def settled(read, quiet=0.3, timeout=60):
    """`read()` once it gave the same value twice, `quiet` seconds apart."""
    deadline = time.time() + timeout
    value = read()
    while time.time() < deadline:
        time.sleep(quiet)
        again = read()
        if again == value:
            return value
        value = again
    fail("the server's store calls did not settle")


def main():
    if len(sys.argv) != 2:
        fail("usage: bench-fanout.py <batchdiff binary>")
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if hard < CLIENTS + 100:
        fail(f"the open-file limit {hard} is too low for {CLIENTS} clients")
    if STORE == "postgres":
        compare_stores(sys.argv[1])
        return
    poll_kb = parked_memory_kb(sys.argv[1], streams=False)
    stream_kb = parked_memory_kb(sys.argv[1], streams=True)
    with start_server(sys.argv[1]) as server:
        port = server.port
        version = json.loads(http(port, "PUT", "/feeds/crowd", [0]))["version"]
        before = healthz_ms(port)
        polls, streams, ratios, health = [], [], [], []
        for run in range(1, RUNS + 1):
            poll = fan_out(port, "crowd", version, streams=False)
            stream = fan_out(port, "crowd", poll.version, streams=True)
            version = stream.version
            polls.append(poll.ms)
            streams.append(stream.ms)
            ratios.append(stream.ms / poll.ms)
            health += [poll.health, stream.health]
            print(f"run {run}: {CLIENTS} long polls answered {poll.ms:.0f} ms after the PUT's answer, "
                  f"{CLIENTS} streams {stream.ms:.0f} ms; /healthz meanwhile {poll.health:.2f} / {stream.health:.2f} ms", flush=True)
    benchlib.report("fanout", [
        f"fanout: {CLIENTS} long polls on one feed, last answer after the PUT's answer: {spread(polls, 0)} ms over {RUNS} runs",
        f"fanout: {CLIENTS} event streams on one feed, last event after the PUT's answer: {spread(streams, 0)} ms "
        f"(goal <= 1000); streams / long polls {spread(ratios, 2)}",
        f"fanout: resident memory each parked client adds to a fresh server: long poll {poll_kb:.1f} KB, "
        f"event stream {stream_kb:.1f} KB",
        f"fanout: /healthz median while parked {spread(health, 2)} ms (idle before: {before:.2f} ms; goal < 50)",
    ], {"clients": CLIENTS, "runs": RUNS, "long_poll_ms": benchlib.distribution(polls),
        "stream_ms": benchlib.distribution(streams), "streams_to_long_polls": benchlib.distribution(ratios),
        "parked_long_poll_kb": poll_kb, "parked_stream_kb": stream_kb,
        "healthz_ms_while_parked": benchlib.distribution(health), "healthz_ms_idle": before})


def compare_stores(binary):
    """The wakes on a server on PostgreSQL and on one in memory, run after run."""
    cluster = benchlib.Cluster()
    servers = {}
    try:
        servers["postgres"] = start_server(binary, ["--store", cluster.uri])
        servers["memory"] = start_server(binary)
        versions = {store: json.loads(http(server.port, "PUT", "/feeds/crowd", [0]))["version"] for store, server in servers.items()}
        wakes = {(store, streams): [] for store in servers for streams in (False, True)}
        for run in range(1, RUNS + 1):
            for streams in (False, True):
                for store, server in servers.items():
                    wake = fan_out(server.port, "crowd", versions[store], streams)
                    versions[store] = wake.version
                    wakes[store, streams].append(wake)
                    kind = "streams" if streams else "long polls"
                    print(f"run {run}: {store}: {CLIENTS} {kind} answered {wake.ms:.0f} ms after the PUT's answer; "
                          f"{wake.calls} store calls meanwhile; {wake.failed} not answered with the version", flush=True)
    finally:
        for server in servers.values():
            server.stop()
        cluster.close()
    rows, figures = [], {"clients": CLIENTS, "runs": RUNS}
    for streams in (False, True):
        kind = "event streams" if streams else "long polls"
        postgres, memory = wakes["postgres", streams], wakes["memory", streams]
        ratios = [p.ms / m.ms for p, m in zip(postgres, memory)]
        rows.append(f"fanout-postgres: {CLIENTS} {kind} on one feed, last answer after the PUT's answer: PostgreSQL "
                    f"{spread([w.ms for w in postgres], 0)} ms, memory {spread([w.ms for w in memory], 0)} ms, PostgreSQL / memory "
                    f"{spread(ratios, 2)} (goal <= 1.5, and <= 1000 ms); "
                    f"store calls during the wake {spread([w.calls for w in postgres], 0)} (goal <= 50); "
                    f"clients not answered with the version: {sum(w.failed for w in postgres)} (goal 0)")
        figures[kind] = {"postgres_ms": benchlib.distribution([w.ms for w in postgres]),
                         "memory_ms": benchlib.distribution([w.ms for w in memory]),
                         "postgres_to_memory": benchlib.distribution(ratios),
                         "store_calls": benchlib.distribution([w.calls for w in postgres]),
                         "not_answered_with_the_version": sum(w.failed for w in postgres)}
    benchlib.report("fanout-postgres", rows, figures)


if __name__ == "__main__":
    main()
