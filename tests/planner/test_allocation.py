"""Allocation strategies (seed 000 §4.2, App. E.1; seed 001) and exact routing of allocations."""

from __future__ import annotations

import copy
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner.allocation import STRATEGIES, allocate
from planner.errors import InfeasibleError, PlannerError
from planner.mission import Mission, compile_mission
from planner.orienteering import solve_orienteering
from planner.routing import route_allocation, shortlist
from planner.scenario import load_scenario
from tests.planner.missions import (
    DEMO,
    SETTINGS,
    allocation_problems,
    brute_force,
    plan_problems,
    prefix_fits,
    random_missions,
    scenario,
    tour_length,
)


@pytest.fixture(scope="module")
def demo() -> Mission:
    return compile_mission(load_scenario(DEMO))


# ----------------------------------------------------------------------------- allocation


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_demo_allocation_is_valid_and_complete(demo, strategy):
    alloc = allocate(demo, strategy)
    assert allocation_problems(demo, alloc, 12) == []
    given_ids = {demo.node_ids[t] for ts in alloc.values() for t in ts}
    assert not given_ids & set(demo.excluded_targets)  # T7, T12 sit inside SAMs
    assert set(demo.excluded_targets) == {"T7", "T12"}
    # the demo's budgets are generous: every plannable target finds a drone
    assert given_ids == {demo.node_ids[t] for t in demo.target_nodes}
    routes = route_allocation(demo, alloc)
    assert plan_problems(demo, routes) == []
    for spec in demo.drones:  # every allocated target is flown by its drone
        assert sorted(routes[spec.id][1:-1]) == sorted(alloc[spec.id])


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_cap_per_drone(demo, strategy):
    alloc = allocate(demo, strategy, max_per_drone=2)
    assert allocation_problems(demo, alloc, 2) == []
    assert sum(map(len, alloc.values())) == 6  # three drones, two each, enough targets
    assert all(ts == [] for ts in allocate(demo, strategy, max_per_drone=0).values())


def test_unknown_strategy_and_bad_cap(demo):
    with pytest.raises(PlannerError, match="unknown allocation strategy"):
        allocate(demo, "random")
    with pytest.raises(PlannerError):
        allocate(demo, "efficient", max_per_drone=-1)


@SETTINGS
@given(mission=random_missions(), strategy=st.sampled_from(STRATEGIES), cap=st.integers(1, 12))
def test_random_allocation_respects_constraints(mission, strategy, cap):
    alloc = allocate(mission, strategy, max_per_drone=cap)
    assert allocation_problems(mission, alloc, cap) == []
    assert allocate(mission, strategy, max_per_drone=cap) == alloc  # deterministic


@SETTINGS
@given(mission=random_missions(), strategy=st.sampled_from(STRATEGIES))
def test_random_routing_is_feasible_and_flies_the_allocation(mission, strategy):
    alloc = allocate(mission, strategy)
    bad = [spec.id for spec in mission.drones if not prefix_fits(mission, spec)]
    if bad:
        with pytest.raises(InfeasibleError, match=f"drone {bad[0]}"):
            route_allocation(mission, alloc)
        return
    routes = route_allocation(mission, alloc)
    assert plan_problems(mission, routes) == []
    for spec in mission.drones:
        flown = set(routes[spec.id][1 + len(spec.prefix) : -1])
        assert flown <= set(alloc[spec.id])
        # the allocation tour is feasible, so the exact router flies every scoring target
        assert {t for t in alloc[spec.id] if mission.scores[t] > 0} <= flown


def _all_free(spec, mission):
    frozen = {t for d in mission.drones for t in d.prefix}
    return [t for t in spec.eligible if t not in frozen]


@SETTINGS
@given(mission=random_missions(max_targets=6, max_drones=1))
def test_single_drone_routing_is_the_exact_optimum(mission):
    (spec,) = mission.drones
    if not prefix_fits(mission, spec):
        return
    cands = _all_free(spec, mission)
    routes = route_allocation(mission, {spec.id: cands})
    route = routes[spec.id]
    direct = solve_orienteering(
        mission.dist, mission.scores, spec.start, cands, spec.ends, spec.budget, spec.prefix
    )
    assert route == direct.route
    score = float(sum(mission.scores[t] for t in route[1:-1]))
    best_score, best_len = brute_force(mission, spec, cands)
    assert score == pytest.approx(best_score, abs=1e-9)
    assert tour_length(mission, route) == pytest.approx(best_len, abs=1e-7)


