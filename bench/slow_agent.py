"""A slow agent helps: its late, better allocation is rebased and flown, and points rise.

    python bench/slow_agent.py [--missions 3] [--paced 30] [--seed 0]

Each random mission (4 drones, 50 targets, 3 SAMs; a mission counts when a long search beats
a one-iteration one by at least ``--min-gap`` points at the start, the case where the fast
tier is poor) flies twice, with the fast tier held to a poor plan (a search of one
iteration) and an operator REPLAN 10 s into the mission. The
first ``--paced`` seconds fly at 1x real time, as an operator watching a live replan would
see them; then the rest of the mission runs as fast as possible (the tier's work is done):

* **agents off**: the poor fast plans fly;
* **agents on**: the allocator "model" is a local server speaking the Messages API, reached
  through the real anthropic SDK; it answers 3 to 8 s of wall time later (random per call)
  with the allocation a long search finds on the round's own problem. The executive rebases
  the late proposal onto the state when it arrives, compares it with the plan in force on
  the same cut, and flies it when it is better.

Prints per mission: points without and with the agents, the proposals answered, offered and
applied, each answer's delay and how much mission time had passed since its round's cut
when it was applied.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np
from rich.console import Console
from rich.table import Table

from agents.engines import make_engine
from agents.engines.anthropic_engine import AnthropicEngine
from agents.planning.round import AgentPlanner
from executive.contracts import EventRecord, HumanCommand
from executive.loop import Executive, Policy
from executive.loop.options import LoopOptions
from executive.traces.audit import lost_to_known_sams
from executive.traces.sinks import ListSink
from planner.mission import compile_mission
from planner.planning import plan_mission
from tests.factory import random_scenario
from tests.messages_api import MessagesAPIServer, ToolUse

STRATEGIST = {
    "request_type": "optimize",
    "mode": "optimize_freely",
    "commands_detected": [],
    "constraints_summary": "replan the remainder",
    "needs_allocation": True,
    "needs_routing": True,
    "feasibility": "feasible",
    "rationale": ["improve the allocation"],
}
CRITIC = {"review": "fine", "issues": [], "suggestions": [], "final_verdict": "APPROVED"}
REPLAN_AT_S = 10.0


class Recording:
    """The planner as the executive sees it, keeping each request (the model reads them)."""

    def __init__(self, planner) -> None:
        self.planner = planner
        self.requests = []
        self.lock = threading.Lock()

    async def plan(self, request):
        with self.lock:
            self.requests.append(request)
        return await self.planner.plan(request)


def model(recording: Recording, rng: random.Random, delays: list[float]):
    """The allocator "model": a long search on the round's problem, 3-8 s late."""

    def respond(request: dict):
        tool = (request.get("tool_choice") or {}).get("name")
        if tool == "strategist_decision":
            return ToolUse(STRATEGIST)
        if tool == "critique":
            return ToolUse(CRITIC)
        with recording.lock:
            scenario = recording.requests[-1].scenario
        strong = plan_mission(compile_mission(scenario), seconds=None, iterations=3000, seed=1)
        delay = rng.uniform(3.0, 8.0)
        delays.append(delay)
        return ToolUse(
            {
                "strategy_used": "efficient",
                "assignments": strong.solution.allocation,
                "excluded": [],
                "rationale": {},
                "tradeoffs": "a longer search",
            },
            delay=delay,
        )

    return respond


async def fly(scenario, planner, paced_s: float) -> tuple[object, ListSink]:
    sink = ListSink()
    inner = planner(sink)
    executive = Executive(
        scenario, planner=inner, sink=sink, options=LoopOptions(policy=Policy(batch_iterations=1))
    )
    hz = scenario.sim.tick_hz
    replan, fast = int(REPLAN_AT_S * hz), int(paced_s * hz)

    def on_tick(result) -> None:
        if result.tick == replan:
            executive.command(HumanCommand("REPLAN"))
        if result.tick == fast:
            executive.set_speed(None)  # the rest as fast as possible

    executive.watch(on_tick=on_tick)
    report = await executive.run(1.0)
    engine = getattr(getattr(inner, "planner", inner), "engine", None)
    if hasattr(engine, "aclose"):
        await engine.aclose()  # the SDK's connections, closed on this loop
    return report, sink


