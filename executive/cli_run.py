"""``isr run``: fly a mission end to end with live replanning, traced to a database.

Registered by ``executive.cli``. Same conventions as the rest of the CLI: bad input is one
line per problem on stderr, exit code 2, never a traceback. Prints the outcome (points,
per-drone fuel and status, losses, replans with their trigger and latency, the run id), or
with ``--json`` one JSON object. Interrupted (Ctrl-C): the outcome so far, exit 130.

Without ``--headless`` the run is live: it is paced (10x real time unless ``--speed`` says
otherwise), its state goes on a bus (in-process, or MQTT with ``--mqtt``) and a live view
serves it — the dashboard, which registers itself here with ``register_live_view`` (the
executive never imports the dashboard). The view keeps serving after the mission ends, until
Ctrl-C.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import sys
from pathlib import Path
from typing import Annotated, Awaitable, Callable, Optional, Protocol

import typer
from rich.console import Console
from rich.table import Table

from executive.cli_sim import _fail, _parse_speed
from planner.model import drone_label
from planner.scenario_io import ScenarioError, load_scenario

__all__ = ["LiveView", "register_live_view", "run"]

ENGINES = ("rules", "anthropic", "replay")
LIVE_SPEED = "10"  # a comfortable pace to watch: the demo flies in about 3 minutes
TOKEN_ENV = "ISR_TOKEN"


class LiveView(Protocol):
    url: str

    async def stop(self) -> None: ...


LiveViewFactory = Callable[..., Awaitable[LiveView]]
_live_view: LiveViewFactory | None = None


def register_live_view(factory: LiveViewFactory) -> None:
    """Plug a live view in: ``factory(bus, *, host, port, token, trace_url) -> LiveView``."""
    global _live_view
    _live_view = factory


def build_planner(engine: str, *, sink, seed: int, iterations: int | None, use_agents: bool,
                  memories=lambda: (), model: str | None = None, records=None):
    """The planner behind a run: agents on an engine next to the algorithmic baseline, or
    the baseline alone (``use_agents=False``)."""
    from executive.engines import make_engine
    from executive.planning_round import AgentPlanner

    # Agents off: the same round without the chain, so operator constraints still hold.
    return AgentPlanner(make_engine(engine if use_agents else "rules", model=model,
                                    records=records), sink, seed=seed, iterations=iterations,
                        memories=memories, use_agents=use_agents)


def run(
    file: Annotated[Path, typer.Argument(help="scenario JSON file")],
    headless: Annotated[bool, typer.Option(help="no dashboard: run and print the outcome")] = False,
    speed: Annotated[Optional[str], typer.Option(help="'max' (as fast as possible) or K times real time [default: max headless, 10 live]")] = None,
    engine: Annotated[str, typer.Option(help="agent engine: rules, anthropic or replay")] = "rules",
    replay_run: Annotated[Optional[str], typer.Option("--replay-run", help="with --engine replay: the run whose agent answers to replay")] = None,
    model: Annotated[Optional[str], typer.Option(help="LLM model (anthropic engine)")] = None,
    no_replan: Annotated[bool, typer.Option("--no-replan", help="fly the first plan blindly")] = False,
    oracle: Annotated[bool, typer.Option(help="plan once knowing the whole timeline (comparison)")] = False,
    review: Annotated[bool, typer.Option(help="drafts wait for ACCEPT/REJECT instead of committing")] = False,
    agents: Annotated[bool, typer.Option(help="run the agent chain (strategist, allocator, critic) next to the planner")] = True,
    db: Annotated[Optional[str], typer.Option(help="SQLAlchemy URL of the trace store (default sqlite:///runs/isr.db); 'none' for no traces")] = None,
    seed: Annotated[int, typer.Option(help="random seed of the planner")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="print the outcome as one JSON object")] = False,
    host: Annotated[str, typer.Option(help="dashboard address")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="dashboard port", min=0, max=65535)] = 8000,
    token: Annotated[Optional[str], typer.Option(help=f"control token for commands and edits (default: ${TOKEN_ENV} or a fresh random one)")] = None,
    mqtt: Annotated[Optional[str], typer.Option(help="publish on an MQTT broker too, e.g. mqtt://127.0.0.1:1883")] = None,
) -> None:
    """Run a mission end to end with live replanning on the timeline's events."""
    from executive.errors import ExecutiveError
    from executive.policy import Policy

    live = not headless
    pace = _parse_speed(speed if speed is not None else (LIVE_SPEED if live else "max"))
    if engine not in ENGINES:
        raise _fail(f"--engine {engine!r}: choose one of {', '.join(ENGINES)}")
    if engine == "replay" and not replay_run:
        raise _fail("--engine replay needs --replay-run RUN_ID (the run whose answers to replay)")
    if no_replan and oracle:
        raise _fail("--no-replan and --oracle are two different comparisons: give one")
    if mqtt is not None and not mqtt.startswith("mqtt://"):
        raise _fail(f"--mqtt {mqtt!r}: expected mqtt://HOST:PORT")
    if live and _live_view is None:
        raise _fail("no dashboard is installed in this build: use --headless")
    try:
        scenario = load_scenario(file)
    except ScenarioError as exc:
        raise _fail("\n".join(f"{exc.source}: {p}" for p in exc.problems)) from None
    url = _trace_url(db)
    policy = Policy(replan=not (no_replan or oracle), commit="review" if review else "auto")
    iterations = policy.batch_iterations if pace is None else None
    view = None
    if live:
        token = token or os.environ.get(TOKEN_ENV) or secrets.token_urlsafe(12)
        view = {"host": host, "port": port, "token": token}
    try:
        report = asyncio.run(_run(scenario, url=url, policy=policy, engine=engine, model=model,
                                  replay_run=replay_run, seed=seed, iterations=iterations,
                                  use_agents=agents, oracle=oracle, speed=pace,
                                  config={"engine": engine, "model": model, "speed": speed,
                                          "oracle": oracle, "file": str(file),
                                          "agents": agents},
                                  view=view, mqtt=mqtt, quiet=as_json))
    except ExecutiveError as exc:
        raise _fail(str(exc), 1) from None
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    if report is None:  # interrupted before the mission ended
        raise typer.Exit(130)
    if live:
        return  # the outcome was printed when the mission ended
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
               use_agents, oracle, speed, config, view=None, mqtt=None, quiet=False):
    from executive.loop import Executive
    from executive.sinks import NullSink, TeeSink

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
    bus = None
    if view is not None or mqtt is not None:
        bus = _make_bus(mqtt)
        from executive.live import BusSink

        sink = TeeSink(sink, BusSink(bus, asyncio.get_running_loop()))
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
        if bus is None:
            report = await executive.run(speed)
        else:
            report = await _run_on_bus(executive, bus, speed, view, url, engine, model, sink,
                                       memories, quiet)
    finally:
        if writer is not None:
            import time

            from executive.contracts import RunEndRecord

            writer.emit(RunEndRecord(executive.run_id, time.time(),
                                     "ended" if report else "interrupted",
                                     report.to_dict() if report else {}))
            await asyncio.to_thread(writer.close)
    return report


