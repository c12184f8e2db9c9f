"""``isr fork``: a new run that begins where a traced run was at a moment, and goes its own
way from there.

    isr fork RUN (--at TIME | --at-tick N) [--scenario-edits FILE] [--headless]
             [--speed S] [--engine E] [--review/--no-review] [--agents/--no-agents]
             [--db URL] [--host H] [--port P] [--token T] [--json]
             [--exit-when-done] [--idle-timeout S] [--back-url URL]

The fork re-executes the parent's recorded inputs up to the moment (``TIME``: mission
seconds or mm:ss; the state at the end of that tick), checks the world against the parent's
state hash there, and flies on with the plan then in force: a what-if of the whole system.
``--scenario-edits`` adds timeline edits (a JSON list in the scenario's timeline format, every
``t`` after the fork) that happen in the fork and not in the parent. The policy, engine,
agents and seed are the parent's unless an option says otherwise. It is recorded in the same
store with ``parent_run_id`` and ``config.fork`` and replays exactly like any run
(``isr replay``). Headless it runs as fast as possible, prints the outcome and how it compares
with the parent (the first tick where they diverge); live it serves the dashboard like
``isr run``, until Ctrl-C, or with ``--exit-when-done`` until its mission ends (a fork
started from a dashboard: no orphan processes); ``--idle-timeout S`` stops the mission once
no page has watched it for S seconds; ``--back-url`` names the dashboard that asked for it
(its page links back to the replays there). Bad input: one line per problem, exit 2; never
a traceback.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import SecretStr, ValidationError
from rich.console import Console

from agents.engines.spec import LIVE_ENGINES, choices_text
from cli.common import (
    HostOption,
    PortOption,
    TokenOption,
    cell,
    control_token,
    fail,
    parse_speed,
    token_from_env,
    trace_url,
)
from cli.engines import recorded_agent_engines
from cli.run import LIVE_SPEED, fly, live_view, print_outcome
from executive.errors import ExecutiveError
from executive.loop import Policy, RunReport
from executive.traces import TraceReader
from executive.traces.analysis import compare
from mission.config import DashboardConfig, ForkConfig, RunConfig
from planner.model import Scenario
from planner.scenario import ScenarioError, parse_json, parse_scenario, read_json_file

__all__ = ["fork", "parse_moment"]


def parse_moment(text: str, tick_hz: float) -> int:
    """The tick that ends at mission time ``text`` (seconds, or mm:ss / hh:mm:ss)."""
    try:
        parts = [float(p) for p in text.strip().split(":")]
        if not 1 <= len(parts) <= 3 or any(not math.isfinite(p) or p < 0 for p in parts):
            raise ValueError
    except ValueError:
        raise fail(f"--at {text!r}: a mission time in seconds or mm:ss, e.g. 560 or 9:20") from None
    seconds = 0.0
    for p in parts:
        seconds = seconds * 60 + p
    return max(0, round(seconds * tick_hz) - 1)


def _with_edits(parent: dict[str, Any], edits_file: Path, fork_tick: int) -> Scenario:
    """The parent's scenario plus the timeline edits of ``edits_file``, all after the fork."""
    source = str(edits_file)
    try:
        edits = parse_json(read_json_file(edits_file), source)
    except ScenarioError as exc:
        raise fail(f"{exc.source}: {p}" for p in exc.problems) from None
    if not isinstance(edits, list):
        raise fail(
            f"{source}: $: must be a JSON list of timeline edits, got {type(edits).__name__}"
        )
    hz = float((parent.get("sim") or {}).get("tick_hz", 20.0))
    try:  # checked alone first, so that problems name this file's own paths
        parse_scenario({**parent, "timeline": edits}, source)
    except ScenarioError as exc:
        raise fail(f"{source}: {p.replace('$.timeline', '$', 1)}" for p in exc.problems) from None
    early = [
        f"{source}: $[{i}].t: {e['t']:g} s is not after the fork ({(fork_tick + 1) / hz:g} s)"
        for i, e in enumerate(edits)
        if round(float(e["t"]) * hz) <= fork_tick
    ]
    if early:
        raise fail(early)
    merged = {**parent, "timeline": [*(parent.get("timeline") or []), *edits]}
    return parse_scenario(merged, source)


