"""A load thread: `step()` in a loop until the run stops, each failure recorded."""
import http.client
import random
import threading
import traceback

from .connection import Conn
from .outcomes import STATS, STOP


class Worker(threading.Thread):
    def __init__(self, port, name, seed):
        super().__init__(name=name, daemon=True)
        self.port = port
        self.rng = random.Random(seed)
        self.conn = Conn(port)

    def run(self):
        while not STOP.is_set():
            try:
                self.step()
            except (OSError, http.client.HTTPException) as error:
                if not STOP.is_set():
                    kind = self.name.split("-")[0]
                    STATS.count(kind, "connection error")
                    STATS.bad(kind, f"{self.name}: connection error: {error!r}")
                    STOP.wait(0.2)
            except Exception:
                STATS.bad("client", f"{self.name}: exception (a soak.py bug?): " + traceback.format_exc(limit=4))
                STOP.wait(0.5)
        self.conn.close()

    def pause(self, low, high):
        STOP.wait(self.rng.uniform(low, high))
