"""Post-optimisation tools (seed 000 §6): insert missed, trajectory swap, crossing removal,
and front-loading (a closed route flown the way round that collects its points sooner)."""

from __future__ import annotations

import contextlib
import copy
import re
from unittest import mock

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from shapely.geometry import LineString

from planner.allocation import STRATEGIES, allocate
from planner.errors import InfeasibleError, PlannerError
from planner.mission import Mission, compile_mission
from planner.postopt import (
    LENGTH_TOL,
    Change,
    PostOptResult,
    crossing_removal,
    front_load,
    insert_missed,
    post_optimise,
    trajectory_swap,
)
from planner.routing import route_allocation
from planner.scenario import load_scenario
from planner.solution import build_solution
from planner.validation import validate_solution
from tests.planner.missions import (
    DEMO,
    SETTINGS,
    plan_problems,
    random_missions,
    scenario,
    tour_length,
)

TOOLS = {
    "insert": insert_missed,
    "swap": trajectory_swap,
    "swap_once": lambda m, r: trajectory_swap(m, r, cascade=False),
    "no_cross": crossing_removal,
    "front_load": front_load,
    "all": post_optimise,
}


def points(mission: Mission, routes) -> float:
    return float(sum(mission.scores[n] for r in routes.values() for n in r[1:-1]))


def total_length(mission: Mission, routes) -> float:
    return sum(tour_length(mission, r) for r in routes.values())


def value_time(mission: Mission, route) -> float:
    """Points x the distance flown before them, summed (what front-loading lowers)."""
    flown, total = 0.0, 0.0
    for a, b in zip(route[:-1], route[1:]):
        flown += float(mission.dist[a, b])
        total += float(mission.scores[b]) * flown
    return total


def free_targets(mission: Mission, routes, drone_id) -> list[int]:
    spec = mission.drone(drone_id)
    return routes[drone_id][1 + len(spec.prefix) : -1]


def is_subsequence(short, long) -> bool:
    it = iter(long)
    return all(x in it for x in short)


@st.composite
def missions_with_plans(draw):
    """A random mission and a random feasible plan for it (shuffled, so it has crossings)."""
    mission = draw(random_missions())
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    frozen = {t for d in mission.drones for t in d.prefix}
    taken: set[int] = set()
    routes = {}
    for spec in mission.drones:
        pool = [t for t in spec.eligible if t not in frozen and t not in taken]
        chosen = [int(t) for t in rng.permutation(pool)[: rng.integers(0, len(pool) + 1)]]
        ends = [int(e) for e in rng.permutation(list(spec.ends))]
        route = None
        while route is None:
            for e in ends:
                cand = [spec.start, *spec.prefix, *chosen, e]
                if tour_length(mission, cand) <= spec.budget:
                    route = cand
                    break
            else:
                if not chosen:
                    break
                chosen.pop()
        if route is None:  # even the frozen prefix does not fit: no feasible plan
            return draw(st.nothing())
        taken.update(chosen)
        routes[spec.id] = route
    if draw(st.booleans()):  # or start from the planner's own plan
        alloc = allocate(mission, draw(st.sampled_from(STRATEGIES)))
        # With knocked-out legs a drone's only way home may run through a target that the
        # allocation did not give it: then keep the random plan.
        with contextlib.suppress(InfeasibleError):
            routes = route_allocation(mission, alloc)
    return mission, routes


