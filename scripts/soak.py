#!/usr/bin/env python3
"""Soak: a bounded chaos run of the server on loopback (`make soak`, `make soak-short`).

    scripts/soak.py [SERVER_BINARY]        (default .build/release/batchdiff)
    SOAK_SECONDS=10 scripts/soak.py ...    (default 60)
    SOAK_SEED=N                            (default random; printed at the start)

What it runs and checks, and its verdict: scripts/soak/__init__.py; the code: scripts/soak/.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # benchlib, and the soak package

from soak.run import main

if __name__ == "__main__":
    main()
