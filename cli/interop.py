"""Plans out to the tools drone people use, missions in from them.

    isr plan SCENARIO --export qgc plan.plan [--origin LAT,LON]   # plan-D1.plan, plan-D2.plan...
    isr plan SCENARIO --export geojson plan.geojson
    isr plan SCENARIO --export mavlink mission.waypoints           # mission-D1.waypoints...
    isr import qgc D1.plan [D2.plan ...] [--out scenario.json]

The formats are built by ``planner.interop``; this module checks the options before any
work, writes the files whole (``cli.common.write_atomically``) and reports what it wrote on
stderr (stdout stays the plan, or its JSON). Same conventions as every ``isr`` command: bad
input is one line per problem naming the file and the JSON path, exit code 2.
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

from cli.common import EXIT_FAILED, check_writable, fail, shown, write_atomically
from planner.errors import PlannerError
from planner.geo import GeoOrigin, LocalFrame
from planner.model import Scenario, Solution

__all__ = [
    "EXPORT_FORMATS",
    "Export",
    "check_export",
    "export_frame",
    "import_app",
    "parse_origin",
    "write_export",
]

# format -> (the suffixes its file may take, one file per drone)
EXPORT_FORMATS: dict[str, tuple[tuple[str, ...], bool]] = {
    "qgc": ((".plan",), True),
    "geojson": ((".geojson", ".json"), False),
    "mavlink": ((".waypoints", ".txt"), True),
}


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


def check_export(
    export: tuple[str, Path] | None, origin: str | None, altitude: float
) -> Export | None:
    """The ``--export`` options checked before any work (exit 2 naming the option)."""
    if export is None:
        if origin is not None:
            raise fail("--origin places an export: give --export FORMAT FILE with it")
        return None
    fmt, path = export
    fmt = fmt.lower()
    if fmt not in EXPORT_FORMATS:
        raise fail(f"--export {fmt!r}: choose one of {', '.join(EXPORT_FORMATS)}")
    check_writable(path, f"--export {fmt}", EXPORT_FORMATS[fmt][0])
    if not (math.isfinite(altitude) and 0 < altitude <= 10_000):
        raise fail(f"--altitude {altitude!r}: expected metres above home, from 0 to 10000")
    return Export(fmt, path, parse_origin(origin), altitude)


def export_frame(scenario: Scenario, export: Export | None, source: Path) -> LocalFrame | None:
    """The frame the export (or the plan's lat/lon) is written in; exit 2 when an export
    needs one the mission does not have."""
    from planner.geo import local_frame
    from planner.interop import mission_frame

    if export is None:
        return None if scenario.geo is None else local_frame(scenario.geo)
    try:
        return mission_frame(scenario, export.origin)
    except PlannerError as exc:
        raise fail(f"{shown(source)}: --export {export.fmt}: {exc}") from None


def drone_file(path: Path, label: str) -> Path:
    """``plan.plan`` -> ``plan-D1.plan``: each drone's file, beside the one named."""
    return path.with_name(f"{path.stem}-{label}{path.suffix}")


def write_export(
    export: Export, scenario: Scenario, solution: Solution, frame: LocalFrame
) -> list[Path]:
    """Write the export's file(s), each whole; the paths written."""
    written: list[Path] = []
    if export.fmt == "geojson":
        from planner.interop.geojson import geojson_plan

        write_atomically(export.path, _json_writer(geojson_plan(scenario, solution, frame), 1))
        return [export.path]
    if export.fmt == "qgc":
        from planner.interop.qgc import qgc_plans

        for label, plan in qgc_plans(scenario, solution, frame, export.altitude).items():
            path = drone_file(export.path, label)
            write_atomically(path, _json_writer(plan, indent=4))
            written.append(path)
        return written
    from planner.interop.mavlink import mavlink_missions

    for label, loader in mavlink_missions(scenario, solution, frame, export.altitude).items():
        path = drone_file(export.path, label)
        write_atomically(path, _loader_writer(loader))
        written.append(path)
    return written


def _json_writer(data: Any, indent: int) -> Callable[[Path], object]:
    text = json.dumps(data, indent=indent) + "\n"
    return lambda p: p.write_text(text)


def _loader_writer(loader: Any) -> Callable[[Path], object]:
    return lambda p: loader.save(str(p))  # pymavlink's own writer: QGC WPL 110


def report_written(export: Export, paths: list[Path]) -> None:
    """One line on stderr per file written."""
    err = Console(stderr=True, emoji=False, highlight=False)
    for path in paths:
        err.print(f"wrote {shown(path)} ({export.fmt})", markup=False, soft_wrap=True)
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
    files: Annotated[list[Path], typer.Argument(help="QGroundControl .plan files, one drone each")],
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
    """Import QGroundControl plans: waypoints become targets, exclusion circles SAMs,
    rally points and homes airports, each file a drone; the geo origin is the first
    file's planned home position."""
    from planner.interop.qgc import QgcPlanError, read_qgc_plan, scenario_from_qgc
    from planner.scenario import ScenarioError, parse_json, parse_scenario, read_json_file

    check_writable(out, "--out", (".json",))
    if fuel is not None and not (0 < fuel <= 10_000):
        raise fail(f"--fuel {fuel!r}: expected km from 0 to 10000")
    plans = []
    for path in files:
        try:
            data: Any = parse_json(read_json_file(path), str(path))
            plans.append((shown(path), read_qgc_plan(data, shown(path))))
        except ScenarioError as exc:
            raise fail(f"{exc.source}: {p}" for p in exc.problems) from None
        except QgcPlanError as exc:
            raise fail(f"{exc.source}: {p}" for p in exc.problems) from None
    try:
        result = scenario_from_qgc(plans, priority=priority, target_type=target_type, fuel=fuel)
    except QgcPlanError as exc:
        raise fail(f"{exc.source}: {p}" for p in exc.problems) from None
    text = json.dumps(result.scenario, indent=2) + "\n"
    try:
        scenario = parse_scenario(text, source="the imported scenario")
    except ScenarioError as exc:
        raise fail(f"{exc.source}: {p}" for p in exc.problems) from None
    err = Console(stderr=True, emoji=False, highlight=False)
    for note in result.notes:
        err.print(f"note: {shown(note)}", markup=False, soft_wrap=True)
    env = scenario.environment
    summary = (
        f"imported {len(files)} plan(s): {len(env.airports)} airports, {len(env.targets)}"
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
