"""The tick is never blocked: a real-time run at 20 Hz while agents and the planner work.

    python bench/executive_ticks.py [--seconds 120] [--engine-delay 3.0] [--plan-seconds 0.5]
                                    [--replan-every 10] [--scenario large|FILE]

The executive flies the scenario at 1x real time. Every ``--replan-every`` seconds the
operator asks for a replan (a REPLAN command, as the dashboard sends it), so planning rounds
run all along: each round's team search takes about ``--plan-seconds`` in a worker thread,
and every agent call goes to an engine that answers after ``--engine-delay`` seconds (longer
than the round's deadline, so agents time out and the baseline stands, as it must).

Prints: ticks, overruns (ticks started more than one period late; target 0), tick start
lateness p50 / p99 / max (target p99 under 5 ms), the rounds and their latency.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn  # noqa: E402

from executive.contracts import HumanCommand  # noqa: E402
from executive.engines.base import AgentCall, EngineReply  # noqa: E402
from executive.loop import Executive  # noqa: E402
from executive.policy import Policy  # noqa: E402
from executive.sinks import ListSink  # noqa: E402
from planner.scenario_io import load_scenario  # noqa: E402


class SlowEngine:
    """An engine whose every call takes ``delay`` seconds (an LLM on a bad day)."""

    name = "slow"
    model = "slow-bench"

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.calls = 0

    async def complete(self, call: AgentCall, *, timeout_s: float) -> EngineReply:
        self.calls += 1
        await asyncio.sleep(self.delay)
        return EngineReply(dict(call.deterministic), "[]", self.model)


def large_scenario(seed: int = 0):
    """5 drones, 50 targets, 10 SAMs on 100 x 100 km: big enough that the search uses its
    whole budget (about 0.5 s a round)."""
    import numpy as np

    from planner.scenario_io import parse_scenario

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
            targets.append({"id": f"T{len(targets) + 1}", "x": float(x), "y": float(y),
                            "priority": int(rng.integers(1, 11)), "type": "ABC"[len(targets) % 3]})
    drones = {str(k + 1): {"fuelBudget": 160.0, "home_airport": f"A{k % 3 + 1}",
                           "accessibleTargets": ["A", "B", "C"] if k < 3 else ["A", "B"]}
              for k in range(5)}
    return parse_scenario({
        "environment": {
            "airports": [{"id": f"A{i + 1}", "x": x, "y": y} for i, (x, y) in enumerate(airports)],
            "targets": targets,
            "sams": [{"id": f"S{i + 1}", "pos": [x, y], "range": r} for i, (x, y, r) in enumerate(sams)],
        },
        "drone_configs": drones,
        "sim": {"speed": 0.1},
    }, "<bench large scenario>")


def make_planner(engine, sink, plan_seconds: float):
    try:
        from executive.planning_round import AgentPlanner
    except ImportError:  # the agent round is optional for this figure
        from executive.algorithmic_planner import AlgorithmicPlanner

        return AlgorithmicPlanner(), "algorithmic"
    return AgentPlanner(engine, sink, agent_timeout_s=plan_seconds), "agents + planner"


async def bench(args) -> None:
    scenario = large_scenario() if args.scenario == "large" else load_scenario(args.scenario)
    sink = ListSink()
    engine = SlowEngine(args.engine_delay)
    planner, kind = make_planner(engine, sink, args.plan_seconds)
    policy = Policy(planning_deadline_s=args.plan_seconds, telemetry_every=1)
    executive = Executive(scenario, planner=planner, sink=sink, policy=policy)
    ticks_total = int(args.seconds * scenario.sim.tick_hz)
    console = Console()
    console.print(f"{args.seconds:g} s at 1x real time, {scenario.sim.tick_hz:g} Hz; planner:"
                  f" {kind}; engine delay {args.engine_delay:g} s; plan budget"
                  f" {args.plan_seconds:g} s; REPLAN every {args.replan_every:g} s")
    every = int(args.replan_every * scenario.sim.tick_hz)

    with Progress(TextColumn("ticks"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=console) as progress:
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
    late = [x * 1000 for x in executive._lateness]
    late.sort()

    def pct(q):
        return late[min(len(late) - 1, int(q * len(late)))] if late else 0.0

    rounds = [r for r in report.replans if r.latency_ms is not None]
    console.print(f"ticks: {report.ticks}   overruns: {report.overruns}   agent calls: {engine.calls}")
    console.print(f"tick start lateness ms: p50 {pct(0.5):.3f}  p99 {pct(0.99):.3f}"
                  f"  max {late[-1] if late else 0:.3f}  mean {statistics.fmean(late):.3f}")
    if rounds:
        lat = sorted(r.latency_ms for r in rounds)
        console.print(f"planning rounds: {len(rounds)} ({sum(r.status == 'committed' for r in rounds)}"
                      f" committed); latency ms median {statistics.median(lat):.0f}, max {lat[-1]:.0f}")
        reasons = {reason for r in rounds for reason in r.reasons}
        console.print("reasons seen: " + "; ".join(sorted(reasons))[:400])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--engine-delay", type=float, default=3.0)
    parser.add_argument("--plan-seconds", type=float, default=0.5)
    parser.add_argument("--replan-every", type=float, default=10.0)
    parser.add_argument("--scenario", default="large",
                        help="'large' (generated: 5 drones, 50 targets, 10 SAMs) or a file")
    asyncio.run(bench(parser.parse_args()))


if __name__ == "__main__":
    started = time.perf_counter()
    main()
