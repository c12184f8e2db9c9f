"""``isr sim``: fly a plan through the simulated world, no replanning, and report the outcome.

Same conventions as every ``isr`` command (``cli.common``): bad input (scenario, plan file,
option) is one line per problem on stderr naming the file and the JSON path, exit code 2,
never a traceback. A plan file is read as strictly as a scenario (size, depth, no key
twice, strict types) and its numbers are recomputed from its routes. A drone lost in flight is an outcome, not an error: the exit code is 0.
Interrupted (Ctrl-C): the outcome so far, exit 130.
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console, JustifyMethod
from rich.table import Table

from cli.common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    cell,
    check_number,
    fail,
    load,
    parse_speed,
)
from cli.plan import MAX_SEARCH_SECONDS, warn_plannability
from planner.errors import InfeasibleError, PlannerError
from planner.limits import MAX_TIME_S
from planner.model import Solution, drone_label
from planner.scenario import ScenarioError, json_path, parse_json, read_json_file

__all__ = ["sim"]


def _load_plan(path: Path, mission) -> Solution:
    from planner.feasibility import plannable
    from planner.solution import build_solution, solution_routes
    from planner.validation import validate_solution

    try:
        text = read_json_file(path)
        data = parse_json(text, str(path))  # size, depth, keys given twice
    except ScenarioError as exc:
        raise fail(f"{exc.source}: {p}" for p in exc.problems) from None
    if isinstance(data, dict) and {"left_out", "rerouted"} & set(data):
        # What `isr plan` says of the drones it planned around: words, not part of the plan
        # (the plan is checked against the fleet that can fly, below).
        data = {k: v for k, v in data.items() if k not in ("left_out", "rerouted")}
        text = json.dumps(data)
    try:
        # JSON mode: strict types ("25" is not a number), arrays for the path's pairs
        solution = Solution.model_validate_json(text, strict=True)
    except ValidationError as exc:
        lines = [
            f"{path}: {json_path(e['loc'])}: {e['msg']}" for e in exc.errors(include_url=False)
        ]
        raise fail(dict.fromkeys(lines)) from None
    problems = []
    known = set(mission.index)
    for drone_id, route in solution.routes.items():
        at = f"$.routes[{json.dumps(drone_id)}]"
        if drone_id not in mission.scenario.drone_configs:
            problems.append(f"{path}: {at}: unknown drone id {drone_id!r}")
            continue
        for i, node_id in enumerate(route.route):
            if node_id not in known:
                problems.append(f"{path}: {at}.route[{i}]: unknown or excluded id {node_id!r}")
    # A drone that cannot fly may be left out of the plan, or end at another airport, as
    # `isr plan` plans it (planner.feasibility).
    flyable = plannable(mission).mission
    if not problems:
        problems = [f"{path}: plan violates {v}" for v in validate_solution(flyable, solution)]
    if problems:
        raise fail(problems)
    # Its distances, points and flown paths from the mission's geometry, not the file's.
    return build_solution(flyable, solution_routes(flyable, solution))


def _clock(seconds: float) -> str:
    seconds = round(seconds)
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def sim(
    file: Annotated[Path, typer.Argument(help="scenario JSON file")],
    plan: Annotated[
        Path | None,
        typer.Option(help="fly this Solution JSON (from `isr plan --out`) instead of planning"),
    ] = None,
    speed: Annotated[
        str, typer.Option(help="'max' (as fast as possible) or K: K times real time")
    ] = "max",
    as_json: Annotated[
        bool, typer.Option("--json", help="print the outcome as one JSON object")
    ] = False,
    strategy: Annotated[
        str, typer.Option(help="planning strategy when no --plan is given")
    ] = "team",
    seconds: Annotated[
        float, typer.Option(help="planning time limit when no --plan is given", min=0.0)
    ] = 1.0,
    seed: Annotated[
        int | None, typer.Option(help="planning seed (default: the scenario's sim.seed)")
    ] = None,
    until: Annotated[
        float | None, typer.Option(help="stop after this many simulated seconds", min=0.0)
    ] = None,
) -> None:
    """Fly a plan (given, or planned now) through the simulation to the end of the mission,
    without replanning, and print the outcome."""
    from planner.mission import compile_mission
    from sim import Sim, SimError, mission_outcome, run_paced

    pace = parse_speed(speed)
    check_number(seconds, "--seconds", 0.0, MAX_SEARCH_SECONDS)
    if until is not None:
        check_number(until, "--until", 0.0, MAX_TIME_S)
    scenario = load(file)
    warn_plannability(file, scenario)  # the plan goes around a drone that cannot fly
    try:
        mission = compile_mission(scenario)
    except PlannerError as exc:
        raise fail(f"{file}: {exc}") from None
    planned_by = f"plan {plan}"
    if plan is not None:
        solution = _load_plan(plan, mission)
    else:
        from planner.planning import STRATEGIES, plan_mission

        if strategy not in STRATEGIES:
            raise fail(f"--strategy {strategy!r}: choose one of {', '.join(STRATEGIES)}")
        try:
            result = plan_mission(
                mission, strategy, seconds=seconds, seed=scenario.sim.seed if seed is None else seed
            )
        except InfeasibleError as exc:
            raise fail(f"{file}: {exc}") from None
        except PlannerError as exc:
            raise fail(f"{file}: planning failed: {exc}", EXIT_FAILED) from None
        solution = result.solution
        planned_by = f"planned now ({strategy}, {result.seconds * 1000:.0f} ms)"
    try:
        world_sim = Sim(scenario, solution, mission=mission)
    except SimError as exc:
        raise fail(f"{file}: {exc}") from None

    events: list = []
    stop = None if until is None else math.ceil(until * world_sim.tick_hz - 1e-9)
    interrupted = False
    started = time.perf_counter()
    try:
        report = run_paced(world_sim, pace, until=stop, on_tick=lambda r: events.extend(r.events))
        wall = report.wall_seconds
        overruns = report.overruns
    except KeyboardInterrupt:
        interrupted = True
        wall = time.perf_counter() - started
        overruns = None
    outcome = mission_outcome(world_sim)
    rate = outcome.ticks / wall if wall > 0 else math.inf
    if as_json:
        payload = outcome.model_dump(mode="json")
        payload.update(
            scenario=str(file),
            plan=planned_by,
            planned_points=solution.total_points,
            wall_seconds=wall,
            ticks_per_second=rate if math.isfinite(rate) else None,
            speed=speed,
            overruns=overruns,
            interrupted=interrupted,
            events=[e.model_dump(mode="json") for e in events],
        )
        sys.stdout.write(json.dumps(payload) + "\n")
    else:
        _print_outcome(
            file,
            planned_by,
            solution,
            outcome,
            events,
            wall,
            rate,
            overruns,
            interrupted,
            world_sim.tick_hz,
        )
    if interrupted:
        raise typer.Exit(EXIT_INTERRUPTED)


def _print_outcome(
    file, planned_by, solution, outcome, events, wall, rate, overruns, interrupted, tick_hz
) -> None:
    console = Console(emoji=False, highlight=False)
    state = "interrupted" if interrupted else "flown to the end"
    table = Table(title=cell(f"{file.name} — {planned_by}, {state}"))
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("Drone", "left"),
        ("Status", "left"),
        ("Fuel left", "right"),
        ("Flown", "right"),
        ("Points", "right"),
        ("Collected", "left"),
    )
    for column, justify in columns:
        table.add_column(column, justify=justify)
    colours = {"landed": "green", "lost": "bold red", "holding": "yellow", "flying": "yellow"}
    for drone_id, drone in outcome.drones.items():
        status = drone.status + (f" ({drone.lost_reason})" if drone.lost_reason else "")
        colour = colours.get(drone.status)
        table.add_row(
            cell(drone_label(drone_id)),
            cell(status, colour or ""),
            f"{drone.fuel_left:.1f}",
            f"{drone.distance_flown:.1f}",
            f"{drone.points:g}",
            cell(", ".join(drone.collected) or "—"),
        )
    table.add_section()
    table.add_row(
        "Total",
        "",
        f"{sum(d.fuel_left for d in outcome.drones.values()):.1f}",
        f"{sum(d.distance_flown for d in outcome.drones.values()):.1f}",
        f"{outcome.total_points:g}",
        f"{sum(len(d.collected) for d in outcome.drones.values())} targets",
    )
    console.print(table)
    say = lambda text: console.print(cell(text))  # noqa: E731 - input text, never markup
    say(f"Points: {outcome.total_points:g} collected, {solution.total_points:g} planned")
    lost = ", ".join(drone_label(d) for d in outcome.lost)
    say(f"Drones lost: {lost or 'none'}")
    missed = [t for t in outcome.uncollected if t not in outcome.excluded]
    if missed:
        say(f"Not collected: {', '.join(missed)}")
    if outcome.excluded:
        say(f"Inside a SAM (not collectable): {', '.join(outcome.excluded)}")
    notable = [e for e in events if e.kind != "target_collected"]
    if notable:
        say("Events:")
        for event in notable:
            say(f"  {_clock(event.tick / tick_hz)}  {event.describe()}")
    pace = f", {overruns} overrun(s)" if overruns else ""
    say(
        f"Simulated {_clock(outcome.sim_seconds)} ({outcome.ticks:,} ticks) in {wall:.2f} s of wall time"
        f" ({rate:,.0f} ticks/s{pace})"
    )
    say(f"State hash: {outcome.state_hash}")
