"""Generated missions: valid, reproducible, and each disruption where the first plan feels it."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from planner.mission import compile_mission
from planner.planning import plan_mission
from planner.scenario import parse_scenario
from planner.scenario.generator import DISRUPTIONS, SuiteSpec, generate_mission


def _first_plan(spec, made):
    scenario = parse_scenario({k: v for k, v in made.scenario.items() if k != "timeline"})
    mission = compile_mission(scenario)
    return plan_mission(
        mission, seconds=None, iterations=spec.iterations, seed=spec.plan_seed
    ).solution


def _distance_to_path(x, y, path):
    best = math.inf
    for (ax, ay), (bx, by) in zip(path, path[1:]):
        dx, dy = bx - ax, by - ay
        t = (
            0.0
            if dx == dy == 0
            else max(0.0, min(1.0, ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy)))
        )
        best = min(best, math.hypot(x - ax - t * dx, y - ay - t * dy))
    return best


def _at(path, distance):
    """The point ``distance`` km along ``path`` (its end beyond it)."""
    for (ax, ay), (bx, by) in zip(path, path[1:]):
        seg = math.hypot(bx - ax, by - ay)
        if distance <= seg and seg > 0:
            return ax + (bx - ax) * distance / seg, ay + (by - ay) * distance / seg
        distance -= seg
    return path[-1]


def test_the_same_spec_and_index_give_the_same_mission():
    spec = SuiteSpec(seed=7, count=3, targets=(10, 30))
    assert generate_mission(spec, 2).scenario == generate_mission(spec, 2).scenario
    assert generate_mission(spec, 1).scenario != generate_mission(spec, 2).scenario


@pytest.mark.parametrize("kind", [d for d in DISRUPTIONS])
def test_each_disruption_is_placed_where_the_first_plan_feels_it(kind):
    spec = SuiteSpec(seed=3, count=4, targets=(15, 40), disruptions=[kind])
    for index in range(3):
        made = generate_mission(spec, index)
        assert made.disruption == kind, (index, made.disruption)
        scenario = parse_scenario(made.scenario)  # valid
        env = scenario.environment
        sams = [(s.pos, s.range) for s in env.sams] + [
            (tuple(e["pos"]), e.get("range") or 0.0)
            for e in made.scenario["timeline"]
            if e["op"] in ("add_sam", "move_sam")
        ]
        for airport in env.airports:  # airports stay clear of every SAM, now and later
            assert all(math.hypot(airport.x - p[0], airport.y - p[1]) > r for p, r in sams)
        for drone_id, config in scenario.drone_configs.items():
            sees = config.accessible_targets
            assert sees == "ALL" or any(t.type in sees for t in env.targets), drone_id
        solution = _first_plan(spec, made)
        paths = {d: r.path or [] for d, r in solution.routes.items()}
        for edit in made.scenario["timeline"]:
            op = edit["op"]
            if op == "add_sam":  # the pop-up lies across a planned path
                assert edit["hidden"] and any(
                    _distance_to_path(*edit["pos"], p) < 1e-6 for p in paths.values() if p
                )
            elif op == "move_sam":  # moved onto a planned corridor
                assert any(_distance_to_path(*edit["pos"], p) < 1e-6 for p in paths.values() if p)
            elif op == "disable_drone":  # lost mid-route, with targets still to visit
                route = solution.routes[edit["drone"]]
                assert 0 < edit["t"] < route.distance / spec.speed
                assert route.total_points > 0
            elif op == "add_target":  # far from the fleet, worth the most
                assert edit["priority"] == 10
                nearest = min(
                    _distance_to_path(edit["x"], edit["y"], p) for p in paths.values() if p
                )
                assert nearest > 0.05 * spec.size
            elif op == "move_target":  # a planned target, moved before it is reached
                planned = {t for r in solution.routes.values() for t in r.visited_targets}
                assert edit["id"] in planned
            elif op == "set_fuel":  # less fuel than the drone has then, enough to land
                budget = scenario.drone_configs[edit["drone"]].fuel_budget
                assert 0 < edit["fuel"] < budget - edit["t"] * spec.speed
                route = solution.routes[edit["drone"]]
                for path in (route.path, route.path[::-1]):
                    x, y = _at(path, edit["t"] * spec.speed)
                    home = min(math.hypot(x - a.x, y - a.y) for a in env.airports)
                    assert edit["fuel"] > home
            if op in ("add_sam", "move_sam"):  # not dropped on a drone, whichever way it flies
                for route in solution.routes.values():
                    for path in (route.path or [], (route.path or [])[::-1]):
                        if len(path) > 1:
                            x, y = _at(path, edit["t"] * spec.speed)
                            assert (
                                math.hypot(x - edit["pos"][0], y - edit["pos"][1]) > edit["range"]
                            )
        if kind == "combo":
            assert len(made.placed) == 2
            ops = [e["op"] for e in made.scenario["timeline"]]
            sam_ops = [op for op in ops if op in ("add_sam", "move_sam")]
            assert len(sam_ops) <= 1  # one SAM class at most, and it comes first
            assert not sam_ops or ops[0] in ("add_sam", "move_sam")


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"drones": (8, 3)}, "drones"),
        ({"targets": (1, 500)}, "targets"),
        ({"disruptions": ["meteor"]}, "disruptions"),
        ({"size": 5.0}, "size"),
        ({"count": "10"}, "count"),  # strict: no string to number
    ],
)
def test_a_bad_spec_is_refused_naming_the_field(fields, where):
    with pytest.raises(ValidationError) as info:
        SuiteSpec.model_validate(fields)
    assert where in str(info.value)


def test_a_harder_spec_puts_several_late_disruptions_on_tighter_fuel():
    base = dict(seed=7, count=4, drones=(3, 4), targets=(20, 30), sams=(2, 4), iterations=200)
    harder = SuiteSpec(**base, per_mission=(2, 3), late=0.5, fuel=(1.1, 1.2))
    standard = SuiteSpec(**base)
    for index in range(2):
        made = generate_mission(harder, index)
        assert made.disruption in ("2 disruptions", "3 disruptions")
        timeline = made.scenario["timeline"]
        assert 2 <= len(timeline) <= 3
        sam_ops = [e for e in timeline if e["op"] in ("add_sam", "move_sam")]
        assert len(sam_ops) <= 1  # at most one SAM class, and it comes first
        if sam_ops:
            assert timeline[0] is sam_ops[0]
        budgets = [d["fuelBudget"] for d in made.scenario["drone_configs"].values()]
        assert all(110.0 - 0.1 <= b <= 120.0 + 0.1 for b in budgets)
        assert parse_scenario(made.scenario).timeline
    # the defaults draw exactly what they drew before the harder options existed
    assert (
        generate_mission(standard, 0).scenario
        == generate_mission(
            SuiteSpec(**base, per_mission=(1, 1), late=0.0, fuel=(1.4, 2.4)), 0
        ).scenario
    )


def test_late_moves_a_disruption_later():
    base = dict(seed=3, count=6, drones=(3, 4), targets=(20, 30), sams=(2, 4), iterations=200)
    spec = SuiteSpec(**base, disruptions=["lost_drone"])
    early = generate_mission(spec, 0).scenario["timeline"][0]["t"]
    late = generate_mission(spec.model_copy(update={"late": 0.6}), 0).scenario["timeline"][0]["t"]
    assert late > early
