#!/usr/bin/env python3
"""Runs the README's examples as a newcomer would: every ```sh block that follows a
`<!-- readme-check: ... -->` line, in order, against a live `batchdiff serve`.

Usage: scripts/readme-check.py BINARY

Each block runs in bash with `set -euo pipefail` (so a `curl -sf` that gets a 4xx or 5xx
fails it), from a scratch directory that holds the repository's `examples/`, with
`localhost:8080` pointed at the server this script starts on a free loopback port and
`batchdiff` on the PATH. A block that fails, or takes over 60 s, fails the check; so does
one whose standard output lacks what the marker expects (`expects: HTTP 304, HTTP 412`
names text that must be printed, in that order).
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^<!-- readme-check:(.*)-->\s*$")


def blocks(readme):
    """The sh blocks that follow a marker line: the line number each starts at, its text,
    and what its marker expects it to print."""
    lines = readme.splitlines()
    found = []
    for index, line in enumerate(lines):
        marker = MARKER.match(line)
        if marker and index + 1 < len(lines) and lines[index + 1].strip() == "```sh":
            end = next(i for i in range(index + 2, len(lines)) if lines[i].strip() == "```")
            expects = re.search(r"expects:([^;]*)", marker.group(1))
            expected = [part.strip() for part in expects.group(1).split(",")] if expects else []
            found.append((index + 3, "\n".join(lines[index + 2:end]), expected))
    return found


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    binary = pathlib.Path(sys.argv[1]).resolve()
    found = blocks((ROOT / "README.md").read_text())
    if not found:
        sys.exit("readme-check: no marked block in README.md")
    server = subprocess.Popen([str(binary), "serve", "--host", "127.0.0.1", "--port", "0", "--log-level", "warning"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = server.stdout.readline()
        match = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
        if not match:
            sys.exit(f"readme-check: the server did not start: {line!r}")
        port = match.group(1)
        with tempfile.TemporaryDirectory() as scratch:
            os.symlink(ROOT / "examples", pathlib.Path(scratch) / "examples")
            shutil.copy(binary, pathlib.Path(scratch) / "batchdiff")
            environment = dict(os.environ, PATH=f"{scratch}:{os.environ['PATH']}")
            for start, block, expected in found:
                script = "set -euo pipefail\n" + block.replace("localhost:8080", f"localhost:{port}")
                try:
                    run = subprocess.run(["bash", "-c", script], cwd=scratch, env=environment, capture_output=True,
                                         text=True, timeout=60)
                except subprocess.TimeoutExpired:
                    sys.exit(f"readme-check: README.md:{start}: the block took over 60 s")
                if run.returncode != 0:
                    sys.exit(f"readme-check: README.md:{start}: the block failed ({run.returncode})\n"
                             f"stdout:\n{run.stdout[-2000:]}\nstderr:\n{run.stderr[-2000:]}")
                position = 0
                for text in expected:
                    at = run.stdout.find(text, position)
                    if at < 0:
                        sys.exit(f"readme-check: README.md:{start}: expected {text!r} (after what came before it), "
                                 f"printed:\n{run.stdout[-2000:]}")
                    position = at + len(text)
                print(f"readme-check: README.md:{start}: ran ({len(block.splitlines())} lines)")
        print(f"readme-check: OK ({len(found)} blocks)")
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
