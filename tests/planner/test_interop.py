"""Plans out to QGroundControl, GeoJSON and MAVLink, and QGC plans back in: the files
follow the formats' published definitions, the waypoints follow the SAM-avoiding paths,
and a round trip keeps the SAMs and airports within a metre."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from geojson_pydantic import FeatureCollection
from pyproj import Geod

from planner.errors import PlannerError
from planner.geo import GeoOrigin, local_frame
from planner.interop import flights, geo_solution, mission_frame
from planner.interop.geojson import geojson_plan
from planner.interop.importer import scenario_from_qgc
from planner.interop.mavlink import mavlink_missions
from planner.interop.qgc import (
    MAV_CMD_NAV_LAND,
    MAV_CMD_NAV_TAKEOFF,
    MAV_CMD_NAV_WAYPOINT,
    QgcPlanError,
    qgc_plans,
    read_qgc_plan,
)
from planner.interop.qgc_format import FenceCircle, PlanFile, RallyPoints, SimpleItem
from planner.mission import compile_mission
from planner.model import Scenario, Solution
from planner.planning import plan_mission
from planner.scenario_io import load_scenario, parse_scenario
from tests.conftest import SCENARIOS

DATA = Path(__file__).resolve().parents[1] / "data" / "qgc"
ORIGIN = GeoOrigin(lat0=47.397742, lon0=8.545594)  # the QGC docs' example home, roughly
GEOD = Geod(ellps="WGS84")


def metres(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Geodesic distance between two (lat, lon)."""
    return float(GEOD.inv(a[1], a[0], b[1], b[0])[2])


@pytest.fixture(scope="module")
def planned() -> tuple[Scenario, Solution]:
    scenario = load_scenario(SCENARIOS / "demo.json")
    result = plan_mission(compile_mission(scenario), "team", iterations=2000, seed=0)
    return scenario, result.solution


@pytest.fixture(scope="module")
def plans(planned) -> dict[str, dict]:
    scenario, solution = planned
    return qgc_plans(scenario, solution, local_frame(ORIGIN))


def test_qgc_export_follows_the_published_format(plans):
    assert set(plans) == {"D1", "D2", "D3"}  # one plan file per drone
    for plan in plans.values():
        checked = PlanFile.model_validate(json.loads(json.dumps(plan)))  # as written to disk
        assert checked.mission.version == 2 and checked.geoFence.version == 2
        items = checked.mission.items
        assert [i.doJumpId for i in items] == list(range(1, len(items) + 1))
        assert items[0].command == MAV_CMD_NAV_TAKEOFF and items[-1].command == MAV_CMD_NAV_LAND
        assert {i.command for i in items[1:-1]} <= {MAV_CMD_NAV_WAYPOINT}
        assert all(i.frame == 3 and i.AltitudeMode == 1 for i in items)  # relative to home


def test_the_format_models_take_the_documented_examples():
    """The examples of QGC's "Plan File Format" page, typed in: the strict models must
    accept what the definition shows (a misread field name would fail here)."""
    SimpleItem.model_validate(
        {
            "AMSLAltAboveTerrain": None,
            "Altitude": 50,
            "AltitudeMode": 0,
            "autoContinue": True,
            "command": 22,
            "doJumpId": 1,
            "frame": 3,
            "params": [15, 0, 0, None, 47.3985099, 8.5451002, 50],
            "type": "SimpleItem",
        }
    )
    FenceCircle.model_validate(
        {
            "circle": {"center": [47.39756763610029, 8.544649762407738], "radius": 319.85},
            "inclusion": True,
            "version": 1,
        }
    )
    RallyPoints.model_validate(
        {"points": [[47.39760401, 8.5509154, 50], [47.39902017, 8.54263274, 50]], "version": 2}
    )


