"""Batch throughput: the same runs of a suite with 1 and with 2 Dask workers on this machine.

    python bench/eval_throughput.py [--suite scenarios/suites/standard] [--missions 8]
                                    [--policies auto,no-replan] [--workers 1,2]

Each worker count runs the same batch (the first ``--missions`` missions x ``--policies``)
through ``isr eval`` into a fresh SQLite store, its kernels warmed first (numba's on-disk
cache, loaded once per worker by the worker plugin; the warm-up is not counted). Printed per
worker count: the runs, the wall time of the batch, missions per minute, the scaling over
one worker, and the machine's load average before and after (other work on the machine
makes every figure slower: read them with the load next to them).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _batch(suite: str, missions: int, policies: str, workers: int) -> tuple[int, float, float]:
    """Runs done, their wall time (s) and missions per minute, as isr eval reports them."""
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{folder}/t.db"
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "cli",
                "eval",
                suite,
                "--limit",
                str(missions),
                "--policies",
                policies,
                "--workers",
                str(workers),
                "--db",
                url,
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
    found = re.search(r"(\d+) runs in (\d+) s \(([\d.]+) missions per minute\)", done.stderr)
    if done.returncode != 0 or found is None:
        sys.exit(f"isr eval failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return int(found.group(1)), float(found.group(2)), float(found.group(3))


def main() -> None:
    """Run the batch per worker count and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="scenarios/suites/standard")
    parser.add_argument("--missions", type=int, default=8)
    parser.add_argument("--policies", default="auto,no-replan")
    parser.add_argument("--workers", default="1,2")
    args = parser.parse_args()
    counts = [int(w) for w in args.workers.split(",")]
    print(
        f"isr eval {args.suite} --limit {args.missions} --policies {args.policies}"
        f" on {os.cpu_count()} cores"
    )
    print(f"{'workers':>7} {'runs':>5} {'wall s':>7} {'missions/min':>13} {'scaling':>8}  load")
    base = None
    for workers in counts:
        before = os.getloadavg()[0]
        started = time.perf_counter()
        runs, wall, per_minute = _batch(args.suite, args.missions, args.policies, workers)
        base = base or per_minute
        after = os.getloadavg()[0]
        print(
            f"{workers:>7} {runs:>5} {wall:>7.0f} {per_minute:>13.1f} {per_minute / base:>7.2f}x"
            f"  {before:.1f} -> {after:.1f}  ({time.perf_counter() - started:.0f} s with start-up)"
        )


if __name__ == "__main__":
    main()
