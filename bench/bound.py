"""The relaxation bound recomputed on the suites, against the clairvoyant scores stored by
``bench/reference.py``: how far the reference might be from the best possible.

    python bench/bound.py [--suites harder,adversarial,standard]

For each mission of ``bench/results/reference-<suite>.json``: the knapsack and the path
relaxation with subtour cuts (``planner.bound``), the bound (the smaller), checked never
below the clairvoyant's planned or flown value, and the clairvoyant's gap to the bound that
``reference.py`` stored when it ran against the one it gets now. Time per mission beside,
with the 1-minute load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner.bound import knapsack_bound, path_bound
from planner.scenario import parse_scenario


def _pct(values: list[float]) -> str:
    return f"mean {100 * statistics.mean(values):5.1f} %  median {100 * statistics.median(values):5.1f} %"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suites", default="harder,adversarial,standard")
    args = parser.parse_args()
    print(f"bench/bound.py — 1-minute load {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    for suite in args.suites.split(","):
        rows = json.loads((ROOT / f"bench/results/reference-{suite}.json").read_text())
        stored, knap, paths, both, below, spent = [], [], [], [], 0, []
        for row in rows:
            path = ROOT / f"scenarios/suites/{suite}/{row['mission']}"
            scenario = parse_scenario(json.loads(path.read_text()), row["mission"])
            began = time.perf_counter()
            k, p = knapsack_bound(scenario), path_bound(scenario)
            spent.append(time.perf_counter() - began)
            bound = min(k, p)
            best = max(row["clairvoyant"], row.get("planned") or 0.0)
            below += bound + 1e-6 < best
            if bound > 0 and row["bound"] > 0:
                stored.append(1 - row["clairvoyant"] / row["bound"])
                knap.append(1 - row["clairvoyant"] / k if k > 0 else 0.0)
                paths.append(1 - row["clairvoyant"] / p if p > 0 else 0.0)
                both.append(1 - row["clairvoyant"] / bound)
        print(
            f"suite {suite}: {len(rows)} missions; bound below the clairvoyant: {below} (must be 0)"
        )
        print(f"  gap, the bound reference.py stored (knapsack):   {_pct(stored)}")
        print(f"  gap, knapsack with the way home:                 {_pct(knap)}")
        print(f"  gap, path relaxation with subtour cuts:          {_pct(paths)}")
        print(f"  gap, the bound now (the smaller):                {_pct(both)}")
        print(
            f"  seconds per mission (both relaxations): median {statistics.median(spent):.2f}, "
            f"max {max(spent):.2f}"
        )
    print(f"1-minute load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
