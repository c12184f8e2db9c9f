"""Plans out to the tools drone people use, missions in from them.

    isr plan SCENARIO --export qgc plan.plan [--origin LAT,LON]   # plan-D1.plan, plan-D2.plan...
    isr plan SCENARIO --export geojson plan.geojson
    isr plan SCENARIO --export mavlink mission.waypoints           # mission-D1.waypoints (+ .csv)...
    isr plan SCENARIO --export qgc p.plan --export geojson p.geojson   # as many as you like
    isr import qgc D1.plan [D2.waypoints ...] [--out scenario.json]

The formats are built by ``planner.interop``; this module checks the options before any
work, writes the files whole (``cli.common.write_atomically``) and reports what it wrote on
stderr (stdout stays the plan, or its JSON). Same conventions as every ``isr`` command: bad
input is one line per problem naming the file and the JSON path (or line), exit code 2.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from typer.core import TyperCommand

from cli.common import EXIT_FAILED, check_writable, fail, shown, write_atomically
from planner.errors import PlannerError
from planner.geo import GeoOrigin, LocalFrame
from planner.model import Scenario, Solution

__all__ = [
    "EXPORT_FORMATS",
    "Export",
    "ExportCommand",
    "check_exports",
    "export_frame",
    "import_app",
    "parse_origin",
    "placed",
    "write_export",
]

# format -> (the suffixes its file may take, one file per drone)
EXPORT_FORMATS: dict[str, tuple[tuple[str, ...], bool]] = {
    "qgc": ((".plan",), True),
    "geojson": ((".geojson", ".json"), False),
    "mavlink": ((".waypoints", ".txt"), True),
}
LABELS_SUFFIX = ".csv"  # beside each .waypoints: what each mission item is


class ExportCommand(TyperCommand):
    """A command whose ``--export FORMAT FILE`` may be given more than once. Typer has no
    option type for a list of pairs: the command declares ``export`` a list, and the option
    takes its two values per use here, once typer has built it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if param.name == "export":
                param.nargs = 2


@dataclass(frozen=True)
class Export:
    """A checked ``--export FORMAT FILE`` with its ``--origin`` and ``--altitude``."""

    fmt: str
    path: Path
    origin: GeoOrigin | None
    altitude: float


def parse_origin(text: str | None) -> GeoOrigin | None:
    """``"47.4,8.5"`` -> the origin; exit 2 naming ``--origin`` when it is not LAT,LON."""
    if text is None:
        return None
    parts = text.split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        lat, lon = (float(p) for p in parts)
        return GeoOrigin(lat0=lat, lon0=lon)
    except ValueError:
        raise fail(
            f"--origin {text!r}: expected LAT,LON in degrees (latitude -89 to 89,"
            " longitude -180 to 180), e.g. 47.397,8.545"
        ) from None


def check_exports(
    exports: list[tuple[str, str]] | None, origin: str | None, altitude: float
) -> list[Export]:
    """Every ``--export`` checked before any work (exit 2 naming the option): the format,
    the file's suffix and folder, and no two exports writing the same file."""
    if not exports:
        if origin is not None:
            raise fail("--origin places an export: give --export FORMAT FILE with it")
        return []
    if not (math.isfinite(altitude) and 0 < altitude <= 10_000):
        raise fail(f"--altitude {altitude!r}: expected metres above home, from 0 to 10000")
    place = parse_origin(origin)
    checked: list[Export] = []
    for fmt, name in exports:
        fmt, path = fmt.lower(), Path(name)
        if fmt not in EXPORT_FORMATS:
            raise fail(f"--export {fmt!r}: choose one of {', '.join(EXPORT_FORMATS)}")
        check_writable(path, f"--export {fmt}", EXPORT_FORMATS[fmt][0])
        twice = next((e for e in checked if e.path.resolve() == path.resolve()), None)
        if twice is not None:
            raise fail(
                f"--export {fmt} {shown(path)}: --export {twice.fmt} already writes"
                f" {shown(twice.path)}; give each export its own file"
            )
        checked.append(Export(fmt, path, place, altitude))
    return checked


