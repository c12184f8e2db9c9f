"""A mission format people can write: every problem at once, both position forms, notes,
feasibility warnings that name the drone, plans around a drone that cannot fly, the template."""

from __future__ import annotations

import copy
import json

import pytest

from planner.feasibility import feasibility_warnings
from planner.mission import compile_mission
from planner.planning import plan_mission
from planner.scenario import (
    MAX_NEW_DRONES,
    MAX_NEW_SAMS,
    MAX_NEW_TARGETS,
    ScenarioError,
    json_path,
    parse_scenario,
    starter_scenario,
)
from planner.validation import validate_solution
from tests.conftest import SCENARIOS

DEMO = json.loads((SCENARIOS / "demo.json").read_text())


def _demo() -> dict:
    return copy.deepcopy(DEMO)


def _problems(data: dict) -> list[str]:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(data)
    return caught.value.problems


# ----- every problem at once ---------------------------------------------------------------


def test_schema_errors_and_unknown_airports_are_reported_in_one_run():
    data = _demo()
    data["drone_configs"]["1"]["fuelBudget"] = -5  # a schema error
    data["drone_configs"]["1"]["end_airport"] = "NOWHERE"  # ... and a reference, same drone
    data["drone_configs"]["2"]["home_airport"] = "ZZ"  # ... and one on another drone
    data["timeline"] = [{"t": 5, "op": "remove_target", "id": "T99"}]
    problems = _problems(data)
    assert problems[0].startswith('$.drone_configs["1"].fuelBudget: ')
    assert "$.drone_configs[\"1\"].end_airport: unknown airport id 'NOWHERE'" in problems
    assert "$.drone_configs[\"2\"].home_airport: unknown airport id 'ZZ'" in problems
    assert "$.timeline[0].id: unknown target id 'T99' at t=5 s" in problems


def test_paths_keep_the_files_own_indices_when_a_broken_target_is_set_aside():
    data = _demo()
    data["environment"]["targets"][1]["priority"] = "high"  # set aside for the references
    data["environment"]["targets"][3]["id"] = "T3"  # a duplicate of targets[2]
    problems = _problems(data)
    assert problems[0].startswith("$.environment.targets[1].priority: ")
    assert "$.environment.targets[3].id: duplicate id 'T3' (also at index 2)" in problems


def test_a_part_set_aside_does_not_make_its_references_unknown():
    data = _demo()
    data["environment"]["airports"][1]["x"] = "east"  # A2 is broken, drone 2 lives there
    data["environment"]["sams"][1]["range"] = -1  # SAM2 broken, the timeline removes it
    data["timeline"] = [{"t": 5, "op": "remove_sam", "id": "SAM2"}]
    problems = _problems(data)
    assert [p.split(":")[0] for p in problems] == [
        "$.environment.airports[1].x",
        "$.environment.sams[1].range",
    ]


_BREAKS = [
    (("environment", "airports", 0, "x"), "west"),
    (("environment", "targets", 0, "priority"), -1),
    (("environment", "targets", 5, "type"), ""),
    (("environment", "sams", 0, "range"), 0),
    (("drone_configs", "1", "fuelBudget"), -5),
    (("drone_configs", "3", "accessibleTargets"), 7),
    (("drone_configs", "3", "enabled"), "yes"),
    (("sim",), {"tick_hz": 0}),
    (("timeline", 0, "t"), -1),
]


@pytest.mark.parametrize(("where", "value"), _BREAKS, ids=[str(w) for w, _ in _BREAKS])
def test_a_schema_error_hides_no_reference_problem_elsewhere(where, value):
    data = _demo()
    data["drone_configs"]["2"]["home_airport"] = "ZZ"
    data["environment"]["targets"][11]["id"] = "T10"  # a duplicate of targets[9]
    data["timeline"] = [
        {"t": 5, "op": "add_target", "id": "T20", "x": 1, "y": 1, "priority": 1, "type": "A"},
        {"t": 6, "op": "remove_target", "id": "T99"},
    ]
    references = _problems(data)
    assert len(references) == 3
    holder = data
    for key in where[:-1]:
        holder = holder[key]
    holder[where[-1]] = value
    problems = _problems(data)
    schema = [p for p in problems if p not in references]
    assert schema and all(p.startswith(json_path(list(where))) for p in schema), problems
    assert problems[len(schema) :] == references  # the schema's first, then every reference