def check_result(mission, before, result: PostOptResult, tool: str) -> None:
    after = result.routes
    assert set(after) == set(before)
    assert plan_problems(mission, after) == []
    p0, p1 = points(mission, before), points(mission, after)
    l0, l1 = total_length(mission, before), total_length(mission, after)
    assert p1 >= p0 - 1e-9
    # the reported changes add up to the real difference
    assert sum(c.points_delta for c in result.changes) == pytest.approx(p1 - p0, abs=1e-9)
    assert sum(c.fuel_delta for c in result.changes) == pytest.approx(l1 - l0, abs=1e-6)
    assert result.points_delta == pytest.approx(p1 - p0, abs=1e-9)
    for spec in mission.drones:  # starts and frozen prefixes untouched
        k = len(spec.prefix)
        assert after[spec.id][: 1 + k] == before[spec.id][: 1 + k]
    for change in result.changes:
        assert isinstance(change, Change) and change.drone in after
        assert change.tool in {"insert", "swap", "no_cross", "front_load"}
        if change.tool in ("swap", "no_cross"):
            assert change.points_delta == 0 and change.fuel_delta < 0
        elif change.tool == "front_load":
            assert change.points_delta == 0 and abs(change.fuel_delta) <= LENGTH_TOL
        else:
            name = re.match(r"inserted (\S+) at position \d+", change.description).group(1)
            assert change.points_delta == mission.scores[mission.index[name]] > 0
    if tool in ("swap", "swap_once", "no_cross", "front_load"):
        assert l1 <= l0 + 1e-9
        assert p1 == pytest.approx(p0, abs=1e-9)
        assert {t for r in after.values() for t in r[1:-1]} == {
            t for r in before.values() for t in r[1:-1]
        }
    if tool in ("no_cross", "front_load"):  # they only reorder within a route
        for d in before:
            assert sorted(after[d][1:-1]) == sorted(before[d][1:-1])
    if tool == "front_load":  # a whole free part reversed where it collects sooner, or kept
        for spec in mission.drones:
            k, old, new = len(spec.prefix), before[spec.id], after[spec.id]
            assert new in (old, old[: 1 + k] + old[1 + k : -1][::-1] + old[-1:])
            if new != old:
                assert value_time(mission, new) < value_time(mission, old)
    if tool == "insert":  # only insertions (and maybe a closer end)
        for d in before:
            assert is_subsequence(before[d][:-1], after[d][:-1])


@SETTINGS
@given(case=missions_with_plans(), tool=st.sampled_from(sorted(TOOLS)))
def test_tools_keep_plans_feasible_and_report_truthfully(case, tool):
    mission, routes = case
    assert plan_problems(mission, routes) == []
    snapshot = copy.deepcopy(routes)
    result = TOOLS[tool](mission, routes)
    assert routes == snapshot  # the input plan is not modified
    check_result(mission, routes, result, tool)
    if tool != "swap_once":  # every tool stops at a fixed point
        kind = "all" if tool == "all" else tool
        again = TOOLS[kind](mission, result.routes)
        if tool != "all":
            assert again.changes == [] and again.routes == result.routes