def _make_bus(mqtt: str | None):
    if mqtt is None:
        from executive.bus import InProcessBus

        return InProcessBus()
    from executive.bus.mqtt import MqttBus

    return MqttBus(mqtt, role="executive")


def _asker(engine: str, model: str | None, sink, memories):
    """The coordinator + responder behind the question box (None if not built)."""
    try:
        from executive.engines import make_engine
        from executive.words import make_asker
    except ImportError:
        return None
    return make_asker(make_engine("rules" if engine == "replay" else engine, model=model),
                      sink, memories)


async def _run_on_bus(executive, bus, speed, view, url, engine, model, sink, memories, quiet):
    """A live run: the mission host on a bus, and the dashboard when asked for. The view
    outlives the mission: it serves the final state until Ctrl-C."""
    from executive.live import MissionHost

    out = Console(stderr=True)
    host = MissionHost(executive, bus, ask=_asker(engine, model, sink, memories))
    bus.run_id = executive.run_id
    await bus.start()
    shown = None
    report = None
    try:
        if view is not None:
            shown = await _live_view(bus, host=view["host"], port=view["port"],
                                     token=view["token"], trace_url=url)
            out.print(f"dashboard: {shown.url}/?token={view['token']}", highlight=False)
            out.print(f"control token: {view['token']}  (Authorization: Bearer TOKEN)",
                      highlight=False)
            out.print(f"run {executive.run_id}; Ctrl-C to stop", highlight=False)
        report = await host.run(speed)
        if shown is not None:
            if quiet:
                sys.stdout.write(json.dumps(report.to_dict()) + "\n")
                sys.stdout.flush()
            else:
                _print(Path(executive._config.get("file", "mission")), report.to_dict())
            out.print("mission over; the dashboard keeps serving until Ctrl-C", highlight=False)
            await asyncio.Event().wait()
    except asyncio.CancelledError:  # Ctrl-C: asyncio.run cancels the main task
        pass
    finally:
        if shown is not None:
            await shown.stop()
        await bus.stop()
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
