"""What watches the server during the load: a /healthz probe in its own process, and a
thread reading its resident memory and its /metrics."""
import collections
import http.client
import threading
import time

import benchlib

from .config import SECONDS
from .connection import Conn, metrics
from .outcomes import START, STATS, STOP


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


class Monitor(threading.Thread):
    """Resident memory every 0.25 s, /metrics every second, and whether the server (its Popen) still runs."""

    def __init__(self, server, port):
        super().__init__(name="monitor", daemon=True)
        self.server, self.conn = server, Conn(port)
        self.peak_mb = 0
        self.steps = []  # peak resident memory (MB) in each tenth of the run, to tell a plateau from a leak
        self.maxima = collections.Counter()

    def run(self):
        ticks = 0
        while not STOP.is_set():
            rss = benchlib.rss_mb(self.server.pid, missing=0)
            self.peak_mb = max(self.peak_mb, rss)
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
