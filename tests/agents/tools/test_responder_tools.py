"""The responder with its tools: through the one pipeline (rules engine, offline) the tool
calls are rows of the agent tree under the responder and stages of the answer; through the
real anthropic SDK the model reads a drone's state with a tool before it answers, and its
answer is checked against the state as without tools."""

from __future__ import annotations

import asyncio
import json

import pytest

from agents import engines as sdk  # SDK engines load on first use (tests/conftest.py)
from agents.engines import make_engine
from agents.responder import respond
from agents.tools import ToolContext
from agents.words.ask import answer
from agents.words.posted import posted_state
from executive.contracts import AgentRunRecord
from executive.traces.sinks import ListSink
from planner.scenario import load_scenario
from tests.conftest import SCENARIOS
from tests.messages_api import MessagesAPIServer, ToolUse

# the SDKs are imported by one worker only, the one running these (tests/conftest.py)
pytestmark = pytest.mark.xdist_group("sdk")

QUESTION = "How much fuel does D2 have left?"


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ISR_ANTHROPIC_MODEL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def state():
    return posted_state(load_scenario(SCENARIOS / "demo.json"), None, "run-responder-tools")


def test_the_pipeline_traces_the_responders_tool_calls_under_it(state):
    sink = ListSink()
    stages: list[dict] = []
    out = asyncio.run(
        answer(
            QUESTION,
            state,
            engine=make_engine("rules"),
            sink=sink,
            responder_tools=True,
            on_stage=lambda s: stages.append(s.model_dump()),
        )
    )
    rows = {r.run_id: r for r in sink.of(AgentRunRecord)}
    root, responder_id, *tool_ids = out["agent_runs"]
    assert rows[root].agent == "coordinator" and rows[responder_id].agent == "responder"
    # the rules engine's plan: the overview, then the drone the question names
    assert [rows[t].agent for t in tool_ids] == ["tool:mission_overview", "tool:drone_state"]
    assert all(rows[t].parent_run_id == responder_id and rows[t].applied for t in tool_ids)
    assert rows[responder_id].validated_output["tool_calls"] == tool_ids
    assert "D2" in out["answer"]
    started = [s["tool"] for s in stages if s["event"] == "tool_call_start"]
    assert started == ["responder", "mission_overview", "drone_state"]


def test_without_tools_the_pipeline_is_as_before(state):
    sink = ListSink()
    out = asyncio.run(answer(QUESTION, state, engine=make_engine("rules"), sink=sink))
    assert [r.agent for r in sink.of(AgentRunRecord)] == ["responder", "coordinator"]
    assert len(out["agent_runs"]) == 2


def test_a_model_reads_a_drone_with_a_tool_then_answers(state):
    fuel = state.drones["2"].fuel
    final = {
        "answer": f"D2 has {fuel:.1f} km of fuel left.",
        "numbers": [{"label": "D2 fuel left", "value": fuel, "unit": "km"}],
        "ids": ["D2"],
    }
    sink = ListSink()
    with MessagesAPIServer() as api:
        api.script(ToolUse({"drone": "D2"}, name="drone_state"), ToolUse(final, name="answer"))

        async def go():
            async with sdk.AnthropicEngine(api_key="test", base_url=api.url) as engine:
                return await respond(
                    QUESTION,
                    state,
                    engine=engine,
                    sink=sink,
                    timeout_s=10,
                    tools=ToolContext.for_state(state),
                )

        done = asyncio.run(go())
        requests = api.requests
    assert done.applied is True and done.error is None
    assert done.output.answer == final["answer"]
    assert "TOOLS: you may call the read-only tools" in requests[0]["system"]
    result = json.loads(requests[1]["messages"][-1]["content"][0]["content"])
    assert result["data"]["fuel_left_km"] == fuel
    [tool_row] = [r for r in sink.of(AgentRunRecord) if r.agent.startswith("tool:")]
    assert tool_row.parent_run_id == done.record.run_id
    assert done.tool_calls == [tool_row.run_id]


