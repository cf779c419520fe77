"""HTTP to the server: a keep-alive connection (Conn), answers read from raw sockets,
clients that vanish with a reset, long polls parked on raw sockets, chunked bodies, /metrics."""
import http.client
import json
import socket
import struct
import time

from .outcomes import STATS, judge


class Answer:
    __slots__ = ("status", "headers", "body", "seconds")

    def __init__(self, status, headers, body, seconds):
        self.status, self.headers, self.body, self.seconds = status, headers, body, seconds


class Conn:
    """A keep-alive connection, opened again when the server closed it or when it has been
    idle for a second (the header timeout closes a connection idle for 5 s: reusing one
    close to that would race the close)."""

    def __init__(self, port):
        self.port = port
        self.http = None
        self.last = 0.0

    def close(self):
        if self.http is not None:
            self.http.close()
            self.http = None

    def request(self, method, path, body=None, headers=None, timeout=30.0):
        now = time.monotonic()
        if self.http is None or now - self.last > 1.0:
            self.close()
            self.http = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        elif self.http.sock is not None:
            self.http.sock.settimeout(timeout)
        else:
            self.http.timeout = timeout
        start = time.monotonic()
        try:
            try:
                self.http.request(method, path, body=body, headers=headers or {})
            except (BrokenPipeError, ConnectionResetError):
                # Refused from its head (413, 503 server_busy), a request is answered before
                # its body is read and the connection closed (errors.md §2.3): the sender
                # sees a broken pipe, but the answer is there to read.
                pass
            response = self.http.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException):
            self.close()
            raise
        self.last = time.monotonic()
        if response.will_close:
            self.close()
        headers = {k.lower(): v for k, v in response.getheaders()}
        return Answer(response.status, headers, data, self.last - start)


def raw_answer(sock):
    """Reads one HTTP answer from a raw socket; None when the connection closes first."""
    response = http.client.HTTPResponse(sock)
    try:
        response.begin()
    except (http.client.RemoteDisconnected, http.client.BadStatusLine, ConnectionResetError, BrokenPipeError):
        return None
    try:
        data = response.read()
    except (http.client.IncompleteRead, ConnectionResetError) as error:
        data = getattr(error, "partial", b"")
    return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, data, 0.0)


def reset_close(sock):
    """Closes with a TCP reset (SO_LINGER {1, 0}): the client vanishes."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    sock.close()


def chunked(body, size=65536):
    return b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + size]), body[i:i + size])
                    for i in range(0, len(body), size)) + b"0\r\n\r\n"


def park(port, feed, version, wait):
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(b"GET /feeds/%s/changes?since=%d&wait=%d HTTP/1.1\r\nHost: soak\r\n\r\n"
                 % (feed.encode(), version, wait))
    return sock


def latest(conn, feed):
    answer = conn.request("GET", f"/feeds/{feed}")
    STATS.count("get", answer.status)
    return json.loads(answer.body)["version"] if answer.status == 200 else None


def metrics(conn):
    answer = conn.request("GET", "/metrics")
    judge("metrics", answer, "GET /metrics")
    values = {}
    for line in answer.body.decode().splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            try:
                values[name] = float(value)
            except ValueError:
                pass
    return values
