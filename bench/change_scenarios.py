"""Replanning against flying blind and against an oracle, on the three change scenarios.

    python bench/change_scenarios.py [--seed 0] [--no-agents]

For each of scenarios/popup_sam.json, lost_drone.json and new_target.json, as fast as
possible with the rules engine: points with live replanning, with ``--no-replan`` (the
first plan flown blindly) and with an oracle plan made once with full knowledge of the
timeline. Checks what replanning must do: lose no drone to a SAM it knew about, run no drone
out of fuel, and beat --no-replan.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from executive.cli_run import build_planner  # noqa: E402
from executive.contracts import EventRecord  # noqa: E402
from executive.loop import Executive  # noqa: E402
from executive.oracle import oracle_plan  # noqa: E402
from executive.policy import Policy  # noqa: E402
from executive.sinks import ListSink  # noqa: E402
from planner.scenario_io import load_scenario  # noqa: E402

NAMES = ("popup_sam.json", "lost_drone.json", "new_target.json")


async def fly(scenario, mode: str, seed: int, agents: bool):
    sink = ListSink()
    policy = Policy(replan=mode == "replan")
    planner = build_planner("rules", sink=sink, seed=seed, iterations=policy.batch_iterations,
                            use_agents=agents)
    initial = mission = None
    if mode == "oracle":
        initial, mission = oracle_plan(scenario, iterations=policy.batch_iterations, seed=seed)
    executive = Executive(scenario, planner=planner, sink=sink, policy=policy, seed=seed,
                          initial_plan=initial, initial_mission=mission)
    report = await executive.run(None)
    known_sams: dict[str, int] = {}
    for r in sink.of(EventRecord):  # when each SAM became known to the executive
        if r.kind == "sam_detected":
            known_sams.setdefault(r.payload["sam"], r.tick)
        if r.kind == "edit_applied" and r.payload["edit"]["op"] in ("add_sam", "reveal_sam") \
                and not r.payload["edit"].get("hidden"):
            known_sams.setdefault(r.payload["edit"]["id"], r.tick)
    lost_known = [r.payload["drone"] for r in sink.of(EventRecord)
                  if r.kind == "drone_lost" and r.payload["reason"] == "sam"
                  and known_sams.get(r.payload["sam"], 10**12) < r.tick]
    return report, lost_known


async def main(seed: int, agents: bool) -> int:
    console = Console(width=170)
    chain = "agents on the rules engine + planner" if agents else "planner alone"
    table = Table(title=f"Change scenarios: replanning vs --no-replan vs oracle ({chain}, as fast as possible)")
    for column in ("scenario", "replan", "no-replan", "oracle", "replans (latency ms)",
                   "lost (replan)", "lost to a known SAM", "out of fuel", "beats no-replan"):
        table.add_column(column)
    failures = 0
    for name in NAMES:
        scenario = load_scenario(ROOT / "scenarios" / name)
        (rep, lost_known), (blind, _), (orc, _) = [await fly(scenario, m, seed, agents)
                                                   for m in ("replan", "blind", "oracle")]
        fuel_out = [d for d, o in rep.outcome.drones.items() if o.lost_reason == "fuel"]
        beats = rep.outcome.total_points > blind.outcome.total_points
        ok = beats and not lost_known and not fuel_out
        failures += not ok
        latencies = ", ".join(f"{r.trigger.split(':')[0]} {r.latency_ms:.0f}"
                              for r in rep.replans if r.latency_ms is not None)
        table.add_row(name, f"{rep.outcome.total_points:g}", f"{blind.outcome.total_points:g}",
                      f"{orc.outcome.total_points:g}", latencies,
                      ", ".join(f"D{d} ({rep.outcome.drones[d].lost_reason})" for d in rep.outcome.lost) or "-",
                      ", ".join(lost_known) or "none", ", ".join(fuel_out) or "none",
                      "yes" if beats else "NO")
    console.print(table)
    console.print("all checks hold" if not failures else f"{failures} scenario(s) FAIL a check")
    return 1 if failures else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-agents", action="store_true", help="the planner alone")
    args = parser.parse_args()
    sys.exit(asyncio.run(main(args.seed, not args.no_agents)))
