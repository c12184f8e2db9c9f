"""The operator's constraints on a live run through the one pipeline (issue 25): "do not
recompute routes" never replans; a priority threshold and a fuel reserve become the
constraints the next replan honours (checked on the committed plan by the independent
checker); a synthetic start is reported as one."""

from __future__ import annotations

import asyncio
import json

import pytest

from agents.coordinator import coordinate_scenario
from agents.engines import make_engine
from agents.planning.round import AgentPlanner
from agents.words.ask import answer
from agents.words.command import coordinate_live
from agents.words.state import from_executive
from executive.contracts import EventRecord
from executive.loop import Executive
from executive.loop.options import LoopOptions
from executive.loop.policy import Policy
from executive.traces.sinks import ListSink
from planner.model import Scenario
from planner.scenario import load_scenario
from tests.conftest import SCENARIOS
from tests.operator_check import Expect, check_plan

SCENARIO = load_scenario(SCENARIOS / "demo.json")
RAW = json.loads((SCENARIOS / "demo.json").read_text())


def _executive(sink: ListSink) -> Executive:
    planner = AgentPlanner(make_engine("rules"), sink, iterations=1500, use_agents=False)
    return Executive(
        SCENARIO,
        planner=planner,
        sink=sink,
        options=LoopOptions(policy=Policy()),
        coordinate=coordinate_live,
    )


def test_do_not_recompute_routes_on_a_live_run_fires_no_replan():
    sink = ListSink()
    executive = _executive(sink)

    async def go():
        await executive.start()
        await executive.run(None, until=100)
        before = {d: list(r.route) for d, r in executive.plan.routes.items()}
        replans = len(executive.replans)
        out = await answer(
            "Optimize the mission to maximize points, but do not recompute routes",
            from_executive(executive),
            engine=make_engine("rules"),
            sink=sink,
            live=executive,
        )
        await executive.run(None, until=200)
        return out, before, replans

    out, before, replans = asyncio.run(go())
    assert out["applied"] is False and out["answer"].startswith("Not replanned")
    assert out["constraint_report"]["applied"] == ["do not recompute routes"]
    assert len(executive.replans) == replans  # no HUMAN_COMMAND REPLAN, no commit
    assert not [e for e in sink.of(EventRecord) if e.kind in ("HUMAN_COMMAND", "CONSTRAINTS")]
    assert {d: list(r.route) for d, r in executive.plan.routes.items()} == before


def test_a_priority_threshold_and_a_reserve_said_live_hold_in_the_next_plan():
    sink = ListSink()
    executive = _executive(sink)

    async def go():
        await executive.start()
        await executive.run(None, until=100)
        out = await answer(
            "D3 may not visit priority 4 targets and keep 30 km in reserve",
            from_executive(executive),
            engine=make_engine("rules"),
            sink=sink,
            live=executive,
        )
        await executive.run(None, until=400)
        return out

    out = asyncio.run(go())
    assert out["applied"] is True, out
    report = out["constraint_report"]
    assert "only priority != 4 for D3" in report["applied"] and report["refused"] == []
    assert executive.constraints.fuel_reserve == {"1": 30.0, "2": 30.0, "3": 30.0}
    assert executive.replans[-1].trigger == "operator:REPLAN"
    assert executive.replans[-1].status == "committed"
    plan = executive.plan.model_dump(mode="json")
    # what is still to fly, checked against the words: D3 visits no priority-4 target
    assert check_plan(Expect("not_priority", drone="3", value=4), RAW, plan) == []


def test_a_drone_starting_at_a_checkpoint_is_a_synthetic_start():
    """Seed B.5: a drone whose route starts at ``D1_START`` (a replan's checkpoint) is a
    synthetic start, placed where the checkpoint is."""
    raw = SCENARIO.model_dump(by_alias=True)
    raw["environment"]["synthetic_starts"] = {"D1_START": {"x": 30.0, "y": 30.0}}
    raw["drone_configs"]["1"]["start_airport"] = "D1_START"
    scenario = Scenario.model_validate(raw)
    assert scenario.drone_configs["1"].start == "D1_START"
    contracts = coordinate_scenario("Generate optimal routes", scenario).policy.drone_contracts
    assert contracts["1"].start_id == "D1_START" and contracts["1"].is_synthetic_start is True
    assert contracts["2"].is_synthetic_start is False  # A2: an airport


