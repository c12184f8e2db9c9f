"""The anthropic engine inside a live run: the real SDK talks to a local server that speaks the
Messages API, and whatever the "model" answers — a good tool call, a malformed one, unknown
targets, a constraint it breaks, a reply slower than the deadline, 429, 500 — the run ends
with every committed plan valid and the reason traced in the SQL store."""

from __future__ import annotations

import asyncio
import re

import pytest

from agents import engines as sdk  # SDK engines load on first use (tests/conftest.py)
from agents.planning.round import AgentPlanner
from executive.loop import Executive
from executive.loop.options import LoopOptions
from executive.loop.policy import Policy
from executive.traces import TraceReader, TraceWriter
from planner.mission import compile_mission
from planner.model import Solution
from planner.scenario import load_scenario
from planner.validation import validate_solution
from tests.conftest import SCENARIOS
from tests.messages_api import MessagesAPIServer, Status, Text, ToolUse

# the SDKs are imported by one worker only, the one running these (tests/conftest.py)
pytestmark = pytest.mark.xdist_group("sdk")

STRATEGIST = {
    "request_type": "optimize",
    "mode": "optimize_freely",
    "commands_detected": [],
    "constraints_summary": "replan the remainder",
    "needs_allocation": True,
    "needs_routing": True,
    "feasibility": "feasible",
    "rationale": ["3 drones, 13 targets"],
}
CRITIC = {"review": "fine", "issues": [], "suggestions": [], "final_verdict": "APPROVED"}


def _allocation(assignments: dict) -> dict:
    return {
        "strategy_used": "efficient",
        "assignments": assignments,
        "excluded": [],
        "rationale": {},
        "tradeoffs": "test",
    }


# What the allocator "model" answers, and what the trace must then say about it.
MODES = {
    # a well-formed, valid proposal: routed and judged against the baseline, not applied
    "good": (
        ToolUse(_allocation({"D1": [], "D2": [], "D3": []})),
        None,
        r"proposal \d+ points (<|=) baseline",
    ),
    "malformed": (Text("D1 should take T5, I think."), "malformed", "allocator: malformed"),
    "unknown_targets": (ToolUse(_allocation({"D1": ["T99"], "D3": ["T42"]})), None, "T99"),
    # D1 senses A and B only: T3 (type C) breaks a hard constraint and is clamped out
    "breaks_constraints": (ToolUse(_allocation({"D1": ["T3"]})), None, "T3"),
    # slower than the agents' own per-call timeout (2 s here): cut off, the plan stands
    "slow": (ToolUse(_allocation({}), delay=5.0), "timeout", "allocator: timeout"),
    "rate_limited": (Status(429), "rate_limited", "allocator: rate_limited"),
    "server_error": (Status(500), "server_error", "allocator: server_error"),
}


class Recording:
    """The planner as the executive sees it, keeping each request and its outcome."""

    def __init__(self, planner) -> None:
        self.planner = planner
        self.rounds = []

    async def plan(self, request):
        outcome = await self.planner.plan(request)
        self.rounds.append((request, outcome))
        return outcome


def _responder(allocator_reply):
    def respond(request: dict):
        tool = (request.get("tool_choice") or {}).get("name")
        if tool == "strategist_decision":
            return ToolUse(STRATEGIST)
        if tool == "critique":
            return ToolUse(CRITIC)
        return allocator_reply

    return respond


@pytest.mark.parametrize("mode", list(MODES))
def test_every_answer_ends_in_a_valid_plan_and_a_traced_reason(mode, tmp_path):
    reply, error_kind, reason_part = MODES[mode]
    scenario = load_scenario(SCENARIOS / "new_target.json")
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with MessagesAPIServer(_responder(reply)) as api:
        engine = sdk.AnthropicEngine(api_key="test-key", base_url=api.url, model="claude-test")
        with TraceWriter(url) as writer:
            planner = Recording(AgentPlanner(engine, writer, iterations=400, agent_timeout_s=2.0))
            executive = Executive(
                scenario,
                planner=planner,
                sink=writer,
                options=LoopOptions(policy=Policy(batch_iterations=400)),
            )
            report = asyncio.run(executive.run(None))
            assert writer.flush(20)
        requests = api.requests
    # the real SDK reached the server, forcing the tool of each role
    tools = {(r.get("tool_choice") or {}).get("name") for r in requests}
    assert {"strategist_decision", "allocation"} <= tools
    assert all(r["model"] == "claude-test" for r in requests)

    # the run replanned on the new target, and nothing it committed was invalid
    assert [r.trigger for r in report.replans] == ["add_target:T13"]
    assert report.replans[0].status == "committed"
    assert not report.replans[0].agent_applied
    assert report.outcome.lost == [] and report.outcome.total_points > 0
    reader = TraceReader(url)
    versions = reader.plan_versions(executive.run_id)
    # the first plan, superseded by the replan, which is the committed one
    assert sorted(v["status"] for v in versions) == ["committed", "superseded"]
    committed = [v for v in versions if v["status"] == "committed"]
    assert len(planner.rounds) == 2
    for request, outcome in planner.rounds:  # each plan is valid for the problem it answers
        assert validate_solution(compile_mission(request.scenario), outcome.solution) == []
    stored = Solution.model_validate(committed[-1]["solution"])
    assert stored.total_points == planner.rounds[-1][1].solution.total_points

    # the reason is in the round's outcome and in the stored agent runs
    reasons = " | ".join(report.replans[0].reasons)
    assert re.search(reason_part, reasons), reasons
    runs = reader.agent_runs(executive.run_id)
    by_round = [r for r in runs if r["parent_run_id"] == report.replans[0].round_id]
    allocator = [r for r in by_round if r["agent"] == "allocator"]
    assert len(allocator) == 1, [r["agent"] for r in by_round]
    allocator = allocator[0]
    assert allocator["engine"] == "anthropic" and allocator["model"] == "claude-test"
    assert allocator["applied"] is False
    if error_kind is not None:
        assert allocator["error"].startswith(error_kind), allocator["error"]
    else:
        assert allocator["validated_output"] is not None
        if mode != "good":
            assert any(reason_part in c for c in allocator["clamp_actions"]), allocator
    assert any(r["agent"] == "route_optimizer" and r["applied"] for r in by_round)
    reader.close()
