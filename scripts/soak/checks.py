"""The checks once the load has stopped: the request budget alone, parked clients released,
and each feed read whole against the model."""
import json
import socket
import time

from .batches import BatchError, apply_values, canon, check_against_new
from .config import BODY_TIMEOUT, FEEDS, MAX_WAIT
from .connection import Conn, chunked, latest, metrics, park, raw_answer, reset_close
from .differs import LARGE
from .hostile import OVERSIZED
from .model import MODEL
from .outcomes import STATS, judge


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