def test_a_broken_frame_reports_the_schema_alone():
    data = _demo()
    data["environment"] = "nowhere"
    (problem,) = _problems(data)  # nothing else can be checked without an environment
    assert problem.startswith("$.environment: Input should be a valid dictionary")


# ----- positions in either form, notes ------------------------------------------------------


def test_a_target_may_give_pos_and_a_sam_x_y():
    data = _demo()
    data["environment"]["targets"][0] = {"id": "T1", "pos": [25, 35], "priority": 9, "type": "A"}
    data["environment"]["sams"][0] = {"id": "SAM1", "x": 35, "y": 45, "range": 12}
    data["timeline"] = [
        {"t": 5, "op": "add_target", "id": "T20", "pos": [5, 5], "priority": 1, "type": "A"},
        {"t": 6, "op": "move_sam", "id": "SAM2", "x": 50, "y": 56},
    ]
    scenario = parse_scenario(data)
    target, sam = scenario.environment.targets[0], scenario.environment.sams[0]
    assert (target.x, target.y) == (25, 35) and sam.pos == (35, 45)
    native = _demo()
    native["timeline"] = [
        {"t": 5, "op": "add_target", "id": "T20", "x": 5, "y": 5, "priority": 1, "type": "A"},
        {"t": 6, "op": "move_sam", "id": "SAM2", "pos": [50, 56]},
    ]
    assert scenario == parse_scenario(native)  # the same mission as in the seed's form


def test_both_forms_in_one_object_must_agree():
    data = _demo()
    data["environment"]["targets"][0]["pos"] = [25, 35]  # agrees with x, y
    data["environment"]["sams"][0]["x"], data["environment"]["sams"][0]["y"] = 35, 45
    parse_scenario(data)
    data["environment"]["targets"][2]["pos"] = [1, 2]
    data["environment"]["sams"][1] |= {"x": 0, "y": 0}
    problems = _problems(data)
    assert problems == [
        "$.environment.targets[2]: x, y (70, 60) and pos [1, 2] disagree: give the position"
        " once (x, y is this object's own form)",
        "$.environment.sams[1]: x, y (0, 0) and pos [50, 55] disagree: give the position once"
        " (pos is this object's own form)",
    ]


def test_a_malformed_alternative_position_is_named_once():
    data = _demo()
    data["environment"]["targets"][0] = {"id": "T1", "pos": "here", "priority": 9, "type": "A"}
    data["environment"]["sams"][0] = {"id": "SAM1", "x": 35, "range": 12}
    assert _problems(data) == [
        '$.environment.targets[0].pos: must be [x, y], two numbers (km), got "here"',
        "$.environment.sams[0]: x and y go together: y is missing",
    ]


def test_schema_link_and_comments_are_notes():
    data = _demo()
    data["$schema"] = "./scenario.schema.json"
    data["$comment"] = "the demo"
    data["drone_configs"]["$comment"] = "three drones"
    data["drone_configs"]["1"]["$comment"] = "the first"
    assert parse_scenario(data) == parse_scenario(_demo())
    data["environment"]["$comment"] = 7
    data["drone_configs"]["1"]["$schema"] = "x"  # only the top holds the link
    assert _problems(data) == [
        '$.environment["$comment"]: must be a string (a note), got 7',
        '$.drone_configs["1"]["$schema"]: Extra inputs are not permitted',
    ]


# ----- feasibility warnings ----------------------------------------------------------------


def _warnings(data: dict) -> list[str]:
    return feasibility_warnings(compile_mission(parse_scenario(data)))


def test_the_demo_has_no_warnings():
    assert _warnings(_demo()) == []


def test_a_drone_that_reaches_no_target_is_named():
    data = _demo()
    data["drone_configs"]["1"]["fuelBudget"] = 5
    (warning,) = _warnings(data)
    assert warning.startswith(
        '$.drone_configs["1"].fuelBudget: drone D1: fuel 5 km cannot reach any eligible target'
        " and return (the shortest, via T"
    )


