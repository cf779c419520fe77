#!/usr/bin/env python3
"""The differ benchmark and the whole POST /diff, run after run: each figure's median and spread.

`make bench`'s runs: the differ benchmark and the whole POST /diff, RUNS times each
(default 3), their output as it comes, then each figure's median and spread over the runs.

    scripts/bench-runs.py BENCHMARK_BINARY SERVER_BINARY

Every figure is a ratio to a baseline measured in the same run (the stdlib's
difference(from:) for the differ, Foundation's JSONSerialization parse of the same body
for the request); the summary lines come after the benchmark's own lines, which stay as
they are.
"""
import os, re, subprocess, sys

import benchlib

RUNS = int(os.environ.get("BENCH_REPEATS", "3"))


def run(command):
    """Runs `command`, echoing its output, and returns the lines."""
    lines = []
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:
        for line in process.stdout:
            print(line, end="", flush=True)
            lines.append(line.rstrip("\n"))
    if process.returncode != 0:
        sys.exit(f"bench: {' '.join(command)} failed ({process.returncode})")
    return lines


def figures(lines):
    """{(workload, figure): value} from one run's lines."""
    found, workload = {}, None
    for line in lines:
        if line and not line.startswith(" "):
            workload = line
        elif m := re.match(r"\s+(batchdiff|stdlib)\s+([\d.]+) ms", line):
            found[(workload, m.group(1))] = float(m.group(2))
        elif m := re.match(r"\s+ratio\s+.* takes ([\d.]+) of", line):
            found[(workload, "ratio")] = float(m.group(1))
        elif m := re.match(r"\s+whole request .*?([\d.]+) ms", line):
            found[(workload, "request")] = float(m.group(1))
        elif m := re.match(r"\s+JSONSerialization.*?([\d.]+) ms", line):
            found[(workload, "parse only")] = float(m.group(1))
    return found


def main():
    benchmark, server = sys.argv[1], sys.argv[2]
    runs = []
    for index in range(RUNS):
        print(f"bench: run {index + 1} of {RUNS}", flush=True)
        runs.append(figures(run([benchmark]) + run([benchmark, "e2e", server])))
    print()
    workloads = list(dict.fromkeys(key[0] for key in runs[0]))
    rows, summary = [], {"runs": len(runs)}
    for workload in workloads:
        parts = []
        summary[workload] = {}
        for figure in ("batchdiff", "request", "stdlib", "parse only", "ratio"):
            values = [run[(workload, figure)] for run in runs if (workload, figure) in run]
            if not values:
                continue
            unit = "" if figure == "ratio" else " ms"
            digits = 4 if figure == "ratio" and max(values) < 0.1 else 2
            parts.append(f"{figure} {benchlib.spread(values, digits, unit)}")
            summary[workload][figure if figure == "ratio" else f"{figure} ms"] = benchlib.distribution(values)
        rows.append(f"summary {workload}: " + ", ".join(parts) + f"; median and spread over {len(runs)} runs")
    benchlib.report("runs", rows, summary)


if __name__ == "__main__":
    main()
