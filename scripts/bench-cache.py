#!/usr/bin/env python3
"""Followers of one feed through the caching nginx template (`make bench-cache`, release build).

Usage: scripts/bench-cache.py [BINARY]   (default .build/release/batchdiff)

A server (memory store) behind Debian's nginx with deploy/nginx/batchdiff-cache.conf.template
(rendered as the image would, on 127.0.0.1, its cache in a temporary directory). For each
count of FOLLOWERS (default 300 and 3000), ROUNDS times (default 5): that many long polls
`changes?since=<latest>&wait=30` parked through nginx, each on a connection of its own; once
the server holds one and half a second has passed, a PUT of a new version; every answer read
and checked (status 200, `to` the new version). Printed: the `changes` requests the server
answered for the version (`batchdiff_requests_total` on /metrics), per round, and their
median and spread; what the cache holds for them (nginx's resident memory while they are
parked, less what it was before the first follower, per follower: nginx runs as one process
here, as one worker); and the time from the PUT's answer to the last follower's answer read.
Python 3 standard library only; all traffic on 127.0.0.1.
"""
import json, os, resource, shutil, socket, statistics, subprocess, sys, tempfile, time

import benchlib
from benchlib import ok_request

BIN = sys.argv[1] if len(sys.argv) > 1 else ".build/release/batchdiff"
FOLLOWERS = [int(count) for count in os.environ.get("FOLLOWERS", "300,3000").split(",")]
ROUNDS = int(os.environ.get("ROUNDS", "5"))
NGINX = "/usr/sbin/nginx"
NGINX_FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "deploy", "nginx")


