"""``isr run``: fly a mission end to end with live replanning, traced to a database.

Builds the run's ``RunConfig`` from the options and hands it to
``mission.session.run_mission``; this module is where the dashboard is passed in as the
live view (the executive never imports it). Same conventions as every ``isr`` command: bad
input is one line per problem on stderr, exit code 2, never a traceback. Prints the outcome
(points, per-drone fuel and status, losses, replans with their trigger and latency, the run
id), or with ``--json`` one JSON object. Interrupted (Ctrl-C): exit 130; SIGTERM: 143; a run
that flew but whose trace store did not take all of it: its summary says "TRACE
INCOMPLETE" with the tables and ticks, and it exits 3 (``EXIT_TRACE_INCOMPLETE``). A store
that does not take writes is refused before the first tick (exit 1).

Without ``--headless`` the run is live: it is paced (10x real time unless ``--speed`` says
otherwise), its state goes on a bus (in-process, or MQTT with ``--mqtt``) and the dashboard
serves it; the dashboard keeps serving after the mission ends, until Ctrl-C.
"""

from __future__ import annotations

import functools
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import SecretStr, ValidationError
from rich.console import Console
from rich.table import Table

from agents.engines.spec import ENGINE_NAMES, PLANNING_ROLES, PlanningRole, choices_text
from cli.common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_TRACE_INCOMPLETE,
    HostOption,
    MqttCaOption,
    MqttPasswordFileOption,
    PortOption,
    TokenOption,
    check_mqtt_url,
    control_token,
    fail,
    load,
    mqtt_password,
    parse_speed,
    run_async,
    token_from_env,
    trace_url,
)
from cli.engines import AgentEngineOption, EnginesFileOption, EngineUrlOption, engine_fields
from cli.launch import SubprocessForks
from cli.plan import warn_plannability
from executive.errors import ExecutiveError
from executive.loop import Policy, RunReport
from mission.config import DashboardConfig, RunConfig
from mission.session import ViewFactory, run_mission
from planner.model import Scenario, drone_label

__all__ = ["LIVE_SPEED", "fly", "live_view", "print_outcome", "run"]

LIVE_SPEED = "10"  # a comfortable pace to watch: the demo flies in about 3 minutes


