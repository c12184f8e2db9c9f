"""The ``isr`` command line: validate a scenario, plan a mission.

Bad input never produces a traceback: every problem is one line on stderr naming the file
and the JSON path, and the exit code is 2. Output files are written whole or not at all.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

from planner.errors import InfeasibleError, PlannerError
from planner.model import drone_label
from planner.scenario_io import ScenarioError, load_scenario

app = typer.Typer(add_completion=False, no_args_is_help=True, help="ISR multi-drone mission system.")
err = Console(stderr=True)

EXIT_BAD_INPUT = 2
EXIT_FAILED = 1


def main() -> None:
    app()


def _fail(message: str, code: int = EXIT_BAD_INPUT) -> typer.Exit:
    for line in message.splitlines():
        err.print(f"[bold red]error:[/] {line}", highlight=False, markup=True, soft_wrap=True)
    return typer.Exit(code)


def _load(path: Path):
    try:
        return load_scenario(path)
    except ScenarioError as exc:
        raise _fail("\n".join(f"{exc.source}: {p}" for p in exc.problems)) from None


def _check_writable(path: Path | None, option: str, suffixes: tuple[str, ...]) -> None:
    if path is None:
        return
    if path.suffix.lower() not in suffixes:
        raise _fail(f"{option} {path}: expected a file ending in {' or '.join(suffixes)}")
    if not path.parent.exists() or not path.parent.is_dir():
        raise _fail(f"{option} {path}: folder {path.parent} does not exist")
    if path.is_dir():
        raise _fail(f"{option} {path}: is a folder")


def _write_atomically(path: Path, write) -> None:
    """Write through a temporary file in the same folder, then rename: never half a file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=path.suffix)
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@app.command()
def validate(file: Annotated[Path, typer.Argument(help="scenario JSON file")]) -> None:
    """Check a scenario file; print every problem with its JSON path (exit 2 if any)."""
    scenario = _load(file)
    env = scenario.environment
    print(
        f"{file}: ok — {len(env.airports)} airports, {len(env.targets)} targets,"
        f" {len(env.sams)} SAMs, {len(scenario.drone_configs)} drones"
    )


@app.command()
def plan(
    file: Annotated[Path, typer.Argument(help="scenario JSON file")],
    strategy: Annotated[str, typer.Option(help="team (joint search) or an allocation strategy: "
                                          "efficient, greedy, balanced, geographic, exclusive")] = "team",
    as_json: Annotated[bool, typer.Option("--json", help="print the Solution as one JSON object")] = False,
    out: Annotated[Optional[Path], typer.Option(help="write the Solution JSON here")] = None,
    plot: Annotated[Optional[Path], typer.Option(help="draw the plan to this PNG/SVG/PDF")] = None,
    seconds: Annotated[float, typer.Option(help="time limit of the team search", min=0.0)] = 1.0,
    iterations: Annotated[Optional[int], typer.Option(help="iteration limit (reproducible with --seed)", min=1)] = None,
    seed: Annotated[int, typer.Option(help="random seed of the search")] = 0,
) -> None:
    """Plan a mission and print the routes (or the Solution JSON)."""
    from planner.mission import compile_mission
    from planner.planning import STRATEGIES, plan_mission

    if strategy not in STRATEGIES:
        raise _fail(f"--strategy {strategy!r}: choose one of {', '.join(STRATEGIES)}")
    _check_writable(out, "--out", (".json",))
    _check_writable(plot, "--plot", (".png", ".svg", ".pdf"))
    scenario = _load(file)
    try:
        mission = compile_mission(scenario)
        result = plan_mission(mission, strategy, seconds=seconds, iterations=iterations, seed=seed)
    except InfeasibleError as exc:
        raise _fail(f"{file}: {exc}") from None
    except PlannerError as exc:
        raise _fail(f"{file}: planning failed: {exc}", EXIT_FAILED) from None
    solution = result.solution
    payload = solution.model_dump(mode="json", by_alias=True)
    if out is not None:
        _write_atomically(out, lambda p: p.write_text(json.dumps(payload, indent=2) + "\n"))
    if plot is not None:
        from executive.plot import plot_plan

        _write_atomically(plot, lambda p: plot_plan(mission, solution, p, title=f"{file.name}: "
                          f"{solution.total_points:g} points ({strategy})"))
    if as_json:
        sys.stdout.write(json.dumps(payload) + "\n")
        return
    _print_plan(file, mission, result)


def _print_plan(file: Path, mission, result) -> None:
    solution = result.solution
    console = Console()
    table = Table(title=f"{file.name} — strategy {result.strategy}, planned in {result.seconds * 1000:.0f} ms")
    for column, justify in (("Drone", "left"), ("Route", "left"), ("Fuel used", "right"),
                            ("Budget", "right"), ("Margin", "right"), ("Points", "right"),
                            ("Targets", "right")):
        table.add_column(column, justify=justify)
    for drone_id, route in solution.routes.items():
        table.add_row(
            drone_label(drone_id), " → ".join(route.route), f"{route.fuel_used:.1f}",
            f"{route.fuel_budget:g}", f"{route.fuel_budget - route.fuel_used:.1f}",
            f"{route.total_points:g}", str(len(route.visited_targets)),
        )
    budget = sum(r.fuel_budget for r in solution.routes.values())
    table.add_section()
    table.add_row("Total", "", f"{solution.total_fuel:.1f}", f"{budget:g}",
                  f"{budget - solution.total_fuel:.1f}", f"{solution.total_points:g}",
                  str(sum(len(r.visited_targets) for r in solution.routes.values())))
    console.print(table)
    possible = float(mission.scores.sum())
    console.print(f"Points: {solution.total_points:g} of {possible:g} reachable", highlight=False)
    if solution.unassigned_targets:
        console.print(f"Not visited: {', '.join(solution.unassigned_targets)}", highlight=False)
    if solution.excluded_targets:
        console.print(f"Excluded (inside a SAM): {', '.join(solution.excluded_targets)}", highlight=False)
    for change in result.changes:
        console.print(f"post-opt {change.tool}: {drone_label(change.drone)} {change.description}",
                      highlight=False)


def _register_subcommands() -> None:
    from executive.cli_replay import replay_cmd
    from executive.cli_run import run
    from executive.cli_sim import sim
    from executive.cli_words import ask, memory_app

    app.command("sim")(sim)
    app.command("run")(run)
    app.command("replay")(replay_cmd)
    app.command("ask")(ask)
    app.add_typer(memory_app, name="memory")


_register_subcommands()

if __name__ == "__main__":
    main()
