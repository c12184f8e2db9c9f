"""Benchmark: wall time of exact orienteering (Held-Karp) for 10..20 candidate targets.

Run from the repository root:  .venv/bin/python bench/held_karp.py

Every instance is random points in a 100 km square, start = end = airport 0 (return mode),
all targets reachable, and a budget of 1.5x a nearest-neighbour tour through all of them,
so every target can be visited and almost nothing is pruned (the hard case). A warm-up
call compiles (or loads from the numba cache) the kernel first, so compile time is
excluded. Each repetition is a fresh instance.
"""

from __future__ import annotations

import statistics
import time

import numpy as np
from rich.console import Console
from rich.table import Table

from planner.orienteering import solve_orienteering, warmup

SIZES = range(10, 21)
TARGETS_S = {16: 0.060, 20: 1.5}  # seconds, on the 2-core reference machine


def reps_for(k: int) -> int:
    if k <= 14:
        return 9
    if k <= 17:
        return 5
    return 3


def instance(k: int, rng: np.random.Generator):
    pts = rng.uniform(0.0, 100.0, size=(k + 1, 2))
    dist = np.sqrt(((pts[:, None, :] - pts[None, :, :]) ** 2).sum(-1))
    scores = np.concatenate([[0.0], rng.integers(1, 6, size=k).astype(np.float64)])
    # nearest-neighbour tour from the airport through every target and back
    here, todo, tour = 0, set(range(1, k + 1)), 0.0
    while todo:
        nxt = min(todo, key=lambda j: dist[here, j])
        tour += dist[here, nxt]
        todo.remove(nxt)
        here = nxt
    tour += dist[here, 0]
    return dist, scores, 1.5 * tour


def main() -> None:
    console = Console()
    t0 = time.perf_counter()
    warmup()
    console.print(f"warm-up (compile or cache load): {1e3 * (time.perf_counter() - t0):.0f} ms")

    table = Table(title="Held-Karp orienteering, all targets reachable")
    for col in ("targets", "reps", "median ms", "max ms", "target ms", "verdict"):
        table.add_column(col, justify="right")
    rng = np.random.default_rng(20240601)
    all_ok = True
    for k in SIZES:
        times = []
        for _ in range(reps_for(k)):
            dist, scores, budget = instance(k, rng)
            t = time.perf_counter()
            res = solve_orienteering(dist, scores, 0, range(1, k + 1), [0], budget)
            times.append(time.perf_counter() - t)
            assert len(res.route) == k + 2, "budget should allow visiting every target"
        med, worst = statistics.median(times), max(times)
        target = TARGETS_S.get(k)
        if target is None:
            tgt, verdict = "-", "-"
        else:
            ok = worst <= target  # strict: every repetition must meet it
            all_ok &= ok
            tgt = f"{1e3 * target:.0f}"
            verdict = "[green]PASS[/]" if ok else "[red]MISS[/]"
        table.add_row(
            str(k), str(len(times)), f"{1e3 * med:.1f}", f"{1e3 * worst:.1f}", tgt, verdict
        )
    console.print(table)
    console.print(
        "verdict is on the max of the repetitions; all targets met"
        if all_ok
        else "some targets MISSED"
    )


if __name__ == "__main__":
    main()
