"""The change scenarios: flying blindly loses something that replanning can win back; and
the scenario's ``sim`` and ``timeline`` sections are checked like the rest of the file."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from planner.mission import compile_mission
from planner.planning import plan_mission
from planner.scenario import ScenarioError, parse_scenario
from sim import FlyPath, Sim, mission_outcome
from sim.flight import Flight
from tests.conftest import SCENARIOS


def load(name):
    from planner.scenario import load_scenario

    return load_scenario(SCENARIOS / f"{name}.json")


def plans(scenario):
    mission = compile_mission(scenario)
    yield mission, plan_mission(mission, "efficient").solution
    yield mission, plan_mission(mission, "team", seconds=None, iterations=3000, seed=0).solution


def fly(scenario, mission, solution, react=None):
    """Run to the end; ``react(sim, result)`` may submit inputs after any tick."""
    sim = Sim(scenario, solution, mission=mission)
    events = []
    while not sim.done:
        result = sim.step()
        events.extend(result.events)
        if react is not None:
            react(sim, result)
    return sim, events


def remaining_route(solution, drone_id, collected):
    route = solution.routes[drone_id].route
    return [n for n in route[1:] if n not in collected]


def test_popup_sam_lies_on_the_planned_path_and_blind_flight_loses_the_drone():
    scenario = load("popup_sam")
    (hidden,) = scenario.timeline
    assert hidden.op == "add_sam" and hidden.hidden
    for mission, solution in plans(scenario):
        crossing = []
        for drone_id, route in solution.routes.items():
            path = mission.route_path(mission.nodes(route.route))
            pts = np.array(
                [path.locate(s)[:2] for s in np.arange(0.0, path.length, 0.05)] or [[0, 0]]
            )
            gaps = np.hypot(pts[:, 0] - hidden.pos[0], pts[:, 1] - hidden.pos[1])
            if gaps.min() < hidden.range:
                crossing.append(drone_id)
        assert crossing, "the hidden SAM must sit on a planned path"
        sim, events = fly(scenario, mission, solution)
        lost = [e for e in events if e.kind == "drone_lost"]
        assert [(e.drone, e.sam) for e in lost] == [(crossing[0], hidden.id)]
        detected = [e for e in events if e.kind == "sam_detected"]
        assert len(detected) == 1 and detected[0].tick < lost[0].tick
        outcome = mission_outcome(sim)
        assert outcome.total_points < solution.total_points


def test_popup_sam_replanned_at_detection_keeps_drone_and_points():
    scenario = load("popup_sam")
    mission, solution = next(plans(scenario))

    def react(sim, result):
        for event in result.events:
            if event.kind == "sam_detected":
                world = sim.world
                x, y, _ = world.position(event.drone)
                rest = remaining_route(solution, event.drone, world.collected())
                flight = Flight.through(world.known_environment, (x, y), rest)
                assert flight.length <= world.fuel(event.drone)
                sim.submit(FlyPath(drone=event.drone, path=flight.path, waypoints=flight.waypoints))

    sim, _events = fly(scenario, mission, solution, react)
    outcome = mission_outcome(sim)
    assert outcome.lost == [] and outcome.total_points == solution.total_points


def test_lost_drone_leaves_points_that_a_spare_drone_can_take():
    scenario = load("lost_drone")
    (disable,) = scenario.timeline
    for mission, solution in plans(scenario):
        sim, _events = fly(scenario, mission, solution)
        blind = mission_outcome(sim)
        assert blind.lost == [disable.drone]
        assert blind.total_points < solution.total_points

    def react(sim, result):
        for event in result.events:
            if event.kind == "drone_lost":
                world = sim.world
                orphans = [
                    t
                    for t in remaining_route(solution, event.drone, world.collected())
                    if world.known_environment.target(t) is not None
                ]
                assert orphans
                spare = "1"  # parked at A1 with 200 km of fuel and type-A sensors
                config = scenario.drone_configs[spare]
                flight = Flight.through(
                    world.known_environment, world.position(spare)[:2], [*orphans, config.home]
                )
                assert flight.length <= world.fuel(spare)
                sim.submit(FlyPath(drone=spare, path=flight.path, waypoints=flight.waypoints))

    sim, _ = fly(scenario, mission, solution, react)
    rescued = mission_outcome(sim)
    assert rescued.total_points == solution.total_points > blind.total_points


def test_new_target_appears_mid_mission_within_reach():
    scenario = load("new_target")
    (added,) = scenario.timeline
    assert added.op == "add_target" and added.t > 0
    mission, solution = next(plans(scenario))
    sim, _events = fly(scenario, mission, solution)
    assert added.id in mission_outcome(sim).uncollected

    def react(sim, result):
        if any(e.kind == "edit_applied" and e.edit.op == "add_target" for e in result.events):
            world = sim.world
            flight = Flight.through(
                world.known_environment, world.position("1")[:2], [added.id, "A1"]
            )
            sim.submit(FlyPath(drone="1", path=flight.path, waypoints=flight.waypoints))

    sim, _events = fly(scenario, mission, solution, react)
    outcome = mission_outcome(sim)
    assert outcome.total_points == solution.total_points + added.priority
    assert outcome.drones["1"].collected == [added.id]


# ----- the new sections ----------------------------------------------------------------------


def demo_data():
    return json.loads((SCENARIOS / "demo.json").read_text())


def problems_of(data):
    with pytest.raises(ScenarioError) as info:
        parse_scenario(json.dumps(data))
    return info.value.problems


def test_planner_only_scenario_gets_sim_defaults():
    scenario = parse_scenario(demo_data())
    assert scenario.sim.tick_hz == 20 and scenario.sim.speed == 0.1 and scenario.timeline == []
    assert scenario.sim.speed_of("1") == 0.1


def test_bad_sim_and_timeline_sections_are_named_by_json_path():
    data = demo_data()
    data["sim"] = {"tick_hz": 0, "speed": -1, "drone_speeds": {"9": 0.2}, "warp": 3}
    data["timeline"] = [
        {"t": 10, "op": "add_sam", "id": "S9", "pos": [10, 21], "range": -3},
        {"t": 10, "op": "teleport"},
        {"t": 1, "tick": 3, "op": "reveal_sam", "id": "SAM1"},
        {"t": -1, "op": "move_target", "id": "T1", "x": "a", "y": 2},
        {"op": "remove_target", "id": "T1", "color": "red"},
    ]
    problems = problems_of(data)
    assert "$.sim.tick_hz: Input should be greater than 0, got 0" in problems
    assert "$.sim.speed: Input should be greater than 0, got -1" in problems
    assert "$.sim.warp: Extra inputs are not permitted" in problems
    assert "$.timeline[0].range: Input should be greater than 0, got -3" in problems
    assert any(
        p.startswith("$.timeline[1]: Input tag 'teleport' found using 'op'") for p in problems
    )
    assert any(
        p.startswith('$.timeline[2]: Value error, give "t" (seconds) or "tick", not both')
        for p in problems
    )
    assert "$.timeline[3].t: Input should be greater than or equal to 0, got -1" in problems
    assert any(p.startswith("$.timeline[3].x: Input should be a valid number") for p in problems)
    assert "$.timeline[4].color: Extra inputs are not permitted" in problems


def test_timeline_cross_references_are_checked_in_time_order():
    data = demo_data()
    data["sim"] = {"drone_speeds": {"9": 0.2}}
    data["timeline"] = [
        {"t": 5, "op": "add_sam", "id": "H1", "pos": [11, 21], "range": 3, "hidden": True},
        {"t": 9, "op": "remove_target", "id": "T99"},
        {"t": 1, "op": "remove_target", "id": "T1"},
        {"t": 2, "op": "move_target", "id": "T1", "x": 1, "y": 1},
        {"t": 3, "op": "add_target", "id": "A2", "x": 1, "y": 1, "priority": 1, "type": "A"},
        {"t": 3, "op": "reveal_sam", "id": "SAM1"},
        {"t": 3, "op": "move_sam", "id": "SAM2", "pos": [45, 85]},
        {"t": 3, "op": "disable_drone", "drone": "7"},
        {"t": 3, "op": "disable_drone", "drone": "2"},
        {"t": 4, "op": "set_fuel", "drone": "2", "fuel": 10},
        {"op": "set_fuel", "drone": "1", "fuel": 10},
    ]
    assert problems_of(data) == [
        "$.sim.drone_speeds[\"9\"]: unknown drone id '9'",
        '$.timeline[10]: needs "t" (seconds) or "tick"',
        "$.timeline[3].id: unknown target id 'T1' at t=2 s",
        "$.timeline[4].id: id 'A2' already exists at t=3 s",
        "$.timeline[5].id: SAM 'SAM1' is not hidden at t=3 s",
        "$.timeline[6].pos: SAM 'SAM2' would cover airport 'A3'",
        "$.timeline[7].drone: unknown drone id '7'",
        "$.timeline[9].drone: drone '2' is already disabled at t=4 s",
        "$.timeline[0].pos: SAM 'H1' would cover airport 'A1'",
        "$.timeline[1].id: unknown target id 'T99' at t=9 s",
    ]


def test_the_change_scenarios_are_the_demo_plus_sim_and_timeline():
    demo = demo_data()
    for name in ("popup_sam", "lost_drone", "new_target"):
        data = json.loads((SCENARIOS / f"{name}.json").read_text())
        assert data["environment"] == demo["environment"]
        assert data["drone_configs"] == demo["drone_configs"]
        assert set(data) == {"environment", "drone_configs", "sim", "timeline"}
        parse_scenario(copy.deepcopy(data))
