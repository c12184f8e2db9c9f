"""Operator constraints: moves, forbidden pairs and required targets on the search arrays."""

from __future__ import annotations

import json

import numpy as np
import pytest
from pydantic import ValidationError

from planner.constraints import (
    constrain_mission,
    constrain_problem,
    constraint_notes,
    constraint_violations,
    parse_constraints,
)
from planner.mission import compile_mission
from planner.planning import team_problem
from planner.scenario import parse_scenario
from planner.solution import build_solution
from tests.conftest import SCENARIOS

DEMO = SCENARIOS / "demo.json"


@pytest.fixture(scope="module")
def mission():
    return compile_mission(parse_scenario(json.loads(DEMO.read_text())))


def _k(mission, drone):
    return [s.id for s in mission.drones].index(drone)


def test_parse_rejects_unknown_keys():
    with pytest.raises(ValidationError):
        parse_constraints({"moves": [], "teleport": ["T1"]})
    assert parse_constraints(None).empty
    assert parse_constraints({}).empty


def test_move_makes_the_target_one_drones_and_adds_a_bonus(mission):
    c = parse_constraints({"moves": [{"target": "T2", "to_drone": "D1"}]})
    base = team_problem(mission)
    problem = constrain_problem(base, mission, c)
    t = mission.index["T2"]
    assert problem.eligible[:, t].tolist() == [True, False, False]
    assert problem.score[t] > base.score.sum()
    others = np.arange(len(base.score)) != t
    assert np.array_equal(problem.score[others], base.score[others])
    assert base.score[t] == 7 and mission.scores[t] == 7  # the truth is untouched


def test_forbidden_pair_becomes_ineligible(mission):
    c = parse_constraints({"forbidden": {"3": ["T8", "T1"]}})
    problem = constrain_problem(team_problem(mission), mission, c)
    k = _k(mission, "3")
    assert not problem.eligible[k, mission.index["T8"]]
    assert not problem.eligible[k, mission.index["T1"]]
    assert problem.eligible[_k(mission, "1"), mission.index["T8"]]
    constrained = constrain_mission(mission, c)
    assert mission.index["T8"] not in constrained.drone("3").eligible
    assert mission.index["T8"] in mission.drone("3").eligible  # the original is untouched


def test_constraints_that_break_hard_ones_are_noted_not_applied(mission):
    c = parse_constraints(
        {
            "moves": [
                {"target": "T3", "to_drone": "1"},
                {"target": "T7", "to_drone": "3"},
                {"target": "T1", "to_drone": "D8"},
            ],
            "required_targets": ["T99"],
        }
    )
    notes = constraint_notes(mission, c)
    assert notes == [
        "move T3 to D1: D1 cannot sense it",
        "move T7 to D3: T7 is excluded (inside a SAM zone)",
        "move T1 to D8: unknown or unplanned drone",
        "require T99: T99 is not a target of this plan",
    ]
    problem = constrain_problem(team_problem(mission), mission, c)
    assert np.array_equal(problem.eligible, team_problem(mission).eligible)


def test_violations(mission):
    i = mission.index
    routes = {
        "1": [i["A1"], i["T8"], i["A1"]],
        "2": [i["A2"], i["T2"], i["A2"]],
        "3": [i["A1"], i["T1"], i["A1"]],
    }
    solution = build_solution(mission, routes)
    c = {
        "moves": [{"target": "T2", "to_drone": "D1"}, {"target": "T4", "to_drone": "1"}],
        "forbidden": {"D3": ["T1"]},
        "required_targets": ["T9", "T8"],
    }
    assert constraint_violations(solution, c) == [
        "move T2 to D1: visited by D2",
        "move T4 to D1: not visited",
        "forbid T1 for D3: visited by D3",
        "require T9: not visited",
    ]
    assert constraint_violations(solution, {}) == []
    # a constraint no plan can honour is not counted against one
    impossible = {"moves": [{"target": "T3", "to_drone": "1"}]}
    assert constraint_violations(solution, impossible) == ["move T3 to D1: not visited"]
    assert constraint_violations(solution, impossible, mission) == []