def test_a_number_a_tool_answered_may_be_cited_one_it_did_not_may_not(state):
    def ask(distance_cited: float):
        final = {
            "answer": f"D2 is {distance_cited} km from T4 on a path around the SAMs.",
            "numbers": [{"label": "D2 to T4", "value": distance_cited, "unit": "km"}],
            "ids": ["D2", "T4"],
        }
        with MessagesAPIServer() as api:
            api.script(
                ToolUse({"origin": "D2", "destination": "T4"}, name="distance"),
                ToolUse(final, name="answer"),
            )

            async def go():
                async with sdk.AnthropicEngine(api_key="test", base_url=api.url) as engine:
                    return await respond(
                        "How far is D2 from T4?",
                        state,
                        engine=engine,
                        sink=ListSink(),
                        timeout_s=10,
                        tools=ToolContext.for_state(state),
                    )

            done = asyncio.run(go())
            result = json.loads(api.requests[1]["messages"][-1]["content"][0]["content"])
        return done, result["data"]["path_km"]

    done, path = ask(987.6)  # a figure nothing supports (and the tool's figure, learnt)
    assert done.applied is False and done.error.startswith("invalid: numbers")
    cited, again = ask(round(path, 1))
    assert again == path
    assert cited.applied is True and cited.error is None


def test_a_live_runs_tools_read_the_state_taken_between_ticks():
    """On a live run the responder's tools read the run's state as the question found it:
    an airborne drone is measured from where it is then (``D2_START``), and no tool
    changes the run; asked again later, they read the later state."""
    from agents.planning.round import AgentPlanner
    from agents.words.ask import StateVenue
    from agents.words.command import coordinate_live
    from agents.words.state import from_executive
    from executive.loop import Executive
    from executive.loop.options import LoopOptions
    from executive.loop.policy import Policy

    sink = ListSink()
    executive = Executive(
        load_scenario(SCENARIOS / "demo.json"),
        planner=AgentPlanner(make_engine("rules"), sink, iterations=500, use_agents=False),
        sink=sink,
        options=LoopOptions(policy=Policy()),
        coordinate=coordinate_live,
    )

    def context(state):
        venue = StateVenue(
            state, make_engine("rules"), sink, lambda: (), None, executive, None, 5.0, 200, 0, True
        )
        return venue.tool_context(state)

    async def go():
        await executive.start()
        await executive.run(None, until=2000)
        early = from_executive(executive)
        out = await answer(
            "How far is D2 from T5?",
            early,
            engine=make_engine("rules"),
            sink=sink,
            live=executive,
            responder_tools=True,
        )
        plan = executive.plan
        await executive.run(None, until=4000)
        return early, from_executive(executive), out, plan

    early, late, out, plan = asyncio.run(go())
    from agents.tools.read import DistanceArgs, distance

    def d2_to_t5(state):
        ctx = context(state)
        here = ctx.problem.environment.synthetic_starts["D2_START"]
        assert (here.x, here.y) == pytest.approx((state.drones["2"].x, state.drones["2"].y))
        far = distance(ctx, DistanceArgs(origin="D2", destination="T5"))
        assert far["origin"] == "D2_START" and far["path_km"] >= far["straight_km"] > 0
        return far["straight_km"]

    assert early.drones["2"].airborne and late.drones["2"].airborne
    assert d2_to_t5(early) != d2_to_t5(late)  # D2 flew on between the two questions
    assert len(out["agent_runs"]) > 2  # the responder called its tools on the live run
    tools = [r for r in sink.of(AgentRunRecord) if r.agent.startswith("tool:")]
    assert tools and {r.mission_run_id for r in tools} == {executive.run_id}
    assert executive.plan is plan  # nothing a tool did touched the run


def test_a_lost_drone_is_no_place_to_measure_from():
    from agents.tools.read import DistanceArgs, distance
    from agents.words.state import from_executive
    from tests.flown import flown

    executive = flown("lost_drone.json", 18100)  # D3 is lost at 900 s
    state = from_executive(executive)
    [lost] = [d for d in state.drones.values() if d.status == "lost"]
    ctx = ToolContext.for_state(state)
    with pytest.raises(Exception, match=f"{lost.label} was lost"):
        distance(ctx, DistanceArgs(origin=lost.label, destination="A1"))
