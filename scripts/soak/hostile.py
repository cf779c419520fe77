"""Hostile clients: slow senders, bodies cut short, malformed JSON, oversized bodies, idle
connections and long polls whose clients vanish."""
import json
import selectors
import socket
import time
import traceback

from .config import BODY_LIMIT, BODY_TIMEOUT, FEEDS, HEADER_TIMEOUT, IDLE_CONNECTIONS, MAX_WAIT
from .connection import chunked, latest, park, raw_answer, reset_close
from .outcomes import STATS, STOP, judge, short
from .worker import Worker


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
