"""An allocator's proposal: clamped entry by entry, routed exactly, validated."""

from __future__ import annotations

import json

import pytest

from agents.planning.proposals import clamp_assignments, evaluate_proposal
from agents.roles import AllocatorOutput, allocator_rules
from planner.allocation import allocate
from planner.mission import compile_mission
from planner.scenario import parse_scenario
from planner.validation import validate_solution
from tests.conftest import SCENARIOS

DEMO = SCENARIOS / "demo.json"


@pytest.fixture(scope="module")
def demo_data() -> dict:
    return json.loads(DEMO.read_text())


@pytest.fixture(scope="module")
def mission(demo_data):
    # demo: T7 and T12 inside SAMs; D1 senses A, B; D2 B, C; D3 all.
    return compile_mission(parse_scenario(demo_data))


@pytest.fixture(scope="module")
def frozen_mission(demo_data):
    data = json.loads(json.dumps(demo_data))
    data["drone_configs"]["1"]["frozen_segments"] = [{"from": "A1", "to": "T1"}]
    return compile_mission(parse_scenario(data))


def test_rules_allocation_passes_unclamped(mission):
    answer = allocator_rules(mission, allocate(mission, "efficient"), "efficient")
    parsed = AllocatorOutput.model_validate(answer)
    result = evaluate_proposal(mission, parsed.assignments)
    assert result.ok, result.errors
    assert result.clamp_actions == ()
    assert validate_solution(mission, result.solution) == []


@pytest.mark.parametrize(
    "drone, target, why",
    [
        ("D1", "T99", "unknown target"),
        ("D1", "T3", "ineligible target (type C not sensed)"),
        ("D1", "T7", "excluded target (inside a SAM zone)"),
        ("D3", "T12", "excluded target (inside a SAM zone)"),
    ],
)
def test_bad_entries_are_dropped_with_a_reason(mission, drone, target, why):
    allocation, actions = clamp_assignments(mission, {drone: [target, "T8"]})
    assert actions == [f"dropped {target} from {drone}: {why}"]
    assert mission.ids(allocation[drone.lstrip("D")]) == ["T8"]


def test_unknown_drone_and_duplicates_are_dropped(mission):
    allocation, actions = clamp_assignments(
        mission, {"D2": ["T2", "T2"], "3": ["T2", "T8"], "D9": ["T4"]}
    )
    assert actions == [
        "dropped T2 from D2: repeated",
        "dropped T2 from D3: also assigned to D2",
        "dropped T4 from D9: unknown drone",
    ]
    assert {d: mission.ids(ts) for d, ts in allocation.items()} == {
        "1": [],
        "2": ["T2"],
        "3": ["T8"],
    }


def test_target_frozen_on_another_drone_is_dropped(frozen_mission):
    allocation, actions = clamp_assignments(
        frozen_mission, {"D3": ["T1", "T4"], "D1": ["T1", "T8"]}
    )
    assert actions == ["dropped T1 from D3: frozen on D1"]
    assert frozen_mission.ids(allocation["1"]) == ["T8"]  # its own frozen target stays out
    result = evaluate_proposal(frozen_mission, {"D3": ["T1", "T4"], "D1": ["T8"]})
    assert result.ok, result.errors
    assert result.solution.routes["1"].route[:2] == ["A1", "T1"]


def test_operator_constraints_clamp(mission):
    constraints = {"moves": [{"target": "T2", "to_drone": "D1"}], "forbidden": {"3": ["T8"]}}
    allocation, actions = clamp_assignments(
        mission, {"D2": ["T2"], "D3": ["T8", "T4"]}, constraints
    )
    assert actions == [
        "dropped T2 from D2: moved to D1 by the operator",
        "dropped T8 from D3: forbidden by the operator",
    ]
    assert mission.ids(allocation["3"]) == ["T4"]


def test_over_budget_proposal_fails_with_the_reason(mission):
    everything = ["T1", "T2", "T3", "T4", "T5", "T6", "T8", "T9", "T10", "T11"]
    result = evaluate_proposal(mission, {"D3": everything})
    assert not result.ok and result.solution is None
    assert len(result.errors) == 1
    assert result.errors[0].startswith("D3: ")
    assert "do not fit the fuel budget" in result.errors[0]
    assert "budget 220.0" in result.errors[0]


def test_clamped_proposal_is_routed_and_valid(mission):
    result = evaluate_proposal(mission, {"D1": ["T99", "T1", "T8"], "D2": ["T3"]}, post_opt=False)
    assert result.ok
    assert result.clamp_actions == ("dropped T99 from D1: unknown target",)
    assert sorted(result.solution.routes["1"].visited_targets) == ["T1", "T8"]
    assert result.solution.total_points == 9 + 10 + 8
    assert validate_solution(mission, result.solution) == []


def test_post_optimisation_fills_a_thin_proposal(mission):
    thin = evaluate_proposal(mission, {"D1": ["T1"]}, post_opt=False)
    full = evaluate_proposal(mission, {"D1": ["T1"]})
    assert thin.solution.total_points == 9
    assert full.solution.total_points >= thin.solution.total_points
    assert validate_solution(mission, full.solution) == []
