"""Safety under stress: random missions with threats dropped on planned paths, every mode.

    python bench/safety_stress.py [--missions 50] [--seed 0] [--jobs 2] [--json FILE]

Each mission (seeded) has 4-6 drones, 30-50 targets and 4-8 SAMs on 100 x 100 km, and two
threats on the first plan's paths: a hidden SAM on one drone's path (found by its sensors on
the way) and a SAM announced by an ``add_sam`` edit mid-flight on another drone's path,
ahead of it. Each mission runs headless, as fast as possible, with the rules engine, in:

* ``auto``: drafts commit automatically;
* ``review-none``: review mode, nobody answers;
* ``review-30s``: review mode, an operator ACCEPTs 30 s of mission time after each draft;
* ``failing``: auto, with a planner that raises on every replan;
* ``no-replan`` and ``oracle``: the comparisons (the first plan flown, safety still on; a
  plan made once knowing the whole timeline).

Counted per mode: drones lost inside a SAM known before the loss (target 0), all drones
lost, commits in review modes that differ from the approved plan without a new approval
(target 0), safety actions, and points (mean, and as a share of the oracle's).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn
from rich.table import Table

from executive.contracts import (
    PlanOutcome,
    PlanRequest,
)
from executive.loop import Policy
from executive.traces.audit import initial_sams, lost_to_known_sams, unapproved_commits
from executive.traces.sinks import ListSink
from mission.config import RunConfig
from mission.evaluation.policies import accept_after
from mission.session import build_executive, build_planner
from planner.mission import compile_mission
from planner.model import Scenario
from planner.planning import plan_mission
from planner.scenario import parse_scenario

MODES = ("auto", "review-none", "review-30s", "failing", "no-replan", "oracle")
SIZE = 100.0
ITERATIONS = 1500  # the planner's budget per round (as fast as possible: reproducible)


# ----- missions -----------------------------------------------------------------------------


def mission(seed: int) -> dict[str, Any]:
    """A random mission with two threats on its first plan's paths (a scenario dict)."""
    rng = np.random.default_rng(seed)
    n_drones = int(rng.integers(4, 7))
    n_targets = int(rng.integers(30, 51))
    n_sams = int(rng.integers(4, 9))
    airports = [(6.0, 6.0), (94.0, 8.0), (50.0, 94.0)]
    sams: list[tuple[float, float, float]] = []
    while len(sams) < n_sams:
        x, y, r = rng.uniform(15, 85), rng.uniform(15, 85), rng.uniform(3, 7)
        clear = all(math.hypot(x - a, y - b) > r + 4 for a, b in airports)
        apart = all(math.hypot(x - a, y - b) > r + c + 2 for a, b, c in sams)
        if clear and apart:
            sams.append((float(x), float(y), float(r)))
    targets = []
    while len(targets) < n_targets:
        x, y = rng.uniform(2, 98, 2)
        if all(math.hypot(x - a, y - b) > c + 1.0 for a, b, c in sams):
            targets.append(
                {
                    "id": f"T{len(targets) + 1}",
                    "x": float(x),
                    "y": float(y),
                    "priority": int(rng.integers(1, 11)),
                    "type": "ABC"[len(targets) % 3],
                }
            )
    drones = {
        str(k + 1): {
            "fuelBudget": float(rng.uniform(140, 220)),
            "home_airport": f"A{k % 3 + 1}",
            "accessibleTargets": "ALL" if k % 2 == 0 else ["A", "B"],
        }
        for k in range(n_drones)
    }
    data = {
        "environment": {
            "airports": [{"id": f"A{i + 1}", "x": x, "y": y} for i, (x, y) in enumerate(airports)],
            "targets": targets,
            "sams": [
                {"id": f"S{i + 1}", "pos": [x, y], "range": r} for i, (x, y, r) in enumerate(sams)
            ],
        },
        "drone_configs": drones,
        "sim": {"speed": 0.1},
    }
    data["timeline"] = _threats(parse_scenario(data), rng, airports)
    return data


def _threats(scenario: Scenario, rng: np.random.Generator, airports) -> list[dict[str, Any]]:
    """A hidden SAM on one drone's planned path, and an announced one ahead of another."""
    planned = compile_mission(scenario)
    solution = plan_mission(planned, seconds=None, iterations=ITERATIONS, seed=0).solution
    flying = sorted(
        (r.distance, d) for d, r in solution.routes.items() if len(r.visited_targets) >= 2
    )
    if len(flying) < 2:
        return []
    speed = scenario.sim.speed
    (_, hidden_on), (_, announced_on) = flying[-1], flying[-2]
    timeline: list[dict[str, Any]] = []
    hidden = _on_path(solution, hidden_on, rng.uniform(0.4, 0.6), rng, scenario, airports)
    if hidden is not None:
        timeline.append({"t": 1, "op": "add_sam", "id": "H1", "hidden": True, **hidden})
    route = solution.routes[announced_on]
    at_frac = float(rng.uniform(0.2, 0.35))
    when = at_frac * route.distance / speed  # the drone is about that far along by then
    sam = _on_path(solution, announced_on, at_frac + 0.25, rng, scenario, airports, when=when)
    if sam is not None:
        timeline.append({"t": round(when, 1), "op": "add_sam", "id": "N1", **sam})
    return timeline


def _position(path: list[list[float]], frac: float) -> tuple[float, float]:
    pts = np.asarray(path)
    seg = np.hypot(*np.diff(pts, axis=0).T)
    goal = frac * seg.sum()
    k = int(np.searchsorted(np.cumsum(seg), goal))
    k = min(k, len(seg) - 1)
    before = float(np.cumsum(seg)[k - 1]) if k > 0 else 0.0
    t = (goal - before) / seg[k] if seg[k] > 0 else 0.0
    x, y = pts[k] + t * (pts[k + 1] - pts[k])
    return float(x), float(y)