def test_qgc_geofence_and_rally_points_are_the_sams_and_airports(planned, plans):
    scenario, _ = planned
    frame = local_frame(ORIGIN)
    env = scenario.environment
    for plan in plans.values():
        circles = plan["geoFence"]["circles"]
        assert [c["inclusion"] for c in circles] == [False] * len(env.sams)
        for circle, sam in zip(circles, env.sams):
            assert circle["circle"]["radius"] == pytest.approx(sam.range * 1000)  # metres
            assert metres(tuple(circle["circle"]["center"]), frame.to_geo(sam.x, sam.y)) < 1e-3
        points = plan["rallyPoints"]["points"]
        assert len(points) == len(env.airports)
        for point, airport in zip(points, env.airports):
            assert metres((point[0], point[1]), frame.to_geo(airport.x, airport.y)) < 1e-3


def test_qgc_waypoints_follow_the_sam_avoiding_path(planned, plans):
    scenario, solution = planned
    frame = local_frame(ORIGIN)
    env = scenario.environment
    accept = scenario.sim.capture_radius * 1000
    for label, plan in plans.items():
        drone = label.removeprefix("D")
        route = solution.routes[drone]
        items = plan["mission"]["items"]
        km = [frame.to_local(i["params"][4], i["params"][5]) for i in items]
        assert km[0] == pytest.approx(env.position(route.route[0]), abs=1e-6)
        assert km[-1] == pytest.approx(env.position(route.route[-1]), abs=1e-6)
        # Every straight leg between waypoints stays out of every true SAM disk.
        for (x0, y0), (x1, y1) in zip(km, km[1:]):
            for sam in env.sams:
                assert _segment_distance(sam.x, sam.y, x0, y0, x1, y1) >= sam.range - 1e-6
        # Each visited target is a waypoint carrying the capture radius, in route order.
        marked = [
            frame.to_local(i["params"][4], i["params"][5])
            for i in items
            if i["params"][1] == accept
        ]
        expected = [env.position(t) for t in route.visited_targets]
        assert len(marked) == len(expected)
        for got, want in zip(marked, expected):
            assert got == pytest.approx(want, abs=1e-6)
        length = sum(math.dist(a, b) for a, b in zip(km, km[1:]))
        assert length == pytest.approx(route.distance, rel=1e-3)  # chords of the arcs
    # The demo's routes go round SAMs: some waypoints are path points, not targets.
    assert any(i["params"][1] == 0 for p in plans.values() for i in p["mission"]["items"][1:-1])


def _segment_distance(px, py, x0, y0, x1, y1) -> float:
    dx, dy = x1 - x0, y1 - y0
    length2 = dx * dx + dy * dy
    t = 0.0 if length2 == 0 else max(0.0, min(1.0, ((px - x0) * dx + (py - y0) * dy) / length2))
    return math.hypot(px - (x0 + t * dx), py - (y0 + t * dy))


def test_qgc_round_trip_keeps_sams_airports_and_targets(planned, plans):
    scenario, solution = planned
    frame = local_frame(ORIGIN)
    read = [(label, read_qgc_plan(json.loads(json.dumps(p)), label)) for label, p in plans.items()]
    imported = scenario_from_qgc(read)
    back = parse_scenario(json.dumps(imported.scenario))
    back_frame = local_frame(back.geo)
    env, env2 = scenario.environment, back.environment

    def geo_of(items, frame_):
        return [frame_.to_geo(i.x, i.y) for i in items]

    assert len(env2.airports) == len(env.airports)
    for a, b in zip(geo_of(env.airports, frame), geo_of(env2.airports, back_frame)):
        assert metres(a, b) < 1.0
    assert len(env2.sams) == len(env.sams)
    for sam, sam2 in zip(env.sams, env2.sams):
        assert metres(frame.to_geo(*sam.pos), back_frame.to_geo(*sam2.pos)) < 1.0
        assert sam2.range == pytest.approx(sam.range, abs=1e-3)
    visited = [t for r in solution.routes.values() for t in r.visited_targets]
    assert len(env2.targets) == len(visited)  # path points did not become targets
    want = [frame.to_geo(*env.position(t)) for t in visited]
    for target in env2.targets:
        got = back_frame.to_geo(target.x, target.y)
        assert min(metres(got, w) for w in want) < 1.0
    # Each file is a drone, home at its start airport, with fuel for its own mission.
    assert len(back.drone_configs) == len(plans)
    for n, route in enumerate(solution.routes.values(), start=1):
        config = back.drone_configs[str(n)]
        home = back_frame.to_geo(*env2.position(config.home))
        assert metres(home, frame.to_geo(*env.position(route.route[0]))) < 1.0
        assert config.fuel_budget >= route.distance
    assert back.sim.speed == pytest.approx(scenario.sim.speed)
    assert back.geo is not None
    assert metres((back.geo.lat0, back.geo.lon0), frame.to_geo(*env.position("A1"))) < 1.0


