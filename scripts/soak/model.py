"""The model of acknowledged versions, and a batch read from the server checked against it."""
import collections
import json
import threading
import time

from .batches import BatchError, apply_values, canon, first_difference
from .config import FEEDS, KEEP_VERSIONS, MODEL_WAIT
from .outcomes import STATS


class Model:
    """(feed, version) -> the canonical JSON of the list (and the exact body when a writer sent
    it in another form), for the versions writers saw acknowledged. `floor` is the oldest
    version a read sent now may answer: the newest acknowledged, and past it once a DELETE
    was acknowledged."""

    def __init__(self):
        self.cond = threading.Condition()
        self.versions = {feed: collections.OrderedDict() for feed in FEEDS}
        self.top = dict.fromkeys(FEEDS, 0)
        self.floor_of = dict.fromkeys(FEEDS, 0)

    def floor(self, feed):
        with self.cond:
            return self.floor_of[feed]

    def record(self, feed, version, canonical, raw):
        """Records a version; returns the content it had already if that differs."""
        with self.cond:
            known = self.versions[feed].get(version)
            if known is not None:
                return None if known[0] == canonical else known[0]
            self.versions[feed][version] = (canonical, None if raw == canonical else raw)
            while len(self.versions[feed]) > KEEP_VERSIONS:
                self.versions[feed].popitem(last=False)
            self.top[feed] = max(self.top[feed], version)
            self.floor_of[feed] = max(self.floor_of[feed], version)
            self.cond.notify_all()
            return None

    def deleted(self, feed):
        with self.cond:
            self.floor_of[feed] = max(self.floor_of[feed], self.top[feed] + 1)

    def wait(self, feed, version, timeout=MODEL_WAIT):
        deadline = time.monotonic() + timeout
        with self.cond:
            while version not in self.versions[feed]:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)
            return self.versions[feed][version]


MODEL = Model()


def applied(kind, what, feed, data, doc):
    """`data` with the batch and values of `doc` applied, when that gives the model's
    content for its `to`; else None, with the reason recorded."""
    to = doc["to"]
    try:
        new = apply_values(data, doc, doc.get("values"))
    except BatchError as error:
        STATS.bad(kind, f"{what} -> to {to}: the batch does not apply to the data of {doc['from']}: {error}",
                  inconsistent=True)
        return None
    entry = MODEL.wait(feed, to)
    if entry is None:
        STATS.bad(kind, f"{what} -> to {to}, a version no writer saw acknowledged", inconsistent=True)
        return None
    if canon(new) != entry[0]:
        STATS.bad(kind, f"{what} -> to {to}: applying the batch and values gives other data than the "
                        f"model's: {first_difference(new, json.loads(entry[0]))}", inconsistent=True)
        return None
    return new