class _Clock:
    """A ``time.perf_counter`` that moves one second each time it is read."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        self.now += 1.0
        return self.now


@SETTINGS
@given(case=missions_with_plans(), tool=st.sampled_from(sorted(TOOLS)), reads=st.integers(0, 40))
def test_a_deadline_stops_a_tool_between_moves_and_keeps_what_it_made(case, tool, reads):
    # A real-time round stops the post-optimisation at its deadline: whenever it stops, the
    # plan is as feasible and truthfully reported as a finished one, and it holds the moves
    # an unbounded run makes first, in the same order (none half made, none made after).
    mission, routes = case
    full = TOOLS[tool](mission, routes)
    clock = _Clock()
    bounded = {
        "swap_once": lambda m, r, deadline: trajectory_swap(m, r, False, deadline=deadline),
    }.get(tool, TOOLS[tool])
    with mock.patch("planner.postopt.time", clock):
        result = bounded(mission, routes, deadline=reads + 0.5)
    assert len(result.changes) <= reads  # every move is started on a read before the deadline
    check_result(mission, routes, result, tool)
    assert result.changes == full.changes[: len(result.changes)]
    if clock.now < reads:  # it finished before the deadline: all of it
        assert result.routes == full.routes


@SETTINGS
@given(case=missions_with_plans(), data=st.data())
def test_tools_leave_absent_drones_alone(case, data):
    mission, routes = case
    keep = data.draw(st.lists(st.sampled_from(sorted(routes)), unique=True, min_size=1))
    part = {d: routes[d] for d in keep}
    result = post_optimise(mission, part)
    assert set(result.routes) == set(keep)
    problems = [p for p in plan_problems(mission, result.routes) if not p.endswith("no route")]
    assert problems == []
    visited = {t for r in result.routes.values() for t in r[1:-1]}
    frozen_elsewhere = {t for s in mission.drones if s.id not in keep for t in s.prefix}
    assert not visited & frozen_elsewhere
    assert points(mission, result.routes) >= points(mission, part) - 1e-9
    assert sum(c.points_delta for c in result.changes) == pytest.approx(
        points(mission, result.routes) - points(mission, part), abs=1e-9
    )


# ----------------------------------------------------------------------------- hand-made


def one_drone(airports, targets, **drone):
    """Drone 1 at A with 100 km of fuel (and ``drone``'s settings) among ``targets``."""
    cfg = {"fuelBudget": 100, "home_airport": "A", **drone}
    return compile_mission(scenario(airports, targets, {"1": cfg}))


def square_mission(**drone):
    return one_drone(
        {"A": (0, 0)},
        {"T1": (10, 0, 5, "A"), "T2": (10, 10, 5, "A"), "T3": (0, 10, 5, "A")},
        **drone,
    )


def test_crossing_route_is_uncrossed():
    m = square_mission()
    crossed = {"1": m.nodes(["A", "T1", "T3", "T2", "A"])}
    coords = lambda r: [tuple(m.positions[n]) for n in r]  # noqa: E731
    assert not LineString(coords(crossed["1"])).is_simple
    result = crossing_removal(m, crossed)
    assert m.ids(result.routes["1"]) in (["A", "T1", "T2", "T3", "A"], ["A", "T3", "T2", "T1", "A"])
    assert LineString(coords(result.routes["1"])).is_simple
    assert total_length(m, result.routes) < total_length(m, crossed) - 1.0
    (change,) = result.changes
    assert change.tool == "no_cross" and change.description.startswith("2-opt reversed T")
    assert change.fuel_delta == pytest.approx(
        total_length(m, result.routes) - total_length(m, crossed)
    )


def test_crossing_removal_never_reverses_the_frozen_prefix():
    # The frozen prefix T1 -> T3 crosses the rest of the route; only T2 is free.
    m = square_mission(frozen_segments=[{"from": "A", "to": "T1"}, {"from": "T1", "to": "T3"}])
    routes = {"1": m.nodes(["A", "T1", "T3", "T2", "A"])}
    result = crossing_removal(m, routes)
    assert result.routes == routes and result.changes == []
    result = post_optimise(m, routes)
    assert m.ids(result.routes["1"])[:3] == ["A", "T1", "T3"]


def test_a_closed_route_is_flown_the_way_that_collects_its_points_sooner():
    # A -> T1 (1 point) -> T2 -> T3 (9 points) -> A: the same square the other way round
    # reaches the 9 points 10 km in instead of 30: a drone lost half way keeps them.
    m = one_drone(
        {"A": (0, 0)}, {"T1": (10, 0, 1, "A"), "T2": (10, 10, 5, "A"), "T3": (0, 10, 9, "A")}
    )
    late = {"1": m.nodes(["A", "T1", "T2", "T3", "A"])}
    result = front_load(m, late)
    assert m.ids(result.routes["1"]) == ["A", "T3", "T2", "T1", "A"]
    (change,) = result.changes
    assert change.tool == "front_load" and "sooner" in change.description
    assert total_length(m, result.routes) == pytest.approx(total_length(m, late))
    assert front_load(m, result.routes).changes == []  # already the sooner way
    assert m.ids(post_optimise(m, late).routes["1"]) == ["A", "T3", "T2", "T1", "A"]
    assert post_optimise(m, late, no_cross=False).routes == late


def test_a_route_that_ends_elsewhere_is_not_reversed():
    # From A to B the other way round is longer: the points sooner are not bought with fuel.
    m = one_drone(
        {"A": (0, 0), "B": (30, 0)},
        {"T1": (10, 0, 1, "A"), "T2": (20, 0, 9, "A")},
        end_airport="B",
    )
    routes = {"1": m.nodes(["A", "T1", "T2", "B"])}
    assert front_load(m, routes).routes == routes


def test_missed_target_that_fits_is_inserted_and_one_that_does_not_is_not():
    m = compile_mission(
        scenario(
            {"A": (0, 0)},
            {"T1": (10, 0, 5, "A"), "T2": (10, 2, 4, "A"), "T3": (200, 0, 9, "A")},
            {"1": {"fuelBudget": 30, "home_airport": "A"}},
        )
    )
    result = insert_missed(m, {"1": m.nodes(["A", "T1", "A"])})
    assert m.ids(result.routes["1"]) in (["A", "T1", "T2", "A"], ["A", "T2", "T1", "A"])
    (change,) = result.changes
    assert change.tool == "insert" and change.points_delta == 4
    assert change.description.startswith("inserted T2 at position")
    assert change.fuel_delta == pytest.approx(tour_length(m, result.routes["1"]) - 20.0)


def test_insert_prefers_the_best_priority_per_extra_fuel():
    # Fuel for one more target: T2 (6 pts for ~4 km) beats T3 (9 pts for ~20 km).
    m = compile_mission(
        scenario(
            {"A": (0, 0)},
            {"T1": (10, 0, 5, "A"), "T2": (10, 2, 6, "A"), "T3": (0, 10, 9, "A")},
            {"1": {"fuelBudget": 26, "home_airport": "A"}},
        )
    )
    result = insert_missed(m, {"1": m.nodes(["A", "T1", "A"])})
    assert [c.description.split()[1] for c in result.changes] == ["T2"]


def test_target_on_another_drones_way_is_moved():
    # D1 flies west -> T2 near the east base and back; D2's route to T3 passes T2.
    m = compile_mission(
        scenario(
            {"W": (0, 0), "E": (100, 0)},
            {"T1": (10, 5, 5, "A"), "T2": (80, 2, 5, "A"), "T3": (60, 4, 5, "A")},
            {
                "1": {"fuelBudget": 300, "home_airport": "W"},
                "2": {"fuelBudget": 300, "home_airport": "E"},
            },
        )
    )
    routes = {"1": m.nodes(["W", "T1", "T2", "W"]), "2": m.nodes(["E", "T3", "E"])}
    result = trajectory_swap(m, routes)
    assert m.ids(result.routes["1"]) == ["W", "T1", "W"]
    assert set(m.ids(result.routes["2"])[1:-1]) == {"T2", "T3"}
    (change,) = result.changes
    assert change.description == "moved T2 from D1 to D2" and change.drone == "2"
    assert change.fuel_delta == pytest.approx(
        total_length(m, result.routes) - total_length(m, routes)
    )

    # the move must respect the receiver's sensors and budget
    def moves(sensors2, budget2):
        m2 = compile_mission(
            scenario(
                {"W": (0, 0), "E": (100, 0)},
                {"T1": (10, 5, 5, "A"), "T2": (80, 2, 5, "A"), "T3": (100, 30, 5, "B")},
                {
                    "1": {"fuelBudget": 300, "home_airport": "W", "accessibleTargets": ["A"]},
                    "2": {
                        "fuelBudget": budget2,
                        "home_airport": "E",
                        "accessibleTargets": sensors2,
                    },
                },
            )
        )
        routes2 = {"1": m2.nodes(["W", "T1", "T2", "W"]), "2": m2.nodes(["E", "T3", "E"])}
        result2 = trajectory_swap(m2, routes2)
        assert plan_problems(m2, result2.routes) == []
        return [c.description for c in result2.changes]

    assert moves(["A", "B"], 300) == ["moved T2 from D1 to D2"]
    assert moves(["B"], 300) == []  # D2 cannot sense T2
    assert moves(["A", "B"], 60.1) == []  # E -> T2 -> T3 -> E (84.5 km) is over budget


def test_best_end_drone_lands_at_the_closer_airport():
    m = compile_mission(
        scenario(
            {"A": (0, 0), "B": (50, 0)},
            {"T1": (45, 5, 5, "A")},
            {
                "1": {
                    "fuelBudget": 200,
                    "home_airport": "A",
                    "end_mode": "best_end",
                    "allowed_ends": ["A", "B"],
                }
            },
        )
    )
    routes = {"1": m.nodes(["A", "T1", "A"])}
    result = crossing_removal(m, routes)
    assert m.ids(result.routes["1"]) == ["A", "T1", "B"]
    assert result.changes[0].description == "end A -> B of D1"


def test_bad_plans_are_refused():
    m = square_mission(frozen_segments=[{"from": "A", "to": "T1"}])
    with pytest.raises(PlannerError, match="unknown"):
        post_optimise(m, {"9": [0, 0]})
    with pytest.raises(PlannerError, match="frozen prefix"):
        crossing_removal(m, {"1": m.nodes(["A", "T2", "T1", "A"])})


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_demo_post_optimised_plans_pass_the_validator(strategy):
    m = compile_mission(load_scenario(DEMO))
    routes = route_allocation(m, allocate(m, strategy))
    result = post_optimise(m, routes)
    assert validate_solution(m, build_solution(m, result.routes)) == []
    assert points(m, result.routes) >= points(m, routes)
    assert total_length(m, result.routes) <= total_length(m, routes) + 1e-9
    nothing = post_optimise(m, routes, insert=False, swap=False, no_cross=False)
    assert nothing.routes == routes and nothing.changes == []
