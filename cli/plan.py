"""``isr validate`` and ``isr plan``: check a scenario, plan a mission.

Same conventions as every ``isr`` command (``cli.common``): bad input is one line per
problem on stderr naming the file and the JSON path, exit code 2, never a traceback; output
files are written whole or not at all; ids and names from the file are printed as text.

``isr validate`` names every problem in one run (form, schema and references together) and
then what a plan would have to leave out, as warnings naming the drone or the target
(``planner.feasibility``). Exit codes: 0 valid (warnings, if any, on stderr), 2 problems
(or warnings, with ``--strict``). ``isr plan`` (and ``isr run``) print the same warnings and
plan the rest of the fleet around a drone that cannot fly its mission.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console, JustifyMethod
from rich.markup import escape
from rich.table import Table

from cli.common import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    cell,
    check_number,
    check_writable,
    fail,
    load,
    shown,
    write_atomically,
)
from planner.errors import InfeasibleError, PlannerError
from planner.model import Scenario, drone_label

if TYPE_CHECKING:
    from planner.mission import Mission

__all__ = ["MAX_SEARCH_SECONDS", "plan", "validate", "warn_plannability"]

MAX_SEARCH_SECONDS = 3600.0  # --seconds: an hour of search is already far past any gain
# isr validate runs the geometry's kernels as Python up to this many targets x (SAMs + 1):
# ~0.15 s at 100 targets and 10 SAMs (1,100), ~0.8 s at 200 and 20 (4,200), against the
# ~1 CPU s that loading numba costs (bench/cli_costs.py)
PYTHON_KERNELS_WORK = 2_000


def validate(
    file: Annotated[Path, typer.Argument(help="scenario JSON file")],
    strict: Annotated[
        bool, typer.Option("--strict", help="warnings count as problems (exit 2)")
    ] = False,
) -> None:
    """Check a scenario file: every problem with its JSON path (exit 2 if any), then
    warnings naming each drone or target a plan would leave out (exit 0, or 2 with --strict)."""
    scenario = load(file)
    env = scenario.environment
    if len(env.targets) * (len(env.sams) + 1) <= PYTHON_KERNELS_WORK:
        # a small mission's check runs the geometry as Python in milliseconds, where loading
        # numba and LLVM would cost ~1 CPU s and ~100 MiB (planner._jit); a choice for the
        # whole process, which runs this one command
        from planner._jit import run_as_python

        run_as_python()
    warnings = warn_plannability(file, scenario)
    said = f", {len(warnings)} warning(s)" if warnings else ""
    print(
        f"{shown(file)}: ok — {len(env.airports)} airports, {len(env.targets)} targets,"
        f" {len(env.sams)} SAMs, {len(scenario.drone_configs)} drones{said}"
    )
    if strict and warnings:
        raise typer.Exit(EXIT_BAD_INPUT)


def warn_plannability(file: Path, scenario: Scenario, mission: Mission | None = None) -> list[str]:
    """Print (stderr) and return what a plan of ``scenario`` will have to leave out, one
    ``warning: FILE: <JSON path>: drone D1: ...`` line each (``planner.feasibility``).

    ``mission`` is the scenario compiled (lazily is enough: the check reads the distances
    from the drones' heads and the airports only); without it, one is compiled lazily."""
    from planner.feasibility import feasibility_warnings
    from planner.mission import compile_mission

    try:
        if mission is None:
            mission = compile_mission(scenario, lazy=True)
        warnings = feasibility_warnings(mission)
    except PlannerError as exc:  # a checked scenario compiles; say so if it did not
        warnings = [f"$: cannot check what a plan can reach ({exc})"]
    err = Console(stderr=True, emoji=False, highlight=False)
    for line in warnings:
        err.print(f"[bold yellow]warning:[/] {escape(shown(f'{file}: {line}'))}", soft_wrap=True)
    return warnings


def plan(
    file: Annotated[Path, typer.Argument(help="scenario JSON file")],
    strategy: Annotated[
        str,
        typer.Option(
            help="team (joint search) or an allocation strategy: "
            "efficient, greedy, balanced, geographic, exclusive"
        ),
    ] = "team",
    as_json: Annotated[
        bool, typer.Option("--json", help="print the Solution as one JSON object")
    ] = False,
    out: Annotated[Path | None, typer.Option(help="write the Solution JSON here")] = None,
    plot: Annotated[Path | None, typer.Option(help="draw the plan to this PNG/SVG/PDF")] = None,
    seconds: Annotated[
        float, typer.Option(help="time limit of the team search (s)", min=0.0)
    ] = 1.0,
    iterations: Annotated[
        int | None, typer.Option(help="iteration limit (reproducible with --seed)", min=1)
    ] = None,
    seed: Annotated[int, typer.Option(help="random seed of the search")] = 0,
    export: Annotated[
        list[Any] | None,  # (FORMAT, FILE) pairs: cli.interop.ExportCommand takes two values
        typer.Option(
            help="also write the plan for other tools, as often as you like: qgc (one .plan"
            " per drone), geojson, mavlink (QGC WPL 110 and a .csv of what each item is, one"
            " per drone)",
            metavar="FORMAT FILE",
        ),
    ] = None,
    origin: Annotated[
        str | None,
        typer.Option(help="LAT,LON of the km frame's (0, 0), for a mission without geo"),
    ] = None,
    altitude: Annotated[
        float, typer.Option(help="flight altitude of the export, metres above home")
    ] = 100.0,
) -> None:
    """Plan a mission and print the routes (or the Solution JSON)."""
    from cli.interop import check_exports, export_frame, placed, print_positions, report_written
    from cli.interop import write_export as write_plan_export
    from planner.interop import geo_solution
    from planner.mission import compile_mission
    from planner.planning import STRATEGIES, plan_mission

    if strategy not in STRATEGIES:
        raise fail(f"--strategy {strategy!r}: choose one of {', '.join(STRATEGIES)}")
    check_number(seconds, "--seconds", 0.0, MAX_SEARCH_SECONDS)
    check_writable(out, "--out", (".json",))
    check_writable(plot, "--plot", (".png", ".svg", ".pdf"))
    exporting = check_exports(export, origin, altitude)
    scenario = placed(load(file), exporting, file)
    frame = export_frame(scenario, exporting, file)
    try:  # compiled once: the warnings read a few rows of it, the plan all of it
        mission = compile_mission(scenario, lazy=True, workers=2)
    except PlannerError as exc:
        warn_plannability(file, scenario)  # says why it cannot check
        raise fail(f"{file}: planning failed: {exc}", EXIT_FAILED) from None
    warn_plannability(file, scenario, mission)  # the plan goes around what cannot be planned
    try:
        result = plan_mission(mission, strategy, seconds=seconds, iterations=iterations, seed=seed)
    except InfeasibleError as exc:
        raise fail(f"{file}: {exc}") from None
    except PlannerError as exc:
        raise fail(f"{file}: planning failed: {exc}", EXIT_FAILED) from None
    solution = result.solution
    if frame is not None:  # lat/lon next to km: a geographic mission, or one --origin places
        solution = geo_solution(scenario, solution, frame)
    payload = solution.model_dump(mode="json", by_alias=True)
    if solution.geo is None:
        del payload["geo"]  # a km-only mission's Solution JSON stays as it was
    # The drones the plan goes around, and why (a script reads them here, not on stderr);
    # ``isr sim --plan`` reads a file with them too.
    if result.left_out:
        payload["left_out"] = dict(result.left_out)
    if result.rerouted:
        payload["rerouted"] = dict(result.rerouted)
    try:
        if out is not None:
            write_atomically(out, lambda p: p.write_text(json.dumps(payload, indent=2) + "\n"))
        if plot is not None:
            from planner.plot import plot_plan

            write_atomically(
                plot,
                lambda p: plot_plan(
                    mission,
                    solution,
                    p,
                    title=f"{shown(file.name)}: {solution.total_points:g} points ({strategy})",
                ),
            )
        for each in exporting:  # a frame exists whenever there is an export (export_frame)
            assert frame is not None
            report_written(each, write_plan_export(each, scenario, solution, frame))
    except OSError as exc:
        raise fail(
            f"{shown(exc.filename or out or plot)}: cannot write ({exc.strerror or exc})",
            EXIT_FAILED,
        ) from None
    if as_json:
        sys.stdout.write(json.dumps(payload) + "\n")
        return
    _print_plan(file, mission, result)
    print_positions(scenario, solution)


def _print_plan(file: Path, mission, result) -> None:
    solution = result.solution
    console = Console(emoji=False, highlight=False)
    table = Table(
        title=cell(
            f"{file.name} — strategy {result.strategy}, planned in {result.seconds * 1000:.0f} ms"
        )
    )
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("Drone", "left"),
        ("Route", "left"),
        ("Fuel used", "right"),
        ("Budget", "right"),
        ("Margin", "right"),
        ("Points", "right"),
        ("Targets", "right"),
    )
    for column, justify in columns:
        table.add_column(column, justify=justify)
    for drone_id, route in solution.routes.items():
        table.add_row(
            cell(drone_label(drone_id)),
            cell(" → ".join(route.route)),
            f"{route.fuel_used:.1f}",
            f"{route.fuel_budget:g}",
            f"{route.fuel_budget - route.fuel_used:.1f}",
            f"{route.total_points:g}",
            str(len(route.visited_targets)),
        )
    for drone_id in result.left_out:  # not planned: it stays where it is, with no route
        config = mission.scenario.drone_configs[drone_id]
        table.add_row(
            cell(drone_label(drone_id)),
            cell(f"stays at {config.start} (not planned)"),
            "0.0",
            f"{config.fuel_budget:g}",
            f"{config.fuel_budget:g}",
            "0",
            "0",
        )
    budget = sum(r.fuel_budget for r in solution.routes.values())
    table.add_section()
    table.add_row(
        "Total",
        "",
        f"{solution.total_fuel:.1f}",
        f"{budget:g}",
        f"{budget - solution.total_fuel:.1f}",
        f"{solution.total_points:g}",
        str(sum(len(r.visited_targets) for r in solution.routes.values())),
    )
    console.print(table)
    say = lambda text: console.print(cell(text))  # noqa: E731 - input text, never markup
    possible = float(mission.scores.sum())
    say(f"Points: {solution.total_points:g} of {possible:g} reachable")
    if solution.unassigned_targets:
        say(f"Not visited: {', '.join(solution.unassigned_targets)}")
    if solution.excluded_targets:
        say(f"Excluded (inside a SAM): {', '.join(solution.excluded_targets)}")
    for change in result.changes:
        say(f"post-opt {change.tool}: {drone_label(change.drone)} {change.description}")
    for why in result.left_out.values():
        say(f"not planned: {why}")
