"""What giving a live run's responder its tools costs the tick. The tool context is built on
the event loop between ticks. ``isr run --responder-tools`` builds it from the state snapshot
the question is answered about ("state only"): the responder's tools only read, and the
distances they compile are built in a worker thread. Cutting the remainder from the live
world instead (``build_replan``, what an acting tool would plan on: "with world") is timed
beside it, to show why the live responder does not. On the demo and on swarms flown to a
tick.

    python bench/live_tools.py [--sizes 50x500x50,200x2000x200] [--repeat 5]

Printed per mission: drones, the median and worst wall ms of ``ToolContext.for_state`` with
the world and without it, against the tick period (50 ms at 20 Hz, 1x); the 1-minute load
beside.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agents.tools import ToolContext
from agents.words.command import coordinate_live
from agents.words.state import from_executive
from bench.executive_ticks import swarm_scenario
from executive.loop import Executive, Policy
from executive.loop.options import LoopOptions
from executive.planning.algorithmic import AlgorithmicPlanner
from executive.traces.sinks import NullSink
from planner.scenario import load_scenario


def _flown(scenario, until: int) -> Executive:
    executive = Executive(
        scenario,
        planner=AlgorithmicPlanner(iterations=300),
        sink=NullSink(),
        options=LoopOptions(policy=Policy()),
        coordinate=coordinate_live,
    )

    async def go() -> None:
        await executive.start()
        await executive.run(None, until=until)

    asyncio.run(go())
    return executive


def _ms(build, repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        build()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), max(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="50x500x50,200x2000x200")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--until", type=int, default=600)
    args = parser.parse_args()
    print(f"load (1 min): {os.getloadavg()[0]:.2f}")
    missions = [("demo.json", load_scenario(ROOT / "scenarios" / "demo.json"))]
    for size in filter(None, args.sizes.split(",")):
        d, t, s = (int(x) for x in size.split("x"))
        missions.append((f"swarm {size}", swarm_scenario(d, t, s)))
    print(f"{'mission':<22} {'drones':>6}  {'world cut':>20}  {'state only (used)':>18}")
    for name, scenario in missions:
        executive = _flown(scenario, args.until)
        state = from_executive(executive)
        cut = functools.partial(
            ToolContext.for_state,
            state,
            world=executive.sim.world,
            not_planned=executive.returning,
        )
        with_world = _ms(cut, args.repeat)
        alone = _ms(functools.partial(ToolContext.for_state, state), args.repeat)
        print(
            f"{name:<22} {len(scenario.drone_configs):>6}"
            f"  {with_world[0]:>8.1f} / {with_world[1]:>6.1f} ms"
            f"  {alone[0]:>6.1f} / {alone[1]:>5.1f} ms"
        )
    print("(median / worst of each; one tick is 50 ms at 20 Hz, 1x)")
    print(f"load (1 min): {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