def fork(
    run: Annotated[str, typer.Argument(help="the run to fork (its id or a unique prefix)")],
    at: Annotated[
        str | None, typer.Option(help="mission time to fork at: seconds or mm:ss")
    ] = None,
    at_tick: Annotated[
        int | None, typer.Option("--at-tick", help="the tick to fork at (its end)", min=0)
    ] = None,
    scenario_edits: Annotated[
        Path | None,
        typer.Option(
            "--scenario-edits", help="JSON list of timeline edits that happen in the fork only"
        ),
    ] = None,
    headless: Annotated[bool, typer.Option(help="no dashboard: run and print the outcome")] = False,
    speed: Annotated[
        str | None,
        typer.Option(help="'max' or K times real time [default: max headless, 10 live]"),
    ] = None,
    engine: Annotated[
        str | None,
        typer.Option(help=f"agents' engine: {choices_text(LIVE_ENGINES)} [default: the parent's]"),
    ] = None,
    review: Annotated[
        bool | None,
        typer.Option(help="drafts wait for ACCEPT/REJECT [default: the parent's]"),
    ] = None,
    agents: Annotated[
        bool | None, typer.Option(help="run the agent chain [default: the parent's]")
    ] = None,
    db: Annotated[
        str | None,
        typer.Option(
            help="SQLAlchemy URL of the store holding the run (default sqlite:///runs/isr.db)"
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="print the outcome as one JSON object")
    ] = False,
    host: HostOption = "127.0.0.1",
    port: PortOption = 8000,
    token: TokenOption = None,
    run_id: Annotated[
        str | None,
        typer.Option("--run-id", help="the fork's run id (16 hex digits; default: a fresh one)"),
    ] = None,
    exit_when_done: Annotated[
        bool,
        typer.Option(
            "--exit-when-done",
            help="live: end the process when the mission ends (the page keeps the final"
            " picture) instead of serving until Ctrl-C",
        ),
    ] = False,
    idle_timeout: Annotated[
        float | None,
        typer.Option(
            "--idle-timeout",
            help="live: stop the mission once no page has watched it for this many seconds",
            min=0.1,
        ),
    ] = None,
    back_url: Annotated[
        str | None,
        typer.Option(
            "--back-url", help="live: the dashboard that asked for the fork (its page links back)"
        ),
    ] = None,
) -> None:
    """Fork a traced run at a moment: a new run from the parent's exact state then."""
    if (at is None) == (at_tick is None):
        raise fail("give the moment to fork at: --at TIME or --at-tick N (one of them)")
    if engine is not None and engine not in LIVE_ENGINES:
        raise fail(f"--engine {engine!r}: choose {choices_text(LIVE_ENGINES)}")
    url = trace_url(db, must_exist=True)
    if url is None:
        raise fail("--db none: a fork is read from, and recorded in, a trace store")
    live = not headless
    pace = parse_speed(speed if speed is not None else (LIVE_SPEED if live else "max"))
    reader = TraceReader(url)
    try:
        parent = reader.run(run)
        last = reader.telemetry_at(parent["run_id"], 2**62)
    except ExecutiveError as exc:
        raise fail(str(exc)) from None
    finally:
        reader.close()
    scenario_json = parent["scenario"]
    hz = float((scenario_json.get("sim") or {}).get("tick_hz", 20.0))
    tick = at_tick if at_tick is not None else parse_moment(at or "", hz)
    ticks = (parent.get("outcome") or {}).get("ticks")
    end = int(ticks) - 1 if ticks else (last["tick"] if last else -1)
    if tick > end:
        option = "--at-tick" if at_tick is not None else "--at"
        raise fail(
            f"{option}: run {parent['run_id']} stored ticks 0 to {end} "
            f"({(end + 1) / hz:g} s): cannot fork at tick {tick}"
        )
    if scenario_edits is not None:
        scenario = _with_edits(scenario_json, scenario_edits, tick)
    else:
        scenario = parse_scenario(scenario_json, f"run {parent['run_id']}")
    was = parent.get("config") or {}
    policy = dict(was.get("policy") or {})
    if review is not None:
        policy["commit"] = "review" if review else "auto"
    control = control_token(token) if live else None
    try:
        config = RunConfig(
            scenario_file=was.get("scenario_file"),
            speed=pace,
            engine=engine or (was.get("engine") if was.get("engine") != "replay" else "rules"),
            model=was.get("model"),
            engine_url=was.get("engine_url") if engine is None else None,
            agent_engines=recorded_agent_engines(was),  # keys from the environment
            agents=was.get("agents", True) if agents is None else agents,
            agent_timeout_s=was.get("agent_timeout_s", 30.0),
            # the parent's agents off and cadences (its live AGENT_OFF / AGENT_ON not carried)
            agents_off=tuple(was.get("agents_off") or ()),
            agent_cadence_s=dict(was.get("agent_cadence_s") or {}),
            responder_tools=bool(was.get("responder_tools", False)),
            agent_tools=bool(was.get("agent_tools", False)),
            seed=was.get("seed", 0),
            iterations=was.get("iterations"),
            trace_url=url,
            show_token=not token_from_env(token),
            dashboard=DashboardConfig(host=host, port=port, token=SecretStr(control))
            if live and control
            else None,
            policy=Policy.model_validate(policy),
            fork=ForkConfig(parent=parent["run_id"], tick=tick),
            run_id=run_id,
        )
    except ValidationError as exc:
        raise fail("\n".join(e["msg"] for e in exc.errors(include_url=False))) from None
    err = Console(stderr=True)
    err.print(
        cell(f"forking run {parent['run_id']} at tick {tick} ({(tick + 1) / hz:g} s)"),
        highlight=False,
    )

    def show(report: RunReport) -> None:
        out = report.to_dict()
        reader = TraceReader(url)
        try:
            side = compare(reader, reader.run(parent["run_id"]), reader.run(report.run_id))
        finally:
            reader.close()
        out |= {"parent_run_id": parent["run_id"], "fork_tick": tick, "compare": side}
        if as_json:
            sys.stdout.write(json.dumps(out) + "\n")
            sys.stdout.flush()
            return
        print_outcome(f"fork of {parent['run_id']} at tick {tick}", out)
        _print_compare(side)

    view = live_view(config, idle_timeout_s=idle_timeout, back_url=back_url) if live else None
    fly(scenario, config, show, err, view=view, serve_after=live and not exit_when_done)


def _print_compare(side: dict[str, Any]) -> None:
    from cli.compare import compare_table

    Console(emoji=False, highlight=False).print(compare_table(side))