@pytest.mark.parametrize(
    "text, drone, allowed, forbidden",
    [
        ("only targets with priority 7 or higher", None, [7, 10], [6, 3]),
        ("no targets below priority 5", None, [5, 9], [4]),
        ("ignore targets below priority 6", None, [6, 8], [5]),
        ("D1 may not visit priority 4 targets", "1", [3, 5], [4]),
        ("D2 must not visit targets with priority 3 or lower", "2", [4, 9], [3, 1]),
        ("only targets with priority above 7", None, [8], [7]),
    ],
)
def test_priority_thresholds_are_read_as_said(text, drone, allowed, forbidden):
    [rule] = coordinate_scenario(text, SCENARIO).constraints.priority_rules
    assert rule.drone == drone
    assert all(rule.allows(p) for p in allowed) and not any(rule.allows(p) for p in forbidden)
    # the rule's forbidden pairs are exactly the scenario's targets outside it
    outside = {t.id for t in SCENARIO.environment.targets if not rule.allows(t.priority)}
    assert set(rule.targets) == outside


def test_what_would_be_different_is_a_what_if():
    for text, change in (
        ("what would be different if SAM2 were removed?", {"kind": "remove_sam", "sam": "SAM2"}),
        ("What would change if D3 were lost?", {"kind": "lose_drone", "drone": "3"}),
    ):
        d = coordinate_scenario(text, SCENARIO)
        assert d.intent == "what_if" and d.what_if == [change]


def test_a_swap_moves_each_target_to_the_others_drone_and_needs_a_plan():
    plan = {"1": ["T1", "T4"], "2": ["T2", "T3"], "3": ["T5", "T8"]}
    d = coordinate_scenario("swap T3 and T5", SCENARIO, allocation=plan)  # both type C
    assert d.errors == []
    assert {(m.target, m.to_drone) for m in d.constraints.moves} == {("T3", "3"), ("T5", "2")}
    assert d.policy.use_existing_allocation is True  # only D2 and D3 are replanned
    blind = coordinate_scenario("swap T1 and T3", SCENARIO, allocation=plan)  # D1 cannot see C
    assert [r.reason for r in blind.refused] == ["sensor", "sensor"]
    no_plan = coordinate_scenario("swap T3 and T5", SCENARIO)
    assert no_plan.errors == ["cannot swap T3 and T5: T3, T5 in no drone's plan"]


def test_an_order_to_a_stored_run_is_refused_with_its_reason_not_reported_applied():
    from agents.words.posted import posted_state

    out = asyncio.run(
        answer(
            "do not visit T4",
            posted_state(SCENARIO, None, "stored-run"),
            engine=make_engine("rules"),
            sink=ListSink(),
        )
    )
    report = out["constraint_report"]
    assert report["applied"] == [] and out["applied"] is False
    assert {r["reason"] for r in report["refused"]} == {"stored_run"}
    assert {r["constraint"] for r in report["refused"]} == {f"forbid T4 for D{d}" for d in "123"}


def test_environment_edits_are_said_as_env_edits_and_a_hidden_one_never_is():
    """Seed 000 §8: an environment edit raises an ``ENV_EDITS`` event; popup_sam.json's
    hidden SAM3 (added at t=0) reaches the truth only."""
    from planner.edits import parse_edit

    sink = ListSink()
    planner = AgentPlanner(make_engine("rules"), sink, iterations=500, use_agents=False)
    executive = Executive(
        load_scenario(SCENARIOS / "popup_sam.json"),
        planner=planner,
        sink=sink,
        options=LoopOptions(policy=Policy()),
        coordinate=coordinate_live,
    )

    async def go():
        await executive.start()
        await executive.run(None, until=20)
        executive.edit(parse_edit({"op": "set_priority", "id": "T4", "priority": 9}))
        executive.edit(parse_edit({"op": "set_fuel", "drone": "1", "fuel": 150}))
        await executive.run(None, until=40)

    asyncio.run(go())
    env = [e for e in sink.of(EventRecord) if e.kind == "ENV_EDITS"]
    assert [e.payload["edits"] for e in env] == [["set priority of target T4 to 9"]]
    assert not any(
        "SAM3" in str(e.payload) for e in sink.of(EventRecord) if not e.kind.startswith("truth:")
    )
