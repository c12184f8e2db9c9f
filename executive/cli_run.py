"""``isr run``: fly a mission end to end with live replanning, traced to a database.

Registered by ``executive.cli``. Same conventions as the rest of the CLI: bad input is one
line per problem on stderr, exit code 2, never a traceback. Prints the outcome (points,
per-drone fuel and status, losses, replans with their trigger and latency, the run id), or
with ``--json`` one JSON object. Interrupted (Ctrl-C): the outcome so far, exit 130.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

from executive.cli_sim import _fail, _parse_speed
from planner.model import drone_label
from planner.scenario_io import ScenarioError, load_scenario

__all__ = ["run"]

ENGINES = ("rules", "anthropic", "replay")


def build_planner(engine: str, *, sink, seed: int, iterations: int | None, use_agents: bool,
                  memories=lambda: (), model: str | None = None, records=None):
    """The planner behind a run: agents on an engine next to the algorithmic baseline, or
    the algorithmic planner alone."""
    from executive.algorithmic_planner import AlgorithmicPlanner

    if not use_agents:
        return AlgorithmicPlanner(seed=seed, iterations=iterations)
    try:
        from executive.engines import make_engine
        from executive.planning_round import AgentPlanner
    except ImportError as exc:  # the agent chain is not built yet (issue 5)
        from executive.errors import ExecutiveError

        raise ExecutiveError(f"the agent chain is not available yet ({exc.name}): use --no-agents") from None

    return AgentPlanner(make_engine(engine, model=model, records=records), sink, seed=seed,
                        iterations=iterations, memories=memories)


def run(
    file: Annotated[Path, typer.Argument(help="scenario JSON file")],
    headless: Annotated[bool, typer.Option(help="no dashboard: run and print the outcome")] = False,
    speed: Annotated[str, typer.Option(help="'max' (as fast as possible) or K times real time")] = "max",
    engine: Annotated[str, typer.Option(help="agent engine: rules, anthropic or replay")] = "rules",
    replay_run: Annotated[Optional[str], typer.Option("--replay-run", help="with --engine replay: the run whose agent answers to replay")] = None,
    model: Annotated[Optional[str], typer.Option(help="LLM model (anthropic engine)")] = None,
    no_replan: Annotated[bool, typer.Option("--no-replan", help="fly the first plan blindly")] = False,
    oracle: Annotated[bool, typer.Option(help="plan once knowing the whole timeline (comparison)")] = False,
    review: Annotated[bool, typer.Option(help="drafts wait for ACCEPT/REJECT instead of committing")] = False,
    agents: Annotated[bool, typer.Option(help="run the agent chain (strategist, allocator, critic) next to the planner")] = False,
    db: Annotated[Optional[str], typer.Option(help="SQLAlchemy URL of the trace store (default sqlite:///runs/isr.db); 'none' for no traces")] = None,
    seed: Annotated[int, typer.Option(help="random seed of the planner")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="print the outcome as one JSON object")] = False,
) -> None:
    """Run a mission end to end with live replanning on the timeline's events."""
    from executive.errors import ExecutiveError
    from executive.loop import Executive
    from executive.policy import Policy

    pace = _parse_speed(speed)
    if engine not in ENGINES:
        raise _fail(f"--engine {engine!r}: choose one of {', '.join(ENGINES)}")
    if engine == "replay" and not replay_run:
        raise _fail("--engine replay needs --replay-run RUN_ID (the run whose answers to replay)")
    if no_replan and oracle:
        raise _fail("--no-replan and --oracle are two different comparisons: give one")
    try:
        scenario = load_scenario(file)
    except ScenarioError as exc:
        raise _fail("\n".join(f"{exc.source}: {p}" for p in exc.problems)) from None
    if not headless:
        Console(stderr=True).print("the dashboard is not built yet: running headless",
                                   highlight=False)
    url = _trace_url(db)
    policy = Policy(replan=not (no_replan or oracle), commit="review" if review else "auto")
    iterations = policy.batch_iterations if pace is None else None
    try:
        report = asyncio.run(_run(scenario, url=url, policy=policy, engine=engine, model=model,
                                  replay_run=replay_run, seed=seed, iterations=iterations,
                                  use_agents=agents, oracle=oracle, speed=pace,
                                  config={"engine": engine, "model": model, "speed": speed,
                                          "oracle": oracle, "file": str(file)}))
    except ExecutiveError as exc:
        raise _fail(str(exc), 1) from None
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    out = report.to_dict()
    if as_json:
        sys.stdout.write(json.dumps(out) + "\n")
        return
    _print(file, out)


