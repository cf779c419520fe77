"""The server under test: started with the soak's limits, its log, and the shutdown check
(long polls parked at SIGTERM answered, exit 0 within 10 s)."""
import signal
import socket
import subprocess
import tempfile
import time

import benchlib

from .config import BODY_LIMIT, BODY_TIMEOUT, EVENT_HEARTBEAT, FEED_MEMORY, FEEDS, HEADER_TIMEOUT, MAX_CONNECTIONS, MAX_WAIT, REQUEST_MEMORY
from .connection import Conn, latest, park, raw_answer
from .outcomes import STATS, judge


def start_server(binary, log):
    """The server with the soak's limits (benchlib.Server), its stderr to `log`, its stdout to
    a file (no thread runs before the probe process is forked): the server, that file's name."""
    out = tempfile.NamedTemporaryFile("w+", prefix="soak-stdout-", delete=False)
    try:
        server = benchlib.Server(
            binary, "--max-feed-memory", str(FEED_MEMORY), "--request-memory", str(REQUEST_MEMORY),
            "--max-connections", str(MAX_CONNECTIONS), "--body-limit", str(BODY_LIMIT),
            "--header-timeout", str(HEADER_TIMEOUT), "--body-timeout", str(BODY_TIMEOUT),
            "--max-wait", str(MAX_WAIT), "--event-heartbeat", str(EVENT_HEARTBEAT), stdout=out, stderr=log, timeout=20)
    except benchlib.ServerError as error:
        raise SystemExit(f"soak: the server did not start (status {error.status}); stderr:\n{tail(log.name)}")
    return server, out.name


def tail(path, lines=30):
    """The last `lines` lines of the file at `path`."""
    try:
        with open(path, errors="replace") as log:
            return "".join(log.readlines()[-lines:])
    except OSError:
        return ""


def shutdown(server, port):
    """`server`: its Popen. 3 long polls parked, then SIGTERM: they are answered, the server exits 0 within 10 s."""
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
