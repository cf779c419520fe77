"""The soak's limits, sizes and what each kind of request may get (the SOAK_ environment)."""
import os
import random

SECONDS = float(os.environ.get("SOAK_SECONDS", "60"))
SEED = int(os.environ.get("SOAK_SEED") or random.SystemRandom().randrange(1 << 31))

MiB = 1 << 20
FEED_MEMORY = 32 * MiB
REQUEST_MEMORY = 64 * MiB
ALLOWANCE = 96 * MiB
RSS_LIMIT = FEED_MEMORY + REQUEST_MEMORY + ALLOWANCE
BODY_LIMIT = 4 * MiB
HEADER_TIMEOUT = 5
BODY_TIMEOUT = 5
MAX_WAIT = 5
MAX_CONNECTIONS = 3000
HEALTHZ_P99_LIMIT_MS = 100.0

FEEDS = [f"f{i}" for i in range(6)]
POOL = {"f0": 10, "f1": 200, "f2": 2000, "f3": 10, "f4": 200, "f5": 2000}
TWO_WRITERS = {"f0", "f1", "f2"}
READERS_PER_FEED = 3
IDLE_CONNECTIONS = 1000
KEEP_VERSIONS = 200          # versions of each feed kept in the model
MODEL_WAIT = 2.0             # seconds a check waits for a writer to record a version
LONG_POLL = 2                # the readers' wait=
EVENT_HEARTBEAT = 1          # --event-heartbeat: a quiet stream's reader wakes each second
LARGE_DIFF_ITEMS = 50_000
MAX_DETAILS = 10

# What each kind of request may get: status -> the problem code it must carry (None: a
# success, checked by the kind's own content checks). Kinds whose connection the server must
# close without an answer (slow senders, idle connections) are judged by when it closes.
ALLOWED = {
    "put": {200: None, 412: "precondition_failed", 503: "server_busy"},
    "delete": {204: None, 404: "feed_not_found"},
    "changes": {200: None, 404: "feed_not_found", 410: "version_gone"},
    "events": {200: None, 404: "feed_not_found"},
    "get": {200: None, 304: None, 404: "feed_not_found"},
    "diff": {200: None, 503: "server_busy"},
    "malformed": {400: "malformed_json", 503: "server_busy"},
    "oversized": {413: "body_too_large"},
    "oversized-chunked": {413: "body_too_large", 503: "server_busy"},  # others in flight: busy first
    "cut-body": {400: "malformed_json"},      # or closed without an answer
    "healthz": {200: None},
    "metrics": {200: None},
    "quiet-oversized-chunked": {413: "body_too_large"},
    "quiet-chunked": {200: None},
    "shutdown-poll": {200: None, 503: "shutting_down"},
}
