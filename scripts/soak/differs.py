"""POST /diff of small lists often and of large ones (50,000 strings) sometimes, each batch
checked against the new list."""
import json
import time

from .batches import BatchError, check_against_new
from .config import LARGE_DIFF_ITEMS
from .outcomes import START, STATS, STOP, judge
from .worker import Worker


WORDS = [f"w{i}" for i in range(30)]


def small_lists(rng):
    old = [rng.choice(WORDS) for _ in range(rng.randint(5, 25))]
    new = [w for w in old if rng.random() > 0.2]
    for _ in range(rng.randint(0, 6)):
        new.insert(rng.randint(0, len(new)), rng.choice(WORDS))
    for _ in range(rng.randint(0, 4)):
        if new:
            new.insert(rng.randint(0, len(new) - 1), new.pop(rng.randrange(len(new))))
    if rng.random() < 0.4:  # objects with an id: changed content gives reloads
        old = [{"id": w, "n": rng.randrange(3)} for w in old]
        new = [{"id": w, "n": rng.randrange(3)} for w in new]
    return old, new


def large_lists(rng):
    universe = [f"k{i:05x}" for i in range(LARGE_DIFF_ITEMS + LARGE_DIFF_ITEMS // 10)]
    rng.shuffle(universe)
    old = universe[:LARGE_DIFF_ITEMS]
    new = [x for x in old if rng.random() > 0.05]
    for x in universe[LARGE_DIFF_ITEMS:LARGE_DIFF_ITEMS + LARGE_DIFF_ITEMS // 20]:
        new.insert(rng.randrange(len(new) + 1), x)
    for _ in range(LARGE_DIFF_ITEMS // 50):
        new.insert(rng.randrange(len(new)), new.pop(rng.randrange(len(new))))
    return old, new


class Differ(Worker):
    def __init__(self, port, seed, large):
        super().__init__(port, f"diff-{'large' if large else 'small'}-{seed % 100}", seed)
        self.large = large

    def step(self):
        rng = self.rng
        if self.large:
            # Both large differs send near the same 2-second tick, so that they often
            # overlap: the second one alone does not fit beside the first (503 server_busy).
            STOP.wait(2.0 - (time.monotonic() - START) % 2.0 + rng.uniform(0, 0.03) + (2.0 if rng.random() < 0.3 else 0))
            if STOP.is_set():
                return
            old, new, body = rng.choice(LARGE)
            moves = True
        else:
            old, new = small_lists(rng)
            moves = rng.random() < 0.8
            body = json.dumps({"old": old, "new": new, "options": {"moves": moves}}).encode()
        what = f"POST /diff ({len(old)} -> {len(new)} items, moves {moves})"
        answer = self.conn.request("POST", "/diff", body, {"Content-Type": "application/json"}, timeout=120)
        doc = judge("diff", answer, what)
        if doc is None:
            batch = json.loads(answer.body)
            try:
                if not moves and batch["rows"].get("moved"):
                    raise BatchError("moves with options.moves false")
                check_against_new(old, batch, new)
            except (BatchError, KeyError, TypeError) as error:
                STATS.bad("diff", f"{what} -> a batch that does not give the new list: {error}")
        if not self.large:
            self.pause(0.03, 0.1)


LARGE = []
