"""Readers checking what the server answers against the model: changes (with and without a
wait), event streams resumed with Last-Event-ID, and GET with If-None-Match."""
import http.client
import json
import time

from .batches import canon, compact, first_difference
from .config import EVENT_HEARTBEAT, LONG_POLL
from .connection import Answer, reset_close
from .model import MODEL, applied
from .outcomes import STATS, STOP, judge, short
from .worker import Worker


class Reader(Worker):
    def __init__(self, port, feed, seed):
        super().__init__(port, f"reader-{feed}-{seed % 100}", seed)
        self.feed = feed
        self.version, self.data = 0, []

    def step(self):
        feed, since = self.feed, self.version
        wait = self.rng.random() < 0.5
        path = f"/feeds/{feed}/changes?since={since}" + (f"&wait={LONG_POLL}" if wait else "")
        floor = MODEL.floor(feed)
        answer = self.conn.request("GET", path, timeout=LONG_POLL + 30 if wait else 30)
        what = f"GET {path}"
        doc = judge("changes", answer, what)
        if doc is False:
            self.version, self.data = 0, []
            self.pause(0.1, 0.3)
            return
        if answer.status == 410:
            if doc["latest"] < floor:
                STATS.bad("changes", f"{what} -> 410 with latest {doc['latest']}, older than {floor} "
                                     f"acknowledged before it was sent", inconsistent=True)
            self.version, self.data = 0, []
            return
        if answer.status == 404:
            self.version, self.data = 0, []
            self.pause(0.1, 0.3)
            return
        doc = json.loads(answer.body)
        to = doc.get("to")
        if doc.get("feed") != feed or doc.get("from") != since or type(to) is not int:
            STATS.bad("changes", f"{what} -> 200 with feed/from/to wrong: {short(answer.body)}", inconsistent=True)
            self.version, self.data = 0, []
            return
        if to < floor:
            STATS.bad("changes", f"{what} -> to {to}, older than {floor} acknowledged before it was sent",
                      inconsistent=True)
        if wait and to == since and since != 0:
            if answer.seconds < LONG_POLL - 0.1:
                STATS.bad("changes", f"{what} -> the empty batch after {answer.seconds:.2f} s, before the wait ended")
            elif answer.seconds > LONG_POLL + 3:
                STATS.bad("changes", f"{what} -> the empty batch after {answer.seconds:.2f} s (wait={LONG_POLL})")
        new = applied("changes", what, feed, self.data, doc)
        if new is None:
            self.version, self.data = 0, []
            return
        self.version, self.data = to, new
        if to == since and not wait:
            self.pause(0.05, 0.2)


class EventReader(Worker):
    """A feed followed over server-sent events (feeds.md §6.1): each event applied to the
    data of the previous one and checked against the model; a stream lives a few seconds,
    then its client closes it or vanishes with a reset, and resumes with Last-Event-ID."""

    def __init__(self, port, feed, seed):
        super().__init__(port, f"events-{feed}-{seed % 100}", seed)
        self.feed = feed
        self.version, self.data = 0, []

    def step(self):
        feed = self.feed
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=EVENT_HEARTBEAT + 10)
        headers = {"Accept": "text/event-stream"}
        if self.version:
            headers["Last-Event-ID"] = str(self.version)
        what = f"stream of {feed} from {self.version}"
        try:
            conn.request("GET", f"/feeds/{feed}/changes?since=0", headers=headers)
            response = conn.getresponse()
            if response.status != 200:
                answer = Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read(), 0.0)
                if judge("events", answer, what) is not False:
                    self.version, self.data = 0, []
                self.pause(0.1, 0.3)
                return
            STATS.count("events", "stream opened")
            ends = time.monotonic() + self.rng.uniform(1, 6)
            fields, data = {}, []
            while not STOP.is_set() and time.monotonic() < ends:
                line = response.readline()
                if not line:
                    STATS.count("events", "stream ended by the server")
                    return
                line = line.decode().rstrip("\n")
                if line:
                    if not line.startswith(":"):
                        field, _, value = line.partition(":")
                        value = value[1:] if value.startswith(" ") else value
                        if field == "data":
                            data.append(value)
                        else:
                            fields[field] = value
                    continue
                if data and not self.event(fields.get("event", "message"), fields.get("id"), "\n".join(data), what):
                    return
                fields, data = {}, []
        finally:
            if conn.sock is not None and self.rng.random() < 0.5:
                reset_close(conn.sock)
                STATS.count("events", "reset by the client")
            conn.close()

    def event(self, kind, event_id, data, what):
        """Applies one event; returns whether the stream goes on."""
        doc = json.loads(data)
        if kind in ("gone", "problem"):
            code = {"gone": "version_gone", "problem": "feed_not_found"}[kind]
            STATS.count("events", kind)
            if doc.get("code") != code or (kind == "gone" and event_id != "0"):
                STATS.bad("events", f"{what}: event {kind} (id {event_id}) with {short(data.encode())}")
            self.version, self.data = 0, []
            return False
        to = doc.get("to")
        if kind != "message" or doc.get("feed") != self.feed or doc.get("from") != self.version or event_id != str(to):
            STATS.bad("events", f"{what}: event {kind} id {event_id} wrong: {short(data.encode())}", inconsistent=True)
            self.version, self.data = 0, []
            return False
        # An event may be older than a version acknowledged since (the next one brings it):
        # what is checked is that it applies and gives the model's data.
        STATS.count("events", "event")
        new = applied("events", what, self.feed, self.data, doc)
        if new is None:
            self.version, self.data = 0, []
            return False
        self.version, self.data = to, new
        return True


