"""`isr plan --export` and `isr import qgc` as a user runs them: real process, real files
(every success, and a refusal of each command, in a real process; the other refusals
through the same typer app in this process: their exit code and message are the app's)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import Result
from typer.testing import CliRunner

from cli.main import build_app
from planner.interop.qgc_format import PlanFile
from tests.conftest import ROOT

ISR = [sys.executable, "-m", "cli"]
APP = build_app()

GEO_SCENARIO = {
    "geo": {"lat0": 47.4, "lon0": 8.5},
    "environment": {
        "airports": [{"id": "A1", "lat": 47.45, "lon": 8.45}, {"id": "A2", "x": 30, "y": 0}],
        "targets": [
            {"id": "T1", "lat": 47.5, "lon": 8.6, "priority": 5, "type": "A"},
            {"id": "T2", "x": 10, "y": 20, "priority": 3, "type": "A"},
        ],
        "sams": [{"id": "S1", "lat": 47.47, "lon": 8.55, "range": 3}],
    },
    "drone_configs": {"1": {"fuelBudget": 150, "home_airport": "A1"}},
}


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([*ISR, *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def invoke(*args: str) -> Result:
    """The same command in this process, through the same typer app: for refusals, whose
    exit code and message are the app's (a process start costs ~0.6 CPU s of imports)."""
    return CliRunner().invoke(APP, list(args))


