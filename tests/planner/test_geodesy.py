"""Geography that keeps the SAM promise: the km frame's stretch is bounded where the planner
uses it, a SAM's cover holds its true geodesic disk, plans of far-SAM and continent-wide
missions stay outside every true disk (measured here by dense sampling with pyproj.Geod,
apart from the validator's own search), the validator rejects a plan that trusted the
frame, and a mission wider than the frame can hold is refused by name."""

from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyproj import Geod

from planner.geo import GeoOrigin, local_frame
from planner.geodesy import (
    MAX_GEO_EXTENT_KM,
    MAX_LEG_KM,
    densify,
    frame_distortion,
    polyline_geodesic_clearance,
    sam_cover,
    scale_bound,
)
from planner.interop import flights, mission_frame
from planner.mission import compile_mission
from planner.planning import plan_mission
from planner.scenario_io import ScenarioError, parse_scenario
from planner.validation import polyline_sam_clearance, validate_solution
from tests.planner.export_cases import WIDE_MISSION
from tests.planner.missions import SETTINGS

GEOD = Geod(ellps="WGS84")
ORIGIN = GeoOrigin(lat0=45.0, lon0=10.0)
STEP_M = 20.0  # the independent check's sampling step along every leg

# A 40 km SAM 3,000 km east of the origin, with targets west and east of it: the way from
# one to the other goes round it to the north or south, the direction the frame stretches
# there (by 3.8 %): trusting the frame, that route passes over a km inside the true disk.
FAR_SAM = {
    "geo": {"lat0": 45.0, "lon0": 10.0},
    "environment": {
        "airports": [{"id": "A1", "x": 2800, "y": 0}],
        "targets": [
            {"id": "T1", "x": 3100, "y": 0, "priority": 5, "type": "A"},
            {"id": "T2", "x": 2950, "y": 80, "priority": 5, "type": "A"},
        ],
        "sams": [{"id": "S1", "pos": [3000, 0], "range": 40}],
    },
    "drone_configs": {"1": {"fuelBudget": 1500, "home_airport": "A1"}},
}


def true_clearance_km(frame, polyline, sams) -> float:
    """Smallest geodesic distance to a SAM's centre minus its range, over the frame legs
    (the simulation's) and the geodesic legs between the exported waypoints, sampled every
    ``STEP_M`` with pyproj.Geod (the dip between samples is under STEP_M^2 / 8r: 1 mm)."""
    worst = math.inf
    pts = np.asarray(polyline, dtype=float)
    for sam in sams:
        clat, clon = frame.to_geo(sam.x, sam.y)
        for a, b in zip(pts, pts[1:]):
            if _segment_distance(a, b, (sam.x, sam.y)) > 2 * sam.range + 10:
                continue
            n = max(2, math.ceil(math.dist(a, b) * 1000 / STEP_M) + 1)
            t = np.linspace(0.0, 1.0, n)[:, None]
            lat, lon = frame.to_geo_many(*(a + t * (b - a)).T)
            _, _, d = GEOD.inv(np.full(n, clon), np.full(n, clat), lon, lat)
            worst = min(worst, float(np.min(d)) / 1000 - sam.range)
        waypoints = densify(pts)
        for a, b in zip(waypoints, waypoints[1:]):
            if _segment_distance(a, b, (sam.x, sam.y)) > 2 * sam.range + 10:
                continue
            (alat, alon), (blat, blon) = frame.to_geo(*a), frame.to_geo(*b)
            n = max(2, math.ceil(math.dist(a, b) * 1000 / STEP_M) + 1)
            middle = GEOD.npts(alon, alat, blon, blat, n - 2) if n > 2 else []
            lon = np.array([alon, *(p[0] for p in middle), blon])
            lat = np.array([alat, *(p[1] for p in middle), blat])
            _, _, d = GEOD.inv(np.full(len(lon), clon), np.full(len(lon), clat), lon, lat)
            worst = min(worst, float(np.min(d)) / 1000 - sam.range)
    return worst


def _segment_distance(a, b, c) -> float:
    a, b, c = (np.asarray(p, dtype=float) for p in (a, b, c))
    ab = b - a
    t = 0.0 if not ab.any() else float(np.clip(np.dot(c - a, ab) / np.dot(ab, ab), 0, 1))
    return float(np.linalg.norm(a + t * ab - c))


