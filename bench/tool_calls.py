"""The tools a model can call, timed: each tool once on the demo as posted (the first
call to need distances compiles them) and on new_target.json flown to tick 3000 (the
remainder cut at the drones' checkpoints), through a ``ToolSession`` as an engine calls it.

    python bench/tool_calls.py

Printed per tool: the role that called it, ok or the error, and the wall time in ms; the
1-minute load beside (the machine is shared: timings move with it).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agents.tools import ToolContext, ToolSession
from agents.words.posted import posted_state
from agents.words.state import from_executive
from executive.traces.sinks import ListSink
from planner.scenario import load_scenario
from tests.flown import flown

CALLS = [
    ("responder", "mission_overview", {}),
    ("responder", "drone_state", {"drone": "D2"}),
    ("responder", "distance", {"origin": "D1", "destination": "T4"}),
    ("responder", "plan_metrics", {}),
    ("allocator", "allocate", {"strategy": "efficient"}),
    ("allocator", "solve", {}),
    ("critic", "what_if", {"changes": [{"kind": "set_fuel", "drone": "D2", "delta": 50}]}),
    ("responder", "solve", {}),  # refused: the responder cannot act
]


async def _time(context: ToolContext) -> None:
    solved: dict | None = None
    for role, name, arguments in CALLS:
        session = ToolSession(role, context, ListSink(), timeout_s=120)
        t0 = time.perf_counter()
        result = await session.run(name, arguments)
        ms = (time.perf_counter() - t0) * 1000
        if name == "solve" and result["ok"]:
            solved = result["data"]["routes"]
        what = "ok" if result["ok"] else f"error: {result['error'][:60]}"
        print(f"  {role:<10} {name:<17} {ms:9.1f} ms  {what}")
    if solved is not None:
        for role, name in (("allocator", "validate"), ("critic", "optimise")):
            session = ToolSession(role, context, ListSink(), timeout_s=120)
            t0 = time.perf_counter()
            result = await session.run(name, {"routes": solved})
            ms = (time.perf_counter() - t0) * 1000
            what = "ok" if result["ok"] else f"error: {result['error'][:60]}"
            print(f"  {role:<10} {name:<17} {ms:9.1f} ms  {what}")


def main() -> None:
    print(f"load (1 min): {os.getloadavg()[0]:.2f}")
    print("demo.json as posted, no plan (from the start):")
    state = posted_state(load_scenario(ROOT / "scenarios" / "demo.json"), None, "bench")
    asyncio.run(_time(ToolContext.for_state(state, iterations=200)))
    print("new_target.json flown to tick 3000 (the remainder, planned on a copy):")
    live = flown("new_target.json", 3000, iterations=300)
    context = ToolContext.for_state(from_executive(live), world=live.sim.world, iterations=200)
    asyncio.run(_time(context))
    print(f"load (1 min): {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