def test_a_real_qgc_plan_file_imports():
    """A plan QGroundControl saved (its own unit test's file, an older variant)."""
    path = DATA / "SectionTest.plan"
    plan = read_qgc_plan(json.loads(path.read_text()), path.name)
    imported = scenario_from_qgc([(path.name, plan)], priority=4, target_type="EO")
    scenario = parse_scenario(json.dumps(imported.scenario))
    assert scenario.geo == GeoOrigin(lat0=47.633389756176875, lon0=-122.09076300000001)
    targets = scenario.environment.targets
    assert len(targets) == 3  # the three NAV_WAYPOINTs; take-off and the mount command not
    frame = local_frame(scenario.geo)
    assert metres(frame.to_geo(targets[0].x, targets[0].y), (47.63369112, -122.08925023)) < 0.01
    assert {(t.priority, t.type) for t in targets} == {(4.0, "EO")}
    assert [a.id for a in scenario.environment.airports] == ["A1"]
    drone = scenario.drone_configs["1"]
    assert drone.home == "A1" and drone.fuel_budget >= 1
    assert any("command 205 not imported" in note for note in imported.notes)
    assert scenario.sim.speed == pytest.approx(0.015)  # cruiseSpeed 15 m/s


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda d: d.pop("fileType"), '$.fileType: must be "Plan"'),
        (lambda d: d["mission"]["items"][1].update(params="x"), "$.mission.items[1].params:"),
        (
            lambda d: d["mission"]["items"][2].pop("command"),
            "$.mission.items[2].command: Field required",
        ),
        (lambda d: d["mission"]["items"][0].update(type="Bogus"), "$.mission.items[0]:"),
        (
            lambda d: d["mission"].update(plannedHomePosition=[95, 0, 0]),
            "$.mission.plannedHomePosition[0]:",
        ),
        (lambda d: d.update(version=7), "$.version:"),
        (lambda d: d.pop("rallyPoints"), "$.rallyPoints: Field required"),
    ],
)
def test_a_file_that_is_not_a_qgc_plan_is_named_by_field_and_index(change, expected):
    data = json.loads((DATA / "SectionTest.plan").read_text())
    change(data)
    with pytest.raises(QgcPlanError) as info:
        read_qgc_plan(data, "bad.plan")
    assert any(p.startswith(expected) for p in info.value.problems), info.value.problems


def test_a_circle_too_small_for_a_sam_is_named(plans):
    data = json.loads(json.dumps(plans["D2"]))
    data["geoFence"]["circles"][1]["circle"]["radius"] = 20.0
    with pytest.raises(QgcPlanError) as info:
        scenario_from_qgc([("small.plan", read_qgc_plan(data, "small.plan"))])
    assert info.value.problems[0].startswith("$.geoFence.circles[1].circle.radius: 20 m")


def test_export_needs_an_origin(planned):
    scenario, _ = planned
    with pytest.raises(PlannerError, match="no geographic origin"):
        mission_frame(scenario)
    assert mission_frame(scenario, ORIGIN).origin == ORIGIN
    pinned = scenario.model_copy(update={"geo": ORIGIN})
    assert mission_frame(pinned).origin == ORIGIN
    with pytest.raises(PlannerError, match="its own geo origin"):
        mission_frame(pinned, GeoOrigin(lat0=10, lon0=10))


