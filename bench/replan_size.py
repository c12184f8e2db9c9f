"""Replanning-size figure for the team search: 5 drones, 50 targets, 10 SAMs.

    python bench/replan_size.py [--scenarios 5] [--seed 0] [--long 5.0] [--short 0.3]

Random scenarios with a fixed seed: a 100 x 100 km area, 3 airports, 10 SAMs (radius 4-10
km), 50 targets outside every SAM (priority 1-10, one of three sensor types), 5 drones with
mixed end modes (return / end / best_end), different sensors and fuel budgets (70-130 km, so that about half the score is reachable); SAM-aware
distances from ``planner.geometry.SamField.all_pairs`` (Euclidean if that module is absent).
For each scenario it prints the time to the first valid plan, the score of the plan at
``--short`` seconds and at ``--long`` seconds (two runs, same seed), and their ratio; the
target is a first plan within 50 ms and the short plan within 1 % of the long one.
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from planner.team_search import (
    StopCriterion,
    TeamProblem,
    solve_team,
    verify_solution,
    warmup,
)

N_DRONES, N_TARGETS, N_SAMS, N_AIRPORTS = 5, 50, 10, 3
SENSORS = ("EO", "IR", "SAR")


def distances(points: np.ndarray, sams: np.ndarray) -> tuple[np.ndarray, str]:
    try:
        from planner.geometry import SamField
    except ImportError:  # pragma: no cover - until the geometry lands
        d = points[:, None, :] - points[None, :, :]
        return np.sqrt((d * d).sum(-1)), "euclidean (planner.geometry missing)"
    table = SamField([tuple(s) for s in sams]).all_pairs(points)
    return np.asarray(table.dist, dtype=np.float64), "SAM-aware (planner.geometry)"


def scenario(seed: int) -> tuple[TeamProblem, str, float]:
    rng = np.random.default_rng(seed)
    sams = np.column_stack([rng.uniform(10, 90, (N_SAMS, 2)), rng.uniform(4, 10, N_SAMS)])

    def outside(p: np.ndarray, margin: float) -> bool:
        return bool(np.all(np.hypot(*(p - sams[:, :2]).T) > sams[:, 2] + margin))

    pts: list[np.ndarray] = []
    while len(pts) < N_AIRPORTS + N_TARGETS:
        p = rng.uniform(0, 100, 2)
        if outside(p, 1.0):
            pts.append(p)
    points = np.array(pts)
    t0 = time.perf_counter()
    dist, kind = distances(points, sams)
    t_dist = time.perf_counter() - t0
    n = len(points)
    score = np.zeros(n)
    score[N_AIRPORTS:] = rng.integers(1, 11, N_TARGETS)
    ttype = rng.integers(0, len(SENSORS), n)
    starts = np.array([k % N_AIRPORTS for k in range(N_DRONES)])
    ends = np.zeros((N_DRONES, n), dtype=bool)
    elig = np.zeros((N_DRONES, n), dtype=bool)
    for k in range(N_DRONES):
        mode = ("return", "end", "best_end")[k % 3]
        if mode == "return":
            ends[k, starts[k]] = True
        elif mode == "end":
            ends[k, (starts[k] + 1) % N_AIRPORTS] = True
        else:
            ends[k, :N_AIRPORTS] = True
        sensors = {SENSORS[k % 3], SENSORS[(k + 1) % 3]} if k < 3 else set(SENSORS)
        for j in range(N_AIRPORTS, n):
            elig[k, j] = SENSORS[ttype[j]] in sensors and np.isfinite(dist[starts[k], j])
    budget = rng.uniform(70, 130, N_DRONES)
    prob = TeamProblem(
        dist=dist, score=score, starts=starts, end_options=ends, budget=budget, eligible=elig
    )
    return prob, kind, t_dist


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenarios", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--short", type=float, default=0.3)
    ap.add_argument("--long", type=float, default=5.0)
    args = ap.parse_args(argv)

    from rich.console import Console
    from rich.table import Table

    console = Console(width=110)
    t0 = time.perf_counter()
    warmup()
    console.print(f"kernels ready in {time.perf_counter() - t0:.2f} s (numba cache)")
    tab = Table(title=f"Replanning size: {N_DRONES} drones, {N_TARGETS} targets, {N_SAMS} SAMs")
    for col in (
        "scenario",
        "score of all",
        "distances",
        "first plan ms",
        "score first",
        f"score @{args.short:g}s",
        f"score @{args.long:g}s",
        "short/long",
    ):
        tab.add_column(col, justify="right")
    worst_first, worst_ratio = 0.0, 1.0
    kinds = set()
    for i in range(args.scenarios):
        prob, kind, t_dist = scenario(args.seed + i)
        kinds.add(kind)
        first: list[tuple[float, float]] = []

        def on_imp(s, first=first):
            if not first:
                first.append((s.seconds, s.score))

        short = solve_team(
            prob, StopCriterion(max_seconds=args.short), seed=0, on_improvement=on_imp
        )
        long = solve_team(prob, StopCriterion(max_seconds=args.long), seed=0)
        for s in (short, long):
            errs = verify_solution(prob, s)
            if errs:
                console.print(f"[bold red]INFEASIBLE plan in scenario {i}: {errs}")
                return 1
        ratio = short.score / long.score if long.score else 1.0
        worst_first = max(worst_first, first[0][0])
        worst_ratio = min(worst_ratio, ratio)
        tab.add_row(
            str(args.seed + i),
            f"{prob.score.sum():g}",
            f"{t_dist * 1000:.0f} ms",
            f"{first[0][0] * 1000:.1f}",
            f"{first[0][1]:g}",
            f"{short.score:g}",
            f"{long.score:g}",
            f"{100 * ratio:.2f} %",
        )
    console.print(tab)
    console.print(f"distances: {', '.join(sorted(kinds))}")
    ok1 = worst_first <= 0.050
    ok2 = worst_ratio >= 0.99
    console.print(
        f"first valid plan, worst: {worst_first * 1000:.1f} ms (target <= 50 ms) "
        f"{'OK' if ok1 else 'MISSED'}; plan at {args.short:g} s vs {args.long:g} s, "
        f"worst: {100 * worst_ratio:.2f} % (target >= 99 %) {'OK' if ok2 else 'MISSED'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