class EtagReader(Worker):
    def __init__(self, port, feed, seed):
        super().__init__(port, f"etag-{feed}", seed)
        self.feed = feed
        self.held = None

    def step(self):
        feed, held, rng = self.feed, self.held, self.rng
        headers, star = {}, False
        if held is not None:
            pick = rng.random()
            if pick < 0.6:
                headers["If-None-Match"] = f'"{held}"'
            elif pick < 0.8:
                headers["If-None-Match"] = f'W/"{held}"'  # compared weakly (feeds §4)
            elif pick < 0.95:
                headers["If-None-Match"] = f'"1", "{held}"'
            else:
                headers["If-None-Match"], star = "*", True
        floor = MODEL.floor(feed)
        answer = self.conn.request("GET", f"/feeds/{feed}", headers=headers)
        what = f"GET /feeds/{feed}" + (f" (If-None-Match: {headers['If-None-Match']})" if headers else "")
        doc = judge("get", answer, what)
        if doc is False or answer.status == 404:
            self.held = None
        elif answer.status == 304:
            tag = answer.headers.get("etag", "")
            if held is None:
                STATS.bad("get", f"{what} -> 304 without If-None-Match")
            elif not star and tag != f'"{held}"':
                STATS.bad("get", f"{what} -> 304 with ETag {tag}")
            elif not star and held < floor:
                STATS.bad("get", f"{what} -> 304, but {floor} was acknowledged (or the feed deleted) before it "
                                 f"was sent", inconsistent=True)
            elif star and not (tag.strip('"').isdigit() and int(tag.strip('"')) >= floor):
                STATS.bad("get", f"{what} -> 304 with ETag {tag}, older than {floor}", inconsistent=True)
        else:
            self.check_data(what, answer, held, floor, star)
        self.pause(0.1, 0.3)

    def check_data(self, what, answer, held, floor, star):
        doc = json.loads(answer.body)
        version = doc.get("version")
        self.held = None
        if doc.get("feed") != self.feed or type(version) is not int or answer.headers.get("etag") != f'"{version}"':
            STATS.bad("get", f"{what} -> 200 with feed/version/ETag wrong: {answer.headers.get('etag')} {short(answer.body)}")
            return
        if version == held or star:
            STATS.bad("get", f"{what} -> 200 for the version the tag names ({version}), not 304", inconsistent=True)
        if version < floor:
            STATS.bad("get", f"{what} -> version {version}, older than {floor} acknowledged before it was sent",
                      inconsistent=True)
        entry = MODEL.wait(self.feed, version)
        if entry is None:
            STATS.bad("get", f"{what} -> version {version}, which no writer saw acknowledged", inconsistent=True)
            return
        if canon(doc.get("data")) != entry[0]:
            STATS.bad("get", f"{what} -> version {version} with other data than the model's: "
                             f"{first_difference(doc.get('data') or [], json.loads(entry[0]))}", inconsistent=True)
            return
        sent = compact(entry[1] or entry[0]).encode()
        if sent not in answer.body:  # feeds §4: data is the PUT's body, compact
            STATS.bad("get", f"{what} -> version {version}: data is not the body of its PUT, compact",
                      inconsistent=True)
            return
        self.held = version