def _on_path(solution, drone, frac, rng, scenario, airports, when: float | None = None):
    """A SAM centred on ``drone``'s planned path at ``frac`` of its length, clear of every
    airport and, when it appears at ``when`` seconds, of every drone's position then."""
    path = solution.routes[drone].path
    if not path:
        return None
    x, y = _position(path, min(frac, 0.9))
    r = float(rng.uniform(2.0, 4.0))
    if any(math.hypot(x - a, y - b) < r + 3 for a, b in airports):
        return None
    if when is not None:
        speed = scenario.sim.speed
        for other in solution.routes.values():
            if not other.path or other.distance <= 0:
                continue
            f = min(1.0, when * speed / other.distance)
            ox, oy = _position(other.path, f)
            if math.hypot(x - ox, y - oy) < r + 3:
                return None  # a SAM dropped on a drone kills it before anything can act
    return {"pos": [x, y], "range": r}


# ----- running one mission in one mode --------------------------------------------------------


class _Failing:
    def __init__(self, inner) -> None:
        self.inner = inner

    async def plan(self, request: PlanRequest) -> PlanOutcome:
        if request.trigger != "initial":
            raise RuntimeError("injected planner failure")
        return await self.inner.plan(request)


def run_one(seed: int, mode: str) -> dict[str, Any]:
    logging.getLogger("executive").setLevel(logging.ERROR)  # failed rounds are counted
    data = mission(seed)
    scenario = parse_scenario(data, f"<mission {seed}>")
    policy = Policy(
        batch_iterations=ITERATIONS,
        replan=mode not in ("no-replan", "oracle"),
        commit="review" if mode.startswith("review") else "auto",
    )
    config = RunConfig(policy=policy, oracle=mode == "oracle", seed=0)
    sink = ListSink()
    planner = build_planner(config, sink)
    if mode == "failing":
        planner = _Failing(planner)
    executive = build_executive(scenario, config, sink=sink, planner=planner)
    if mode == "review-30s":  # an operator who ACCEPTs 30 s of mission time after each draft
        accept_after(executive, 30.0)
    started = time.perf_counter()
    report = asyncio.run(executive.run(None))
    return {
        "seed": seed,
        "mode": mode,
        "threats": len(data["timeline"]),
        "detected": sum(1 for r in sink.records if getattr(r, "kind", "") == "sam_detected"),
        "points": report.outcome.total_points,
        "lost": list(report.outcome.lost),
        "lost_known": lost_to_known_sams(sink.records, initial_sams(scenario)),
        "unapproved": unapproved_commits(sink.records) if mode.startswith("review") else [],
        "safety_actions": report.safety_actions,
        "replans": len(report.replans),
        "wall_s": time.perf_counter() - started,
    }


# ----- the batch ------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--missions", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    seeds = [args.seed + k for k in range(args.missions)]
    console = Console(width=150)
    results: list[dict[str, Any]] = []
    began = time.perf_counter()
    with (
        Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=console,
        ) as progress,
        ProcessPoolExecutor(args.jobs) as pool,
    ):
        task = progress.add_task("runs", total=len(seeds) * len(modes))
        futures = [pool.submit(run_one, s, m) for s in seeds for m in modes]
        for future in as_completed(futures):
            results.append(future.result())
            progress.advance(task)
    oracle = {r["seed"]: r["points"] for r in results if r["mode"] == "oracle"}
    table = Table(
        title=f"Safety stress: {len(seeds)} random missions x {len(modes)} modes "
        f"(4-6 drones, 30-50 targets, 4-8 SAMs, a hidden and an announced SAM on planned paths)"
    )
    for column in (
        "mode",
        "runs",
        "threats (hidden found)",
        "lost to a known SAM",
        "drones lost (any)",
        "unapproved review commits",
        "safety actions",
        "points (mean)",
        "share of oracle",
    ):
        table.add_column(column, justify="right" if column != "mode" else "left")
    failures = 0
    for mode in modes:
        rows = [r for r in results if r["mode"] == mode]
        known = sum(len(r["lost_known"]) for r in rows)
        unapproved = sum(len(r["unapproved"]) for r in rows)
        failures += known + unapproved
        share = [r["points"] / oracle[r["seed"]] for r in rows if oracle.get(r["seed"])]
        table.add_row(
            mode,
            str(len(rows)),
            f"{sum(r['threats'] for r in rows)} ({sum(r['detected'] > 0 for r in rows)})",
            str(known),
            str(sum(len(r["lost"]) for r in rows)),
            str(unapproved) if mode.startswith("review") else "-",
            str(sum(r["safety_actions"] for r in rows)),
            f"{statistics.fmean(r['points'] for r in rows):.1f}",
            f"{100 * statistics.fmean(share):.1f} %" if share else "-",
        )
    console.print(table)
    for r in results:
        for problem in r["unapproved"]:
            console.print(f"seed {r['seed']} {r['mode']}: {problem}", highlight=False)
        if r["lost_known"]:
            console.print(f"seed {r['seed']} {r['mode']}: lost to a known SAM: {r['lost_known']}")
    console.print(
        f"{len(results)} runs in {time.perf_counter() - began:.0f} s wall with {args.jobs} jobs; "
        + (
            "targets met: 0 drones lost to a known SAM, 0 unapproved commits"
            if not failures
            else f"{failures} FAILURE(S)"
        )
    )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
