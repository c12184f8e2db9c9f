"""`isr plan --export` and `isr import qgc` as a user runs them: real process, real files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from planner.interop.qgc_format import PlanFile
from tests.conftest import ROOT

ISR = [sys.executable, "-m", "cli"]

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
    ]:
        done = run("plan", str(demo_path), *args)
        assert done.returncode == 2 and expected in done.stderr, done.stderr


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
    plan = json.loads((ROOT / "tests/data/qgc/SectionTest.plan").read_text())
    plan["mission"]["items"][3]["autoContinue"] = "yes"
    bad = tmp_path / "bad.plan"
    bad.write_text(json.dumps(plan))
    done = run("import", "qgc", str(bad))
    assert done.returncode == 2
    assert f"{bad}: $.mission.items[3].autoContinue: Input should be a valid boolean" in done.stderr
