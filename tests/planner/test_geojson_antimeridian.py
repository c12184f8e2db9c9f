"""GeoJSON across the antimeridian and round a pole: cut per RFC 7946 §3.1.9, checked with
geojson-pydantic (the RFC's shapes) and shapely (valid, nothing wrapped round the globe)."""

from __future__ import annotations

import json
import math

import pytest
from geojson_pydantic import FeatureCollection
from pyproj import Geod
from shapely import Point
from shapely.geometry import Polygon, shape

from planner.interop import mission_frame
from planner.interop.geojson import geojson_plan
from planner.mission import compile_mission
from planner.planning import plan_mission
from planner.scenario_io import parse_scenario
from tests.planner.export_cases import export_cases

GEOD = Geod(ellps="WGS84")


def _features(name: str) -> tuple[dict, list[dict]]:
    case = {c.name: c for c in export_cases()}[name]
    data = geojson_plan(case.scenario, case.solution, case.frame)
    FeatureCollection.model_validate(data)
    return data, data["features"]


def _lines(geometry: dict) -> list[list[list[float]]]:
    if geometry["type"] == "Point":  # a drone that takes off and lands where it is
        return []
    if geometry["type"] == "LineString":
        return [geometry["coordinates"]]
    assert geometry["type"] == "MultiLineString"
    return geometry["coordinates"]


def _rings(geometry: dict) -> list[list[list[float]]]:
    if geometry["type"] == "Polygon":
        return [geometry["coordinates"][0]]
    assert geometry["type"] == "MultiPolygon"
    return [polygon[0] for polygon in geometry["coordinates"]]


def test_routes_and_sams_are_cut_at_the_antimeridian():
    _, features = _features("antimeridian")
    for feature in features:
        for lon, lat in _all_positions(feature["geometry"]):
            assert -180.0 <= lon <= 180.0 and -90.0 <= lat <= 90.0
    routes = [f for f in features if f["properties"]["kind"] == "route"]
    assert any(r["geometry"]["type"] == "MultiLineString" for r in routes)
    for route in routes:
        assert shape(route["geometry"]).is_valid
        parts = _lines(route["geometry"])
        for part in parts:  # no leg jumps the long way round
            assert all(abs(b[0] - a[0]) <= 180.0 for a, b in zip(part, part[1:]))
        for before, after in zip(parts, parts[1:]):  # the parts meet on the antimeridian
            assert abs(before[-1][0]) == 180.0 and after[0][0] == -before[-1][0]
            assert after[0][1] == pytest.approx(before[-1][1])
    sams = [f for f in features if f["properties"]["kind"] == "sam"]
    assert any(s["geometry"]["type"] == "MultiPolygon" for s in sams)
    for sam in sams:
        geometry = shape(sam["geometry"])
        assert geometry.is_valid and not geometry.is_empty
        assert geometry.bounds[2] - geometry.bounds[0] <= 360.0
        lon0, lat0 = sam["properties"]["center"]
        radius_m = sam["properties"]["range_km"] * 1000.0
        pieces = _rings(sam["geometry"])
        area = 0.0
        for ring in pieces:
            assert ring[0] == ring[-1]
            assert Polygon(ring).exterior.is_ccw  # the RFC's exterior ring
            for lon, lat in ring:
                if abs(lon) == 180.0:
                    continue  # a cut vertex, on the antimeridian inside the circle
                _, _, d = GEOD.inv(lon0, lat0, lon, lat)
                assert d == pytest.approx(radius_m, rel=2e-3)
            area += Polygon(ring).area
        if len(pieces) > 1:  # the pieces make the whole circle: its area, unwrapped
            whole = Polygon([(lon % 360.0, lat) for lon, lat in _circle(lon0, lat0, radius_m)])
            assert area == pytest.approx(whole.area, rel=5e-3)


def test_a_sam_round_the_pole_is_a_valid_cap_not_a_band():
    scenario = parse_scenario(
        json.dumps(
            {
                "geo": {"lat0": 89.0, "lon0": 0.0},
                "environment": {
                    "airports": [{"id": "A1", "x": 0, "y": 0}],
                    "targets": [{"id": "T1", "x": 60, "y": 0, "priority": 5, "type": "A"}],
                    "sams": [{"id": "S1", "pos": [0, 111.7], "range": 30}],
                },
                "drone_configs": {"1": {"fuelBudget": 400, "home_airport": "A1"}},
            }
        )
    )
    solution = plan_mission(compile_mission(scenario), "team", iterations=100, seed=0).solution
    data = geojson_plan(scenario, solution, mission_frame(scenario))
    FeatureCollection.model_validate(data)
    sam = next(f for f in data["features"] if f["properties"]["kind"] == "sam")
    cap = shape(sam["geometry"])
    assert cap.is_valid  # the cap, closed along the pole's latitude, cut at 180 degrees
    assert cap.bounds == pytest.approx((-180.0, cap.bounds[1], 180.0, 90.0))
    for lon in range(-180, 181, 30):  # holds the pole's neighbourhood at every longitude
        assert cap.covers(Point(lon, 89.95))
    assert not cap.covers(Point(0.0, 89.0))  # not a band: the origin, 112 km off, is outside


def test_a_mission_away_from_the_antimeridian_keeps_simple_shapes():
    _, features = _features("zurich")
    kinds = {(f["properties"]["kind"], f["geometry"]["type"]) for f in features}
    assert kinds == {
        ("route", "LineString"),
        ("route", "Point"),  # D1 takes off and lands at A1: its route is A1's place
        ("airport", "Point"),
        ("target", "Point"),
        ("sam", "Polygon"),
    }
    assert all(shape(f["geometry"]).is_valid for f in features)


def _all_positions(geometry: dict) -> list[list[float]]:
    coords = geometry["coordinates"]
    depth = {"Point": 0, "LineString": 1, "MultiLineString": 2, "Polygon": 2, "MultiPolygon": 3}
    out = [coords]
    for _ in range(depth[geometry["type"]]):
        out = [c for inner in out for c in inner]
    return out


def _circle(lon0: float, lat0: float, radius_m: float) -> list[tuple[float, float]]:
    out = []
    for k in range(360):
        lon, lat, _ = GEOD.fwd(lon0, lat0, k, radius_m)
        out.append((lon, lat))
    assert max(abs(math.remainder(lon - lon0, 360.0)) for lon, _ in out) < 90
    return out
