"""Replanning-size figures for the team search: 5 drones, 50 targets, 10 SAMs, and swarms.

    python bench/replan_size.py [--scenarios 5] [--seed 0] [--long 5.0] [--short 0.3]
        [--sizes 10x100x10,50x500x50,200x2000x200,1000x5000x500] [--deadline 0.5]
        [--patient 10] [--out FILE]

Random scenarios with a fixed seed: a 100 x 100 km area, 3 airports, 10 SAMs (radius 4-10
km), 50 targets outside every SAM (priority 1-10, one of three sensor types), 5 drones with
mixed end modes (return / end / best_end), different sensors and fuel budgets (70-130 km, so that about half the score is reachable); SAM-aware
distances from ``planner.geometry.SamField.all_pairs`` (Euclidean if that module is absent).
For each scenario it prints the time to the first valid plan, the score of the plan at
``--short`` seconds and at ``--long`` seconds (two runs, same seed), and their ratio; the
target is a first plan within 50 ms and the short plan within 1 % of the long one.

Then the swarm sizes (drones x targets x SAMs; airports min(drones, 50)), generated like
``bench/limits.py`` over the whole coordinate box but with fuel that reaches only part of
the targets (so that choices matter; the limits' full tanks reach all of them), parsed at
the door and compiled (``compile_mission``, two workers). From the moment the distance table
exists it measures the first valid plan (``plannable``, ``team_problem``, then the search
until its first ``on_improvement``; wall seconds, and the CPU seconds it took, which other
processes on the machine do not inflate), the plan a search stopped at ``--deadline`` returns and
the one after ``--patient`` seconds (same seed). Targets: the first valid plan well inside
0.5 s at every size, the plan at the deadline within 2 % of the patient one. Every plan is
verified (``verify_solution``). The 1-minute load is printed beside the figures.
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
    TeamSolution,
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


SIZES = "10x100x10,50x500x50,200x2000x200,1000x5000x500"


def swarm(drones: int, targets: int, sams: int) -> tuple[TeamProblem, dict[str, float]]:
    """A generated swarm mission, compiled, as the team search's problem (and its facts)."""
    sys.path.insert(0, str(ROOT / "bench"))
    from limits import mission

    from planner.feasibility import plannable
    from planner.limits import MAX_COORD_KM, MAX_FUEL_KM
    from planner.mission import compile_mission
    from planner.planning import team_problem
    from planner.scenario import parse_scenario

    airports = min(drones, 50)
    data = mission(targets, sams, drones, airports, MAX_COORD_KM)
    # Fuel for about half the targets: a tour through N of them in area A is ~0.7 sqrt(N A)
    # long; each drone gets its share, plus the way out to its part of the box and back.
    area = (2 * MAX_COORD_KM) ** 2
    fuel = 0.7 * np.sqrt(area * targets / 2) / drones + 2 * np.sqrt(area / airports)
    for config in data["drone_configs"].values():
        config["fuelBudget"] = float(min(MAX_FUEL_KM, round(fuel)))
    scenario = parse_scenario(data)
    t = time.perf_counter()
    compiled = compile_mission(scenario, workers=2)
    compile_s = time.perf_counter() - t
    t, c = time.perf_counter(), time.process_time()
    problem = team_problem(plannable(compiled).mission)
    build_s, build_cpu = time.perf_counter() - t, time.process_time() - c
    facts = {"compile_s": compile_s, "build_s": build_s, "build_cpu": build_cpu}
    return problem, facts | {"fuel": min(MAX_FUEL_KM, fuel)}


def swarm_table(args: argparse.Namespace, console: object) -> bool:
    """The swarm sizes' figures; True when every target was met."""
    from rich.table import Table

    tab = Table(
        title=f"Swarm sizes: first valid plan, and the plan at {args.deadline:g} s vs after"
        f" {args.patient:g} s"
    )
    for col in (
        "drones x targets x SAMs",
        "fuel km",
        "compile s",
        "first valid plan s (CPU s)",
        "score first",
        f"score @{args.deadline:g} s",
        f"score @{args.patient:g} s (iterations)",
        "most possible",
        "deadline / patient",
        "load",
    ):
        tab.add_column(col, justify="right")
    met = True
    for size in args.sizes.split(","):
        drones, targets, sams = (int(v) for v in size.split("x"))
        problem, facts = swarm(drones, targets, sams)
        first: list[tuple[float, float, float]] = []
        cpu0 = time.process_time()

        def on_first(
            sol: TeamSolution, first: list[tuple[float, float, float]] = first, cpu0: float = cpu0
        ) -> None:
            if not first:
                first.append((sol.seconds, sol.score, time.process_time() - cpu0))

        short = solve_team(
            problem, StopCriterion(max_seconds=args.deadline), on_improvement=on_first
        )
        patient = solve_team(problem, StopCriterion(max_seconds=args.patient))
        for sol in (short, patient):
            errors = verify_solution(problem, sol)
            if errors:
                raise SystemExit(f"INFEASIBLE plan at {size}: {errors[:3]}")
        first_s = facts["build_s"] + first[0][0]
        first_cpu = facts["build_cpu"] + first[0][2]
        ratio = short.score / patient.score if patient.score else 1.0
        met &= first_s <= 0.5 and ratio >= 0.98
        reachable = np.flatnonzero(problem.eligible.any(axis=0))
        tab.add_row(
            size,
            f"{facts['fuel']:,.0f}",
            f"{facts['compile_s']:.2f}",
            f"{first_s:.3f} ({first_cpu:.3f})",
            f"{first[0][1]:g}",
            f"{short.score:g}",
            f"{patient.score:g} ({patient.iterations:,})",
            f"{problem.score[reachable].sum():g}",
            f"{100 * ratio:.2f} %",
            f"{os.getloadavg()[0]:.2f}",
        )
        console.print(f"{size} done", highlight=False)  # type: ignore[attr-defined]
    console.print(tab)  # type: ignore[attr-defined]
    return met


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenarios", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--short", type=float, default=0.3)
    ap.add_argument("--long", type=float, default=5.0)
    ap.add_argument("--sizes", default=SIZES, help="swarm sizes; '' for none")
    ap.add_argument("--deadline", type=float, default=0.5)
    ap.add_argument("--patient", type=float, default=10.0)
    ap.add_argument("--out", type=Path, help="also write the output here (text)")
    args = ap.parse_args(argv)

    from rich.console import Console
    from rich.table import Table

    console = Console(width=150, record=True)
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
    if args.sizes:
        met = swarm_table(args, console)
        console.print(
            "swarm sizes: first valid plan within 0.5 s of the table and the plan at the"
            f" deadline within 2 % of the patient one: {'MET' if met else 'MISSED'}"
        )
    if args.out:
        args.out.write_text(console.export_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
