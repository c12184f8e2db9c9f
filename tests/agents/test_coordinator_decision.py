"""The coordinator's decision (seed 000 B.5): the policy, the constraints, the trace events;
impossible commands refused before anything is acknowledged (sensor, SAM, fuel, collected),
in the live executive too; a later command about a target replaces the earlier one."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from agents.coordinator import (
    CoordinatorDecision,
    fleet_from_scenario,
)
from agents.coordinator import coordinate_environment as _environment
from agents.coordinator import coordinate_scenario as _scenario
from agents.engines import make_engine
from agents.planning.round import AgentPlanner
from agents.words.ask import answer
from agents.words.command import coordinate_live
from agents.words.state import from_executive
from executive.contracts import EventRecord, HumanCommand
from executive.loop import Executive
from executive.loop.options import LoopOptions
from executive.loop.policy import Policy
from executive.traces.sinks import ListSink
from planner.model import Scenario
from planner.scenario import load_scenario
from tests.conftest import SCENARIOS

SCENARIO = load_scenario(SCENARIOS / "new_target.json")  # D1 senses A, B; D2 B, C; D3 all


def coordinate_scenario(*args, **kw) -> dict:
    """The typed decision as its JSON (the shape ``coordinator_decision`` is posted in)."""
    return _scenario(*args, **kw).model_dump(mode="json")


def coordinate_environment(*args, **kw) -> dict:
    return _environment(*args, **kw).model_dump(mode="json")


def _with_fuel(drone: str, fuel: float) -> Scenario:
    raw = SCENARIO.model_dump(by_alias=True)
    raw["drone_configs"][drone]["fuelBudget"] = fuel
    return Scenario.model_validate(raw)


def test_the_decision_has_the_seeds_shape():
    d = coordinate_scenario("Generate optimal routes with greedy allocation", SCENARIO)
    CoordinatorDecision.model_validate(d)  # the JSON round-trips through the model
    assert d["intent"] == "plan" and 0 < d["confidence"] <= 1
    policy = d["policy"]
    assert policy["allow_solver"] and not d["explanation_only"]
    assert policy["allocation_strategy"] == "greedy" and "strategy:greedy" in d["rules_hit"]
    assert policy["post_opt"] == {
        "crossing_removal": True,
        "trajectory_swap": True,
        "insert_unvisited": True,
    }
    contract = policy["drone_contracts"]["1"]
    assert contract["start_id"] == "A1" and contract["sensors"] == ["A", "B"]
    assert contract["fuel_budget"] == 200.0 and not contract["is_synthetic_start"]
    assert set(d["constraints"]) == {
        "moves",
        "forbidden",
        "required_targets",
        "forbidden_targets",
        "fixed_endpoints",
        # beyond the seed: the orders issue 25 adds, typed
        "fuel_reserve",
        "priority_rules",
        "keep",
    }
    assert d["constraints"]["fixed_endpoints"] == {"1": "A1", "2": "A2", "3": "A1"}
    stages = [(e["stage"], e["event"]) for e in d["trace_events"]]
    assert stages[0] == ("intent", "intent_classified") and ("policy", "policy_set") in stages


def test_preferences_set_the_policy_and_a_question_skips_the_solver():
    prefs = {"allocation_strategy": "balanced", "crossing_removal": False}
    d = coordinate_scenario("Which drone has the most fuel margin?", SCENARIO, prefs)
    assert d["intent"] == "question" and d["explanation_only"]
    policy = d["policy"]
    assert not policy["allow_solver"] and policy["skip_allocation"]
    assert policy["allocation_strategy"] == "balanced"
    assert policy["post_opt"]["crossing_removal"] is False


def test_an_ambiguous_request_is_less_sure():
    clear = coordinate_scenario("Which drone has the most fuel margin?", SCENARIO)
    mixed = coordinate_scenario("What is the plan for the remainder?", SCENARIO)
    assert "also:replan" in mixed["rules_hit"]
    assert mixed["confidence"] < clear["confidence"]


def test_three_modification_phrasings_of_the_seed():
    d = coordinate_scenario("reassign T8 and T10 to drone 3", SCENARIO)
    assert d["constraints"]["moves"] == [
        {"target": "T8", "to_drone": "3"},
        {"target": "T10", "to_drone": "3"},
    ]
    assert d["policy"]["allocation_modifications"] == d["constraints"]["moves"]
    d = coordinate_scenario("transfer T3 from D3 to D2", SCENARIO)
    assert d["errors"] == [] and d["constraints"]["moves"] == [{"target": "T3", "to_drone": "2"}]


def test_a_move_the_drones_sensors_cannot_do_is_refused_with_the_reason():
    d = coordinate_scenario("move T5 to D1", SCENARIO)
    assert d["constraints"]["moves"] == []
    assert d["errors"] == [
        "cannot move T5 to D1: D1's sensors (A, B) cannot see T5 (type C);"
        " it can be sensed by D2, D3"
    ]
    [refusal] = d["refused"]
    assert refusal["reason"] == "sensor" and refusal["drone"] == "1"
    assert any(e["event"] == "command_refused" for e in d["trace_events"])


def test_a_target_inside_a_sam_cannot_be_moved_or_required():
    d = coordinate_scenario("move T7 to D3", SCENARIO)  # T7 lies inside SAM1
    assert d["errors"] == ["cannot move T7 to D3: T7 is inside SAM1 (excluded)"]
    d = coordinate_scenario("make sure T12 is visited", SCENARIO)  # inside SAM2
    assert d["constraints"]["required_targets"] == []
    assert d["errors"] == ["cannot require T12: T12 is inside SAM2 (excluded)"]


def test_a_move_beyond_the_drones_fuel_is_refused_with_the_numbers():
    d = coordinate_scenario("move T9 to D3", _with_fuel("3", 60.0))
    [error] = d["errors"]
    assert error.startswith("cannot move T9 to D3: D3 has 60.0 km of fuel left;")
    need = float(error.rsplit("at least ", 1)[1].split(" km")[0])
    assert need > 60.0  # A1 (10, 10) -> T9 (85, 70) and back: about 192 km
    ok = coordinate_scenario("move T9 to D3", _with_fuel("3", need + 1))
    assert ok["errors"] == [] and ok["constraints"]["moves"] == [{"target": "T9", "to_drone": "3"}]


def test_in_flight_the_fuel_check_starts_where_the_drone_is_and_keeps_the_reserve():
    fleet = fleet_from_scenario(SCENARIO)
    # D3 in the air next to T9 (85, 70): 200 km left, of which the policy keeps some
    for reserve, refused in ((0.0, False), (150.0, True)):
        fleet["3"] = replace(
            fleet["3"], position=(80.0, 65.0), fuel=200.0, reserve=reserve, synthetic_start=True
        )
        d = coordinate_environment(
            "move T9 to D3", SCENARIO.environment, ["1", "2", "3"], fleet=fleet
        )
        assert bool(d["errors"]) is refused, d["errors"]
    assert d["errors"][0].startswith(
        "cannot move T9 to D3: D3 has 200.0 km of fuel left (150.0 km kept in reserve);"
    )
    assert d["policy"]["drone_contracts"]["3"]["is_synthetic_start"] is True


def test_a_collected_target_cannot_be_moved():
    fleet = fleet_from_scenario(SCENARIO)
    d = coordinate_environment(
        "move T3 to D3", SCENARIO.environment, ["1", "2", "3"], {"T3": "2"}, fleet=fleet
    )
    assert d["errors"] == ["cannot move T3 to D3: T3 is already collected by D2"]


def test_a_later_move_of_the_same_target_replaces_the_earlier_and_says_so():
    d = coordinate_scenario("move T5 to D2 then move T5 to D3", SCENARIO)
    assert d["constraints"]["moves"] == [{"target": "T5", "to_drone": "3"}]
    assert d["warnings"] == ["move T5 to D3 replaces move T5 to D2 (the last order wins)"]
    in_force = {"moves": [{"target": "T5", "to_drone": "2"}], "forbidden": {"3": ["T9"]}}
    d = coordinate_environment(
        "move T5 to D3 and T9 to D3",
        SCENARIO.environment,
        ["1", "2", "3"],
        fleet=fleet_from_scenario(SCENARIO),
        in_force=in_force,
    )
    assert [(r["before"], r["after"]) for r in d["replaced"]] == [
        ("move T5 to D2", "move T5 to D3"),
        ("forbid T9 for D3", "move T9 to D3"),
    ]
    assert "move T5 to D3 replaces the earlier move T5 to D2" in d["warnings"]


def test_a_moves_premise_is_checked_against_the_plan():
    plan = {"2": ["T3", "T5"], "3": ["T1"]}
    d = coordinate_scenario("Move T5 from D1 to D3", SCENARIO, allocation=plan)
    assert d["constraints"]["moves"] == [{"target": "T5", "to_drone": "3"}]
    assert d["warnings"] == ["T5 is not on D1: the plan has it on D2"]
    d = coordinate_scenario("move T1 to D3", SCENARIO, allocation=plan)
    assert d["warnings"] == ["T1 is already on D3 in the plan"]
    assert any(e["event"] == "premise_checked" for e in d["trace_events"])
    d = coordinate_scenario("transfer T3 from D2 to D3", SCENARIO, allocation=plan)
    assert d["warnings"] == []


# ----------------------------------------------------------------------------- live


def test_live_a_refused_command_is_never_acknowledged_and_the_last_word_wins():
    """In a running executive: "move T5 to D1" is refused at once (no "Applying at the next
    tick", nothing queued); T5 moved to D2 then to D3 keeps only the move to D3, and the
    answer says it replaces the earlier one; each CONSTRAINTS event keeps what it was."""
    sink = ListSink()
    planner = AgentPlanner(make_engine("rules"), sink, iterations=500, use_agents=False)
    executive = Executive(
        SCENARIO,
        planner=planner,
        sink=sink,
        options=LoopOptions(policy=Policy()),
        coordinate=coordinate_live,
    )
    rules = make_engine("rules")

    async def ask(text: str) -> dict:
        return await answer(
            text, from_executive(executive), engine=rules, sink=sink, live=executive
        )

    async def go():
        await executive.start()
        await executive.run(None, until=40)
        refused = await ask("move T5 to D1")
        queued = len(executive._commands)  # noqa: SLF001 (nothing public counts the queue)
        first = await ask("move T5 to D2")
        await executive.run(None, until=80)
        second = await ask("move T5 to D3")
        await executive.run(None, until=120)
        # straight to the loop, past the words layer: the loop's own check refuses it too,
        # and nothing is replanned for it
        rounds = len(executive.replans)
        executive.command(HumanCommand("REPLAN", "move T11 to D1", "operator"))
        await executive.run(None, until=140)
        return refused, queued, first, second, len(executive.replans) - rounds

    refused, queued, first, second, new_rounds = asyncio.run(go())
    assert refused["applied"] is False and queued == 0
    assert "Applying" not in refused["answer"]
    assert refused["answer"].startswith("Not applied: cannot move T5 to D1: D1's sensors")
    assert first["applied"] and second["applied"]
    assert "replaces the earlier move T5 to D2" in second["answer"]
    moves = [m.model_dump() for m in executive.constraints.moves]
    assert moves == [{"target": "T5", "to_drone": "3"}]
    events = [e for e in sink.of(EventRecord) if e.kind == "CONSTRAINTS"]
    assert [e.payload["constraints"]["moves"] for e in events[:2]] == [
        [{"target": "T5", "to_drone": "2"}],
        [{"target": "T5", "to_drone": "3"}],
    ]
    assert events[1].payload["replaced"][0]["before"] == "move T5 to D2"
    assert len(events) == 2  # the refused words added nothing
    [ignored] = [e for e in sink.of(EventRecord) if e.kind == "COMMAND_IGNORED"]
    assert ignored.payload["text"] == "move T11 to D1"
    assert "D1's sensors (A, B) cannot see T11" in ignored.payload["reason"]
    assert ignored.payload["refused"][0]["reason"] == "sensor"
    assert new_rounds == 0
    history = [e for e in executive.events_seen if e["kind"] == "CONSTRAINTS"]
    assert history[0]["constraints"]["moves"] == [{"target": "T5", "to_drone": "2"}]
