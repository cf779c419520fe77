"""Writers: list snapshots PUT (some reformatted, some conditional) and now and then a DELETE;
every acknowledged version recorded in the model and each PUT's batch checked."""
import json

from .batches import BatchError, canon, check_against_new, first_difference
from .config import POOL
from .model import MODEL
from .outcomes import STATS, judge, short
from .worker import Worker


class Writer(Worker):
    def __init__(self, port, feed, seed, deletes):
        super().__init__(port, f"writer-{feed}-{seed % 100}", seed)
        self.feed, self.pool, self.deletes = feed, POOL[feed], deletes
        self.items = None
        self.seen = None

    def mutate(self):
        rng, pool = self.rng, self.pool
        if self.items is None or rng.random() < 0.03:
            ids = rng.sample(range(pool), rng.randint(max(1, pool // 2), pool))
            return [{"id": i, "v": rng.randrange(1000)} for i in ids]
        items = list(self.items)
        k = max(1, len(items) // 20)
        for _ in range(rng.randint(0, k)):
            j = rng.randrange(len(items))
            items[j] = {"id": items[j]["id"], "v": items[j]["v"] + 1}
        for _ in range(rng.randint(0, k)):
            if len(items) > 1:
                del items[rng.randrange(len(items))]
        present = {item["id"] for item in items}
        free = [i for i in range(pool) if i not in present]
        for i in rng.sample(free, min(len(free), rng.randint(0, k))):
            items.insert(rng.randint(0, len(items)), {"id": i, "v": rng.randrange(1000)})
        for _ in range(rng.randint(0, k)):
            items.insert(rng.randint(0, len(items) - 1), items.pop(rng.randrange(len(items))))
        if rng.random() < 0.05:  # a repeated identity (batch-format §1.5)
            items.insert(rng.randint(0, len(items)), {"id": rng.choice(items)["id"], "v": rng.randrange(1000)})
        return items

    def step(self):
        rng = self.rng
        roll = rng.random()
        if self.deletes and roll < 0.012:
            self.delete()
        elif self.items is not None and roll < 0.1:
            self.put(reformat=True)
        else:
            self.items = self.mutate()
            self.put(reformat=False)
        self.pause(0.05, 0.3)

    def delete(self):
        answer = self.conn.request("DELETE", f"/feeds/{self.feed}")
        if judge("delete", answer, f"DELETE /feeds/{self.feed}") is not False and answer.status == 204:
            MODEL.deleted(self.feed)

    def put(self, reformat):
        rng, feed, items = self.rng, self.feed, self.items
        canonical = canon(items)
        raw = canonical
        if reformat:  # the same snapshot written otherwise: JSON-equal (batch-format §1.3)
            raw = json.dumps([{"v": item["v"], "id": item["id"]} for item in items], separators=(", ", ": "))
        headers = {"Content-Type": "application/json"}
        condition, weak = None, False
        if self.seen is not None and rng.random() < 0.25:
            pick = rng.random()
            if pick < 0.7:
                condition = f'"{self.seen}"'
            elif pick < 0.8:
                condition = f'"1", "{self.seen}"'
            elif pick < 0.9:
                condition = "*"
            else:
                condition, weak = f'W/"{self.seen}"', True  # weak tags never match (feeds §3.5)
            headers["If-Match"] = condition
        floor = MODEL.floor(feed)
        what = f"PUT /feeds/{feed} ({len(items)} items{', reformatted' if reformat else ''}" + \
               (f", If-Match: {condition}" if condition else "") + ")"
        answer = self.conn.request("PUT", f"/feeds/{feed}", raw.encode(), headers)
        doc = judge("put", answer, what)
        if doc is False:
            return
        if answer.status == 412:
            if condition is None:
                STATS.bad("put", f"{what} -> 412 without If-Match")
            return
        if answer.status == 503:
            self.pause(0.5, 1.0)
            return
        doc = json.loads(answer.body)
        version = doc.get("version")
        if doc.get("feed") != feed or type(version) is not int or answer.headers.get("etag") != f'"{version}"':
            STATS.bad("put", f"{what} -> 200 with feed/version/ETag wrong: {answer.headers.get('etag')} {short(answer.body)}")
            return
        if weak:
            STATS.bad("put", f"{what} -> 200: a weak If-Match matched", inconsistent=True)
        if version < floor:
            STATS.bad("put", f"{what} -> version {version}, older than {floor} acknowledged before it was sent",
                      inconsistent=True)
        self.seen = version
        if doc.get("changed") is True:
            clash = MODEL.record(feed, version, canonical, raw)
            if clash is not None:
                STATS.bad("put", f"{what} -> version {version}, which another write was acknowledged with "
                                 f"other content (versions name one content forever)", inconsistent=True)
                return
            self.check_put_batch(what, version, doc, items)
        elif doc.get("changed") is False:
            rows, counts = doc.get("rows", {}), doc.get("counts", {})
            if any(rows.get(k) for k in ("deleted", "inserted", "reloaded", "moved")) or \
                    counts.get("old") != len(items) or counts.get("new") != len(items):
                STATS.bad("put", f"{what} -> changed: false with a non-empty batch: {short(answer.body)}", inconsistent=True)
            entry = MODEL.wait(feed, version)
            if entry is None:
                STATS.bad("put", f"{what} -> changed: false at version {version}, which no writer saw acknowledged",
                          inconsistent=True)
            elif entry[0] != canonical:
                STATS.bad("put", f"{what} -> changed: false at version {version}, whose content differs: "
                                 f"{first_difference(json.loads(entry[0]), items)}", inconsistent=True)
        else:
            STATS.bad("put", f"{what} -> 200 without changed: {short(answer.body)}")

    def check_put_batch(self, what, version, doc, items):
        """The answer's batch goes from the previous version (version - 1, or nothing for a
        series' first version) to the snapshot sent (feeds §3.6)."""
        old = []
        if doc.get("counts", {}).get("old") != 0:
            entry = MODEL.wait(self.feed, version - 1)
            if entry is None:
                STATS.bad("put", f"{what} -> version {version} with counts.old {doc.get('counts')}, "
                                 f"but version {version - 1} was never acknowledged", inconsistent=True)
                return
            old = json.loads(entry[0])
        try:
            check_against_new(old, doc, items)
        except BatchError as error:
            STATS.bad("put", f"{what} -> version {version}: the batch from {version - 1} does not give the "
                             f"snapshot: {error}", inconsistent=True)