def test_a_drone_that_cannot_reach_its_end_is_named_with_what_happens_instead():
    data = _demo()
    data["drone_configs"]["UAV1"] = data["drone_configs"].pop("1") | {
        "fuelBudget": 5,
        "end_airport": "A2",
    }
    warnings = _warnings(data)
    assert warnings[0] == (
        '$.drone_configs["UAV1"].fuelBudget: drone UAV1: fuel 5 km cannot reach its end'
        " airport A2 (70.2 km away); it will end at A1 instead"
    )
    assert "drone UAV1: fuel 5 km cannot reach any eligible target and land" in warnings[1]


def test_frozen_legs_beyond_the_fuel_and_unreachable_targets_are_named():
    data = _demo()
    data["drone_configs"] = {
        "1": data["drone_configs"]["1"]
        | {"fuelBudget": 5, "frozen_segments": [{"from": "A1", "to": "T8"}]}
    }
    warnings = _warnings(data)
    assert warnings[0] == (
        '$.drone_configs["1"].frozen_segments: drone D1: its frozen legs need 30.4 km of fuel,'
        " it has 5 km; it will not be planned"
    )
    assert "$.environment.targets[0]: target T1: no drone can reach it within its fuel" in warnings
    assert "$.environment.targets[2].type: target T3: no enabled drone senses type 'C'" in warnings


# ----- plans around a drone that cannot fly ---------------------------------------------------


def test_the_fleet_is_planned_around_a_drone_left_out():
    data = _demo()
    data["drone_configs"]["1"] |= {"fuelBudget": 5, "frozen_segments": [{"from": "A1", "to": "T8"}]}
    full = compile_mission(parse_scenario(data))
    result = plan_mission(full, seconds=None, iterations=300)
    assert set(result.left_out) == {"1"} and "frozen legs" in result.left_out["1"]
    assert set(result.solution.routes) == {"2", "3"}
    assert result.solution.total_points > 0
    assert result.mission is not None and validate_solution(result.mission, result.solution) == []


def test_a_drone_that_cannot_reach_its_end_airport_ends_at_one_it_can():
    data = _demo()
    data["drone_configs"]["1"] |= {"fuelBudget": 5, "end_airport": "A2"}
    result = plan_mission(compile_mission(parse_scenario(data)), seconds=None, iterations=300)
    assert result.solution.routes["1"].route == ["A1", "A1"]
    assert "cannot reach its end airport A2" in result.rerouted["1"]
    assert (
        result.solution.routes["2"].visited_targets and result.solution.routes["3"].visited_targets
    )


def test_a_fleet_with_nothing_plannable_gets_an_empty_plan():
    data = _demo()
    data["drone_configs"] = {
        "1": data["drone_configs"]["1"]
        | {"fuelBudget": 5, "frozen_segments": [{"from": "A1", "to": "T8"}]}
    }
    for strategy in ("team", "greedy"):
        result = plan_mission(compile_mission(parse_scenario(data)), strategy, iterations=50)
        assert result.solution.routes == {} and set(result.left_out) == {"1"}
        assert result.solution.total_points == 0


# ----- the template ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("drones", "targets", "sams"),
    [(1, 0, 0), (2, 8, 1), (3, 5, 2), (MAX_NEW_DRONES, MAX_NEW_TARGETS, MAX_NEW_SAMS)],
)
def test_the_starting_point_loads_and_every_drone_can_work(drones, targets, sams):
    data = starter_scenario(drones, targets, sams, schema="scenario.schema.json")
    scenario = parse_scenario(data)
    assert len(scenario.drone_configs) == drones and len(scenario.environment.targets) == targets
    assert len(scenario.environment.sams) == sams
    mission = compile_mission(scenario)
    assert mission.excluded_targets == []  # no SAM covers a target
    assert feasibility_warnings(mission) == []
    assert "$comment" in data and "$comment" in data["drone_configs"]["1"]


def test_the_starting_point_refuses_sizes_out_of_range():
    with pytest.raises(ValueError):
        starter_scenario(drones=0)
    with pytest.raises(ValueError):
        starter_scenario(sams=MAX_NEW_SAMS + 1)
