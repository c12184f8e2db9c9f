"""Pause that stays honest about fuel: pause 1, 3 and 10 minutes, then resume.

    python bench/pause_resume.py [--scenarios demo,standard-0000,standard-0007] [--jobs 2]

Each scenario runs headless, as fast as possible, with the rules engine, paused 60 s of
mission time after the start for 1, 3 and 10 minutes, in three modes:

* ``auto``: RESUME's replan commits;
* ``review-none``: review mode, nobody answers (the plan in force flies on, the safety
  layer alone keeps the fuel promise);
* ``review-30s``: review mode, an operator ACCEPTs 30 s after each draft.

Counted per run, by this script's own check on every tick (not the executive's): fuel-outs
(a drone lost for fuel), drones whose plan in force stopped fitting their fuel with neither
a ``PLAN_INFEASIBLE`` alert nor a replan or a return home within one safety period (target
0), and the points against the same mission flown without a pause.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress
from rich.table import Table

from executive.contracts import EventRecord, HumanCommand
from executive.loop import Policy
from executive.traces.sinks import ListSink
from mission.config import RunConfig
from mission.evaluation.policies import accept_after
from mission.session import build_executive, build_planner
from planner.scenario import load_scenario

MODES = ("auto", "review-none", "review-30s")
PAUSES_MIN = (0, 1, 3, 10)  # 0: the same mission unpaused, for the points
PAUSE_AT_S = 60.0
ITERATIONS = 1500
FILES = {
    "demo": ROOT / "scenarios" / "demo.json",
    **{p.stem: p for p in sorted((ROOT / "scenarios" / "suites" / "standard").glob("*.json"))},
}


def _needed(world: Any, drone: str) -> float | None:
    """Km the drone still needs for its plan in force (the held flight while paused), by
    this script's own reading of the simulation."""
    flight = world.flight(drone)
    if flight is None:
        return None
    if flight.holding:
        kept = world.kept_path(drone)
        if kept is None:
            return None
        x, y, _ = world.position(drone)
        return math.hypot(kept.start[0] - x, kept.start[1] - y) + kept.length
    return flight.length - world.progress(drone)


def run_one(name: str, mode: str, pause_min: int) -> dict[str, Any]:
    logging.getLogger("executive").setLevel(logging.ERROR)
    scenario = load_scenario(FILES[name])
    policy = Policy(
        batch_iterations=ITERATIONS, commit="review" if mode.startswith("review") else "auto"
    )
    config = RunConfig(policy=policy, seed=0)
    sink = ListSink()
    executive = build_executive(scenario, config, sink=sink, planner=build_planner(config, sink))
    operator = accept_after(executive, 30.0) if mode == "review-30s" else None
    hz = scenario.sim.tick_hz
    pause, resume = round(PAUSE_AT_S * hz), round((PAUSE_AT_S + 60 * pause_min) * hz)
    period = policy.safety_every
    unfit: dict[str, int] = {}  # drone -> first tick its plan did not fit its fuel
    silent: set[str] = set()

    def answered(drone: str, since: int) -> bool:
        for r in sink.records:
            if not isinstance(r, EventRecord) or r.tick < since:
                continue
            if r.kind in ("PLAN_INFEASIBLE", "RETURN_TO_BASE", "SAFETY_RETURN") and (
                r.payload.get("drone") == drone
            ):
                return True
            if r.kind in ("COMMIT_PLAN", "DRAFT_READY", "REVIEW"):
                return True
        return False

    def on_tick(result: Any) -> None:
        if operator is not None:
            operator(result)
        tick = result.tick + 1
        if pause_min and tick == pause:
            executive.command(HumanCommand("PAUSE"))
        if pause_min and tick == resume:
            executive.command(HumanCommand("RESUME"))
        world = executive.sim.world
        for drone in scenario.drone_configs:
            if world.status(drone) not in ("flying", "holding"):
                continue
            needed = _needed(world, drone)
            if needed is None or world.fuel(drone) >= needed - 1e-9:
                unfit.pop(drone, None)
                continue
            first = unfit.setdefault(drone, tick)
            if tick - first > 2 * period and not answered(drone, first - period):
                silent.add(drone)

    executive.watch(on_tick=on_tick)
    began = time.perf_counter()
    report = asyncio.run(executive.run(None))
    drones = report.outcome.drones
    return {
        "scenario": name,
        "mode": mode,
        "pause_min": pause_min,
        "points": report.outcome.total_points,
        "fuel_outs": sum(1 for d in drones.values() if d.lost_reason == "fuel"),
        "lost": len(report.outcome.lost),
        "silent": len(silent),
        "alerts": sum(
            1 for r in sink.records if isinstance(r, EventRecord) and r.kind == "PLAN_INFEASIBLE"
        ),
        "resume_replans": sum(1 for r in report.replans if r.trigger == "operator:RESUME"),
        "wall_s": time.perf_counter() - began,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", default="demo,standard-0000,standard-0007")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    names = [n for n in args.scenarios.split(",") if n]
    unknown = [n for n in names if n not in FILES]
    if unknown:
        print(f"--scenarios: unknown {', '.join(unknown)}", file=sys.stderr)
        return 2
    console = Console(width=140)
    jobs = [(n, m, p) for n in names for m in MODES for p in PAUSES_MIN]
    results = []
    with (
        Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            console=console,
        ) as progress,
        ProcessPoolExecutor(args.jobs) as pool,
    ):
        task = progress.add_task("runs", total=len(jobs))
        for future in as_completed([pool.submit(run_one, *job) for job in jobs]):
            results.append(future.result())
            progress.advance(task)
    unpaused = {(r["scenario"], r["mode"]): r["points"] for r in results if r["pause_min"] == 0}
    table = Table(title=f"Pause at {PAUSE_AT_S:.0f} s for 1, 3, 10 minutes, then RESUME")
    for column in (
        "scenario",
        "mode",
        "pause",
        "points (unpaused)",
        "fuel-outs",
        "lost",
        "unfit, unsaid",
        "alerts",
        "replans at RESUME",
    ):
        table.add_column(column)
    for r in sorted(results, key=lambda r: (r["scenario"], r["mode"], r["pause_min"])):
        if r["pause_min"] == 0:
            continue
        table.add_row(
            r["scenario"],
            r["mode"],
            f"{r['pause_min']} min",
            f"{r['points']:.0f} ({unpaused[(r['scenario'], r['mode'])]:.0f})",
            str(r["fuel_outs"]),
            str(r["lost"]),
            str(r["silent"]),
            str(r["alerts"]),
            str(r["resume_replans"]),
        )
    console.print(table)
    paused = [r for r in results if r["pause_min"]]
    console.print(
        f"fuel-outs {sum(r['fuel_outs'] for r in paused)}, plans unfit and unsaid "
        f"{sum(r['silent'] for r in paused)} over {len(paused)} paused runs; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
