"""Geographic missions: lat/lon positions wherever km are accepted, converted by pyproj
around the scenario's origin; every mistake named by its JSON path."""

from __future__ import annotations

import copy
import json
import math

import pytest
from pyproj import Geod

from planner.geo import GeoOrigin, local_frame
from planner.scenario import ScenarioError, parse_scenario

ORIGIN = {"lat0": 47.4, "lon0": 8.5}


def geo_scenario() -> dict:
    return {
        "geo": dict(ORIGIN),
        "environment": {
            "airports": [{"id": "A1", "lat": 47.45, "lon": 8.45}, {"id": "A2", "x": 30, "y": 0}],
            "targets": [
                {"id": "T1", "lat": 47.5, "lon": 8.6, "priority": 5, "type": "A"},
                {"id": "T2", "x": 10, "y": 20, "priority": 3, "type": "A"},
                {"id": "T3", "pos": {"lat": 47.44, "lon": 8.52}, "priority": 1, "type": "A"},
            ],
            "sams": [
                {"id": "S1", "lat": 47.42, "lon": 8.55, "range": 2},
                {"id": "S2", "pos": {"lat": 47.38, "lon": 8.7}, "range": 3},
                {"id": "S3", "pos": [-20, -20], "range": 1},
            ],
            "synthetic_starts": {"D1_START": {"lat": 47.41, "lon": 8.41}},
        },
        "drone_configs": {"1": {"fuelBudget": 150, "home_airport": "A1"}},
        "timeline": [
            {"op": "add_sam", "t": 5, "id": "S9", "pos": {"lat": 47.3, "lon": 8.3}, "range": 1},
            {"op": "move_target", "t": 6, "id": "T2", "lat": 47.33, "lon": 8.52},
        ],
    }


def problems_of(data: dict) -> list[str]:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(json.dumps(data))
    return info.value.problems


def test_frame_is_true_to_geodesic_distance_from_the_origin():
    frame = local_frame(GeoOrigin(**ORIGIN))
    geod = Geod(ellps="WGS84")
    for lat, lon in [(47.5, 8.6), (46.9, 9.4), (47.4, 8.5), (48.3, 7.1)]:
        x, y = frame.to_local(lat, lon)
        _, _, metres = geod.inv(ORIGIN["lon0"], ORIGIN["lat0"], lon, lat)
        assert math.hypot(x, y) == pytest.approx(metres / 1000, abs=1e-6)
        back = frame.to_geo(x, y)
        assert back == pytest.approx((lat, lon), abs=1e-10)
    assert frame.to_local(47.4, 8.5) == pytest.approx((0.0, 0.0), abs=1e-9)
    east, north = frame.to_local(47.4, 8.6)
    assert east > 7 and abs(north) < 0.1  # x is east


def test_distances_across_a_mission_are_true_to_a_tenth_of_a_percent():
    frame = local_frame(GeoOrigin(**ORIGIN))
    geod = Geod(ellps="WGS84")
    worst = 0.0
    for a, b in [
        ((48.7, 6.6), (48.7, 10.4)),
        ((46.1, 6.6), (48.7, 6.6)),
        ((48.5, 7.0), (46.3, 10.0)),
    ]:
        km = math.dist(frame.to_local(*a), frame.to_local(*b))
        true = geod.inv(a[1], a[0], b[1], b[0])[2] / 1000
        assert km > 250  # legs ~150 km from the origin, most not through it
        worst = max(worst, abs(km - true) / true)
    assert 1e-6 < worst < 1e-3  # measured: 0.009 %


def test_lat_lon_is_accepted_wherever_km_are():
    scenario = parse_scenario(json.dumps(geo_scenario()))
    frame = local_frame(GeoOrigin(**ORIGIN))
    env = scenario.environment
    assert scenario.geo == GeoOrigin(**ORIGIN)
    assert (env.airports[0].x, env.airports[0].y) == frame.to_local(47.45, 8.45)
    assert (env.airports[1].x, env.airports[1].y) == (30, 0)  # km still work
    assert (env.targets[0].x, env.targets[0].y) == frame.to_local(47.5, 8.6)
    assert (env.targets[2].x, env.targets[2].y) == frame.to_local(47.44, 8.52)
    assert env.sams[0].pos == frame.to_local(47.42, 8.55)
    assert env.sams[1].pos == frame.to_local(47.38, 8.7)
    assert env.sams[2].pos == (-20, -20)
    start = env.synthetic_starts["D1_START"]
    assert (start.x, start.y) == frame.to_local(47.41, 8.41)
    add_sam, move_target = scenario.timeline
    assert add_sam.pos == frame.to_local(47.3, 8.3)  # type: ignore[union-attr]
    assert (move_target.x, move_target.y) == frame.to_local(47.33, 8.52)  # type: ignore[union-attr]


