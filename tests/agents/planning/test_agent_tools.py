"""The planning round's allocator and critic with their tools (``agent_tools``, issue 25):
on a live run's replan the rules engine calls them through the same session a model would,
on the round's problem (the remainder at the checkpoints, a copy); every call is an agent
run under the allocator's or the critic's run; an acting tool proposes and never commits;
off, the round asks one forced answer each, as before."""

from __future__ import annotations

import asyncio
import json

from agents.engines import make_engine
from agents.planning.round import AgentPlanner
from agents.words.command import coordinate_live
from executive.contracts import AgentRunRecord, EventRecord, HumanCommand
from executive.loop import Executive
from executive.loop.options import LoopOptions
from executive.loop.policy import Policy
from executive.traces.sinks import ListSink
from planner.scenario import load_scenario
from tests.conftest import SCENARIOS


def _replanned(agent_tools: bool) -> tuple[Executive, ListSink]:
    sink = ListSink()
    planner = AgentPlanner(make_engine("rules"), sink, iterations=300, agent_tools=agent_tools)
    executive = Executive(
        load_scenario(SCENARIOS / "demo.json"),
        planner=planner,
        sink=sink,
        options=LoopOptions(policy=Policy(), agent_roles=("strategist", "allocator", "critic")),
        coordinate=coordinate_live,
    )

    async def go():
        await executive.start()
        await executive.run(None, until=100)
        executive.command(HumanCommand("REPLAN", None, "operator"))
        await executive.run(None, until=600)
        await planner.settled()

    asyncio.run(go())
    return executive, sink


def test_the_allocator_and_the_critic_call_their_tools_on_the_rounds_copy():
    executive, sink = _replanned(agent_tools=True)
    rows = sink.of(AgentRunRecord)
    by_id = {r.run_id: r for r in rows}
    replan = next(r for r in executive.replans if r.trigger == "operator:REPLAN")
    allocator = next(
        r for r in rows if r.agent == "allocator" and r.parent_run_id == replan.round_id
    )
    tools = [r for r in rows if r.parent_run_id == allocator.run_id]
    assert [r.agent for r in tools] == ["tool:allocate", "tool:solve"]
    assert all(
        r.applied and r.engine == "tools" and r.mission_run_id == executive.run_id for r in tools
    )
    assert allocator.validated_output["tool_calls"] == [r.run_id for r in tools]
    solved = json.loads(tools[1].raw_output)
    assert solved["ok"] and solved["data"]["proposal"] is True
    # planned on the remainder: the drones in the air start at their checkpoints
    assert any(route[0].endswith("_START") for route in solved["data"]["routes"].values())
    critics = [r for r in rows if r.agent == "critic" and r.parent_run_id == replan.round_id]
    [checked] = [r for r in rows if r.parent_run_id in {c.run_id for c in critics}]
    assert checked.agent == "tool:validate" and json.loads(checked.raw_output)["data"]["valid"]
    assert by_id[checked.parent_run_id].validated_output["tool_calls"] == [checked.run_id]
    # no tool commits: every plan that flew was committed by the lifecycle, once per commit
    commits = [e for e in sink.of(EventRecord) if e.kind == "COMMIT_PLAN"]
    assert len(commits) == 1 + sum(r.status == "committed" for r in executive.replans)


def test_without_agent_tools_the_round_calls_none():
    _, sink = _replanned(agent_tools=False)
    rows = sink.of(AgentRunRecord)
    assert {"allocator", "critic"} <= {r.agent for r in rows}
    assert not [r for r in rows if r.agent.startswith("tool:")]


def test_the_run_configuration_switches_the_tools_on():
    from mission.config import RunConfig
    from mission.session import build_planner

    assert build_planner(RunConfig(agent_tools=True), ListSink()).agent_tools is True
    assert build_planner(RunConfig(), ListSink()).agent_tools is False
    assert RunConfig(responder_tools=True).recorded()["responder_tools"] is True