def run(
    file: Annotated[Path, typer.Argument(help="scenario JSON file")],
    headless: Annotated[bool, typer.Option(help="no dashboard: run and print the outcome")] = False,
    speed: Annotated[
        str | None,
        typer.Option(
            help="'max' (as fast as possible) or K times real time [default: max headless, 10 live]"
        ),
    ] = None,
    engine: Annotated[
        str | None,
        typer.Option(help=f"agents' engine: {choices_text(ENGINE_NAMES)} [default: rules]"),
    ] = None,
    agent_engine: AgentEngineOption = None,
    engine_url: EngineUrlOption = None,
    engines: EnginesFileOption = None,
    replay_run: Annotated[
        str | None,
        typer.Option(
            "--replay-run", help="with --engine replay: the run whose agent answers to replay"
        ),
    ] = None,
    model: Annotated[str | None, typer.Option(help="LLM model (anthropic, openai)")] = None,
    no_replan: Annotated[
        bool, typer.Option("--no-replan", help="fly the first plan blindly")
    ] = False,
    oracle: Annotated[
        bool, typer.Option(help="plan once knowing the whole timeline (comparison)")
    ] = False,
    review: Annotated[
        bool, typer.Option(help="drafts wait for ACCEPT/REJECT instead of committing")
    ] = False,
    review_timeout: Annotated[
        float | None,
        typer.Option(
            "--review-timeout",
            help="with --review: mission seconds a draft may wait (default: as long as needed)",
            min=0.001,
        ),
    ] = None,
    review_timeout_action: Annotated[
        str,
        typer.Option(
            "--review-timeout-action",
            help="at the review timeout: keep (the plan in force) or commit (the draft, rebased)",
        ),
    ] = "keep",
    agent_timeout: Annotated[
        float,
        typer.Option(
            "--agent-timeout",
            help="seconds one agent call may take (the agents improve the plan late)",
            min=0.001,
        ),
    ] = 30.0,
    agents: Annotated[
        bool,
        typer.Option(
            help="run the agent chain (strategist, allocator, critic) next to the planner"
        ),
    ] = True,
    agents_off: Annotated[
        str | None,
        typer.Option(
            "--agents-off",
            help=f"agents switched off from the start: ROLE,... of {', '.join(PLANNING_ROLES)}"
            " (isr command RUN AGENT_ON ROLE switches one on live)",
        ),
    ] = None,
    agent_cadence: Annotated[
        list[str] | None,
        typer.Option(
            "--agent-cadence",
            help="ROLE=SECONDS: also ask ROLE every SECONDS of mission time, on top of the"
            " events (repeatable)",
        ),
    ] = None,
    responder_tools: Annotated[
        bool,
        typer.Option(
            "--responder-tools",
            help="the live question box's responder may call its read-only tools (mission"
            " overview, drone state, distances, plan metrics) on the run's world",
        ),
    ] = False,
    agent_tools: Annotated[
        bool,
        typer.Option(
            "--agent-tools",
            help="the planning round's allocator and critic may call their tools (allocate,"
            " solve, validate, optimise, what-if on a copy of the round's problem)",
        ),
    ] = False,
    db: Annotated[
        str | None,
        typer.Option(
            help="SQLAlchemy URL of the trace store (default sqlite:///runs/isr.db); 'none' for no traces"
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="random seed of the planner")] = 0,
    as_json: Annotated[
        bool, typer.Option("--json", help="print the outcome as one JSON object")
    ] = False,
    host: HostOption = "127.0.0.1",
    port: PortOption = 8000,
    token: TokenOption = None,
    mqtt: Annotated[
        str | None,
        typer.Option(
            help="publish on an MQTT broker too: mqtt[s]://[USER@]HOST[:PORT], e.g."
            " mqtt://127.0.0.1:1883 (messages signed with the control token)"
        ),
    ] = None,
    mqtt_ca: MqttCaOption = None,
    mqtt_password_file: MqttPasswordFileOption = None,
) -> None:
    """Run a mission end to end with live replanning on the timeline's events."""
    live = not headless
    pace = parse_speed(speed if speed is not None else (LIVE_SPEED if live else "max"))
    chosen = engine_fields(
        engine=engine,
        model=model,
        engine_url=engine_url,
        agent_engine=agent_engine,
        engines_file=engines,
    )
    if chosen["engine"] == "replay" and not replay_run:
        raise fail("--engine replay needs --replay-run RUN_ID (the run whose answers to replay)")
    if review_timeout_action not in ("keep", "commit"):
        raise fail(f"--review-timeout-action {review_timeout_action!r}: choose keep or commit")
    if review_timeout is not None and not review:
        raise fail("--review-timeout applies to --review: give both, or neither")
    if no_replan and oracle:
        raise fail("--no-replan and --oracle are two different comparisons: give one")
    check_mqtt_url(mqtt)
    broker_password = mqtt_password(mqtt, mqtt_password_file, mqtt_ca)
    control = control_token(token) if live or mqtt else None
    scenario = load(file)
    warn_plannability(file, scenario)  # the fleet is planned around what cannot be planned
    try:
        config = RunConfig(
            scenario_file=str(file),
            speed=pace,
            **chosen,  # engine, model, engine_url, engine_key, agent_engines (checked)
            replay_run=replay_run,
            agents=agents,
            agents_off=_agents_off(agents_off),
            agent_cadence_s=dict(_cadence(text) for text in agent_cadence or ()),
            agent_timeout_s=agent_timeout,
            responder_tools=responder_tools,
            agent_tools=agent_tools,
            oracle=oracle,
            seed=seed,
            trace_url=trace_url(db),
            mqtt=mqtt,
            mqtt_password=broker_password,
            mqtt_ca=str(mqtt_ca) if mqtt_ca is not None else None,
            mqtt_token=SecretStr(control) if mqtt and control else None,
            show_token=not token_from_env(token),
            dashboard=DashboardConfig(host=host, port=port, token=SecretStr(control))
            if live and control
            else None,
            policy=Policy(
                replan=not (no_replan or oracle),
                commit="review" if review else "auto",
                review_timeout_s=review_timeout,
                review_timeout_action=review_timeout_action,
            ),
        )
    except ValidationError as exc:
        raise fail("\n".join(e["msg"] for e in exc.errors(include_url=False))) from None
    err = Console(stderr=True)

    def show(report: RunReport) -> None:
        """Print the outcome as soon as the mission ends (a live dashboard may go on)."""
        out = report.to_dict()
        if as_json:
            sys.stdout.write(json.dumps(out) + "\n")
            sys.stdout.flush()
        else:
            print_outcome(file.name, out)

    fly(scenario, config, show, err)


def _role(text: str, option: str) -> PlanningRole:
    role = text.strip().lower()
    for known in PLANNING_ROLES:
        if role == known:
            return known
    raise fail(f"{option} {text!r}: unknown agent; choose from {', '.join(PLANNING_ROLES)}")


def _agents_off(text: str | None) -> tuple[PlanningRole, ...]:
    """``--agents-off ROLE,...``: the roles, each once."""
    if not text:
        return ()
    roles = [_role(part, "--agents-off") for part in text.split(",") if part.strip()]
    return tuple(dict.fromkeys(roles))


