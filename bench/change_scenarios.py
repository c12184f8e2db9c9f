"""Replanning against flying blind and against an oracle, on the three change scenarios.

    python bench/change_scenarios.py [--seed 0] [--no-agents]

For each of scenarios/popup_sam.json, lost_drone.json and new_target.json, as fast as
possible with the rules engine: points with live replanning, with ``--no-replan`` (the
first plan flown, the safety layer still on: it diverts around a known SAM on the same
targets) and with an oracle plan made once with full knowledge of the timeline. Checks what
replanning must do: lose no drone to a SAM it knew about, run no drone out of fuel, and do
at least as well as --no-replan (strictly better where a replan is needed: a lost drone's
targets, a new target).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rich.console import Console
from rich.table import Table

from executive.loop import Policy
from executive.traces.audit import initial_sams, lost_to_known_sams
from executive.traces.sinks import ListSink
from mission.config import RunConfig
from mission.session import build_executive
from planner.scenario import load_scenario

NAMES = ("popup_sam.json", "lost_drone.json", "new_target.json")
# Where only a replan can do better (a lost drone's targets, a new target): strictly better.
NEEDS_REPLAN = {"lost_drone.json", "new_target.json"}


async def fly(scenario, mode: str, seed: int, agents: bool):
    sink = ListSink()
    config = RunConfig(
        policy=Policy(replan=mode == "replan"), seed=seed, agents=agents, oracle=mode == "oracle"
    )
    executive = build_executive(scenario, config, sink=sink)
    report = await executive.run(None)
    lost_known = lost_to_known_sams(sink.records, initial_sams(scenario))
    return report, lost_known


async def main(seed: int, agents: bool) -> int:
    console = Console(width=170)
    chain = "agents on the rules engine + planner" if agents else "planner alone"
    table = Table(
        title=f"Change scenarios: replanning vs --no-replan vs oracle ({chain}, as fast as possible)"
    )
    for column in (
        "scenario",
        "replan",
        "no-replan",
        "oracle",
        "replans (latency ms)",
        "lost (replan)",
        "lost to a known SAM",
        "out of fuel",
        "safety actions (no-replan)",
        "beats no-replan (= allowed for popup_sam)",
    ):
        table.add_column(column)
    failures = 0
    for name in NAMES:
        scenario = load_scenario(ROOT / "scenarios" / name)
        (rep, lost_known), (blind, _), (orc, _) = [
            await fly(scenario, m, seed, agents) for m in ("replan", "blind", "oracle")
        ]
        fuel_out = [d for d, o in rep.outcome.drones.items() if o.lost_reason == "fuel"]
        points, blind_points = rep.outcome.total_points, blind.outcome.total_points
        beats = points > blind_points if name in NEEDS_REPLAN else points >= blind_points
        ok = beats and not lost_known and not fuel_out
        failures += not ok
        latencies = ", ".join(
            f"{r.trigger.split(':')[0]} {r.latency_ms:.0f}"
            for r in rep.replans
            if r.latency_ms is not None
        )
        table.add_row(
            name,
            f"{rep.outcome.total_points:g}",
            f"{blind.outcome.total_points:g}",
            f"{orc.outcome.total_points:g}",
            latencies,
            ", ".join(f"D{d} ({rep.outcome.drones[d].lost_reason})" for d in rep.outcome.lost)
            or "-",
            ", ".join(lost_known) or "none",
            ", ".join(fuel_out) or "none",
            str(blind.safety_actions),
            "yes" if beats else "NO",
        )
    console.print(table)
    console.print("all checks hold" if not failures else f"{failures} scenario(s) FAIL a check")
    return 1 if failures else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-agents", action="store_true", help="the planner alone")
    args = parser.parse_args()
    sys.exit(asyncio.run(main(args.seed, not args.no_agents)))
