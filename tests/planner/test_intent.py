"""Routing an intent again (``planner.intent``) and narrowing a mission to what can be
planned (``planner.feasibility``)."""

from __future__ import annotations

from planner.feasibility import plannable
from planner.intent import intent_of, route_intent
from planner.mission import compile_mission
from planner.model import Scenario
from planner.solution import build_solution
from planner.validation import validate_solution


def _line(fuel: float = 200.0, sams=(), ends=None) -> Scenario:
    """A1 (0, 0) and A2 (60, 0); T1..T4 on the line at 10, 20, 30, 40 km."""
    drone = {"fuelBudget": fuel, "home_airport": "A1", "accessibleTargets": "ALL"}
    drone.update(ends or {"end_airport": "A2"})
    return Scenario.model_validate(
        {
            "environment": {
                "airports": [{"id": "A1", "x": 0, "y": 0}, {"id": "A2", "x": 60, "y": 0}],
                "targets": [
                    {"id": f"T{k}", "x": 10.0 * k, "y": 0.0, "priority": k, "type": "A"}
                    for k in range(1, 5)
                ],
                "sams": list(sams),
            },
            "drone_configs": {"1": drone},
        }
    )


def test_the_same_targets_in_the_same_order_without_what_is_gone():
    mission = compile_mission(_line())
    routed = route_intent(mission, {"1": ("T3", "T1", "T4")}, gone={"T1": "collected"})
    assert routed.kept == {"1": ("T3", "T4")}  # the order kept, not optimised
    assert routed.dropped == {} and routed.ends == {"1": "A2"}
    solution = build_solution(mission, routed.routes)
    assert validate_solution(mission, solution) == []
    assert intent_of(solution) == {"1": ("T3", "T4")}


def test_targets_that_cannot_be_kept_are_dropped_and_named():
    sam = {"id": "S1", "pos": [20.0, 0.0], "range": 2.0}  # over T2
    mission = compile_mission(_line(sams=[sam]))
    routed = route_intent(mission, {"1": ("T2", "T9", "T3")})
    assert routed.dropped == {"T2": "inside a SAM", "T9": "no longer a target"}
    assert routed.kept == {"1": ("T3",)}


def test_what_no_longer_fits_the_fuel_goes_least_worth_first():
    # 60 km straight to A2; a back-and-forth order costs more than the fuel
    mission = compile_mission(_line(fuel=90.0))
    routed = route_intent(mission, {"1": ("T4", "T1", "T3")})
    assert set(routed.dropped.values()) == {"no longer fits the fuel"}
    assert validate_solution(mission, build_solution(mission, routed.routes)) == []
    # an allocation routed in its best order keeps them all
    best = route_intent(mission, {"1": ("T4", "T1", "T3")}, reorder=True)
    assert best.dropped == {} and best.kept == {"1": ("T1", "T3", "T4")}


def test_a_preferred_end_is_kept_when_allowed_and_reachable():
    mission = compile_mission(_line(ends={"end_mode": "best_end"}))
    assert route_intent(mission, {"1": ("T1",)}, ends={"1": "A2"}).ends == {"1": "A2"}
    assert route_intent(mission, {"1": ("T1",)}, ends={"1": "A9"}).ends == {"1": "A1"}


def test_a_drone_whose_end_is_blocked_may_end_elsewhere():
    # a SAM over A2 (D1's end): A1 is reachable, so D1 is planned to end there
    sam = {"id": "S1", "pos": [60.0, 0.0], "range": 3.0}
    narrowed = plannable(compile_mission(_line(sams=[sam])))
    assert set(narrowed.rerouted) == {"1"} and not narrowed.left_out
    assert (
        "cannot reach its end airport A2 (no path avoids the known SAMs)" in narrowed.rerouted["1"]
    )
    spec = narrowed.mission.drone("1")
    assert [narrowed.mission.node_ids[e] for e in spec.ends] == ["A1"]


def test_a_drone_that_can_reach_no_airport_is_left_out():
    # in the air 50 km from every airport with 5 km of fuel left
    data = _line(fuel=5.0).model_dump(mode="json", by_alias=True)
    data["environment"]["synthetic_starts"] = {"D1_START": {"x": 30.0, "y": 40.0}}
    data["drone_configs"]["1"]["start_airport"] = "D1_START"
    narrowed = plannable(compile_mission(Scenario.model_validate(data)))
    assert set(narrowed.left_out) == {"1"} and narrowed.mission.drones == []
    assert "no airport is reachable with its 5.0 km of fuel" in narrowed.left_out["1"]


def test_a_plannable_mission_is_returned_as_it_is():
    mission = compile_mission(_line())
    assert plannable(mission).mission is mission


def test_the_legs_searched_ahead_are_the_ones_the_solution_flies():
    # A round searches the plan in force's legs beside its team search (Mission.search_legs,
    # a thread of its own): the solution then searches none of them again, and a pair with
    # no way is passed over, not raised.
    from unittest import mock

    from planner.errors import PlannerError
    from planner.geometry.sam_field import FieldLegs

    sam = {"id": "S1", "pos": [25.0, 1.5], "range": 3.0}  # between T2 and T3, off the line
    mission = compile_mission(_line(sams=[sam]))
    routed = route_intent(mission, {"1": ("T1", "T2", "T3", "T4")})
    route = routed.routes["1"]
    real = mission.paths.path
    none = (route[0], route[-1])

    def path(a, b):
        if (a, b) == none:
            raise PlannerError("no way")
        return real(a, b)

    with mock.patch.object(mission.paths, "path", side_effect=path):
        mission.search_legs([route, list(none)])
    with mock.patch.object(FieldLegs, "leg", side_effect=AssertionError("a leg searched again")):
        solution = build_solution(mission, routed.routes)
    assert validate_solution(mission, solution) == []
    assert solution.routes["1"].visited_targets == ["T1", "T2", "T3", "T4"]
    assert mission.route_path(route).length > 60.0  # round the SAM, not along the line
