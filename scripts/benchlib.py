"""What the benchmark scripts share: a server process, its memory, statistics, a throwaway
PostgreSQL cluster, wrk, requests, and the report each script ends with. The scripts in
scripts/ import it (their folder is on their path); scripts/bench.py runs them by name.
Resident memory is VmRSS from /proc/PID/status, peak memory VmHWM; MB are MiB.
Python 3 standard library only.
"""
import atexit, collections, http.client, json, os, pwd, re, shutil, signal, socket, statistics, subprocess, sys, tempfile, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the repository
HOST = "127.0.0.1"
REPORTS = []  # every report made in this process, in order: {"name", "rows", "figures", "path"}
_AT_EXIT = []  # (process, owner pid): killed at exit if still running


def free_port():
    """A TCP port free on loopback now."""
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def kill_at_exit(process):
    """Kills `process` (a Popen) when this script exits, if it still runs then."""
    if not _AT_EXIT:
        atexit.register(_kill_leftovers)
        if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))  # so that atexit runs
    _AT_EXIT.append((process, os.getpid()))


def _kill_leftovers():
    """At exit: kills the processes of kill_at_exit still running (not from a forked child)."""
    for process, owner in _AT_EXIT:
        if owner == os.getpid() and process.poll() is None:
            process.kill()
            process.wait()


# --- memory -------------------------------------------------------------------------------------

_GONE = object()


def _status_mb(pid, field, missing):
    """`field` of /proc/PID/status in MB; `missing` (or an error) when there is none."""
    try:
        with open(f"/proc/{pid}/status") as status:
            found = re.search(rf"^{field}:\s+(\d+) kB", status.read(), re.M)
    except OSError:
        found = None
    if found:
        return int(found.group(1)) / 1024
    if missing is _GONE:
        raise RuntimeError(f"no {field} for process {pid}")
    return missing


def rss_mb(pid, missing=_GONE):
    """Resident memory of process `pid` now, in MB (VmRSS). `missing` is returned when the
    process is gone; without it, that raises."""
    return _status_mb(pid, "VmRSS", missing)


def peak_mb(pid, missing=_GONE):
    """Peak resident memory of process `pid` so far, in MB (VmHWM); `missing` as for rss_mb."""
    return _status_mb(pid, "VmHWM", missing)


# --- the server ---------------------------------------------------------------------------------