# ----- the frame's stretch ------------------------------------------------------------------


@pytest.mark.parametrize("rho", [0.0, 500.0, 1500.0, 3000.0, MAX_GEO_EXTENT_KM])
def test_the_scale_bound_holds_for_true_distances(rho):
    """Frame distance over geodesic distance, for pairs of points in a disk, never exceeds
    the bound computed for that disk (and never falls under 1: the frame only stretches)."""
    frame = local_frame(ORIGIN)
    rng = np.random.default_rng(int(rho))
    for turn in np.linspace(0, 2 * math.pi, 8, endpoint=False):
        x, y, radius = rho * math.cos(turn), rho * math.sin(turn), 60.0
        bound = scale_bound(ORIGIN, x, y, radius)
        r = radius * np.sqrt(rng.uniform(0, 1, (200, 2)))
        a = rng.uniform(0, 2 * math.pi, (200, 2))
        px, py = x + r * np.cos(a), y + r * np.sin(a)
        lat, lon = frame.to_geo_many(px, py)
        _, _, d = GEOD.inv(lon[:, 0], lat[:, 0], lon[:, 1], lat[:, 1])
        ratio = np.hypot(px[:, 0] - px[:, 1], py[:, 0] - py[:, 1]) * 1000 / d
        assert ratio.max() <= bound
        assert ratio.min() >= 1 - 1e-6
        assert bound - 1 < 0.06  # within the extent the stretch stays under 6 %


def test_distortion_at_the_extent_limit_is_five_percent():
    assert 0.045 < frame_distortion(ORIGIN) < 0.052
    assert frame_distortion(ORIGIN, 1000.0) < 0.005


@pytest.mark.parametrize("rho", [100.0, 1500.0, 3000.0, MAX_GEO_EXTENT_KM])
def test_a_sams_cover_holds_its_geodesic_disk(rho):
    frame = local_frame(ORIGIN)
    for turn in np.linspace(0, 2 * math.pi, 6, endpoint=False):
        x, y = rho * math.cos(turn), rho * math.sin(turn)
        for radius in (0.1, 5.0, 40.0, 300.0):
            cover = sam_cover(ORIGIN, x, y, radius)
            clat, clon = frame.to_geo(x, y)
            lons, lats, _ = GEOD.fwd(
                np.full(720, clon),
                np.full(720, clat),
                np.arange(720) / 2,
                np.full(720, radius * 1000),
            )
            px, py = frame.to_local_many(lats, lons)
            reach = np.hypot(np.asarray(px) - x, np.asarray(py) - y)
            assert reach.max() < cover
            stretch = frame_distortion(ORIGIN, rho + 1.5 * radius + 1.0)
            assert cover <= radius * (1 + 1.2 * stretch)  # tight: the stretch there, no more


@given(st.lists(st.tuples(st.floats(-3200, 3200), st.floats(-3200, 3200)), min_size=2, max_size=6))
@SETTINGS
def test_densify_cuts_long_legs_and_keeps_the_path(points):
    pts = np.array(points)
    out = densify(pts)
    steps = np.hypot(*np.diff(out, axis=0).T)
    assert steps.max(initial=0) <= MAX_LEG_KM * (1 + 1e-9)
    assert sum(np.hypot(*np.diff(pts, axis=0).T)) == pytest.approx(steps.sum(), rel=1e-9, abs=1e-6)
    for p in pts:  # every original point is still a waypoint
        assert np.min(np.hypot(*(out - p).T)) < 1e-9


def test_the_validators_geodesic_search_agrees_with_dense_sampling():
    frame = local_frame(ORIGIN)
    scenario = parse_scenario(json.dumps(FAR_SAM))
    sam = scenario.environment.sams[0]
    rng = np.random.default_rng(7)
    for _ in range(20):
        # a polyline passing the SAM at a random offset and heading
        heading = rng.uniform(0, math.pi)
        offset = rng.uniform(-60, 60)
        d = np.array([math.cos(heading), math.sin(heading)])
        n = np.array([-d[1], d[0]])
        pts = [np.array([sam.x, sam.y]) + offset * n + s * d for s in (-90, -20, 35, 90)]
        got = polyline_geodesic_clearance(frame, densify(np.array(pts)), [sam])
        want = true_clearance_km(frame, pts, [sam])
        if math.isinf(got.clearance_km):  # skipped: no leg comes within the SAM's cover
            assert want > 0
        else:
            assert got.clearance_km == pytest.approx(want, abs=2e-3)  # 2 m: the sampling's