def _cadence(text: str) -> tuple[PlanningRole, float]:
    """``--agent-cadence ROLE=SECONDS``."""
    role, sep, seconds = text.partition("=")
    try:
        every = float(seconds)
    except ValueError:
        every = math.nan
    if not sep or not math.isfinite(every) or every <= 0:
        raise fail(f"--agent-cadence {text!r}: expected ROLE=SECONDS, seconds > 0")
    return _role(role, "--agent-cadence"), every


def fly(
    scenario: Scenario,
    config: RunConfig,
    show: Callable[[RunReport], None],
    err: Console,
    *,
    view: ViewFactory | None = None,
    serve_after: bool | None = None,
) -> None:
    """Run the mission as ``config`` says, ``show`` its report as soon as it ends (a live
    dashboard serves on until Ctrl-C, unless ``serve_after`` is False); errors one line
    (exit 1), interrupted exit 130. ``view``: the live view (default ``live_view(config)``)."""
    try:
        report = run_async(
            run_mission(
                scenario,
                config,
                view=view or (live_view(config) if config.dashboard is not None else None),
                announce=lambda line: err.print(line, highlight=False, markup=False),
                on_report=show,
                serve_after=config.dashboard is not None if serve_after is None else serve_after,
            )
        )
    except ExecutiveError as exc:
        raise fail(str(exc), EXIT_FAILED) from None
    except KeyboardInterrupt:
        raise typer.Exit(EXIT_INTERRUPTED) from None
    if report is None:  # interrupted before the mission ended
        raise typer.Exit(EXIT_INTERRUPTED)
    if not report.trace_complete:  # flown, but the store does not hold all of it: say so
        err.print(
            f"trace incomplete: {incomplete_text(report.to_dict())}; a replay of run"
            f" {report.run_id} cannot be exact (exit {EXIT_TRACE_INCOMPLETE})",
            highlight=False,
            markup=False,
        )
        raise typer.Exit(EXIT_TRACE_INCOMPLETE)


def incomplete_text(out: dict[str, Any]) -> str:
    """What of the run the store did not take, from its outcome: one line."""
    from executive.traces.loss import describe

    lost = describe(out.get("trace_lost") or {})
    return f"{out['trace_dropped']:,} trace record(s) not stored" + (f": {lost}" if lost else "")


def live_view(config: RunConfig, **options: Any) -> ViewFactory:
    """The dashboard as the run's live view, checking the run's engines (``/api/engines``);
    with a trace store it can start forks of the store's runs (``cli.launch``). ``options``
    go to ``start_dashboard`` (``idle_timeout_s``, ``back_url``). Served by a process of its
    own (``dashboard.process``): the mission never waits on its viewers."""
    # here, not at the top: a headless run never loads the web server (fastapi, ~0.25 s)
    from dashboard.process import start_dashboard_process

    engines = config.engine_table()
    if config.trace_url is None or config.dashboard is None:
        return functools.partial(start_dashboard_process, engines=engines, **options)
    token = config.dashboard.token.get_secret_value()
    forks = SubprocessForks(config.trace_url, token, config.dashboard.host)
    return functools.partial(start_dashboard_process, forks=forks, engines=engines, **options)


def print_outcome(name: str, out: dict) -> None:
    """The outcome of a run (``RunReport.to_dict()``) as a table and a few lines."""
    from cli.common import cell  # ids and names from the input, printed as text

    console = Console(emoji=False, highlight=False)
    table = Table(title=cell(f"{name} — run {out['run_id']}: {out['total_points']:g} points"))
    for column in ("Drone", "Status", "Fuel left", "Points", "Collected"):
        table.add_column(column)
    for drone_id, d in out["drones"].items():
        status = d["status"] + (f" ({d['lost_reason']})" if d.get("lost_reason") else "")
        table.add_row(
            cell(drone_label(drone_id)),
            cell(status),
            f"{d['fuel_left']:.1f}",
            f"{d['points']:g}",
            cell(", ".join(d["collected"]) or "-"),
        )
    console.print(table)
    for r in out["replans"]:
        latency = f"{r['latency_ms']:.0f} ms" if r["latency_ms"] is not None else "-"
        console.print(
            cell(
                f"replan at tick {r['asked_tick']} ({r['trigger']}): {r['status']},"
                f" cut at tick {r['cut_tick']}, latency {latency}"
            )
        )
    if out["lost"]:
        console.print(cell(f"lost: {', '.join(drone_label(d) for d in out['lost'])}"))
    if out.get("trace_dropped"):
        console.print(cell(f"TRACE INCOMPLETE: {incomplete_text(out)}"))
    console.print(
        cell(
            f"simulated {out['sim_seconds']:.0f} s in {out['wall_seconds']:.1f} s wall;"
            f" run id {out['run_id']}"
        )
    )
