"""Exports against the loaders of the tools that open them, and real mission files in.

    python bench/exports_loaders.py [--places N] [--out bench/results/exports_loaders.txt]

Missions: the export cases of the tests (the demo around Zurich, Sydney, Tromsø, Quito and
astride the antimeridian near Fiji, and a geographic mission 6,000 km across) and the demo
planned again at ``--places`` random places (latitude 70 S to 70 N, any longitude).

* ``.plan``: QGroundControl's plan loader (``PlanMasterController::_loadPlanJson`` and what
  it calls, transcribed in ``tests/planner/qgc_loaders.py``) opens it and holds the items
  written, param for param; the published format's strict model accepts it.
* ``.waypoints``: QGroundControl's text loader (``MissionController::_loadTextMissionFile``)
  opens it with every field converted cleanly and keeps every item after the take-off
  (it drops the take-off command itself: QGC issue #13167); pymavlink's ``mavwp`` (MAVProxy,
  ArduPilot's autotest) loads every item back. The same missions written the old way
  (pymavlink's writer, a ``#`` comment per item) are counted against QGC's loader beside them.
* GeoJSON: geojson-pydantic accepts it, shapely finds every geometry valid, and no leg jumps
  the long way round (the antimeridian cut).
* Real files in: QGroundControl's and ArduPilot-style mission files (``tests/data``)
  through ``isr import``'s reader.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np
from geojson_pydantic import FeatureCollection
from pymavlink import mavwp
from rich.console import Console
from rich.table import Table
from shapely.geometry import shape

from planner.geo import GeoOrigin
from planner.interop import mission_frame
from planner.interop.geojson import geojson_plan
from planner.interop.importer import read_mission_file, scenario_from_qgc
from planner.interop.mavlink import mavlink_missions
from planner.interop.qgc import QgcPlanError, qgc_plans
from planner.interop.qgc_format import PlanFile
from planner.mission import compile_mission
from planner.planning import plan_mission
from planner.scenario_io import ScenarioError, load_scenario, parse_scenario
from tests.planner.export_cases import ExportCase, export_cases
from tests.planner.qgc_loaders import QgcLoadError, qgc_load_plan, qgc_load_text_mission


def cases(places: int) -> list[ExportCase]:
    out = list(export_cases())
    demo = load_scenario(ROOT / "scenarios" / "demo.json")
    rng = np.random.default_rng(26)
    for k in range(places):
        solution = plan_mission(compile_mission(demo), "team", iterations=200, seed=k).solution
        origin = GeoOrigin(lat0=float(rng.uniform(-70, 70)), lon0=float(rng.uniform(-180, 180)))
        out.append(ExportCase(f"random {k}", demo, solution, mission_frame(demo, origin)))
    return out


def plan_files(case: ExportCase) -> tuple[int, int]:
    """(files, files QGC's plan loader opens with every item as written)."""
    plans = qgc_plans(case.scenario, case.solution, case.frame)
    good = 0
    for plan in plans.values():
        text = json.dumps(plan, indent=4)
        try:
            PlanFile.model_validate_json(text)
            loaded = qgc_load_plan(text)
        except (QgcLoadError, ValueError):
            continue
        written = [
            [float("nan") if p is None else p for p in i["params"]]
            for i in plan["mission"]["items"]
        ]
        same = [i.command for i in loaded.items] == [i["command"] for i in plan["mission"]["items"]]
        same = same and all(
            np.allclose(got.params, want, equal_nan=True, rtol=0, atol=0)
            for got, want in zip(loaded.items, written)
        )
        good += same
    return len(plans), good


def waypoint_files(case: ExportCase, folder: Path) -> dict[str, int]:
    missions = mavlink_missions(case.scenario, case.solution, case.frame)
    tally = {
        "files": 0,
        "qgc": 0,
        "qgc_clean": 0,
        "qgc_kept": 0,
        "items": 0,
        "mavwp": 0,
        "old_qgc": 0,
    }
    for label, mission in missions.items():
        tally["files"] += 1
        text = mission.text()
        tally["items"] += len(mission.items) - 1  # less the home line
        try:
            loaded = qgc_load_text_mission(text)
            tally["qgc"] += 1
            tally["qgc_clean"] += loaded.text_fields_ok
            rest = mission.items[2:]  # after the home and the take-off
            kept = [(i.command, *np.round(i.params[4:6], 8)) for i in loaded.items]
            tally["qgc_kept"] += sum(
                k == (w.command, round(w.x, 8), round(w.y, 8)) for k, w in zip(kept, rest)
            )
        except QgcLoadError:
            pass
        path = folder / f"{label}.waypoints"
        path.write_text(text)
        back = mavwp.MAVWPLoader()
        if back.load(str(path)) == len(mission.items) and all(
            abs(back.wp(s).x - w.x) < 1e-8 and back.wp(s).command == w.command
            for s, w in enumerate(mission.items)
        ):
            tally["mavwp"] += 1
        old = mavwp.MAVWPLoader()  # the previous export: pymavlink's writer, commented
        for w, (kind, node) in zip(mission.items, mission.kinds):
            old.add(w, comment=f"{kind} {node}".strip())
        old.save(str(path))
        try:
            qgc_load_text_mission(path.read_text())
            tally["old_qgc"] += 1
        except QgcLoadError:
            pass
    return tally


def geojson_file(case: ExportCase) -> tuple[bool, int]:
    """(valid by geojson-pydantic and shapely with no long-way leg, geometries cut)."""
    data = geojson_plan(case.scenario, case.solution, case.frame)
    try:
        FeatureCollection.model_validate(data)
    except ValueError:
        return False, 0
    cut, good = 0, True
    for feature in data["features"]:
        geometry = feature["geometry"]
        good = good and shape(geometry).is_valid
        cut += geometry["type"] in ("MultiLineString", "MultiPolygon")
        if geometry["type"] in ("LineString", "MultiLineString"):
            parts = (
                [geometry["coordinates"]]
                if geometry["type"] == "LineString"
                else geometry["coordinates"]
            )
            good = good and all(abs(b[0] - a[0]) <= 180 for p in parts for a, b in zip(p, p[1:]))
    return good, cut


def real_files(console: Console) -> None:
    table = Table(title="Real mission files through isr import's reader")
    for column in ("file", "result", "notes"):
        table.add_column(column, overflow="fold")
    for path in sorted((ROOT / "tests" / "data").glob("*/*")):
        if path.suffix not in (".plan", ".waypoints", ".txt") or path.parent.name == "top":
            continue
        name = f"{path.parent.name}/{path.name}"
        try:
            result = scenario_from_qgc([read_mission_file(path.read_bytes(), path.name)])
            env = parse_scenario(json.dumps(result.scenario)).environment
            said = f"{len(env.airports)} airports, {len(env.targets)} targets, {len(env.sams)} SAMs"
            table.add_row(name, said, "; ".join(n.split(": ", 1)[1] for n in result.notes) or "-")
        except (QgcPlanError, ScenarioError) as exc:
            table.add_row(name, "refused (exit 2)", "; ".join(exc.problems))
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--places", type=int, default=8)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    console = Console(record=True, width=120)
    console.print(
        f"bench/exports_loaders.py — 1-minute load {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
    )
    all_cases = cases(args.places)
    plans = [0, 0]
    waypoints: dict[str, int] = {}
    geo_ok, geo_cut = 0, 0
    with tempfile.TemporaryDirectory() as folder:
        for case in all_cases:
            n, good = plan_files(case)
            plans[0] += n
            plans[1] += good
            for key, value in waypoint_files(case, Path(folder)).items():
                waypoints[key] = waypoints.get(key, 0) + value
            ok, cut = geojson_file(case)
            geo_ok += ok
            geo_cut += cut
    table = Table(title=f"Exports of {len(all_cases)} planned missions against real loaders")
    for column in ("export", "files", "loader", "pass", "target"):
        table.add_column(column, justify="right")
    w = waypoints
    table.add_row(
        ".plan",
        str(plans[0]),
        "QGC plan loader (transcribed), items as written",
        str(plans[1]),
        "all",
    )
    table.add_row(
        ".waypoints", str(w["files"]), "QGC text loader (transcribed): opens", str(w["qgc"]), "all"
    )
    table.add_row("", "", "... every field converted cleanly", str(w["qgc_clean"]), "all")
    table.add_row(
        "",
        "",
        f"... items kept after the take-off, of {w['items'] - w['files']}",
        str(w["qgc_kept"]),
        "all",
    )
    table.add_row("", "", "pymavlink mavwp (MAVProxy, ArduPilot autotest)", str(w["mavwp"]), "all")
    table.add_row(
        "old .waypoints",
        str(w["files"]),
        "QGC text loader, '#' comments (before)",
        str(w["old_qgc"]),
        "-",
    )
    table.add_row(
        ".geojson", str(len(all_cases)), "geojson-pydantic + shapely valid", str(geo_ok), "all"
    )
    table.add_row("", "", "geometries cut at the antimeridian", str(geo_cut), "-")
    console.print(table)
    real_files(console)
    console.print(f"1-minute load after: {os.getloadavg()[0]:.2f}")
    if args.out is not None:
        args.out.write_text(console.export_text())


if __name__ == "__main__":
    main()
