"""The run's outcomes: every answer counted by kind, the unexpected ones kept with details,
and the run's stop signal and start time."""
import collections
import json
import threading
import time

from .config import ALLOWED, MAX_DETAILS


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.requests = 0
        self.unexpected = 0
        self.inconsistent = False
        self.details = []
        self.outcomes = collections.Counter()
        self.bad_kinds = collections.Counter()

    def count(self, kind, outcome):
        with self.lock:
            self.requests += 1
            self.outcomes[(kind, outcome)] += 1

    def bad(self, kind, what, inconsistent=False):
        """An unexpected answer. The first MAX_DETAILS are kept, at most 3 of a kind so that
        one flood does not hide the rest; the server's own failures are always kept."""
        with self.lock:
            self.unexpected += 1
            self.inconsistent |= inconsistent
            self.bad_kinds[kind] += 1
            if kind == "server" or (len(self.details) < MAX_DETAILS and self.bad_kinds[kind] <= 3):
                self.details.append(f"[{time.monotonic() - START:7.2f}s] {kind}: {what}")


STATS = Stats()
STOP = threading.Event()
START = time.monotonic()


def short(data, limit=300):
    text = data.decode("utf-8", "replace") if isinstance(data, (bytes, bytearray)) else str(data)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def judge(kind, answer, what):
    """Counts the answer; returns the parsed problem document or None for a success, or
    False (after recording why) when the status or the problem document is not allowed."""
    STATS.count(kind, answer.status)
    allowed = ALLOWED[kind]
    if answer.status not in allowed:
        STATS.bad(kind, f"{what} -> {answer.status} (allowed {sorted(allowed)}): {short(answer.body)}")
        return False
    code = allowed[answer.status]
    if code is None:
        return None
    wrong = problem_error(answer, code)
    if wrong:
        STATS.bad(kind, f"{what} -> {answer.status}: {wrong}: {short(answer.body)}")
        return False
    return json.loads(answer.body)


def problem_error(answer, code):
    ctype = answer.headers.get("content-type", "")
    if not ctype.startswith("application/problem+json"):
        return f"Content-Type {ctype!r}, not a problem document"
    try:
        doc = json.loads(answer.body)
    except ValueError:
        return "the problem document is not JSON"
    if doc.get("status") != answer.status or doc.get("code") != code or doc.get("type") != "urn:batchdiff:" + code:
        return f"expected code {code}"
    if code == "server_busy" and "retry-after" not in answer.headers:
        return "server_busy without Retry-After"
    if code == "version_gone" and (type(doc.get("latest")) is not int):
        return "version_gone without an integer latest"
    return None
