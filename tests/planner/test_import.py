"""``isr import`` as a library: real QGroundControl and ArduPilot-style mission files in,
every item left out named, every bad file named by field or line (never an internal
error, whatever the bytes: hypothesis), and exclusion polygons imported as no-fly zones
that no plan crosses (checked with shapely against the true polygon)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyproj import Geod
from shapely import LineString, Polygon

from planner.geo import local_frame
from planner.interop.fence_cover import MIN_DISKS
from planner.interop.importer import read_mission_file, scenario_from_qgc
from planner.interop.qgc import QgcPlanError, qgc_plans
from planner.limits import MAX_SAMS
from planner.mission import compile_mission
from planner.planning import plan_mission
from planner.scenario import ScenarioError, parse_scenario
from planner.validation import validate_solution
from tests.planner.export_cases import export_cases

DATA = Path(__file__).resolve().parents[1] / "data"
GEOD = Geod(ellps="WGS84")
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))


def imported(*paths: Path, **options):
    files = [read_mission_file(p.read_bytes(), p.name) for p in paths]
    result = scenario_from_qgc(files, **options)
    return parse_scenario(json.dumps(result.scenario)), result.notes


def metres(a: tuple[float, float], b: tuple[float, float]) -> float:
    return float(GEOD.inv(a[1], a[0], b[1], b[0])[2])


# ----- real files ---------------------------------------------------------------------------


def test_a_mission_planner_file_from_qgcs_tests_imports():
    scenario, notes = imported(DATA / "qgc" / "MissionPlanner.waypoints")
    assert notes == []
    assert scenario.geo is not None
    assert (scenario.geo.lat0, scenario.geo.lon0) == (47.660459, -122.103167)  # line 2, home
    frame = local_frame(scenario.geo)
    targets = scenario.environment.targets
    want = [(47.661298, -122.103274), (47.661030, -122.101858), (47.659961, -122.101525)]
    want += [(47.659195, -122.103370), (47.660459, -122.105538)]
    assert len(targets) == 5
    for target, place in zip(targets, want):
        assert metres(frame.to_geo(target.x, target.y), place) < 0.01
    plan = plan_mission(compile_mission(scenario), "team", iterations=200, seed=0)
    assert plan.solution.total_points == 5  # a 1.4 km circuit; fuel its length + 25 %


def test_ardupilot_style_missions_import_with_every_left_out_item_named():
    scenario, notes = imported(DATA / "ardupilot" / "circuit.waypoints")
    assert len(scenario.environment.targets) == 4  # 5 waypoint lines, the last one repeated
    assert notes == [
        "circuit.waypoints: line 8: command 177 not imported",
        "circuit.waypoints: line 9: the same place as target T4: one target",
    ]
    scenario, notes = imported(DATA / "ardupilot" / "speed_land.waypoints")
    assert [a.id for a in scenario.environment.airports] == ["A1", "A2"]  # home, landing
    assert scenario.drone_configs["1"].end_airport == "A2"
    assert len(scenario.environment.targets) == 4
    assert notes == [
        "speed_land.waypoints: line 7: command 178 not imported",
        "speed_land.waypoints: line 9: command 19 not imported (its place is flown)",
    ]


def test_qgcs_geofence_file_is_refused_clearly_then_imports_with_its_zone():
    """QGC's own home-base geofence puts the home 14 m from an exclusion polygon: inside
    the ring of disks that covers the zone (100 m, the smallest SAM), so no drone could
    take off. Said as such; with the home moved 500 m off, the zone imports."""
    path = DATA / "qgc" / "ce_geofence_home_base.plan"
    with pytest.raises(QgcPlanError) as info:
        imported(path)
    assert info.value.problems == [
        "$.mission.plannedHomePosition: the home is in no-fly zone NFZ1"
        " (ce_geofence_home_base.plan: $.geoFence.polygons[1])'s cover: 14 m from the zone,"
        " within the 100 m disks that ring it: no drone could take off from it"
    ]
    data = json.loads(path.read_text())
    data["mission"]["plannedHomePosition"] = [38.7550, -77.4972, 30]
    files = [read_mission_file(json.dumps(data), "moved.plan")]
    result = scenario_from_qgc(files)
    scenario = parse_scenario(json.dumps(result.scenario))
    zone = [s for s in scenario.environment.sams if s.id.startswith("NFZ1.")]
    assert len(zone) == 3 and {s.range for s in zone} == {0.1}
    assert result.notes[0].startswith("moved.plan: $.geoFence.polygons[0]: an inclusion polygon")
    assert result.notes[1].startswith(
        "moved.plan: $.geoFence.polygons[1]: exclusion polygon imported as no-fly zone NFZ1:"
        " a ring of 3 SAM disks of 0.100 km radius"
    )


# ----- named problems and notes -------------------------------------------------------------


def _plan_of(name: str = "zurich") -> dict:
    case = {c.name: c for c in export_cases()}[name]
    plans = qgc_plans(case.scenario, case.solution, case.frame).values()
    longest = max(plans, key=lambda plan: len(plan["mission"]["items"]))
    return json.loads(json.dumps(longest))


def _problems(data: dict | str, name: str = "bad.plan") -> list[str]:
    text = data if isinstance(data, str) else json.dumps(data)
    with pytest.raises((QgcPlanError, ScenarioError)) as info:
        scenario_from_qgc([read_mission_file(text, name)])
    return info.value.problems


def test_a_latitude_of_100_is_named_not_an_internal_error():
    data = _plan_of()
    data["mission"]["items"][1]["params"][4] = 100
    assert _problems(data) == [
        "$.mission.items[1].params: params[4] is the latitude: must be from -90 to 90, got 100"
    ]


def test_an_item_with_five_params_and_no_coordinate_is_named_not_dropped():
    data = _plan_of()
    data["mission"]["items"][1]["params"] = [0, 0, 0, 0, 47.4]
    assert _problems(data) == [
        "$.mission.items[1].params: must hold 7 values (param1-4, latitude, longitude,"
        " altitude), or 4 next to a coordinate, as QGroundControl loads an item; got 5"
    ]


def test_a_place_beyond_the_frame_is_named_by_item():
    data = _plan_of()
    data["mission"]["items"][2]["params"][4:6] = [10.0, 100.0]
    problems = _problems(data)
    assert len(problems) == 1
    assert problems[0].startswith("$.mission.items[2]: (10, 100) reaches 9,")
    assert "a geographic mission reaches at most 3,400 km from it" in problems[0]


def test_every_item_not_imported_is_noted():
    data = _plan_of()
    items = data["mission"]["items"]
    land = items[-1]
    extra = [
        {**items[1], "params": [0, 0, 0, None, None, None, 100]},  # a waypoint, no place
        {**items[1], "frame": 1},  # local frame
        {**items[1], "command": 17},  # a loiter: flown, not a target
        {"type": "ComplexItem", "complexItemType": "survey"},
        {**items[1], "command": 178, "params": [0, 13, 0, 0, 0, 0, 0]},  # change speed
        {**land, "params": [0, 0, 0, 0, 0, 0, 0]},  # land where it is
    ]
    data["mission"]["items"] = items[:-1] + extra + [land]
    data["geoFence"]["breachReturn"] = [47.4, 8.5, 50]
    base = len(items) - 1
    result = scenario_from_qgc([read_mission_file(json.dumps(data), "x.plan")])
    notes = [n for n in result.notes if "acceptance radius" not in n]
    assert notes == [
        "x.plan: $.geoFence.breachReturn: the breach return point is not imported",
        f"x.plan: $.mission.items[{base}]: a waypoint without a position (latitude, longitude 0"
        " or null): not imported",
        f"x.plan: $.mission.items[{base + 1}]: frame 1 gives no latitude and longitude: command 16"
        " not imported",
        f"x.plan: $.mission.items[{base + 2}]: command 17 not imported (its place is flown)",
        f"x.plan: $.mission.items[{base + 3}]: complex item 'survey' not imported",
        f"x.plan: $.mission.items[{base + 4}]: command 178 not imported",
        f"x.plan: $.mission.items[{base + 5}]: a landing without a position: the drone is"
        " imported as returning home",
    ]
    parse_scenario(json.dumps(result.scenario))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "$: neither a QGroundControl plan (JSON) nor a text mission"),
        ("QGC WPL\n", 'line 1: expected the header "QGC WPL 110" (or "QGC WPL 120"), got'),
        ("QGC WPL 110\n", "line 2: no items, not even the home position"),
        ("QGC WPL 110\n0\t1\t0\t16\t0\t0\t0\t0\t47\t8\t0\n", "line 2: 11 fields; an item has 12"),
        (
            "QGC WPL 110\n0\t1\t0\t16\t0\t0\t0\t0\t47\t8\t0\t1\n1\t0\t3\t16\t0\t0\t0\t0\t100\t8\t50\t1\n",
            "line 3: latitude 100 is out of range (-90 to 90 degrees)",
        ),
        (
            "QGC WPL 110\n0\t1\t0\t16\t0\t0\t0\t0\t47\t8\t0\t1\n1\t0\t3\tsixteen\t0\t0\t0\t0\t47\tx\t50\t1\n",
            "line 3: command 'sixteen' is not a whole number",
        ),
        (
            "QGC WPL 110\n0\t1\t0\t16\t0\t0\t0\t0\t47\t8\t0\t1\n1\t0\t3\t16\t0\t0\t0\t0\t47\tinf\t50\t1\n",
            "line 3: longitude 'inf' is not a finite number",
        ),
        ("QGC WPL 130\n", 'line 1: expected the header "QGC WPL 110" (or "QGC WPL 120"), got'),
    ],
)
def test_a_bad_text_mission_is_named_by_line_and_field(text, expected):
    problems = _problems(text, "bad.waypoints")
    assert any(p.startswith(expected) for p in problems), problems


# ----- no-fly zones -------------------------------------------------------------------------


def _zone_mission() -> tuple[dict, list[list[float]]]:
    """A plan whose target lies behind a 12 x 6 km exclusion polygon, a waypoint inside it,
    and a concave notch facing the home."""
    home = [47.40, 8.50, 0]
    behind = [47.40, 8.78]  # 21 km east
    inside = [47.40, 8.64]
    zone = [[47.44, 8.60], [47.44, 8.68], [47.36, 8.68], [47.36, 8.60], [47.39, 8.63]]

    def item(command: int, lat: float, lon: float, radius: float = 0.0) -> dict:
        return {
            "type": "SimpleItem", "command": command, "frame": 3, "autoContinue": True,
            "params": [0, radius, 0, None, lat, lon, 100],
        }  # fmt: skip

    plan = {
        "fileType": "Plan",
        "version": 1,
        "groundStation": "test",
        "mission": {
            "plannedHomePosition": home,
            "items": [
                item(22, *home[:2]),
                item(16, *behind),
                item(16, *inside),
                item(21, *home[:2]),
            ],
        },
        "geoFence": {
            "version": 2,
            "circles": [],
            "polygons": [{"inclusion": False, "polygon": zone, "version": 1}],
        },
        "rallyPoints": {"version": 2, "points": []},
    }
    return plan, zone


def test_an_exclusion_polygon_is_a_no_fly_zone_no_plan_crosses():
    plan, zone = _zone_mission()
    result = scenario_from_qgc([read_mission_file(json.dumps(plan), "zone.plan")])
    assert any("items[2]: a waypoint in no-fly zone NFZ1" in n for n in result.notes)
    scenario = parse_scenario(json.dumps(result.scenario))
    assert len(scenario.environment.targets) == 1  # the one behind; the one inside left out
    frame = local_frame(scenario.geo)
    true_zone = Polygon([frame.to_local(lat, lon) for lat, lon in zone])
    compiled = compile_mission(scenario)
    for seed in range(5):
        solution = plan_mission(compiled, "team", iterations=300, seed=seed).solution
        assert validate_solution(compiled, solution) == []
        assert solution.total_points == 1  # it reaches the target, round the zone
        for route in solution.routes.values():
            flown = LineString(route.path)
            assert not flown.intersects(true_zone)
            assert flown.distance(true_zone) > 0.05  # the margin, at least
        # in lat/lon too, edge by edge as a map draws them
        lonlat = Polygon([(lon, lat) for lat, lon in zone])
        for route in solution.routes.values():
            line = LineString([frame.to_geo(x, y)[::-1] for x, y in route.path])
            assert not line.intersects(lonlat)


def test_a_home_inside_a_zone_and_too_many_zones_are_refused():
    plan, _ = _zone_mission()
    inside = copy.deepcopy(plan)
    inside["mission"]["plannedHomePosition"] = [47.40, 8.66, 0]
    problems = _problems(inside)
    assert problems[0].startswith("$.mission.plannedHomePosition: the home is in no-fly zone NFZ1")
    many = copy.deepcopy(plan)
    zones = MAX_SAMS // MIN_DISKS + 1  # one zone more than the SAM limit can ring
    many["geoFence"]["polygons"] = [
        {
            "inclusion": False,
            "polygon": [
                [47.0 + k // 40 / 50, 9.0 + k % 40 / 50],
                [47.01 + k // 40 / 50, 9.0 + k % 40 / 50],
                [47.0 + k // 40 / 50, 9.01 + k % 40 / 50],
            ],
            "version": 1,
        }
        for k in range(zones)
    ]
    problems = _problems(many)
    assert problems == [
        f"$.geoFence.polygons: {zones} no-fly zone(s) need at least {MIN_DISKS * zones} disks,"
        f" {MAX_SAMS} are left under the SAM limit"
    ]


def test_a_self_crossing_polygon_is_named():
    plan, _ = _zone_mission()
    plan["geoFence"]["polygons"][0]["polygon"] = [
        [47.4, 8.6],
        [47.44, 8.68],
        [47.4, 8.68],
        [47.44, 8.6],
    ]
    assert _problems(plan) == [
        "$.geoFence.polygons[0].polygon: the polygon crosses itself or has no area"
    ]


# ----- whatever the bytes -------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


def _import_or_named_problem(data: str | bytes) -> None:
    """The whole ``isr import`` path: a scenario that parses, or named problems."""
    try:
        result = scenario_from_qgc([read_mission_file(data, "fuzz")])
        parse_scenario(json.dumps(result.scenario))
    except (QgcPlanError, ScenarioError) as exc:
        assert exc.problems and all(isinstance(p, str) and p for p in exc.problems)


@given(json_values)
@FUZZ
def test_arbitrary_json_never_ends_in_an_internal_error(value):
    _import_or_named_problem(json.dumps(value))


@given(st.lists(st.tuples(st.integers(0, 10_000), json_values), min_size=1, max_size=3))
@FUZZ
def test_a_real_plan_with_any_part_replaced_never_ends_in_an_internal_error(changes):
    data = _plan_of()
    for pick, value in changes:
        holder, key = _a_place_in(data, pick)
        holder[key] = value
    _import_or_named_problem(json.dumps(data))


@given(st.text(max_size=300), st.sampled_from(["", "QGC WPL 110\n", "QGC WPL 120\n"]))
@FUZZ
def test_arbitrary_text_never_ends_in_an_internal_error(body, header):
    _import_or_named_problem((header + body).encode("utf-8", "surrogatepass"))


@given(
    st.lists(
        st.lists(
            st.sampled_from(
                [
                    "0",
                    "1",
                    "3",
                    "16",
                    "22",
                    "21",
                    "-1",
                    "nan",
                    "1e309",
                    "47.4",
                    "8.5",
                    "x",
                    "",
                    "200",
                ]
            ),
            min_size=10,
            max_size=13,
        ),
        min_size=1,
        max_size=6,
    )
)
@FUZZ
def test_arbitrary_text_mission_lines_never_end_in_an_internal_error(rows):
    text = "QGC WPL 110\n" + "\n".join("\t".join(row) for row in rows) + "\n"
    _import_or_named_problem(text)


@given(st.binary(max_size=200))
@FUZZ
def test_arbitrary_bytes_never_end_in_an_internal_error(data):
    _import_or_named_problem(data)


def _a_place_in(data: dict, pick: int) -> tuple[dict | list, object]:
    """The ``pick``-th (mod their number) of every key or index in ``data``, at any depth."""
    places: list[tuple[dict | list, object]] = []
    stack: list[dict | list] = [data]
    while stack:
        node = stack.pop()
        keys = list(node) if isinstance(node, dict) else range(len(node))
        for key in keys:
            places.append((node, key))
            child = node[key]  # type: ignore[index]
            if isinstance(child, (dict, list)):
                stack.append(child)
    return places[pick % len(places)]
