#!/usr/bin/env python3
"""Fan-out: N clients parked on one feed, then one PUT; how soon the last one has its answer.

For each of RUNS runs, against one release server on loopback:
  - N long polls (`changes?since=<latest>&wait=60`) are parked, then one PUT is made, and
    the time from the PUT's answer to the last long poll's answer arriving is measured;
  - N event streams (`Accept: text/event-stream`) are opened and parked the same way, and
    the time from the PUT's answer to the last stream's event arriving is measured;
  - GET /healthz is timed on fresh connections while they are parked.
Before the runs, a fresh server per kind gives the resident memory (VmRSS) that N parked
long polls, then N parked streams, add to it (a fresh one: memory freed by a wake-up is kept
for reuse, so a later reading would mix in the last run's).
Prints each figure's median and spread over the runs, and streams / long polls.

Env: FANOUT_CLIENTS (default 10000), FANOUT_RUNS (default 3).
Usage: scripts/bench-fanout.py <batchdiff binary>
"""
import json
import os
import re
import resource
import select
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

CLIENTS = int(os.environ.get("FANOUT_CLIENTS", "10000"))
RUNS = int(os.environ.get("FANOUT_RUNS", "3"))


def fail(message):
    print(f"bench-fanout: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def start_server(binary):
    log = tempfile.NamedTemporaryFile(prefix="fanout-server-", suffix=".log", delete=False)
    server = subprocess.Popen([binary, "serve", "--host", "127.0.0.1", "--port", "0", "--log-level", "warning",
                               "--max-connections", str(2 * CLIENTS + 100), "--event-heartbeat", "120", "--max-wait", "120"],
                              stdout=log, stderr=subprocess.STDOUT)
    for _ in range(300):
        with open(log.name) as text:
            found = re.search(r"batchdiff listening on http://127.0.0.1:(\d+)", text.read())
        if found:
            return server, int(found.group(1))
        time.sleep(0.1)
    fail("the server did not listen")


def http(port, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.read()


def metric(port, name):
    for line in http(port, "GET", "/metrics").decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return None


def healthz_ms(port, probes=20):
    times = []
    for _ in range(probes):
        started = time.perf_counter()
        http(port, "GET", "/healthz")
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def resident_kb(pid):
    with open(f"/proc/{pid}/status") as status:
        return int(next(line for line in status if line.startswith("VmRSS:")).split()[1])


def open_clients(port, request):
    clients = []
    for _ in range(CLIENTS):
        client = socket.create_connection(("127.0.0.1", port))
        client.sendall(request)
        client.setblocking(False)
        clients.append(client)
    return clients


def wait_parked(port, gauge):
    deadline = time.time() + 60
    while time.time() < deadline:
        if metric(port, gauge) == CLIENTS:
            return
        time.sleep(0.2)
    fail(f"{gauge} did not reach {CLIENTS}")


def drain(clients, marker, timeout=30):
    """Reads every client until its bytes hold `marker`; returns when the last one does."""
    poller = select.epoll()
    waiting = {}
    buffers = {}
    for client in clients:
        poller.register(client.fileno(), select.EPOLLIN)
        waiting[client.fileno()] = client
        buffers[client.fileno()] = b""
    last = time.perf_counter()
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
            if marker in buffers[fd]:
                last = time.perf_counter()
                poller.unregister(fd)
                del waiting[fd]
            elif not chunk:
                fail(f"a client's connection closed before {marker!r}: {buffers[fd][-300:]!r}")
    poller.close()
    if waiting:
        fail(f"{len(waiting)} of {CLIENTS} clients did not receive {marker!r} within {timeout} s")
    return last


def parked_memory_kb(binary, streams):
    """Resident memory per parked client (KB) that CLIENTS parked clients add to a fresh server."""
    server, port = start_server(binary)
    try:
        version = json.loads(http(port, "PUT", "/feeds/crowd", [0]))["version"]
        idle = resident_kb(server.pid)
        path = f"/feeds/crowd/changes?since={version}" + ("" if streams else "&wait=120")
        accept = "Accept: text/event-stream\r\n" if streams else ""
        clients = open_clients(port, f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{accept}\r\n".encode())
        wait_parked(port, "batchdiff_event_streams" if streams else "batchdiff_long_polls_parked")
        held = resident_kb(server.pid)
        for client in clients:
            client.close()
        return (held - idle) / CLIENTS
    finally:
        server.terminate()
        server.wait(timeout=30)


def fan_out(port, feed, version, streams):
    path = f"/feeds/{feed}/changes?since={version}" + ("" if streams else "&wait=120")
    accept = "Accept: text/event-stream\r\n" if streams else ""
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{accept}\r\n".encode()
    clients = open_clients(port, request)
    wait_parked(port, "batchdiff_event_streams" if streams else "batchdiff_long_polls_parked")
    if streams:
        drain(clients, b"retry: 1000")  # each stream's head and first line are in
    during = healthz_ms(port)
    written = json.loads(http(port, "PUT", f"/feeds/{feed}", [1, 2, 3, time.time_ns()]))["version"]
    acknowledged = time.perf_counter()
    marker = f"id: {written}".encode() if streams else f'"to":{written}'.encode()
    last = drain(clients, marker)
    for client in clients:
        client.close()
    return (last - acknowledged) * 1000, during, written


def spread(values, digits=0):
    form = f"{{:.{digits}f}}"
    return f"{form.format(statistics.median(values))} ({form.format(min(values))} to {form.format(max(values))})"


def main():
    if len(sys.argv) != 2:
        fail("usage: bench-fanout.py <batchdiff binary>")
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if hard < CLIENTS + 100:
        fail(f"the open-file limit {hard} is too low for {CLIENTS} clients")
    poll_kb = parked_memory_kb(sys.argv[1], streams=False)
    stream_kb = parked_memory_kb(sys.argv[1], streams=True)
    server, port = start_server(sys.argv[1])
    try:
        version = json.loads(http(port, "PUT", "/feeds/crowd", [0]))["version"]
        before = healthz_ms(port)
        polls, streams, ratios, health = [], [], [], []
        for run in range(1, RUNS + 1):
            poll_ms, poll_health, version = fan_out(port, "crowd", version, streams=False)
            stream_ms, stream_health, version = fan_out(port, "crowd", version, streams=True)
            polls.append(poll_ms)
            streams.append(stream_ms)
            ratios.append(stream_ms / poll_ms)
            health += [poll_health, stream_health]
            print(f"run {run}: {CLIENTS} long polls answered {poll_ms:.0f} ms after the PUT's answer, "
                  f"{CLIENTS} streams {stream_ms:.0f} ms; /healthz meanwhile {poll_health:.2f} / {stream_health:.2f} ms", flush=True)
        print(f"fanout: {CLIENTS} long polls on one feed, last answer after the PUT's answer: {spread(polls)} ms over {RUNS} runs")
        print(f"fanout: {CLIENTS} event streams on one feed, last event after the PUT's answer: {spread(streams)} ms "
              f"(goal <= 1000); streams / long polls {spread(ratios, 2)}")
        print(f"fanout: resident memory each parked client adds to a fresh server: long poll {poll_kb:.1f} KB, "
              f"event stream {stream_kb:.1f} KB")
        print(f"fanout: /healthz median while parked {spread(health, 2)} ms (idle before: {before:.2f} ms; goal < 50)")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
