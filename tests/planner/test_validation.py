"""The validator: valid plans pass; every mutation that breaks a hard constraint is caught."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from planner.mission import compile_mission
from planner.scenario import load_scenario
from planner.solution import build_solution
from planner.validation import PlanRejected, ensure_valid, validate_solution
from tests.factory import greedy_routes, random_scenario

MUTATIONS = (
    "ineligible",
    "duplicate",
    "fuel",
    "start",
    "end",
    "excluded",
    "sam_path",
    "reported_fuel",
    "reported_points",
    "unknown",
    "missing",
    "waypoint_airport",
)


def rules(mission, solution) -> set[str]:
    return {v.rule for v in validate_solution(mission, solution)}


@pytest.fixture(scope="module")
def demo_mission():
    return compile_mission(load_scenario("scenarios/demo.json"))


def test_valid_plan_passes(demo_mission):
    solution = build_solution(demo_mission, greedy_routes(demo_mission))
    assert validate_solution(demo_mission, solution) == []
    assert ensure_valid(demo_mission, solution) is solution


def test_frozen_prefix_is_enforced():
    scenario = load_scenario("scenarios/demo.json")
    data = scenario.model_dump(by_alias=True)
    data["drone_configs"]["1"]["frozen_segments"] = [
        {"from": "A1", "to": "T8"},
        {"from": "T8", "to": "T2"},
    ]
    from planner.scenario import parse_scenario

    mission = compile_mission(parse_scenario(data))
    routes = greedy_routes(mission)
    assert mission.ids(routes["1"])[1:3] == ["T8", "T2"]
    solution = build_solution(mission, routes)
    assert validate_solution(mission, solution) == []
    route = solution.routes["1"].route
    route[1], route[2] = route[2], route[1]
    assert "frozen" in rules(mission, solution)


def _mutate(mission, solution, kind, draw):
    """Break exactly one hard constraint in place; return the rule expected to fire."""
    routes = solution.routes
    drone_ids = sorted(routes)
    drone = draw(st.sampled_from(drone_ids))
    result = routes[drone]
    spec = mission.drone(drone)
    env = mission.environment
    if kind == "ineligible":
        wrong = [
            t.id
            for t in env.targets
            if not spec.config.can_sense(t.type) and t.id not in mission.excluded_targets
        ]
        assume(wrong)
        result.route.insert(1, draw(st.sampled_from(wrong)))
        return "eligibility"
    if kind == "duplicate":
        others = [
            t
            for d in drone_ids
            if d != drone
            for t in routes[d].visited_targets
            if spec.config.can_sense(env.target(t).type)
        ]
        own = result.visited_targets
        assume(others or own)
        target = draw(st.sampled_from(others or own))
        result.route.insert(len(result.route) - 1, target)
        return "duplicate"
    if kind == "fuel":
        far = max(
            (mission.node_ids[t] for t in spec.eligible),
            key=lambda t: mission.dist[spec.start, mission.index[t]],
        )
        # Fly to the farthest target and back several times: beyond any budget here.
        detour = [far, result.route[0]] * 20
        result.route[1:1] = detour
        return "fuel"
    if kind == "start":
        other = [a.id for a in env.airports if a.id != result.route[0]]
        result.route[0] = draw(st.sampled_from(other))
        return "start"
    if kind == "end":
        allowed = {mission.node_ids[e] for e in spec.ends}
        other = [a.id for a in env.airports if a.id not in allowed]
        assume(other)
        result.route[-1] = draw(st.sampled_from(other))
        return "end"
    if kind == "excluded":
        assume(mission.excluded_targets)
        result.route.insert(1, draw(st.sampled_from(mission.excluded_targets)))
        return "excluded"
    if kind == "sam_path":
        assume(env.sams and result.path)
        sam = draw(st.sampled_from(env.sams))
        i = draw(st.integers(0, len(result.path) - 1))
        result.path[i] = (sam.pos[0], sam.pos[1])
        return "sam"
    if kind == "reported_fuel":
        result.fuel_used -= draw(st.floats(0.01, 50))
        return "reported"
    if kind == "reported_points":
        result.total_points += draw(st.integers(1, 20))
        return "reported"
    if kind == "unknown":
        result.route.insert(1, "T_NOT_THERE")
        return "unknown"
    if kind == "missing":
        del routes[drone]
        return "missing"
    if kind == "waypoint_airport":
        result.route.insert(1, env.airports[-1].id)
        return "waypoint"
    raise AssertionError(kind)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), kind=st.sampled_from(MUTATIONS), data=st.data())
def test_every_breaking_mutation_is_caught(seed, kind, data):
    rng = np.random.default_rng(seed)
    mission = compile_mission(random_scenario(rng, n_targets=8, n_sams=2, n_drones=3))
    solution = build_solution(mission, greedy_routes(mission))
    assert validate_solution(mission, solution) == []
    expected = _mutate(mission, solution, kind, data.draw)
    found = rules(mission, solution)
    assert expected in found, (kind, found)
    with pytest.raises(PlanRejected):
        ensure_valid(mission, solution)


def _clearance_numpy(a, b, centres, ranges):
    """Every chord against every disk, in numpy: what the kernel must agree with."""
    ab = b - a
    denom = np.einsum("ij,ij->i", ab, ab)
    safe = np.where(denom > 0, denom, 1.0)
    ac = centres[None, :, :] - a[:, None, :]
    t = np.where(denom[:, None] > 0, np.einsum("ijk,ik->ij", ac, ab) / safe[:, None], 0.0)
    closest = a[:, None, :] + np.clip(t, 0, 1)[..., None] * ab[:, None, :]
    diff = closest - centres[None, :, :]
    gaps = np.hypot(diff[..., 0], diff[..., 1]).min(axis=0) - ranges
    worst = int(np.argmin(gaps))
    return float(gaps[worst]), worst


def test_the_clearance_kernel_agrees_with_every_chord_against_every_disk_in_numpy():
    from planner.geometry._disks import polyline_clearance

    rng = np.random.default_rng(7)
    for _ in range(200):
        line = rng.uniform(-10, 10, size=(int(rng.integers(2, 12)), 2))
        if rng.random() < 0.2:
            line[1] = line[0]  # a chord of length 0
        centres = rng.uniform(-10, 10, size=(int(rng.integers(1, 9)), 2))
        ranges = rng.uniform(0.1, 4.0, size=len(centres))
        got = polyline_clearance(line[:-1], line[1:], centres, ranges)
        want = _clearance_numpy(line[:-1], line[1:], centres, ranges)
        assert got[1] == want[1]
        assert got[0] == pytest.approx(want[0], abs=1e-12)
    # A swarm's route against disks mostly far from it (the kernel skips a disk its
    # bounding box proves no nearer than the best so far), twins included (the first wins)
    for _ in range(300):
        line = rng.uniform(-10, 10, size=(int(rng.integers(2, 12)), 2))
        centres = rng.uniform(-60, 60, size=(int(rng.integers(1, 40)), 2))
        ranges = rng.uniform(0.1, 8.0, size=len(centres))
        twins = rng.integers(0, len(centres), size=len(centres) // 3)
        centres = np.concatenate((centres, centres[twins]))
        ranges = np.concatenate((ranges, ranges[twins]))
        got = polyline_clearance(line[:-1], line[1:], centres, ranges)
        want = _clearance_numpy(line[:-1], line[1:], centres, ranges)
        assert got[1] == want[1]
        assert got[0] == pytest.approx(want[0], abs=1e-12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    edges=st.lists(
        st.tuples(st.integers(0, 50), st.sampled_from([-2e-9, -5e-10, 0.0, 5e-10, 2e-9, 0.3])),
        max_size=6,
    ),
)
def test_the_routes_tested_at_once_find_the_sam_violations_each_route_alone_finds(seed, edges):
    # The one segment test of every route's chords only lets the exact clearance skip the
    # routes it proves clear: the violations are those the exact kernel finds route by
    # route, in the same place among the others, with points on a true circle and a hair
    # either side of the tolerance.
    from planner.validation import FEASIBILITY_TOLERANCE, _sam_violations, polyline_sam_clearance

    rng = np.random.default_rng(seed)
    mission = compile_mission(random_scenario(rng, n_targets=8, n_sams=3, n_drones=4))
    solution = build_solution(mission, greedy_routes(mission))
    sams = mission.environment.sams
    assume(sams)
    paths = []
    for k, (drone_id, result) in enumerate(sorted(solution.routes.items())):
        line = np.asarray(result.path, dtype=float).reshape(-1, 2).copy()
        paths.append((2 * k, drone_id, line))
    for at, gap in edges:  # a point moved onto, into or just off a SAM's true circle
        _, _, line = paths[at % len(paths)]
        sam = sams[at % len(sams)]
        angle = 0.7 * at
        r = sam.range + gap
        line[at % len(line)] = (sam.pos[0] + r * np.cos(angle), sam.pos[1] + r * np.sin(angle))
    disks = (
        np.array([s.pos for s in sams], dtype=float).reshape(-1, 2),
        np.array([s.range for s in sams], dtype=float),
    )
    want = []
    for where, drone_id, line in paths:
        clearance, sam_id = polyline_sam_clearance(mission, line, disks)
        if clearance < -FEASIBILITY_TOLERANCE:
            want.append((where, drone_id, sam_id))
    found = _sam_violations(mission, paths, disks)
    got = [(where, v.drone, v.message.split()[3]) for where, v in found]
    assert got == want
