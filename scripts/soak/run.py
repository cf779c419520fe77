"""The run: the server, the load's threads for SOAK_SECONDS, the checks after it, and the
verdict (the last line, and the exit status)."""
import collections
import http.client
import json
import multiprocessing
import os
import random
import sys
import tempfile

import benchlib

from .checks import final_reads, quiet_checks, vanish_check
from .config import FEEDS, HEALTHZ_P99_LIMIT_MS, MiB, READERS_PER_FEED, RSS_LIMIT, SECONDS, SEED, TWO_WRITERS
from .differs import LARGE, Differ, large_lists
from .hostile import CutBody, Idle, Malformed, Oversized, SlowSender, Vanisher
from .monitor import Monitor, healthz_probe
from .outcomes import STATS, STOP
from .readers import EtagReader, EventReader, Reader
from .server import shutdown, start_server, tail
from .writers import Writer


def main():
    """The soak: its lines, then exit 0, or 1 on anything unexpected (the module's docstring)."""
    binary = sys.argv[1] if len(sys.argv) > 1 else ".build/release/batchdiff"
    if not os.access(binary, os.X_OK):
        raise SystemExit(f"soak: no server binary at {binary} (make release, or pass its path)")
    rng = random.Random(SEED)
    LARGE.extend((old, new, json.dumps({"old": old, "new": new}, separators=(",", ":")).encode())
                 for old, new in (large_lists(random.Random(rng.random())) for _ in range(3)))
    log = tempfile.NamedTemporaryFile("w+", prefix="soak-stderr-", delete=False)
    server, out_name = start_server(binary, log)
    port = server.port
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
    workers = [Monitor(server.process, port)]
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

    alive = server.process.poll() is None
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
    peak_mb = max(monitor.peak_mb, benchlib.peak_mb(server.pid, missing=0), benchlib.rss_mb(server.pid, missing=0))
    if alive:
        shutdown(server.process, port)
    elif server.process.returncode is None or server.process.returncode != 0:
        pass  # already recorded by the monitor

    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000 if latencies else float("inf")
    peak = peak_mb * MiB
    outcomes = collections.defaultdict(list)
    for (kind, outcome), n in sorted(STATS.outcomes.items(), key=lambda e: (e[0][0], str(e[0][1]))):
        outcomes[kind].append(f"{outcome} x{n}")
    print("answers: " + "; ".join(f"{kind} {', '.join(v)}" for kind, v in sorted(outcomes.items())))
    print("server maxima: " + ", ".join(f"{k} {v:.0f}" for k, v in sorted(monitor.maxima.items())) +
          f"; healthz probes {len(latencies)}, max {latencies[-1] * 1000 if latencies else 0:.1f} ms")
    print("peak RSS by tenth of the run (MB): " + " ".join(f"{mb:.0f}" for mb in monitor.steps))
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