# ----- plans on the Earth -------------------------------------------------------------------


@pytest.mark.parametrize("mission", [FAR_SAM, WIDE_MISSION], ids=["far-sam", "continent-wide"])
def test_plans_of_wide_missions_stay_outside_every_true_disk(mission):
    scenario = parse_scenario(json.dumps(mission))
    compiled = compile_mission(scenario)
    result = plan_mission(compiled, "team", iterations=500, seed=0)
    assert validate_solution(compiled, result.solution) == []
    frame = mission_frame(scenario)
    visited = 0
    for route in result.solution.routes.values():
        visited += len(route.visited_targets)
        worst = true_clearance_km(frame, route.path, scenario.environment.sams)
        assert worst > 0.0, f"{-worst * 1000:.1f} m inside a true SAM disk"
    for flight in flights(scenario, result.solution):  # the exported waypoints, as flown
        pts = [(p.x, p.y) for p in flight.waypoints]
        assert true_clearance_km(frame, pts, scenario.environment.sams) > 0.0
    assert visited >= 2  # the routes do go round the SAMs, not away from them


def test_the_validator_rejects_a_plan_that_trusted_the_frame():
    """Planned as if the km frame were flat (the same mission without its origin), the
    route grazes the SAM's planar disk and enters its true one, 3,000 km from the origin:
    the planar check passes, the geodesic one names the SAM and the depth."""
    flat = copy.deepcopy(FAR_SAM)
    del flat["geo"]
    naive = plan_mission(
        compile_mission(parse_scenario(json.dumps(flat))), "team", iterations=300, seed=0
    )
    compiled = compile_mission(parse_scenario(json.dumps(FAR_SAM)))
    path = np.asarray(naive.solution.routes["1"].path)
    planar, _ = polyline_sam_clearance(compiled, path)
    assert planar > 0  # the frame says it is clear
    frame = mission_frame(compiled.scenario)
    depth = -true_clearance_km(frame, path, compiled.environment.sams)
    assert depth > 0.2  # truly inside, by hundreds of metres
    found = [v for v in validate_solution(compiled, naive.solution) if v.rule == "sam"]
    assert len(found) == 1 and "S1's true (geodesic) disk by" in found[0].message
    said = float(found[0].message.split(" by ")[1].split(" m ")[0])
    assert said == pytest.approx(depth * 1000, abs=2.0)


# ----- what the frame cannot hold ----------------------------------------------------------


def _refused(mission: dict) -> list[str]:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(json.dumps(mission))
    return info.value.problems


def test_a_mission_wider_than_the_frame_is_refused_by_name():
    mission = copy.deepcopy(FAR_SAM)
    mission["environment"]["targets"].append(
        {"id": "T9", "x": 3000, "y": 1800, "priority": 1, "type": "A"}
    )
    mission["environment"]["sams"].append({"id": "S9", "pos": [-3350, 0], "range": 80})
    mission["timeline"] = [
        {
            "t": 5,
            "op": "add_target",
            "id": "T10",
            "lat": 45.0,
            "lon": 60.0,
            "priority": 1,
            "type": "A",
        }
    ]
    problems = _refused(mission)
    assert len(problems) == 3
    assert problems[0].startswith(
        "$.environment.targets[2]: it is 3,499 km from the geo origin (45, 10)"
    )
    assert "at most 3,400 km from its origin" in problems[0] and "off by 4.9 %" in problems[0]
    assert problems[1].startswith("$.environment.sams[1]: the SAM's disk reaches 3,430 km")
    assert problems[2].startswith("$.timeline[0]: it is 3,8")


def test_an_airport_inside_a_sams_cover_is_named():
    mission = copy.deepcopy(FAR_SAM)
    mission["environment"]["airports"].append({"id": "A2", "x": 3000, "y": 40.5})
    problems = _refused(mission)
    assert len(problems) == 1
    assert problems[0].startswith(
        "$.environment.airports[1]: 'A2' is 40.500 km from SAM 'S1', inside the"
    )
    assert "move it or the SAM" in problems[0]
