"""The critic acts: a NEEDS_REVISION verdict with concrete suggestions is tried once and the
revision is kept only if it validates and scores better; with the rules critic, and with a
scripted model (the real anthropic SDK against the local Messages API server) in a round."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from agents import engines as sdk  # SDK engines load on first use (tests/conftest.py)
from agents.planning.round import AgentPlanner
from agents.revision import Suggestion, concrete_suggestions, revise
from agents.roles import CriticOutput, critic_rules
from executive.contracts import AgentRunRecord, PlanRequest
from executive.traces.sinks import ListSink
from planner.mission import compile_mission
from planner.scenario import load_scenario
from planner.solution import build_solution
from planner.validation import validate_solution
from tests.conftest import SCENARIOS
from tests.factory import random_scenario
from tests.messages_api import MessagesAPIServer, Status, ToolUse

# the SDKs are imported by one worker only, the one running these (tests/conftest.py)
pytestmark = pytest.mark.xdist_group("sdk")

DEMO = load_scenario(SCENARIOS / "demo.json")  # D1 senses A, B; D2 B, C; D3 all


def _weak_plan():
    """The demo with D3 visiting T1 only and D1, D2 staying home: many targets missed."""
    mission = compile_mission(DEMO)
    routes = {spec.id: [spec.start, spec.ends[0]] for spec in mission.drones}
    d3 = mission.drone("3")
    routes["3"] = [d3.start, mission.index["T1"], d3.ends[0]]
    return mission, build_solution(mission, routes)


def test_the_rules_critic_asks_for_a_revision_that_is_kept():
    mission, weak = _weak_plan()
    review = CriticOutput.model_validate(critic_rules(mission, weak))
    assert review.final_verdict == "NEEDS_REVISION"
    assert any(s.startswith("add T2 to D") and "km detour" in s for s in review.suggestions)
    suggestions = concrete_suggestions(review, mission)
    assert suggestions and {s.kind for s in suggestions} == {"insert"}
    revision = revise(mission, weak, suggestions)
    assert revision.kept and revision.solution is not None
    assert validate_solution(mission, revision.solution) == []
    assert revision.solution.total_points > weak.total_points
    assert revision.points_after == revision.solution.total_points
    assert revision.reason.startswith(f"kept: +{revision.solution.total_points - 9:g} points")


def test_suggestions_in_a_models_words_are_read_and_unknown_ids_dropped():
    mission = compile_mission(DEMO)
    review = CriticOutput(
        review="ok",
        issues=["D1 T2->T4 crosses D3 T8->T1 at (30.0, 40.0)"],
        suggestions=[
            "Move T5 to D3 to balance the load",
            "reassign T3 from D2 to drone 3",
            "add T9 to D2 (+3 points)",
            "move T99 to D1",
            "T6 stays out: the cheapest detour exceeds its margin",
        ],
        final_verdict="NEEDS_REVISION",
    )
    got = [(s.kind, s.target, s.drone) for s in concrete_suggestions(review, mission)]
    assert got == [
        ("move", "T5", "3"),
        ("move", "T3", "3"),
        ("insert", "T9", "2"),
        ("uncross", None, None),
    ]


def test_an_impossible_or_useless_suggestion_is_not_kept():
    mission, weak = _weak_plan()
    # D1 cannot sense T5 (type C): skipped with the reason, nothing else to do
    revision = revise(mission, weak, [Suggestion("move", "T5", "1", "move T5 to D1")])
    assert not revision.kept and revision.solution is None
    assert revision.skipped == [
        "move T5 to D1: D1 cannot visit T5 (its sensors, a SAM, or a frozen leg)"
    ]
    assert revision.reason == "no suggestion could be applied"
    # the demo's full plan: moving T1 to D1 re-optimises to nothing better
    mission = compile_mission(DEMO)
    from planner.planning import plan_mission

    good = plan_mission(mission, "efficient", iterations=2000, seed=0).solution
    holder = next(d for d, ts in good.allocation.items() if "T1" in ts)
    other = next(s.id for s in mission.drones if s.id != holder and "T1" in mission.ids(s.eligible))
    revision = revise(mission, good, [Suggestion("move", "T1", other, "x")])
    assert not revision.kept
    assert revision.reason.startswith(("not better", "the revision"))


def _weak_round_scenario():
    """A 20-target mission where a one-iteration search leaves a fuel saving on the table:
    moving T11 to D2 saves fuel for the same points (found by ``revise`` itself)."""
    return random_scenario(np.random.default_rng(1), n_targets=20, n_drones=3)


def _model(request: dict):
    """The scripted model: a strategist, a malformed allocator, a critic asking to move
    T11 to D2."""
    tool = request["tool_choice"]["name"]
    if tool == "strategist_decision":
        return ToolUse(
            {
                "request_type": "optimize",
                "mode": "optimize_freely",
                "constraints_summary": "none",
                "needs_allocation": True,
                "needs_routing": True,
                "feasibility": "feasible",
            }
        )
    if tool == "allocation":
        return Status(500)
    return ToolUse(
        {
            "review": "D1 carries T11 far from its way; D2 passes closer.",
            "issues": [],
            "suggestions": ["Move T11 to D2: it passes closer and saves fuel"],
            "final_verdict": "NEEDS_REVISION",
        }
    )


def test_a_models_needs_revision_triggers_one_kept_revision_in_the_round():
    scenario = _weak_round_scenario()
    sink = ListSink()
    with MessagesAPIServer(_model) as api:

        async def go():
            async with sdk.AnthropicEngine(
                model="claude-test", api_key="sk-test", base_url=api.url
            ) as engine:
                planner = AgentPlanner(engine, sink, iterations=1, seed=0, agent_timeout_s=5)
                outcome = await planner.plan(
                    PlanRequest("run-1", "round-1", 0, "operator:test", scenario, 5.0)
                )
                return outcome, await outcome.followup

        outcome, proposal = asyncio.run(go())
        critic_calls = [r for r in api.requests if r["tool_choice"]["name"] == "critique"]
    assert len(critic_calls) == 1  # one review, one attempt
    base = outcome.baseline
    assert proposal.solution is not None  # the revision is offered
    revised = proposal.solution
    assert validate_solution(proposal.mission, revised) == []
    assert revised.total_points >= base.total_points
    assert revised.total_fuel < base.total_fuel - 1e-6
    assert revised.allocation != base.allocation
    assert any(r.startswith("critic revision: kept") for r in proposal.reasons)
    proposal.settle(True, "test: applied")  # the executive's decision, on the revision's row
    [row] = [r for r in sink.of(AgentRunRecord) if r.model == "critic_revision"]
    assert row.parent_run_id == "round-1" and row.applied
    assert row.validated_output["revision"]["kept"]
    assert row.validated_output["revision"]["applied"] == ["move T11 to D2"]
    assert row.validated_output["outcome"]["decision"] == "test: applied"


def test_with_the_rules_engine_a_locally_optimal_plan_is_left_alone():
    from agents.engines import make_engine

    sink = ListSink()
    planner = AgentPlanner(make_engine("rules"), sink, iterations=2000, seed=0)
    scenario = random_scenario(np.random.default_rng(8), n_targets=14, n_drones=3)

    async def go():
        outcome = await planner.plan(PlanRequest("run-1", "round-1", 0, "t", scenario, 5.0))
        return await outcome.followup

    proposal = asyncio.run(go())
    [critic] = [r for r in sink.of(AgentRunRecord) if r.agent == "critic"]
    assert critic.validated_output["final_verdict"] == "NEEDS_REVISION"  # routes cross
    [row] = [r for r in sink.of(AgentRunRecord) if r.model == "critic_revision"]
    assert not row.applied and row.validated_output["revision"]["kept"] is False
    assert row.validated_output["revision"]["reason"].startswith("not better")
    assert proposal.solution is None  # nothing better to offer than the baseline
