"""The tick while a paused swarm nears its fuel limits: the fuel check's ways home.

    python bench/paused_fuel.py [--size 1000x5000x500] [--seconds 20] [--speed 1]
                                [--airports 1000] [--no-storm]

A paced run (1x by default, 20 Hz) of a generated swarm (drones x targets x SAMs, the world
of ``bench/executive_ticks.py --sizes``). At 2 s the operator pauses: every flying drone
holds. At 4 s (``--storm``) the fuel of every holding drone falls to 1.8 times its
straight way to the nearest airport with the reserve (set_fuel edits, one per drone, on one
tick): every plan in force stops fitting, every drone is near critical, and every fuel
check must know each one's way home round the SAMs (0.5-1 ms each at 500 SAMs). Without
``--storm`` the pause alone is flown: the drones' plans still fit. ``--airports N`` builds
the world with N airports, the drones spread over them: with one per drone every drone has
targets near home and the plan flies most of them (~780 of 1,000; the default world, at
most 50 airports, flies 154).

Printed: the ticks' work (inside ``tick_once``) and start lateness, the worst ticks, the
fuel check's ways home (searched, answered by a bound or a clear straight way without a
search, left to a later tick past the check's budget), the drones sent home, fuel-outs, and
the 1-minute load.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "bench"))

from executive_ticks import swarm_scenario

from executive.contracts import EventRecord, HumanCommand
from executive.loop import Executive, Policy
from executive.loop.options import LoopOptions
from executive.planning.algorithmic import AlgorithmicPlanner
from executive.traces.sinks import ListSink
from planner.edits import SetFuel
from sim import TickResult

PAUSE_T = 2.0  # s
STORM_T = 4.0  # s


def storm(executive: Executive) -> int:
    """Every holding drone's fuel down to 1.8x its straight way home with the reserve.

    The edits' own making is the bench's, on the loop's thread: the nearest airports in one
    array operation (as Python loops over 1,000 airports x ~780 drones they made the storm's
    tick 120 ms late, which no executive code caused)."""
    world = executive.sim.world
    airports = world.known_environment.airports
    held = [d for d in executive.scenario.drone_configs if world.status(d) == "holding"]
    if not held:
        return 0
    at = np.array([world.position(d)[:2] for d in held], dtype=np.float64).reshape(-1, 2)
    ports = np.array([(a.x, a.y) for a in airports], dtype=np.float64).reshape(-1, 2)
    nearest = np.hypot(at[:, None, 0] - ports[None, :, 0], at[:, None, 1] - ports[None, :, 1]).min(
        axis=1
    )
    for drone_id, near in zip(held, nearest.tolist(), strict=True):
        fuel = 1.8 * (near + executive.reserve_for(drone_id, near)) + 1.0
        executive.edit(SetFuel(drone=drone_id, fuel=round(fuel, 3)))
    return len(held)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="1000x5000x500", help="drones x targets x SAMs")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--speed", type=float, default=1.0)
    parser.add_argument("--no-storm", dest="storm", action="store_false")
    parser.add_argument(
        "--airports",
        type=int,
        default=None,
        help="airports in the world (default: at most 50); one per drone flies them all",
    )
    args = parser.parse_args()
    drones, targets, sams = (int(v) for v in args.size.split("x"))
    scenario = swarm_scenario(drones, targets, sams, airports=args.airports)
    hz = scenario.sim.tick_hz
    sink = ListSink()
    executive = Executive(
        scenario, planner=AlgorithmicPlanner(), sink=sink, options=LoopOptions(policy=Policy())
    )
    work: dict[int, float] = {}
    inner = executive.tick_once
    stormed: list[int] = []

    def timed() -> TickResult:
        tick = executive.sim.tick if executive.started else 0
        if tick == round(PAUSE_T * hz):
            executive.command(HumanCommand("PAUSE"))
        if args.storm and tick == round(STORM_T * hz):
            stormed.append(storm(executive))
        started = time.perf_counter()
        result = inner()
        work[tick] = time.perf_counter() - started
        return result

    executive.tick_once = timed  # type: ignore[method-assign]
    load = os.getloadavg()[0]
    report = asyncio.run(executive.run(args.speed, until=round(args.seconds * hz)))
    events = [r for r in sink.records if isinstance(r, EventRecord)]
    kinds = [e.kind for e in events]
    ms = sorted(1000 * w for w in work.values())
    jitter = report.jitter_ms
    homes = getattr(executive.safety, "homes", None)
    world = executive.sim.world
    dry = [d for d in scenario.drone_configs if world.fuel(d) <= 0.0]
    holding = sum(world.status(d) == "holding" for d in scenario.drone_configs)
    print(
        f"{args.size} (drones x targets x SAMs), {args.seconds:g} s at {args.speed:g}x; pause at"
        f" {PAUSE_T:g} s"
        + (f", fuel of {stormed[0]} holding drones cut at {STORM_T:g} s" if stormed else "")
        + f"; holding at the end {holding}"
    )
    print(
        f"  ticks {report.ticks}, overruns {report.overruns}; lateness ms p50"
        f" {jitter['p50']:.2f} p99 {jitter['p99']:.2f} max {jitter['max']:.1f}"
    )
    print(
        f"  tick work ms: p50 {statistics.median(ms):.2f} p99 {ms[int(0.99 * (len(ms) - 1))]:.2f}"
        f" max {ms[-1]:.1f}; the slowest ticks: "
        + ", ".join(
            f"{t} ({1000 * w:.1f} ms)" for t, w in sorted(work.items(), key=lambda kv: -kv[1])[:5]
        )
    )
    if homes is not None:
        print(
            f"  fuel check ways home: searched {homes.searched}, answered by a bound"
            f" {homes.bounded}, by a clear straight way {getattr(homes, 'straight', 0)},"
            f" left to a later tick {homes.waited}"
        )
    else:
        print(
            "  fuel check ways home: no bounds at this commit (every near-critical check searches)"
        )
    print(
        f"  sent home by the fuel check {kinds.count('RETURN_TO_BASE')}, no safe option"
        f" {kinds.count('NO_SAFE_OPTION')}, plans said infeasible {kinds.count('PLAN_INFEASIBLE')};"
        f" out of fuel {len(dry)}; load {load:.2f} -> {os.getloadavg()[0]:.2f}"
    )


if __name__ == "__main__":
    main()
