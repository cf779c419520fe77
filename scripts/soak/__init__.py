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
- the server's resident memory sampled every 0.25 s (and its peak read at the end), its
  /metrics every second.

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

The modules, by what they hold: config (the limits, and what each kind of request may get),
outcomes (the counts and the unexpected answers), connection (HTTP on keep-alive and raw
sockets), batches (applying and checking batches), model (the versions writers saw
acknowledged), worker (the load threads' loop), writers, readers (changes, event streams,
ETags), differs (POST /diff), hostile (the hostile clients), monitor (the health probe, memory
and /metrics), checks (the checks once the load stopped), server (starting the server, and
its shutdown check), run (the run and its verdict). scripts/soak.py is the entry point.
"""