def _mission(seed: int):
    return random_scenario(
        np.random.default_rng(seed), n_targets=50, n_sams=3, n_drones=4, fuel=(120, 200)
    )


def poor_fast_tier(first: int, count: int, gap: float) -> list[int]:
    """The first ``count`` seeds from ``first`` whose one-iteration plan a long search beats
    by ``gap`` points or more."""
    seeds: list[int] = []
    seed = first
    while len(seeds) < count:
        mission = compile_mission(_mission(seed))
        weak = plan_mission(mission, seconds=None, iterations=1, seed=0).solution
        strong = plan_mission(mission, seconds=None, iterations=3000, seed=1).solution
        if strong.total_points - weak.total_points >= gap:
            seeds.append(seed)
        seed += 1
    return seeds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--missions", type=int, default=3)
    parser.add_argument("--paced", type=float, default=30.0, help="seconds flown at 1x first")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-gap", type=float, default=10.0)
    args = parser.parse_args()
    console = Console(width=160)
    table = Table(
        title=f"A slow agent helps: {args.missions} missions (a long search beats the fast tier by"
        f" {args.min_gap:g}+ points), {args.paced:g} s at 1x then as fast as possible, the model"
        " answering in 3-8 s"
    )
    for column in (
        "mission",
        "points, agents off",
        "points, agents on",
        "answered / offered / applied",
        "answer delays (s)",
        "applied after its round's cut (mission s)",
        "lost to a known SAM",
    ):
        table.add_column(column)
    gains = []
    for seed in poor_fast_tier(args.seed, args.missions, args.min_gap):
        scenario = _mission(seed)
        rng = random.Random(seed)
        delays: list[float] = []
        with MessagesAPIServer() as api:
            recording: list[Recording] = []

            def agents_on(sink, api=api, recording=recording, rng=rng, delays=delays):
                engine = AnthropicEngine(api_key="bench", base_url=api.url, model="bench-model")
                planner = Recording(AgentPlanner(engine, sink, iterations=1, agent_timeout_s=30))
                recording.append(planner)
                api.responder = model(planner, rng, delays)
                return planner

            on, on_sink = asyncio.run(fly(scenario, agents_on, args.paced))
        off, _ = asyncio.run(
            fly(
                scenario,
                lambda sink: AgentPlanner(
                    make_engine("rules"), sink, iterations=1, use_agents=False
                ),
                args.paced,
            )
        )
        events = [r for r in on_sink.records if isinstance(r, EventRecord)]
        answered = [e for e in events if e.kind == "AGENTS_DONE"]
        applied = [e for e in events if e.kind == "AGENT_PROPOSAL" and e.payload["applied"]]
        cuts = {
            e.payload["round_id"]: e.payload["cut_tick"]
            for e in events
            if e.kind == "CUT_AND_FREEZE"
        }
        after = [
            (e.tick - cuts.get(e.payload["round_id"], e.tick)) / scenario.sim.tick_hz
            for e in applied
        ]
        gains.append(on.outcome.total_points - off.outcome.total_points)
        table.add_row(
            str(seed),
            f"{off.outcome.total_points:g}",
            f"{on.outcome.total_points:g}",
            f"{len(answered)} / {sum(e.payload['offered'] for e in answered)} / {len(applied)}",
            ", ".join(f"{d:.1f}" for d in delays) or "-",
            ", ".join(f"{a:.0f}" for a in after) or "-",
            ", ".join(lost_to_known_sams(on_sink.records)) or "none",
        )
    console.print(table)
    console.print(
        f"points gained with the slow agent: mean {statistics.fmean(gains):+.1f}, "
        f"min {min(gains):+g}, max {max(gains):+g}"
    )


if __name__ == "__main__":
    main()