def _trace_url(db: str | None) -> str | None:
    """The trace store's URL, or None for no traces."""
    try:
        from executive.traces import default_url
    except ImportError:  # the SQLAlchemy trace store is not built yet (issue 5)
        if db is not None and db.lower() != "none":
            raise _fail(f"--db {db!r}: the trace store is not built yet; runs are not traced")
        return None
    if db is not None and db.lower() == "none":
        return None
    return db or default_url()


async def _run(scenario, *, url, policy, engine, model, replay_run, seed, iterations,
               use_agents, oracle, speed, config):
    from executive.loop import Executive
    from executive.sinks import NullSink

    writer = None
    records = None
    if url is not None:
        from executive.traces import TraceReader, TraceWriter

        writer = TraceWriter(url)
        writer.start()
        if replay_run:
            reader = TraceReader(url)
            records = reader.agent_runs(reader.run(replay_run)["run_id"])
    sink = writer or NullSink()
    memories = _memories(url)
    planner = build_planner(engine, sink=sink, seed=seed, iterations=iterations,
                            use_agents=use_agents, memories=memories, model=model,
                            records=records)
    initial = initial_mission = None
    if oracle:
        from executive.oracle import oracle_plan

        # Planned on the whole timeline, flown in the scripted world as it unfolds.
        initial, initial_mission = oracle_plan(scenario, iterations=iterations or 3000,
                                               seed=seed)
    executive = Executive(scenario, planner=planner, sink=sink, policy=policy, seed=seed,
                          initial_plan=initial, initial_mission=initial_mission, config=config)
    report = None
    try:
        report = await executive.run(speed)
    finally:
        if writer is not None:
            import time

            from executive.contracts import RunEndRecord

            writer.emit(RunEndRecord(executive.run_id, time.time(),
                                     "ended" if report else "interrupted",
                                     report.to_dict() if report else {}))
            await asyncio.to_thread(writer.close)
    return report


def _memories(url):
    if url is None:
        return lambda: ()
    try:
        from executive.memory import MemoryStore
    except ImportError:  # pragma: no cover
        return lambda: ()
    store = MemoryStore(url)
    return store.active


def _print(file: Path, out: dict) -> None:
    console = Console()
    table = Table(title=f"{file.name} — run {out['run_id']}: {out['total_points']:g} points")
    for column in ("Drone", "Status", "Fuel left", "Points", "Collected"):
        table.add_column(column)
    for drone_id, d in out["drones"].items():
        status = d["status"] + (f" ({d['lost_reason']})" if d.get("lost_reason") else "")
        table.add_row(drone_label(drone_id), status, f"{d['fuel_left']:.1f}", f"{d['points']:g}",
                      ", ".join(d["collected"]) or "-")
    console.print(table)
    for r in out["replans"]:
        latency = f"{r['latency_ms']:.0f} ms" if r["latency_ms"] is not None else "-"
        console.print(f"replan at tick {r['asked_tick']} ({r['trigger']}): {r['status']},"
                      f" cut at tick {r['cut_tick']}, latency {latency}", highlight=False)
    if out["lost"]:
        console.print(f"lost: {', '.join(drone_label(d) for d in out['lost'])}", highlight=False)
    console.print(f"simulated {out['sim_seconds']:.0f} s in {out['wall_seconds']:.1f} s wall;"
                  f" run id {out['run_id']}", highlight=False)
