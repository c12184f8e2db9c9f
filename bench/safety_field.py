"""The tick while the safety layer needs the known SAMs' field: pop-up SAMs among hundreds.

    python bench/safety_field.py [--sams 500] [--drones 20] [--seconds 60] [--speed 1]

A paced run (1x by default, 20 Hz): ``--drones`` drones fly east on parallel lines through a
field of ``--sams`` SAMs (placed between the lines), in review mode with nobody answering,
so no plan takes over and the safety layer must divert them. At t = 20 s, a SAM pops up on
the line ahead of every fifth drone. The layer's first divert needs the field of every SAM
known (55-68 ms at 500 SAMs on a quiet day): built on the tick that acts it stalls that
tick; built in a worker from the moment the SAM becomes known (``executive.loop.known_field``)
it does not; the diverts' own legs are worked out in a worker from a checkpoint a few ticks
on (``executive.loop.divert_ahead``). Printed: the ticks' work (inside ``tick_once``) and
start lateness around the diverts, the diverts, where the fields were built, the divert
jobs, and the 1-minute load.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np

from executive.contracts import EventRecord
from executive.loop import Executive, Policy
from executive.loop.options import LoopOptions
from executive.planning.algorithmic import AlgorithmicPlanner
from executive.traces.sinks import ListSink
from planner.model import Scenario
from planner.scenario import parse_scenario
from sim import TickResult

GAP = 18.0  # km between the drones' lines
LENGTH = 400.0  # km of each line
SPEED = 0.3  # km/s
POPUP_T = 20  # s


def mission(drones: int, sams: int, seed: int = 0) -> Scenario:
    """Drones on parallel lines west to east, a target half way; SAMs between the lines; a
    SAM popping up 14 km ahead of every fifth drone at ``POPUP_T``."""
    rng = np.random.default_rng(seed)
    lines = [20.0 + GAP * k for k in range(drones)]
    airports = [{"id": f"W{k}", "x": 0.0, "y": y} for k, y in enumerate(lines)]
    airports += [{"id": f"E{k}", "x": LENGTH, "y": y} for k, y in enumerate(lines)]
    targets = [
        {"id": f"T{k}", "x": LENGTH / 2, "y": y, "priority": 5, "type": "A"}
        for k, y in enumerate(lines)
    ]
    placed = []
    for i in range(sams):  # in the gaps: 6-7 km of clearance from every line
        gap = lines[i % max(1, drones - 1)] + GAP / 2 if drones > 1 else lines[0] + GAP / 2
        placed.append(
            {
                "id": f"S{i}",
                "pos": [float(rng.uniform(30.0, LENGTH - 30.0)), gap + float(rng.uniform(-1, 1))],
                "range": float(rng.uniform(1.5, 2.5)),
            }
        )
    start_x = SPEED * POPUP_T
    timeline = [
        {"t": POPUP_T, "op": "add_sam", "id": f"P{k}", "pos": [start_x + 14.0, y], "range": 2.0}
        for k, y in enumerate(lines)
        if k % 5 == 0
    ]
    configs = {
        str(k): {
            "fuelBudget": 2 * LENGTH,
            "home_airport": f"W{k}",
            "end_airport": f"E{k}",
            "accessibleTargets": "ALL",
        }
        for k in range(drones)
    }
    return parse_scenario(
        {
            "environment": {"airports": airports, "targets": targets, "sams": placed},
            "drone_configs": configs,
            "sim": {"speed": SPEED},
            "timeline": timeline,
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sams", type=int, default=500)
    parser.add_argument("--drones", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--speed", type=float, default=1.0)
    args = parser.parse_args()
    scenario = mission(args.drones, args.sams)
    sink = ListSink()
    executive = Executive(
        scenario,
        planner=AlgorithmicPlanner(iterations=300),
        sink=sink,
        options=LoopOptions(policy=Policy(commit="review")),  # nobody answers
    )
    work: dict[int, float] = {}
    tick_once = executive.tick_once

    def timed() -> TickResult:
        began = time.perf_counter()
        result = tick_once()
        work[result.tick] = (time.perf_counter() - began) * 1e3
        return result

    executive.tick_once = timed  # type: ignore[method-assign]
    load = os.getloadavg()[0]
    report = asyncio.run(executive.run(args.speed, until=round(args.seconds * 20)))
    events = [r for r in sink.of(EventRecord) if r.kind == "SAFETY_DIVERT"]
    known = [r.tick for r in sink.of(EventRecord) if r.kind == "ENV_EDITS"]
    first = min((r.tick for r in events), default=None)
    ms = sorted(work.values())
    field = getattr(executive.safety, "field", None)  # None: before known_field (a baseline)
    built = "on the tick" if field is None else f"{field.builds} ({field.in_worker} in a worker)"
    jobs = getattr(executive.safety, "diverts", None)  # None: before divert_ahead
    ahead = (
        "none (on the tick)"
        if jobs is None
        else f"{jobs.started} started, {jobs.sent} sent, {jobs.dropped} dropped (acted on the tick; {getattr(jobs, 'failed', 0)} of them failed)"
    )
    print(
        f"{args.drones} drones x {args.sams} SAMs, {args.seconds:g} s at {args.speed:g}x, "
        f"review with nobody answering; pop-up SAMs at tick {known[0] if known else '-'}"
    )
    print(
        f"diverts: {len(events)} (first at tick {first}); fields built: {built}; overruns {report.overruns}; "
        f"lateness ms p50 {report.jitter_ms.get('p50', 0):.2f} p99 "
        f"{report.jitter_ms.get('p99', 0):.2f} max {report.jitter_ms.get('max', 0):.1f}"
    )
    last = first if first is not None else (known[0] if known else 0)
    window = [work[t] for t in work if known and known[0] - 1 <= t <= last + 1]
    print(
        f"tick work ms: p50 {statistics.median(ms):.2f} p99 {ms[int(0.99 * (len(ms) - 1))]:.2f} "
        f"max {ms[-1]:.1f}; from the pop-up to the first divert: max "
        f"{max(window, default=0.0):.1f}; the divert's tick {work.get(first or -1, 0.0):.1f}"
    )
    print(f"diverts worked out in a worker from a checkpoint: {ahead}")
    worst = sorted(work, key=work.__getitem__, reverse=True)[:4]
    print("the slowest ticks: " + ", ".join(f"{t} ({work[t]:.1f} ms)" for t in worst))
    print(f"1-minute load before {load:.2f}, after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