def placed(scenario: Scenario, exports: list[Export], source: Path) -> Scenario:
    """A km mission an ``--origin`` places on the Earth, planned as the geographic mission
    it becomes (``planner.geodesy``: SAM covers, the geodesic check, the extent limit), so
    that its exported waypoints keep clear of the SAMs' true disks; exit 2 naming what the
    frame cannot hold. Any other scenario as it is."""
    from planner.geodesy import geo_problems

    origin = exports[0].origin if exports else None
    if scenario.geo is not None or origin is None:
        return scenario
    geographic = scenario.model_copy(update={"geo": origin})
    problems = geo_problems(geographic)
    if problems:
        raise fail(
            f"{shown(source)} placed at --origin {origin.lat0:g},{origin.lon0:g}: {p}"
            for p in problems
        )
    return geographic


def export_frame(scenario: Scenario, exports: list[Export], source: Path) -> LocalFrame | None:
    """The frame the exports (or the plan's lat/lon) are written in; exit 2 when an export
    needs one the mission does not have."""
    from planner.geo import local_frame
    from planner.interop import mission_frame

    if not exports:
        return None if scenario.geo is None else local_frame(scenario.geo)
    try:
        return mission_frame(scenario, exports[0].origin)
    except PlannerError as exc:
        raise fail(f"{shown(source)}: --export {exports[0].fmt}: {exc}") from None


def drone_file(path: Path, label: str) -> Path:
    """``plan.plan`` -> ``plan-D1.plan``: each drone's file, beside the one named."""
    return path.with_name(f"{path.stem}-{label}{path.suffix}")


def labels_file(path: Path) -> Path:
    """``mission-D1.waypoints`` -> ``mission-D1.waypoints.csv``: what each item is."""
    return path.with_name(path.name + LABELS_SUFFIX)


def write_export(
    export: Export, scenario: Scenario, solution: Solution, frame: LocalFrame
) -> list[Path]:
    """Write the export's file(s), each whole; the paths written."""
    written: list[Path] = []
    if export.fmt == "geojson":
        from planner.interop.geojson import geojson_plan

        write_atomically(
            export.path, _text_writer(_json(geojson_plan(scenario, solution, frame), 1))
        )
        return [export.path]
    if export.fmt == "qgc":
        from planner.interop.qgc import qgc_plans

        for label, plan in qgc_plans(scenario, solution, frame, export.altitude).items():
            path = drone_file(export.path, label)
            write_atomically(path, _text_writer(_json(plan, indent=4)))
            written.append(path)
        return written
    from planner.interop.mavlink import mavlink_missions

    for label, mission in mavlink_missions(scenario, solution, frame, export.altitude).items():
        path = drone_file(export.path, label)
        write_atomically(path, _text_writer(mission.text()))
        write_atomically(labels_file(path), _text_writer(mission.labels_csv()))
        written += [path, labels_file(path)]
    return written


def _json(data: Any, indent: int) -> str:
    return json.dumps(data, indent=indent) + "\n"


def _text_writer(text: str) -> Callable[[Path], object]:
    return lambda p: p.write_text(text, encoding="utf-8", newline="\n")


def report_written(export: Export, paths: list[Path]) -> None:
    """One line on stderr per file written."""
    err = Console(stderr=True, emoji=False, highlight=False)
    for path in paths:
        what = "what each mavlink item is" if path.suffix == LABELS_SUFFIX else export.fmt
        err.print(f"wrote {shown(path)} ({what})", markup=False, soft_wrap=True)
    if not paths:
        err.print(
            f"--export {export.fmt}: no drone has a route, nothing written",
            markup=False,
            soft_wrap=True,
        )


# ----- isr import -----------------------------------------------------------------------

import_app = typer.Typer(
    no_args_is_help=True, help="Build a scenario from another tool's mission files."
)


