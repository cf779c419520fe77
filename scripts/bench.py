#!/usr/bin/env python3
"""Runs one benchmark by its short name, then prints its summary again and where its JSON is.

    scripts/bench.py NAME [ARGS...]     (ARGS go to the benchmark: usually the binary)
    scripts/bench.py [--list]           the names, a line each

Each benchmark is a script of this folder that ends with benchlib.report: its summary lines,
and its figures written to .build/bench/NAME.json. Its environment knobs are its own (see
each script's docstring). The exit status is the script's; 2 for an unknown name.
"""
import ast, os, runpy, sys

import benchlib

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = {
    "feed": "bench-feed.py",
    "fanout": "bench-fanout.py",
    "memory": "bench-memory.py",
    "request-memory": "bench-request-memory.py",
    "stores": "bench-stores.py",
    "writes": "bench-writes.py",
    "small-feeds": "bench-small-feeds.py",
    "windows": "bench-windows.py",
    "cache": "bench-cache.py",
    "pg-writes": "bench-pg-writes.py",
    "source": "bench-source.py",
    "merge": "bench-merge.py",
    "hardening": "hardening-figures.py",
    "runs": "bench-runs.py",
}


def summary(script):
    """The first line of `script`'s docstring (read, not run)."""
    with open(os.path.join(HERE, script)) as source:
        doc = ast.get_docstring(ast.parse(source.read())) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def list_names():
    """Prints each name and what it measures."""
    width = max(map(len, SCRIPTS))
    print("scripts/bench.py NAME [ARGS...], NAME one of:")
    for name, script in SCRIPTS.items():
        print(f"  {name.ljust(width)}  {summary(script)}")


def main(arguments):
    if not arguments or arguments[0] in ("--list", "-l", "--help", "-h"):
        list_names()
        return 0
    name = arguments[0]
    if name not in SCRIPTS:
        print(f"bench.py: no benchmark named {name!r}; the names: {', '.join(SCRIPTS)} (scripts/bench.py --list)",
              file=sys.stderr)
        return 2
    path = os.path.join(HERE, SCRIPTS[name])
    sys.argv = [path, *arguments[1:]]
    made = len(benchlib.REPORTS)
    runpy.run_path(path, run_name="__main__")  # a failure exits with the script's status
    reports = benchlib.REPORTS[made:]
    if not reports:
        print(f"bench.py: {SCRIPTS[name]} ended without a report", file=sys.stderr)
        return 1
    for report in reports:
        print(f"\n== bench {report['name']} ({SCRIPTS[name]}) ==")
        for row in report["rows"]:
            print(row)
        print(f"figures: {os.path.relpath(report['path'])}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