def test_a_geographic_scenario_round_trips_through_its_own_json():
    scenario = parse_scenario(json.dumps(geo_scenario()))
    again = parse_scenario(json.dumps(scenario.model_dump(mode="json", by_alias=True)))
    assert again == scenario


def test_lat_lon_without_an_origin_names_the_path():
    data = geo_scenario()
    del data["geo"]
    (problem,) = problems_of(data)
    assert problem.startswith("$.environment.airports[0]: a lat/lon position needs")
    assert '"geo"' in problem


@pytest.mark.parametrize(
    ("where", "change", "expected"),
    [
        (
            ("environment", "targets", 0),
            {"x": 1},
            "$.environment.targets[0]: give the position once",
        ),
        (
            ("environment", "targets", 0),
            {"lat": 95},
            "$.environment.targets[0].lat: must be from -90 to 90",
        ),
        (
            ("environment", "targets", 0),
            {"lon": "8.6"},
            "$.environment.targets[0].lon: must be a number",
        ),
        (
            ("environment", "airports", 0),
            {"lon": None},
            "$.environment.airports[0].lon: must be a number",
        ),
        (
            ("environment", "sams", 0),
            {"pos": [1, 2]},
            "$.environment.sams[0]: give the position once",
        ),
        (
            ("environment", "sams", 1, "pos"),
            {"alt": 3},
            "$.environment.sams[1].pos: a position object holds lat and lon only",
        ),
        (("timeline", 1), {"lat": -91}, "$.timeline[1].lat: must be from -90 to 90"),
        (("environment", "targets", 0), {"lat": -47.0}, "$.environment.targets[0]: (-47, 8.6) is"),
    ],
)
def test_bad_lat_lon_is_named_by_its_path(where, change, expected):
    data = geo_scenario()
    obj = data
    for part in where:
        obj = obj[part]
    obj.update(change)
    problems = problems_of(data)
    assert any(p.startswith(expected) for p in problems), problems


def test_lat_without_lon_is_an_error():
    data = geo_scenario()
    del data["environment"]["targets"][0]["lon"]
    assert problems_of(data) == [
        "$.environment.targets[0]: lat and lon go together: lon is missing"
    ]


def test_a_bad_origin_is_a_schema_problem():
    data = geo_scenario()
    data["geo"] = {"lat0": 47.4}
    assert "$.geo.lon0: Field required" in problems_of(data)
    data["geo"] = {"lat0": 91, "lon0": 8}
    assert any(p.startswith("$.geo.lat0:") for p in problems_of(data))


def test_km_scenarios_are_untouched(demo_path):
    text = demo_path.read_text()
    scenario = parse_scenario(text)
    assert scenario.geo is None
    data = json.loads(text)
    assert scenario.environment.targets[0].x == data["environment"]["targets"][0]["x"]
    # An origin alone changes nothing either: km stay km.
    data = copy.deepcopy(data)
    data["geo"] = dict(ORIGIN)
    assert parse_scenario(json.dumps(data)).environment == scenario.environment


def test_an_op_that_is_not_a_string_is_named_not_a_crash():
    """A timeline edit (or a live edit) whose op is a list or an object: the schema names
    it at its path; the lat/lon and pos/x-y passes skip it instead of hashing it."""
    from planner.geo import localize_edit

    data = geo_scenario()
    data["timeline"] = [{"op": ["add_sam"], "t": 1, "lat": 47.4, "lon": 8.5}]
    problems = problems_of(data)
    assert any(p.startswith("$.timeline[0]:") for p in problems), problems
    edit = {"op": {"x": 1}, "lat": 47.4, "lon": 8.5}
    assert localize_edit(edit, GeoOrigin.model_validate(ORIGIN)) == (edit, [])