def nginx(directory, port, upstream):
    """nginx in the foreground with the caching template (rendered by render.sh) in front of `upstream`."""
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NGINX_PORT": f"127.0.0.1:{port}", "NGINX_CACHE_DIR": f"{directory}/cache",
                   "NGINX_ACCESS_LOG": "/dev/null", "BATCHDIFF_REPLICAS": f"127.0.0.1:{upstream} 127.0.0.1:{upstream}"}
    site = subprocess.run([os.path.join(NGINX_FOLDER, "render.sh"), os.path.join(NGINX_FOLDER, "batchdiff-cache.conf.template")],
                          env=environment, check=True, capture_output=True, text=True).stdout
    open(f"{directory}/batchdiff.conf", "w").write(site)
    temp = "\n".join(f"    {kind}_temp_path {directory}/{kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    open(f"{directory}/nginx.conf", "w").write(f"""daemon off;
master_process off;
pid {directory}/nginx.pid;
error_log {directory}/error.log warn;
worker_rlimit_nofile 65536;
events {{ worker_connections 16384; }}
http {{
    access_log off;
{temp}
    include {directory}/batchdiff.conf;
}}
""")
    proxy = subprocess.Popen([NGINX, "-p", directory, "-e", f"{directory}/error.log", "-c", f"{directory}/nginx.conf"], stdin=subprocess.DEVNULL)
    benchlib.kill_at_exit(proxy)
    return proxy


def upstream_changes(conn):
    """`changes` GETs the server answered so far."""
    text, _ = ok_request(conn, "GET", "/metrics", script="bench-cache")
    return sum(int(float(line.rsplit(" ", 1)[1])) for line in text.decode().splitlines()
               if line.startswith("batchdiff_requests_total{") and 'route="/feeds/{id}/changes"' in line and 'method="GET"' in line)


def parked(conn):
    """batchdiff_long_polls_parked now."""
    text, _ = ok_request(conn, "GET", "/metrics", script="bench-cache")
    return next((int(float(line.split()[1])) for line in text.decode().splitlines() if line.startswith("batchdiff_long_polls_parked ")), 0)


def read_answer(sock):
    """The status and JSON body of one HTTP/1.1 answer on `sock` (Content-Length or chunked)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise RuntimeError("connection closed before an answer")
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    headers = {line.split(":", 1)[0].lower(): line.split(":", 1)[1].strip() for line in lines[1:]}
    if "content-length" in headers:
        length = int(headers["content-length"])
        while len(body) < length:
            body += sock.recv(65536)
    else:  # chunked
        while not body.endswith(b"0\r\n\r\n"):
            body += sock.recv(65536)
        decoded, rest = b"", body
        while True:
            size, rest = rest.split(b"\r\n", 1)
            size = int(size, 16)
            if size == 0:
                break
            decoded, rest = decoded + rest[:size], rest[size + 2:]
        body = decoded
    return int(lines[0].split()[1]), json.loads(body)


def round_of(followers, server, nginx, version, rows):
    """One round: `followers` long polls through nginx, a PUT of `rows` rows. Returns the upstream
    requests it cost, the new version, nginx's resident KB while they were parked, and the
    seconds from the PUT's answer to the last answer read."""
    nginx_port, nginx_pid = nginx
    before = upstream_changes(server)
    request = f"GET /feeds/hot/changes?since={version}&wait=30 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    sockets = []
    for _ in range(followers):
        sock = socket.create_connection(("127.0.0.1", nginx_port))
        sock.sendall(request)
        sockets.append(sock)
    deadline = time.time() + 20
    while parked(server) < 1 and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    resident = benchlib.rss_mb(nginx_pid) * 1024
    answer, _ = ok_request(server, "PUT", "/feeds/hot", json.dumps(list(range(rows))).encode(), script="bench-cache")
    written = time.perf_counter()
    latest = json.loads(answer)["version"]
    for sock in sockets:
        sock.settimeout(60)
        status, body = read_answer(sock)
        assert status == 200 and body["to"] == latest, (status, body)
    answered = time.perf_counter() - written
    for sock in sockets:
        sock.close()
    return upstream_changes(server) - before, latest, resident, answered


def main():
    if not os.access(NGINX, os.X_OK):
        sys.exit("bench-cache: no nginx (make deps-test installs it)")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    directory = tempfile.mkdtemp(prefix="bench-cache-")
    nginx_port = benchlib.free_port()
    server = benchlib.Server(BIN, "--max-connections", "20000")
    proxy = None
    summary, figures = [], {"rounds": ROUNDS}
    try:
        proxy = nginx(directory, nginx_port, server.port)
        time.sleep(0.5)
        idle = benchlib.rss_mb(proxy.pid) * 1024
        conn = server.connection(timeout=60)
        answer, _ = ok_request(conn, "PUT", "/feeds/hot", b"[1]", script="bench-cache")
        version = json.loads(answer)["version"]
        rows = 1
        for followers in FOLLOWERS:
            counts, per_follower, times = [], [], []
            for run in range(ROUNDS):
                rows += 1  # each version differs from the one before
                upstream, version, resident, answered = round_of(followers, conn, (nginx_port, proxy.pid), version, rows)
                counts.append(upstream)
                per_follower.append((resident - idle) / followers)
                times.append(answered * 1000)
                print(f"{followers:,} followers, round {run + 1}: {upstream} upstream requests for one version; "
                      f"nginx {per_follower[-1]:.1f} KB a parked follower; last answer {times[-1]:.0f} ms after the PUT", flush=True)
            summary.append(f"{followers:,} followers: {statistics.median(counts):g} upstream requests per version "
                        f"(median of {ROUNDS}; {min(counts)} to {max(counts)}); "
                        f"nginx {benchlib.spread(per_follower, 1, ' KB a parked follower')}; "
                        f"last answer {benchlib.spread(times, 0, ' ms after the PUT')}")
            print(summary[-1], flush=True)  # as each count ends: the next takes a while
            figures[str(followers)] = {"upstream_requests_per_version": benchlib.distribution(counts),
                                       "nginx_kb_a_parked_follower": benchlib.distribution(per_follower),
                                       "last_answer_ms_after_put": benchlib.distribution(times)}
    finally:
        if proxy:
            proxy.terminate()
            proxy.wait(timeout=30)
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)
    benchlib.report("cache", summary, figures, echo=False)


if __name__ == "__main__":
    main()