class ServerError(RuntimeError):
    """A server that did not start; `status` is its exit status (None: it was still running)."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


class Server:
    """`BINARY serve --host 127.0.0.1 --port 0 --log-level warning FLAGS...` with `env` added to
    the environment. Returns once it listens and GET /readyz answers 200 (a PostgreSQL store
    connects in the background); `port`, `pid`, `process`. Its stdout goes to `stdout` when
    given (a file), else a thread drains it; its stderr goes to `stderr` when given (a file: a
    log, or a temporary file for a quiet server), else a thread passes it on to this script's
    stderr as it comes (with both files given, no thread is started). `stop()`:
    SIGTERM, then SIGKILL after `stop_timeout` seconds; also at the end of a `with` block, and
    at exit if the script dies first. A server that does not start raises ServerError."""

    def __init__(self, binary, *flags, env=None, stdout=None, stderr=None, timeout=60, stop_timeout=30):
        self.binary, self.flags, self.stop_timeout = binary, flags, stop_timeout
        self.stderr, self.last_errors = stderr, collections.deque(maxlen=20)
        self.process = subprocess.Popen(
            [binary, "serve", "--host", HOST, "--port", "0", "--log-level", "warning", *flags],
            env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE if stdout is None else stdout, stderr=subprocess.PIPE if stderr is None else stderr)
        kill_at_exit(self.process)
        self.pid = self.process.pid
        self.port = None
        listening = threading.Event()
        if stdout is None:
            threading.Thread(target=self._read_stdout, args=(listening,), daemon=True).start()
        self._passing = threading.Thread(target=self._pass_stderr, daemon=True)
        if stderr is None:
            self._passing.start()
        try:
            deadline = time.monotonic() + timeout
            while self.port is None:
                ended = self.process.poll() is not None or time.monotonic() > deadline
                if ended:
                    listening.wait(0.5)  # the last of its output
                if stdout is not None:
                    self._find_port(os.pread(stdout.fileno(), 65536, 0))
                if ended or listening.wait(0.05):
                    break
            if self.port is None:
                raise ServerError(self._failure("did not start listening"), self.process.poll())
            while not self._ready():
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise ServerError(self._failure("did not get ready (GET /readyz)"), self.process.poll())
                time.sleep(0.1)
        except BaseException:
            self.stop()
            raise

    def _find_port(self, output):
        """Takes the port from the `listening on http://HOST:PORT` line in `output` (bytes), if there."""
        found = re.search(rb"listening on http://[^\s:]+:(\d+)", output)
        if found:
            self.port = int(found.group(1))

    def _read_stdout(self, listening):
        """Finds the `listening on` line, then reads stdout to its end so the server never blocks on it."""
        for line in self.process.stdout:
            if self.port is None:
                self._find_port(line)
                if self.port is not None:
                    listening.set()
        listening.set()

    def _pass_stderr(self):
        """Passes the server's stderr on to this script's, line by line, keeping the last lines."""
        for line in self.process.stderr:
            text = line.decode("utf-8", "replace")
            self.last_errors.append(text)
            sys.stderr.write(text)
            sys.stderr.flush()

    def _ready(self):
        """Whether GET /readyz answers 200 now."""
        try:
            status, _, _ = fetch(self.port, "GET", "/readyz", timeout=10)
            return status == 200
        except (OSError, http.client.HTTPException):
            return False

    def _failure(self, what):
        """The message of a server that `what` (did not start listening, ...), with its stderr's end."""
        try:
            self.process.wait(timeout=1)  # a server that closed its output is exiting
        except subprocess.TimeoutExpired:
            pass
        if self._passing.is_alive() and self.process.poll() is not None:
            self._passing.join(timeout=1)  # the last lines it wrote
        code = self.process.poll()
        state = "still running" if code is None else f"exited with status {code}"
        return f"{self.binary} serve {' '.join(self.flags)}: {what} ({state}){self.stderr_tail()}"

    def stderr_tail(self, chars=300):
        """The end of what the server wrote to stderr, as ` (stderr: ...)`, or `` when nothing."""
        tail = "".join(self.last_errors)
        if self.stderr is not None:
            try:  # read where it is, without moving the offset the server writes at
                self.stderr.flush()
                size = os.fstat(self.stderr.fileno()).st_size
                tail = os.pread(self.stderr.fileno(), 4 * chars, max(0, size - 4 * chars)).decode("utf-8", "replace")
            except (AttributeError, OSError, ValueError):
                tail = ""
        tail = tail.strip()
        return f" (stderr: {tail[-chars:]})" if tail else ""

    def url(self, path=""):
        """http://127.0.0.1:PORT followed by `path`."""
        return f"http://{HOST}:{self.port}{path}"

    def connection(self, timeout=60):
        """A new (keep-alive) http.client connection to the server."""
        return http.client.HTTPConnection(HOST, self.port, timeout=timeout)

    def rss_mb(self):
        """The server's resident memory now, in MB."""
        return rss_mb(self.pid)

    def peak_mb(self):
        """The server's peak resident memory so far, in MB."""
        return peak_mb(self.pid)

    def stop(self):
        """SIGTERM, then SIGKILL if it has not exited within `stop_timeout` seconds; its exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=self.stop_timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.stop()
        return False


# --- requests -----------------------------------------------------------------------------------

def timed_request(conn, method, path, body=None):
    """(status, the answer's bytes, the seconds from sending the request to the answer read)."""
    start = time.perf_counter()
    conn.request(method, path, body=body, headers={"Content-Type": "application/json"} if body is not None else {})
    response = conn.getresponse()
    data = response.read()
    return response.status, data, time.perf_counter() - start


def ok_request(conn, method, path, body=None, script="bench", ok=(200,)):
    """The answer's bytes and its seconds (``timed_request``); a status not in `ok` stops `script`."""
    status, answer, seconds = timed_request(conn, method, path, body)
    if status not in ok:
        sys.exit(f"{script}: {method} {path}: {status} {answer[:200]!r}")
    return answer, seconds


def fetch(port, method, path, body=None, headers=None, timeout=30):
    """One request on a fresh connection to 127.0.0.1:`port`: (status, headers with lower-case
    names, the answer's bytes). A body (str or bytes) is sent as application/json unless the
    headers say otherwise."""
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        all_headers = dict(headers or {})
        if body is not None:
            body = body.encode() if isinstance(body, str) else body
            all_headers.setdefault("Content-Type", "application/json")
        conn.request(method, path, body=body, headers=all_headers)
        response = conn.getresponse()
        data = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data
    finally:
        conn.close()


def metric(text, name):
    """The sum of metric `name` over its label sets in /metrics `text` (str or bytes), or None when absent."""
    text = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    values = []
    for found in re.findall(rf"^{re.escape(name)}(?:\{{.*\}})?\s+(\S+)", text, re.M):
        try:
            values.append(float(found))
        except ValueError:
            pass
    return sum(values) if values else None


# --- statistics ---------------------------------------------------------------------------------

def spread(values, digits=2, unit="", comma=False, note=""):
    """`median (min to max)`, each with `digits` decimals (`comma`: thousands separated), `unit`
    right after the median (give its space), `note` at the end inside the parentheses."""
    form = f"{{:{',' if comma else ''}.{digits}f}}"
    low, high = form.format(min(values)), form.format(max(values))
    return f"{form.format(statistics.median(values))}{unit} ({low} to {high}{note})"


def distribution(values):
    """A figure's values for the JSON report: median, min, max and each value."""
    values = list(values)
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "values": values}