def test_geojson_export_is_rfc_7946(planned):
    scenario, solution = planned
    frame = local_frame(ORIGIN)
    data = geojson_plan(scenario, solution, frame)
    FeatureCollection.model_validate(data)  # the RFC's shapes, by geojson-pydantic
    kinds = [f["properties"]["kind"] for f in data["features"]]
    env = scenario.environment
    assert kinds.count("route") == len(flights(scenario, solution))
    assert kinds.count("airport") == len(env.airports)
    assert kinds.count("target") == len(env.targets)
    assert kinds.count("sam") == len(env.sams)
    sam_feature = next(f for f in data["features"] if f["properties"]["kind"] == "sam")
    ring = sam_feature["geometry"]["coordinates"][0]
    assert ring[0] == ring[-1]
    sam = env.sams[0]
    centre = frame.to_geo(sam.x, sam.y)
    for lon, lat in ring:  # [lon, lat] order; every vertex on the SAM's circle
        assert metres(centre, (lat, lon)) == pytest.approx(sam.range * 1000, rel=1e-3)
    t7 = next(f for f in data["features"] if f["properties"].get("id") == "T7")
    assert (
        t7["properties"] | {"priority": 8.0, "type": "D", "status": "excluded"} == t7["properties"]
    )


def test_mavlink_missions_read_back_with_pymavlink(planned, plans, tmp_path):
    from pymavlink import mavwp

    scenario, solution = planned
    missions = mavlink_missions(scenario, solution, local_frame(ORIGIN))
    assert set(missions) == set(plans)
    for label, mission in missions.items():
        path = tmp_path / f"mission-{label}.waypoints"
        path.write_text(mission.text())
        assert path.read_text().startswith("QGC WPL 110\n")
        assert "#" not in path.read_text()  # QGroundControl's loader refuses comment lines
        back = mavwp.MAVWPLoader()
        assert back.load(str(path)) == len(plans[label]["mission"]["items"]) + 1  # + home
        items = plans[label]["mission"]["items"]
        home = back.wp(0)
        assert (home.x, home.y) == pytest.approx(tuple(items[0]["params"][4:6]), abs=1e-6)
        for seq, item in enumerate(items, start=1):
            wp = back.wp(seq)
            assert wp.command == item["command"]
            assert metres((wp.x, wp.y), tuple(item["params"][4:6])) < 0.002  # 8 decimals
            assert wp.z == pytest.approx(item["params"][6])


def test_geo_solution_puts_lat_lon_next_to_km(planned):
    scenario, solution = planned
    frame = local_frame(ORIGIN)
    with_geo = geo_solution(scenario, solution, frame)
    assert with_geo.geo is not None and with_geo.geo.origin == ORIGIN
    assert with_geo.geo.nodes["A2"] == frame.to_geo(*scenario.environment.position("A2"))
    for drone_id, route in solution.routes.items():
        assert len(with_geo.geo.paths[drone_id]) == len(route.path)
    again = Solution.model_validate_json(with_geo.model_dump_json(), strict=True)
    assert again.geo == with_geo.geo


def test_what_is_not_imported_is_said(plans):
    data = json.loads(json.dumps(plans["D2"]))
    fence = data["geoFence"]
    fence["circles"].append(
        {"circle": {"center": [47.4, 8.5], "radius": 900.0}, "inclusion": True, "version": 1}
    )
    fence["polygons"].append(
        {"inclusion": True, "polygon": [[47.3, 8.4], [47.5, 8.4], [47.5, 8.7]], "version": 1}
    )
    data["mission"]["items"].insert(1, {"type": "ComplexItem", "complexItemType": "survey"})
    imported = scenario_from_qgc([("x.plan", read_qgc_plan(data, "x.plan"))])
    notes = "\n".join(imported.notes)
    assert f"x.plan: $.geoFence.circles[{len(fence['circles']) - 1}]: an inclusion circle" in notes
    assert "x.plan: $.geoFence.polygons[0]: an inclusion polygon is not imported" in notes
    assert "x.plan: $.mission.items[1]: complex item 'survey' not imported" in notes
    assert len(imported.scenario["environment"]["sams"]) == len(fence["circles"]) - 1
