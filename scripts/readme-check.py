#!/usr/bin/env python3
"""Runs the documentation's examples as a newcomer would: every ```sh block that follows a
`<!-- readme-check: ... -->` line, in README.md, then in each of docs/*.md, then in each
examples/*/README.md, in order, against a live `batchdiff serve` (one fresh server for each
file).

Usage: scripts/readme-check.py BINARY

Each block runs in bash with `set -euo pipefail` (so a `curl -sf` that gets a 4xx or 5xx
fails it), from a scratch directory that holds the repository's `examples/`, with
`localhost:8080` pointed at the file's server, started by this script on a free loopback
port, and `batchdiff` on the PATH. A block whose marker names `serve: FLAGS` runs against a
server of its own started with those flags (`serve: --write-token s3cret`). A block that
fails, or takes over 60 s, fails the check; so does one whose standard output lacks what
the marker expects (`expects: HTTP 304, HTTP 412` names text that must be printed, in that
order). A block whose marker says `postgres` gets `DATABASE_URL`, the URI of a throwaway
PostgreSQL cluster with `wal_level=logical` (one for the whole check, made when first
needed), in its environment and in its `serve:` flags (`--source-database $DATABASE_URL`).
"""
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import benchlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^<!-- readme-check:(.*)-->\s*$")


class Block:
    """A marked sh block: where it starts, its text, what it must print, its server's flags."""

    def __init__(self, line, text, expected, serve, postgres):
        self.line, self.text, self.expected, self.serve, self.postgres = line, text, expected, serve, postgres


def blocks(document):
    """The sh blocks of `document` that follow a marker line."""
    lines = document.splitlines()
    found = []
    for index, line in enumerate(lines):
        marker = MARKER.match(line)
        if marker and index + 1 < len(lines) and lines[index + 1].strip() == "```sh":
            end = next(i for i in range(index + 2, len(lines)) if lines[i].strip() == "```")
            expects = re.search(r"expects:([^;]*)", marker.group(1))
            serve = re.search(r"serve:([^;]*)", marker.group(1))
            found.append(Block(index + 3, "\n".join(lines[index + 2:end]),
                               [part.strip() for part in expects.group(1).split(",")] if expects else [],
                               shlex.split(serve.group(1)) if serve else None,
                               re.search(r"(^|;)\s*postgres\s*(;|$)", marker.group(1)) is not None))
    return found


def start_server(binary, flags, scratch):
    """A server on a free loopback port with `flags` (paths relative to `scratch`), and its port."""
    server = subprocess.Popen([str(binary), "serve", "--host", "127.0.0.1", "--port", "0", "--log-level", "warning", *flags],
                              cwd=scratch, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = server.stdout.readline()
    match = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
    if not match:
        server.kill()
        sys.exit(f"readme-check: the server ({' '.join(flags)}) did not start: {line!r}")
    return server, match.group(1)


def run(block, where, port, scratch, environment):
    """Runs `block` against the server on `port`; exits on a failure."""
    script = "set -euo pipefail\n" + block.text.replace("localhost:8080", f"localhost:{port}")
    try:
        done = subprocess.run(["bash", "-c", script], cwd=scratch, env=environment, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        sys.exit(f"readme-check: {where}: the block took over 60 s")
    if done.returncode != 0:
        sys.exit(f"readme-check: {where}: the block failed ({done.returncode})\n"
                 f"stdout:\n{done.stdout[-2000:]}\nstderr:\n{done.stderr[-2000:]}")
    position = 0
    for text in block.expected:
        at = done.stdout.find(text, position)
        if at < 0:
            sys.exit(f"readme-check: {where}: expected {text!r} (after what came before it), printed:\n{done.stdout[-2000:]}")
        position = at + len(text)
    print(f"readme-check: {where}: ran ({len(block.text.splitlines())} lines)")


class Database:
    """The throwaway logical cluster `postgres` blocks share, made on first use."""

    def __init__(self):
        self.cluster = None

    def uri(self):
        if self.cluster is None:
            self.cluster = benchlib.Cluster(settings="-c wal_level=logical")
        return self.cluster.uri

    def close(self):
        if self.cluster is not None:
            self.cluster.close()


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    binary = pathlib.Path(sys.argv[1]).resolve()
    documents = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md")) + sorted(ROOT.glob("examples/*/README.md"))
    if not blocks((ROOT / "README.md").read_text()):
        sys.exit("readme-check: no marked block in README.md")
    count = 0
    database = Database()
    with tempfile.TemporaryDirectory() as scratch:
        os.symlink(ROOT / "examples", pathlib.Path(scratch) / "examples")
        shutil.copy(binary, pathlib.Path(scratch) / "batchdiff")
        environment = dict(os.environ, PATH=f"{scratch}:{os.environ['PATH']}")
        try:
            for document in documents:
                found = blocks(document.read_text())
                if not found:
                    continue
                server, port = start_server(binary, [], scratch)
                try:
                    for block in found:
                        where = f"{document.relative_to(ROOT)}:{block.line}"
                        own_environment = dict(environment, DATABASE_URL=database.uri()) if block.postgres else environment
                        if block.serve is None:
                            run(block, where, port, scratch, own_environment)
                            continue
                        flags = [flag.replace("$DATABASE_URL", database.uri()) if block.postgres else flag for flag in block.serve]
                        own, own_port = start_server(binary, flags, scratch)
                        try:
                            run(block, where, own_port, scratch, own_environment)
                        finally:
                            own.kill()
                            own.wait()
                finally:
                    server.kill()
                    server.wait()
                count += len(found)
        finally:
            database.close()
    print(f"readme-check: OK ({count} blocks)")


if __name__ == "__main__":
    main()