def percentile(values, fraction):
    """The sorted values' element at rank int(len * fraction), counting from 1 (0.99: the p99)."""
    ordered = sorted(values)
    return ordered[int(len(ordered) * fraction) - 1]


# --- PostgreSQL ---------------------------------------------------------------------------------

class Cluster:
    """A PostgreSQL cluster in a temporary directory, as the `postgres` user when root."""

    def __init__(self, settings=""):
        """`settings`: more server options (`-c wal_level=logical`)."""
        bins = sorted(os.listdir("/usr/lib/postgresql")) if os.path.isdir("/usr/lib/postgresql") else []
        if not bins:
            sys.exit(f"{os.path.basename(sys.argv[0])}: PostgreSQL is not installed: run make deps-test")
        self.bin = f"/usr/lib/postgresql/{bins[-1]}/bin"
        self.dir = tempfile.mkdtemp(prefix="batchdiff-bench-pg-")
        self.port = free_port()
        if os.getuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.dir, user.pw_uid, user.pw_gid)
        self.run("initdb", "-D", f"{self.dir}/data", "--auth=trust", "-U", "postgres", "-E", "UTF8")
        # Durable as in production (fsync on): the comparison is with an SQLite file
        # written with synchronous=FULL.
        self.run("pg_ctl", "-D", f"{self.dir}/data", "-w", "-l", f"{self.dir}/log",
                 "-o", f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 {settings}", "start")
        self.uri = f"postgres://postgres@127.0.0.1:{self.port}/postgres"

    def command(self, program, *arguments):
        """The command line that runs `program` of the cluster's PostgreSQL (as `postgres` when root)."""
        command = [f"{self.bin}/{program}", *arguments]
        if os.getuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        return command

    def run(self, program, *arguments):
        """Runs `program` quietly; a failure raises CalledProcessError."""
        subprocess.run(self.command(program, *arguments), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)

    def query(self, database, sql):
        """One psql query on `database` (over the cluster's socket directory): its text, stripped."""
        done = subprocess.run(self.command("psql", "-h", self.dir, "-p", str(self.port), "-U", "postgres", "-d", database, "-tAc", sql),
                              capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            sys.exit(f"{os.path.basename(sys.argv[0])}: psql {sql!r} on {database}: {done.stderr.strip()}")
        return done.stdout.strip()

    def database_uri(self, database):
        """The URI of `database` in this cluster."""
        return self.uri.rsplit("/", 1)[0] + f"/{database}"

    def close(self):
        """Stops the cluster and removes its directory."""
        try:
            self.run("pg_ctl", "-D", f"{self.dir}/data", "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


# --- wrk ----------------------------------------------------------------------------------------

def wrk(url, script, threads, connections, seconds):
    """Runs wrk with the Lua `script` (a file) against `url`: (requests a second, wrk's output).
    Stops the benchmark when wrk is not installed."""
    if shutil.which("wrk") is None:
        sys.exit(f"{os.path.basename(sys.argv[0])}: wrk is not installed: run make deps-loadtest")
    done = subprocess.run(["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "-s", script, url],
                          capture_output=True, text=True, check=True)
    return float(re.search(r"Requests/sec:\s+([\d.]+)", done.stdout).group(1)), done.stdout


# --- the report ---------------------------------------------------------------------------------

def report(name, rows, figures, echo=True):
    """Prints each of `rows` (the summary lines; `echo=False` when the script printed them as
    they came) and writes `figures` as JSON to .build/bench/NAME.json in the repository.
    Returns the JSON file's path."""
    if echo:
        for row in rows:
            print(row, flush=True)
    folder = os.path.join(ROOT, ".build", "bench")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{name}.json")
    with open(path, "w") as file:
        json.dump(figures, file, indent=2)
        file.write("\n")
    REPORTS.append({"name": name, "rows": list(rows), "figures": figures, "path": path})
    return path
