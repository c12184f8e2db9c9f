"""A slow agent helps: the fast tier flies a poor plan at once (a search cut to one
iteration); the allocator "model" (a local server speaking the Messages API, through the
real anthropic SDK) answers three seconds later with a better allocation; the executive
rebases it onto the state when it arrives, finds it beats the plan in force, and flies it.
The points rise against the same run without agents."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from agents import engines as sdk  # SDK engines load on first use (tests/conftest.py)
from agents.planning.round import AgentPlanner
from executive.contracts import EventRecord, HumanCommand
from executive.loop import Executive, Policy
from executive.loop.options import LoopOptions
from executive.traces.audit import lost_to_known_sams
from executive.traces.sinks import ListSink
from planner.mission import compile_mission
from planner.planning import plan_mission
from tests.agents.planning.test_live_agents import CRITIC, STRATEGIST
from tests.factory import random_scenario
from tests.messages_api import MessagesAPIServer, ToolUse

# the SDKs are imported by one worker only, the one running these (tests/conftest.py)
pytestmark = pytest.mark.xdist_group("sdk")

DELAY_S = 3.0  # the "model" thinks this long over the allocation


class Recording:
    """The planner as the executive sees it, keeping each request."""

    def __init__(self, planner) -> None:
        self.planner = planner
        self.requests = []

    async def plan(self, request):
        self.requests.append(request)
        return await self.planner.plan(request)


def _scenario():
    return random_scenario(
        np.random.default_rng(4), n_targets=30, n_sams=2, n_drones=3, fuel=(120, 200)
    )


def _fly(planner, sink):
    executive = Executive(
        _scenario(),
        planner=planner,
        sink=sink,
        options=LoopOptions(policy=Policy(batch_iterations=1)),
    )
    executive.watch(
        on_tick=lambda r: executive.command(HumanCommand("REPLAN")) if r.tick == 100 else None
    )
    return asyncio.run(executive.run(None))


def test_a_slow_agents_better_allocation_is_applied_after_the_rebase():
    recording: Recording | None = None

    def model(request: dict):
        tool = (request.get("tool_choice") or {}).get("name")
        if tool == "strategist_decision":
            return ToolUse(STRATEGIST)
        if tool == "critique":
            return ToolUse(CRITIC)
        # The allocation a long search finds on the round's own problem, late.
        assert recording is not None
        round_request = recording.requests[-1]
        strong = plan_mission(
            compile_mission(round_request.scenario), seconds=None, iterations=3000, seed=1
        )
        return ToolUse(
            {
                "strategy_used": "efficient",
                "assignments": strong.solution.allocation,
                "excluded": [],
                "rationale": {},
                "tradeoffs": "a longer search",
            },
            delay=DELAY_S,
        )

    sink = ListSink()
    with MessagesAPIServer(model) as api:
        engine = sdk.AnthropicEngine(api_key="test-key", base_url=api.url, model="claude-test")
        recording = Recording(AgentPlanner(engine, sink, iterations=1, agent_timeout_s=30))
        report = _fly(recording, sink)
    without = _fly(AgentPlanner(engine, ListSink(), iterations=1, use_agents=False), ListSink())

    replan = report.replans[0]
    assert replan.trigger == "operator:REPLAN" and replan.agent_applied
    applied = [r.payload for r in sink.of(EventRecord) if r.kind == "AGENT_PROPOSAL"]
    assert applied and applied[0]["applied"], applied
    commits = [r.payload for r in sink.of(EventRecord) if r.kind == "COMMIT_PLAN"]
    late = [c for c in commits if c.get("origin") == "agents"]
    assert len(late) == 1 and late[0]["agent_applied"] and late[0]["rebased_from"]
    # the fast plan flew first; the agents' plan replaced it, later
    fast = next(c for c in commits if c.get("origin") == "planner")
    assert fast["cut_tick"] < late[0]["cut_tick"]
    allocator = [r for r in sink.records if getattr(r, "agent", None) == "allocator"]
    assert allocator[-1].applied and allocator[-1].duration_ms >= DELAY_S * 1000
    assert allocator[-1].validated_output["outcome"]["decision"].startswith("applied after")
    assert report.outcome.total_points > without.outcome.total_points
    assert lost_to_known_sams(sink.records) == []