def test_export_qgc_then_import_gives_a_mission_that_plans(demo_path, tmp_path):
    out = tmp_path / "plan.plan"
    done = run(
        "plan", str(demo_path), "--iterations", "2000", "--export", "qgc", str(out),
        "--origin", "47.397742,8.545594",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    files = sorted(tmp_path.glob("plan-*.plan"))
    assert [f.name for f in files] == ["plan-D1.plan", "plan-D2.plan", "plan-D3.plan"]
    assert f"wrote {files[0]} (qgc)" in done.stderr
    assert "Latitude" in done.stdout  # the origin places the km mission: lat/lon shown too
    for file in files:
        PlanFile.model_validate_json(file.read_text())
    scenario = tmp_path / "imported.json"
    done = run("import", "qgc", *map(str, files), "--out", str(scenario))
    assert done.returncode == 0, done.stderr
    assert "imported 3 file(s): 3 airports" in done.stderr and "2 SAMs, 3 drones" in done.stderr
    data = json.loads(scenario.read_text())
    assert data["geo"] and all("lat" in a for a in data["environment"]["airports"])
    done = run("plan", str(scenario), "--json", "--iterations", "500")
    assert done.returncode == 0, done.stderr
    solution = json.loads(done.stdout)
    assert solution["total_points"] > 0
    assert set(solution["geo"]["nodes"]) >= {"A1"}  # an imported mission is geographic


def test_export_without_an_origin_is_refused_before_planning(demo_path, tmp_path):
    done = run("plan", str(demo_path), "--export", "qgc", str(tmp_path / "p.plan"))
    assert done.returncode == 2
    assert "--export qgc: the mission has no geographic origin" in done.stderr
    assert "--origin LAT,LON" in done.stderr and "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []
    for args, expected in [
        (("--export", "kml", str(tmp_path / "p.kml")), "--export 'kml': choose one of qgc"),
        (("--export", "qgc", str(tmp_path / "p.json")), "expected a file ending in .plan"),
        (("--export", "qgc", str(tmp_path / "p.plan"), "--origin", "47"), "--origin '47'"),
        (("--origin", "47,8"), "--origin places an export"),
    ]:  # the other refusals: the first one above went through a real process
        refused = invoke("plan", str(demo_path), *args)
        assert refused.exit_code == 2 and expected in refused.stderr, refused.output
        assert list(tmp_path.iterdir()) == []


def test_a_geographic_mission_reports_lat_lon_and_exports_geojson_and_mavlink(tmp_path):
    scenario = tmp_path / "geo.json"
    scenario.write_text(json.dumps(GEO_SCENARIO))
    geojson = tmp_path / "plan.geojson"
    done = run(
        "plan", str(scenario), "--json", "--iterations", "500", "--export", "geojson", str(geojson)
    )
    assert done.returncode == 0, done.stderr
    solution = json.loads(done.stdout)
    assert solution["geo"]["origin"] == {"lat0": 47.4, "lon0": 8.5}
    lat, lon = solution["geo"]["nodes"]["T1"]
    assert abs(lat - 47.5) < 1e-9 and abs(lon - 8.6) < 1e-9  # given in lat/lon, given back
    features = json.loads(geojson.read_text())["features"]
    assert {f["properties"]["kind"] for f in features} == {"route", "airport", "target", "sam"}
    done = run(
        "plan",
        str(scenario),
        "--iterations",
        "500",
        "--export",
        "mavlink",
        str(tmp_path / "m.waypoints"),
    )
    assert done.returncode == 0, done.stderr
    assert "Latitude" in done.stdout and "47.500000" in done.stdout  # the table's lat/lon
    text = (tmp_path / "m-D1.waypoints").read_text()
    assert text.startswith("QGC WPL 110\n") and "#" not in text  # QGC refuses comment lines
    labels = (tmp_path / "m-D1.waypoints.csv").read_text().splitlines()
    assert labels[0] == "seq,command,kind,node,latitude,longitude,altitude_m"
    assert any(",target,T1,47.50000000,8.60000000," in row for row in labels)
    assert len(labels) == len(text.splitlines())  # a row per item, as the header is one line


def test_lat_lon_without_origin_and_bad_plan_files_are_named(tmp_path):
    data = json.loads(json.dumps(GEO_SCENARIO))
    del data["geo"]
    scenario = tmp_path / "nogeo.json"
    scenario.write_text(json.dumps(data))
    done = run("validate", str(scenario))
    assert done.returncode == 2
    assert "$.environment.airports[0]: a lat/lon position needs" in done.stderr
    done = run("import", "qgc", str(scenario))  # a scenario is not a plan file
    assert done.returncode == 2
    assert '$.fileType: must be "Plan"' in done.stderr and "Traceback" not in done.stderr
    # the other refusal of import: the one above went through a real process
    plan = json.loads((ROOT / "tests/data/qgc/SectionTest.plan").read_text())
    plan["mission"]["items"][3]["autoContinue"] = "yes"
    bad = tmp_path / "bad.plan"
    bad.write_text(json.dumps(plan))
    done = invoke("import", "qgc", str(bad))
    assert done.exit_code == 2, done.output
    assert f"{bad}: $.mission.items[3].autoContinue: Input should be a valid boolean" in done.stderr


def test_every_repeated_export_is_written_and_two_on_one_file_are_refused(demo_path, tmp_path):
    done = run(
        "plan", str(demo_path), "--iterations", "300", "--origin", "47.397742,8.545594",
        "--export", "qgc", str(tmp_path / "p.plan"),
        "--export", "geojson", str(tmp_path / "p.geojson"),
        "--export", "mavlink", str(tmp_path / "m.waypoints"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(
        ["p.geojson"]
        + [f"p-D{n}.plan" for n in (1, 2, 3)]
        + [f"m-D{n}.waypoints" for n in (1, 2, 3)]
        + [f"m-D{n}.waypoints.csv" for n in (1, 2, 3)]
    )
    assert done.stderr.count("wrote ") == 10
    again = tmp_path / "again"
    again.mkdir()
    done = invoke(  # a refusal: the plan above went through a real process
        "plan", str(demo_path), "--origin", "47.4,8.5",
        "--export", "qgc", str(again / "p.plan"), "--export", "qgc", str(again / "." / "p.plan"),
    )  # fmt: skip
    assert done.exit_code == 2 and "Traceback" not in done.stderr, done.output
    assert (
        "--export qgc already writes" in done.stderr
        and "give each export its own file" in done.stderr
    )
    assert list(again.iterdir()) == []  # refused before planning: nothing written


def test_import_reads_text_missions_and_names_every_bad_file(tmp_path):
    waypoints = ROOT / "tests/data/qgc/MissionPlanner.waypoints"  # both near Redmond, WA
    plan = ROOT / "tests/data/qgc/SectionTest.plan"
    out = tmp_path / "both.json"
    done = run("import", "qgc", str(waypoints), str(plan), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "imported 2 file(s)" in done.stderr
    assert f"note: {plan}: $.mission.items[3]: command 205 not imported" in done.stderr
    assert set(json.loads(out.read_text())["drone_configs"]) == {"1", "2"}
    data = json.loads(plan.read_text())
    data["mission"]["items"][1]["coordinate"][0] = 100
    bad = tmp_path / "lat100.plan"
    bad.write_text(json.dumps(data))
    text = tmp_path / "short.waypoints"
    text.write_text("QGC WPL 110\n0\t1\t0\t16\t0\t0\t0\t0\t47\t8\t0\t1\n1\t0\t3\t16\t0\t0\n")
    for path, expected in [
        (bad, f"{bad}: $.mission.items[1].coordinate[0]: Input should be less than or equal to 90"),
        (text, f"{text}: line 3: 6 fields; an item has 12"),
    ]:  # refusals: the import above, and one in test_lat_lon_..., went through a real process
        done = invoke("import", "qgc", str(path))
        assert done.exit_code == 2, done.output
        assert expected in done.stderr
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr


def test_validate_refuses_a_mission_wider_than_its_frame(tmp_path):
    data = json.loads(json.dumps(GEO_SCENARIO))
    data["environment"]["targets"].append(
        {"id": "T3", "lat": 20.0, "lon": 40.0, "priority": 1, "type": "A"}
    )
    scenario = tmp_path / "wide.json"
    scenario.write_text(json.dumps(data))
    done = run("validate", str(scenario))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "$.environment.targets[2]: it is 4," in done.stderr
    assert "a geographic mission reaches at most 3,400 km from its origin" in done.stderr


def test_a_km_mission_placed_by_origin_is_planned_as_geographic(tmp_path):
    """--origin makes the km mission geographic for its plan too: SAM covers and the
    geodesic check apply, and one wider than the frame holds is refused before planning."""
    wide = {
        "environment": {
            "airports": [{"id": "A1", "x": 0, "y": 0}],
            "targets": [{"id": "T1", "x": 4000, "y": 0, "priority": 5, "type": "A"}],
        },
        "drone_configs": {"1": {"fuelBudget": 9000, "home_airport": "A1"}},
    }
    scenario = tmp_path / "wide.json"
    scenario.write_text(json.dumps(wide))
    out = tmp_path / "p.plan"
    done = run("plan", str(scenario), "--origin", "10,20", "--export", "qgc", str(out))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert (
        f"{scenario} placed at --origin 10,20: $.environment.targets[0]: it is 4,000 km"
        in done.stderr
    )
    assert list(tmp_path.glob("*.plan")) == []
    assert run("plan", str(scenario), "--iterations", "50").returncode == 0  # flat km: fine
