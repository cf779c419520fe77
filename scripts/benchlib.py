"""What the benchmark scripts share (imported by the scripts/bench-*.py that run from
scripts/, so it is on their path): a free loopback port, a throwaway PostgreSQL cluster, a
timed request and one that must answer 200. Python 3 standard library only.
"""
import os, pwd, shutil, socket, subprocess, sys, tempfile, time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """A PostgreSQL cluster in a temporary directory, as the `postgres` user when root."""

    def __init__(self):
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
                 "-o", f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1", "start")
        self.uri = f"postgres://postgres@127.0.0.1:{self.port}/postgres"

    def command(self, program, *arguments):
        command = [f"{self.bin}/{program}", *arguments]
        if os.getuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        return command

    def run(self, program, *arguments):
        subprocess.run(self.command(program, *arguments), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)

    def query(self, database, sql):
        """One psql query on `database` (over the cluster's socket directory): its text, stripped."""
        done = subprocess.run(self.command("psql", "-h", self.dir, "-p", str(self.port), "-U", "postgres", "-d", database, "-tAc", sql),
                              capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            sys.exit(f"{os.path.basename(sys.argv[0])}: psql {sql!r} on {database}: {done.stderr.strip()}")
        return done.stdout.strip()

    def close(self):
        try:
            self.run("pg_ctl", "-D", f"{self.dir}/data", "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


def timed_request(conn, method, path, body=None):
    """(status, the answer's bytes, the seconds from sending the request to the answer read)."""
    start = time.perf_counter()
    conn.request(method, path, body=body, headers={"Content-Type": "application/json"} if body is not None else {})
    response = conn.getresponse()
    data = response.read()
    return response.status, data, time.perf_counter() - start


def ok_request(conn, method, path, body=None, script="bench"):
    """The answer's bytes and its seconds (``timed_request``); any status but 200 stops `script`."""
    status, answer, seconds = timed_request(conn, method, path, body)
    if status != 200:
        sys.exit(f"{script}: {method} {path}: {status} {answer[:200]!r}")
    return answer, seconds