# ----------------------------------------------------------------------------- strategies


def test_efficient_prefers_the_cheap_points():
    # One drone, fuel for one of them: T2 (8 pts, 20 km round trip) beats T1 (10 pts, 80 km)
    # by points per km; both together need 91.2 km.
    sc = scenario(
        {"A": (0, 0)},
        {"T1": (40, 0, 10, "A"), "T2": (0, 10, 8, "A")},
        {"1": {"fuelBudget": 90, "home_airport": "A"}},
    )
    m = compile_mission(sc)
    assert m.ids(allocate(m, "efficient")["1"]) == ["T2"]
    assert m.ids(allocate(m, "greedy")["1"]) == ["T1"]  # greedy takes the top priority first


def test_greedy_gives_each_target_to_the_nearest_capable_drone():
    sc = scenario(
        {"W": (0, 0), "E": (100, 0)},
        {
            "T1": (10, 5, 9, "A"),
            "T2": (90, 5, 8, "A"),
            "T3": (95, -5, 7, "B"),
            "T4": (5, -5, 6, "A"),
        },
        {
            "1": {"fuelBudget": 300, "home_airport": "W"},
            "2": {"fuelBudget": 300, "home_airport": "E", "accessibleTargets": ["A"]},
        },
    )
    m = compile_mission(sc)
    alloc = {d: sorted(m.ids(ts)) for d, ts in allocate(m, "greedy").items()}
    # T3 (type B) only drone 1 can sense: it crosses the map for it
    assert alloc == {"1": ["T1", "T3", "T4"], "2": ["T2"]}


def test_balanced_evens_the_counts():
    targets = {f"T{i}": (10 + 3 * i, 10, 5, "A") for i in range(7)}
    sc = scenario(
        {"A": (0, 0)},
        targets,
        {
            "1": {"fuelBudget": 500, "home_airport": "A"},
            "2": {"fuelBudget": 500, "home_airport": "A"},
            "3": {"fuelBudget": 500, "home_airport": "A"},
        },
    )
    m = compile_mission(sc)
    counts = sorted(len(ts) for ts in allocate(m, "balanced").values())
    assert counts == [2, 2, 3]
    # the efficient auction, for contrast, piles the row onto one tour
    assert max(len(ts) for ts in allocate(m, "efficient").values()) >= 5


def test_geographic_splits_by_sector_around_a_shared_base():
    east = {f"E{i}": (60 + 2 * i, 3 * i - 3, 5, "A") for i in range(3)}
    west = {f"W{i}": (-60 - 2 * i, 3 * i - 3, 5, "A") for i in range(3)}
    sc = scenario(
        {"A": (0, 0)},
        {**east, **west},
        {
            "1": {"fuelBudget": 400, "home_airport": "A"},
            "2": {"fuelBudget": 400, "home_airport": "A"},
        },
    )
    m = compile_mission(sc)
    groups = sorted(sorted(m.ids(ts)) for ts in allocate(m, "geographic").values())
    assert groups == [sorted(east), sorted(west)]


def test_geographic_gives_each_drone_the_sector_facing_its_corridor():
    north = {f"N{i}": (50 + 5 * i, 80, 5, "A") for i in range(3)}
    south = {f"S{i}": (50 + 5 * i, 20, 5, "A") for i in range(3)}
    sc = scenario(
        {"NB": (50, 100), "SB": (50, 0)},
        {**north, **south},
        {
            "s": {"fuelBudget": 400, "home_airport": "SB"},
            "n": {"fuelBudget": 400, "home_airport": "NB"},
        },
    )
    m = compile_mission(sc)
    alloc = allocate(m, "geographic")
    assert sorted(m.ids(alloc["n"])) == sorted(north)
    assert sorted(m.ids(alloc["s"])) == sorted(south)


def test_exclusive_serves_single_capability_targets_first():
    # Drone 1 (A, B sensors) has fuel for one target; drone 2 senses B only.
    # TA (type A) only drone 1 can visit; TB (type B) both can, and is drone 1's best ratio.
    sc = scenario(
        {"A1": (0, 0), "A2": (30, 0)},
        {"TA": (0, 10, 6, "A"), "TB": (5, 0, 9, "B")},
        {
            "1": {"fuelBudget": 21, "home_airport": "A1", "accessibleTargets": ["A", "B"]},
            "2": {"fuelBudget": 100, "home_airport": "A2", "accessibleTargets": ["B"]},
        },
    )
    m = compile_mission(sc)
    efficient = {d: m.ids(ts) for d, ts in allocate(m, "efficient").items()}
    exclusive = {d: m.ids(ts) for d, ts in allocate(m, "exclusive").items()}
    assert efficient == {"1": ["TB"], "2": []}
    assert exclusive == {"1": ["TA"], "2": ["TB"]}


