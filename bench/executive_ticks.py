"""The tick is never blocked: a real-time run at 20 Hz while agents and the planner work.

    python bench/executive_ticks.py [--seconds 120] [--engine-delay 8.0] [--plan-seconds 0.5]
                                    [--replan-every 20] [--scenario large|FILE]

The executive flies the scenario at 1x real time. Every ``--replan-every`` seconds the
operator asks for a replan (a REPLAN command, as the dashboard sends it), so planning rounds
run all along: each round's team search (the fast tier) takes about ``--plan-seconds`` in a
worker thread and commits; every agent call (the slow tier: strategist, allocator, critic)
goes to an engine that answers after ``--engine-delay`` seconds, within the agents' own
timeout, so their proposals arrive long after the fast plan flies, are rebased onto the
state then and applied only if they beat the plan in force.

Prints: ticks, overruns (ticks started more than one period late; target 0), tick start
lateness p50 / p99 / max (target p99 under 5 ms), the rounds and their latency, and the
agents' proposals: answered, offered (better than the round's baseline), applied (better
than the plan in force after the rebase).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from agents.engines.base import AgentCall, EngineReply
from executive.contracts import EventRecord, HumanCommand
from executive.loop import Executive
from executive.loop.options import LoopOptions
from executive.loop.policy import Policy
from executive.traces.sinks import ListSink
from planner.mission import compile_mission
from planner.planning import plan_mission
from planner.scenario import load_scenario


class SlowEngine:
    """An engine whose every call takes ``delay`` seconds (an LLM on a bad day). Its
    allocator answers the rules allocation, or with ``problem`` (the round's remainder, as
    the model would read it from the prompt) the allocation a long search finds there."""

    name = "slow"
    model = "slow-bench"

    def __init__(self, delay: float, problem: Callable[[], Any] | None = None) -> None:
        self.delay = delay
        self.problem = problem
        self.calls = 0

    async def complete(self, call: AgentCall, *, timeout_s: float) -> EngineReply:
        self.calls += 1
        started = time.perf_counter()
        answer = dict(call.deterministic)
        scenario = self.problem() if self.problem is not None else None
        if call.agent == "allocator" and scenario is not None:
            strong = await asyncio.to_thread(
                lambda: plan_mission(compile_mission(scenario), seconds=None, iterations=3000)
            )
            answer["assignments"] = strong.solution.allocation
        await asyncio.sleep(max(0.0, self.delay - (time.perf_counter() - started)))
        return EngineReply(answer, "[]", self.model)


class Recording:
    """The planner, keeping the last request (what a model would read in its prompt)."""

    def __init__(self, planner) -> None:
        self.planner = planner
        self.last = None

    async def plan(self, request):
        self.last = request
        return await self.planner.plan(request)


def large_scenario(seed: int = 0):
    """5 drones, 50 targets, 10 SAMs on 100 x 100 km: big enough that the search uses its
    whole budget (about 0.5 s a round)."""
    import numpy as np

    from planner.scenario import parse_scenario

    rng = np.random.default_rng(seed)
    sams = []
    while len(sams) < 10:
        x, y, r = rng.uniform(15, 85), rng.uniform(15, 85), rng.uniform(4, 8)
        if all((x - a) ** 2 + (y - b) ** 2 > (r + c + 2) ** 2 for a, b, c in sams):
            sams.append((x, y, r))
    airports = [(5.0, 5.0), (95.0, 5.0), (50.0, 95.0)]

    def free(x, y):
        return all((x - a) ** 2 + (y - b) ** 2 > (c + 1.0) ** 2 for a, b, c in sams)

    targets = []
    while len(targets) < 50:
        x, y = rng.uniform(2, 98, 2)
        if free(x, y):
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
            "fuelBudget": 160.0,
            "home_airport": f"A{k % 3 + 1}",
            "accessibleTargets": ["A", "B", "C"] if k < 3 else ["A", "B"],
        }
        for k in range(5)
    }
    return parse_scenario(
        {
            "environment": {
                "airports": [
                    {"id": f"A{i + 1}", "x": x, "y": y} for i, (x, y) in enumerate(airports)
                ],
                "targets": targets,
                "sams": [
                    {"id": f"S{i + 1}", "pos": [x, y], "range": r}
                    for i, (x, y, r) in enumerate(sams)
                ],
            },
            "drone_configs": drones,
            "sim": {"speed": 0.1},
        },
        "<bench large scenario>",
    )


def make_planner(engine, sink, plan_seconds: float):
    try:
        from agents.planning.round import AgentPlanner
    except ImportError:  # the agent round is optional for this figure
        from executive.planning.algorithmic import AlgorithmicPlanner

        return AlgorithmicPlanner(), "algorithmic"
    return AgentPlanner(engine, sink), "agents (slow tier) + planner (fast tier)"


async def bench(args) -> None:
    scenario = large_scenario() if args.scenario == "large" else load_scenario(args.scenario)
    sink = ListSink()
    recording: list[Recording] = []
    engine = SlowEngine(
        args.engine_delay,
        (lambda: recording[0].last.scenario if recording and recording[0].last else None)
        if args.good_model
        else None,
    )
    inner, kind = make_planner(engine, sink, args.plan_seconds)
    planner = Recording(inner)
    recording.append(planner)
    kind += ", the allocator answering a long search's allocation" if args.good_model else ""
    policy = Policy(planning_deadline_s=args.plan_seconds, telemetry_every=1)
    executive = Executive(scenario, planner=planner, sink=sink, options=LoopOptions(policy=policy))
    ticks_total = int(args.seconds * scenario.sim.tick_hz)
    console = Console()
    console.print(
        f"{args.seconds:g} s at 1x real time, {scenario.sim.tick_hz:g} Hz; planner:"
        f" {kind}; engine delay {args.engine_delay:g} s; plan budget"
        f" {args.plan_seconds:g} s; REPLAN every {args.replan_every:g} s"
    )
    every = int(args.replan_every * scenario.sim.tick_hz)

    with Progress(
        TextColumn("ticks"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=console,
    ) as progress:
        task = progress.add_task("run", total=ticks_total)

        def publish(topic, payload):
            if topic != "telemetry":
                return
            tick = payload["tick"]
            if tick % 20 == 0:
                progress.update(task, completed=tick)
            if tick > 0 and tick % every == 0:
                executive.command(HumanCommand("REPLAN"))

        executive.watch(publish=publish)
        report = await executive.run(1.0, until=ticks_total)
    jitter = report.jitter_ms
    rounds = [r for r in report.replans if r.latency_ms is not None]
    console.print(
        f"ticks: {report.ticks}   overruns: {report.overruns}   agent calls: {engine.calls}"
    )
    console.print(
        f"tick start lateness ms: p50 {jitter['p50']:.3f}  p99 {jitter['p99']:.3f}"
        f"  max {jitter['max']:.3f}  mean {jitter['mean']:.3f}"
    )
    if rounds:
        lat = sorted(r.latency_ms for r in rounds)
        console.print(
            f"planning rounds: {len(rounds)} ({sum(r.status == 'committed' for r in rounds)}"
            f" committed); latency ms median {statistics.median(lat):.0f}, max {lat[-1]:.0f}"
        )
        events = [r for r in sink.records if isinstance(r, EventRecord)]
        done = [e for e in events if e.kind == "AGENTS_DONE"]
        decided = [e for e in events if e.kind == "AGENT_PROPOSAL"]
        console.print(
            f"agent proposals: {len(done)} answered, {sum(e.payload['offered'] for e in done)}"
            f" offered, {sum(e.payload['applied'] for e in decided)} applied after the rebase"
        )
        reasons = {reason for r in rounds for reason in r.reasons}
        console.print("reasons seen: " + "; ".join(sorted(reasons))[:400])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--engine-delay", type=float, default=8.0)
    parser.add_argument(
        "--good-model",
        action="store_true",
        help="the allocator answers a long search's allocation (else the rules answer)",
    )
    parser.add_argument("--plan-seconds", type=float, default=0.5)
    parser.add_argument("--replan-every", type=float, default=20.0)
    parser.add_argument(
        "--scenario",
        default="large",
        help="'large' (generated: 5 drones, 50 targets, 10 SAMs) or a file",
    )
    asyncio.run(bench(parser.parse_args()))


if __name__ == "__main__":
    started = time.perf_counter()
    main()
