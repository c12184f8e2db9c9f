"""Scenario files: the seed's JSON loads as it is; bad input is named by JSON path."""

from __future__ import annotations

import copy
import json

import pytest

from planner.model import ALL_SENSORS
from planner.scenario import ScenarioError, json_path, load_scenario, parse_scenario

SEED_ENVIRONMENT = {  # seed 000, Appendix B.1, verbatim
    "airports": [{"id": "A1", "x": 10.0, "y": 20.0, "label": "Base Alpha"}],
    "targets": [{"id": "T1", "x": 50.0, "y": 60.0, "priority": 8, "type": "A"}],
    "sams": [{"id": "SAM1", "pos": [30.0, 40.0], "range": 15.0}],
    "synthetic_starts": {"D1_START": {"x": 25.0, "y": 35.0}},
}
SEED_DRONES = {  # seed 000, Appendix B.2, with A2 added to the environment below
    "1": {
        "enabled": True,
        "fuelBudget": 200,
        "home_airport": "A1",
        "end_airport": "A2",
        "start_airport": "A1",
        "accessibleTargets": ["A", "B"],
        "frozen_segments": [{"from": "A1", "to": "T1"}],
    }
}


def seed_scenario() -> dict:
    env = copy.deepcopy(SEED_ENVIRONMENT)
    env["airports"].append({"id": "A2", "x": 90.0, "y": 20.0})
    return {"environment": env, "drone_configs": copy.deepcopy(SEED_DRONES)}


def problems_of(data) -> list[str]:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(json.dumps(data) if isinstance(data, (dict, list)) else data)
    return info.value.problems


def test_seed_examples_load_as_they_are():
    scenario = parse_scenario(json.dumps(seed_scenario()))
    drone = scenario.drone_configs["1"]
    assert drone.fuel_budget == 200
    assert drone.mode == "end"
    assert drone.frozen_route() == ["A1", "T1"]
    assert scenario.environment.synthetic_starts["D1_START"].x == 25.0
    assert scenario.environment.sams[0].pos == (30.0, 40.0)


def test_demo_scenario_is_appendix_c(demo_path):
    scenario = load_scenario(demo_path)
    env = scenario.environment
    assert [a.id for a in env.airports] == ["A1", "A2", "A3"]
    assert len(env.targets) == 12 and len(env.sams) == 2
    assert scenario.drone_configs["3"].accessible_targets == ALL_SENSORS
    assert sum(t.priority for t in env.targets if t.id not in ("T7", "T12")) == 64


def test_json_path_formatting():
    assert (
        json_path(("environment", "targets", 3, "priority")) == "$.environment.targets[3].priority"
    )
    assert json_path(("drone_configs", "1", "fuelBudget")) == '$.drone_configs["1"].fuelBudget'


def test_malformed_json_names_line_and_column():
    (problem,) = problems_of('{\n  "environment": {,\n}')
    assert problem.startswith("$: malformed JSON at line 2, column 19")


@pytest.mark.parametrize(
    "mutate, expected",
    [
        (
            lambda d: d["environment"]["targets"][0].update(priority=-3),
            "$.environment.targets[0].priority: Input should be greater than or equal to 0, got -3",
        ),
        (
            lambda d: d["environment"]["targets"][0].update(x=float("nan")),
            "$.environment.targets[0].x: Input should be a finite number",
        ),
        (
            lambda d: d["drone_configs"]["1"].update(fuelBudget=-1),
            '$.drone_configs["1"].fuelBudget: Input should be greater than or equal to 0',
        ),
        (
            lambda d: d["environment"]["sams"][0].update(range=0),
            "$.environment.sams[0].range: Input should be greater than 0",
        ),
        (
            lambda d: d["environment"]["airports"][0].pop("y"),
            "$.environment.airports[0].y: Field required",
        ),
        (
            lambda d: d["environment"]["targets"][0].update(colour="red"),
            "$.environment.targets[0].colour: Extra inputs are not permitted",
        ),
        (
            lambda d: d["drone_configs"]["1"].update(home_airport="A9"),
            "$.drone_configs[\"1\"].home_airport: unknown airport id 'A9'",
        ),
        (
            lambda d: d["drone_configs"]["1"].update(end_airport="Z"),
            "$.drone_configs[\"1\"].end_airport: unknown airport id 'Z'",
        ),
        (
            lambda d: d["environment"]["targets"].append(dict(d["environment"]["targets"][0])),
            "$.environment.targets[1].id: duplicate id 'T1' (also at index 0)",
        ),
        (
            lambda d: d["environment"]["sams"].append({"id": "S9", "pos": [10, 20], "range": 1}),
            "$.drone_configs[\"1\"].start_airport: start 'A1' is inside SAM 'S9'",
        ),
        (
            lambda d: d["drone_configs"]["1"].update(accessibleTargets=["Q"], frozen_segments=[]),
            '$.drone_configs["1"].accessibleTargets: drone has no eligible target',
        ),
        (
            lambda d: d["drone_configs"]["1"].update(frozen_segments=[{"from": "A2", "to": "T1"}]),
            "$.drone_configs[\"1\"].frozen_segments[0].from: chain broken, expected 'A1', got 'A2'",
        ),
        (
            lambda d: d["drone_configs"]["1"].update(
                frozen_segments=[{"from": "A1", "to": "T404"}]
            ),
            "$.drone_configs[\"1\"].frozen_segments[0].to: unknown id 'T404'",
        ),
    ],
)
def test_bad_input_is_named_by_json_path(mutate, expected):
    data = seed_scenario()
    mutate(data)
    problems = problems_of(json.dumps(data, allow_nan=True))
    assert any(p.startswith(expected) for p in problems), problems


def test_several_problems_are_all_reported():
    data = seed_scenario()
    data["environment"]["targets"][0]["priority"] = -1
    data["drone_configs"]["1"]["fuelBudget"] = "lots"
    problems = problems_of(data)
    assert len(problems) == 2
    assert all(p.startswith("$.") for p in problems)


def test_top_level_must_be_object():
    assert problems_of([1, 2]) == ["$: must be a JSON object, got list"]


def test_missing_file(tmp_path):
    with pytest.raises(ScenarioError) as info:
        load_scenario(tmp_path / "nope.json")
    assert info.value.problems == ["$: file not found"]