def test_frozen_targets_are_never_allocated_again():
    sc = scenario(
        {"A": (0, 0)},
        {"T1": (10, 0, 5, "A"), "T2": (10, 10, 5, "A"), "T3": (0, 10, 5, "A")},
        {
            "1": {
                "fuelBudget": 100,
                "home_airport": "A",
                "frozen_segments": [{"from": "A", "to": "T1"}],
            },
            "2": {"fuelBudget": 100, "home_airport": "A"},
        },
    )
    m = compile_mission(sc)
    t1 = m.index["T1"]
    for strategy in STRATEGIES:
        alloc = allocate(m, strategy)
        assert all(t1 not in ts for ts in alloc.values())
        routes = route_allocation(m, alloc)
        assert routes["1"][:2] == [m.index["A"], t1]
        assert plan_problems(m, routes) == []


def test_unreachable_targets_are_skipped(demo):
    dist = demo.dist.copy()
    t8 = demo.index["T8"]
    dist[t8, :] = dist[:, t8] = np.inf
    dist[t8, t8] = 0.0
    cut = copy.copy(demo)
    cut.paths = SimpleNamespace(dist=dist)
    for strategy in STRATEGIES:
        alloc = allocate(cut, strategy)
        assert allocation_problems(cut, alloc, 12) == []
        assert all(t8 not in ts for ts in alloc.values())
        assert plan_problems(cut, route_allocation(cut, alloc)) == []


# ----------------------------------------------------------------------------- routing


def test_infeasible_prefix_names_the_drone():
    sc = scenario(
        {"A": (0, 0)},
        {"T1": (100, 0, 5, "A"), "T2": (5, 0, 5, "A")},
        {
            "ok": {"fuelBudget": 50, "home_airport": "A"},
            "late": {
                "fuelBudget": 150,
                "home_airport": "A",
                "frozen_segments": [{"from": "A", "to": "T1"}],
            },
        },
    )
    m = compile_mission(sc)
    with pytest.raises(InfeasibleError, match="drone late"):
        route_allocation(m, allocate(m, "efficient"))


def test_route_allocation_rejects_bad_allocations(demo):
    t1, t3 = demo.index["T1"], demo.index["T3"]
    with pytest.raises(PlannerError, match="not an eligible"):
        route_allocation(demo, {"1": [t3]})  # drone 1 cannot sense type C
    with pytest.raises(PlannerError, match="both"):
        route_allocation(demo, {"1": [t1], "3": [t1]})
    with pytest.raises(PlannerError, match="unknown"):
        route_allocation(demo, {"9": []})
    # drones absent from the allocation still fly (start -> end)
    routes = route_allocation(demo, {"1": [t1]})
    assert routes["1"] == [0, t1, 0] and routes["2"] == [1, 1] and routes["3"] == [0, 0]


def test_shortlist_keeps_the_best_priority_per_detour():
    # Targets on the way out and back are free; the far one is dropped first.
    sc = scenario(
        {"A": (0, 0), "B": (100, 0)},
        {
            "T1": (25, 0, 5, "A"),
            "T2": (50, 1, 5, "A"),
            "T3": (75, 0, 5, "A"),
            "T4": (50, 40, 9, "A"),
            "T5": (50, 300, 10, "A"),
        },
        {"1": {"fuelBudget": 200, "home_airport": "A", "end_airport": "B"}},
    )
    m = compile_mission(sc)
    spec = m.drones[0]
    every = [m.index[t] for t in ("T1", "T2", "T3", "T4", "T5")]
    assert m.ids(shortlist(m, spec, every)) == ["T1", "T2", "T3", "T4"]  # T5 out of reach
    assert m.ids(shortlist(m, spec, every, limit=3)) == ["T1", "T2", "T3"]
    routes = route_allocation(m, {"1": every}, max_exact=3)
    assert m.ids(routes["1"]) == ["A", "T1", "T2", "T3", "B"]