@import_app.command("qgc")
def import_qgc(
    files: Annotated[
        list[Path],
        typer.Argument(
            help="mission files, one drone each: QGroundControl .plan, or text missions"
            " (QGC WPL 110: .waypoints, .txt)"
        ),
    ],
    out: Annotated[
        Path | None, typer.Option(help="write the scenario JSON here (default: stdout)")
    ] = None,
    priority: Annotated[
        float, typer.Option(help="priority of every imported target", min=0, max=1000)
    ] = 1.0,
    target_type: Annotated[
        str, typer.Option("--type", help="sensor type of every imported target")
    ] = "A",
    fuel: Annotated[
        float | None,
        typer.Option(help="fuel budget (km) of every drone (default: its mission + 25%)"),
    ] = None,
) -> None:
    """Import QGroundControl plans and text missions: waypoints become targets, exclusion
    circles SAMs, exclusion polygons no-fly zones, rally points and homes airports, each
    file a drone; the geo origin is the first file's home. What is left out is noted."""
    from planner.interop.importer import scenario_from_qgc
    from planner.interop.qgc import QgcPlanError
    from planner.scenario_io import ScenarioError, parse_scenario

    check_writable(out, "--out", (".json",))
    if fuel is not None and not (0 < fuel <= 10_000):
        raise fail(f"--fuel {fuel!r}: expected km from 0 to 10000")
    sources = [_read_mission_file(path) for path in files]
    try:
        result = scenario_from_qgc(sources, priority=priority, target_type=target_type, fuel=fuel)
        text = json.dumps(result.scenario, indent=2) + "\n"
        scenario = parse_scenario(
            text, source=f"the scenario imported from {', '.join(shown(f) for f in files)}"
        )
    except (ScenarioError, QgcPlanError) as exc:
        raise fail(f"{exc.source}: {p}" for p in exc.problems) from None
    except PlannerError as exc:
        raise fail(f"{', '.join(shown(f) for f in files)}: {exc}") from None
    err = Console(stderr=True, emoji=False, highlight=False)
    for note in result.notes:
        err.print(f"note: {shown(note)}", markup=False, soft_wrap=True)
    env = scenario.environment
    summary = (
        f"imported {len(files)} file(s): {len(env.airports)} airports, {len(env.targets)}"
        f" targets, {len(env.sams)} SAMs, {len(scenario.drone_configs)} drones"
    )
    if out is None:
        typer.echo(text, nl=False)
        err.print(summary, markup=False, soft_wrap=True)
        return
    try:
        write_atomically(out, lambda p: p.write_text(text))
    except OSError as exc:
        raise fail(f"{shown(out)}: cannot write ({exc.strerror or exc})", EXIT_FAILED) from None
    err.print(f"{summary}; wrote {shown(out)}", markup=False, soft_wrap=True)


def _read_mission_file(path: Path) -> Any:
    """One mission file (``importer.read_mission_file``); exit 2 naming every problem."""
    from planner.interop.importer import read_mission_file
    from planner.interop.qgc import QgcPlanError
    from planner.scenario_io import ScenarioError, read_json_file

    try:
        return read_mission_file(read_json_file(path), shown(path))
    except (ScenarioError, QgcPlanError) as exc:
        raise fail(f"{exc.source}: {p}" for p in exc.problems) from None


def print_positions(scenario: Scenario, solution: Solution) -> None:
    """The routes' places in km and in lat/lon, when the plan has them (``Solution.geo``)."""
    from rich.table import Table

    from cli.common import cell

    if solution.geo is None:
        return
    origin = solution.geo.origin
    table = Table(title=f"Route places (geo origin {origin.lat0:.6f}, {origin.lon0:.6f})")
    for column in ("Id", "x km", "y km", "Latitude", "Longitude"):
        table.add_column(column, justify="left" if column == "Id" else "right")
    for node_id, (lat, lon) in solution.geo.nodes.items():
        x, y = scenario.environment.position(node_id) or (math.nan, math.nan)
        table.add_row(cell(node_id), f"{x:.3f}", f"{y:.3f}", f"{lat:.6f}", f"{lon:.6f}")
    Console(emoji=False, highlight=False).print(table)
