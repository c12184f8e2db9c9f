"""The model engines' tool-use loop, through the real SDKs against the local API servers:
the model asks for tools, we run them (access control, budget, traces) and send the results
back, until it calls its final answer tool; the budget spent forces the final answer; the
answer's timeout covers the whole loop."""

from __future__ import annotations

import asyncio
import json

import pytest

from agents import engines as sdk  # SDK engines load on first use (tests/conftest.py)
from agents.engines.base import AgentCall
from agents.engines.tool_loop import call_with_tools
from agents.responder import RESPONDER_TOOL
from agents.responder.role import ResponderOutput
from agents.tools import ToolContext, ToolSession
from agents.words.posted import posted_state
from executive.contracts import AgentRunRecord
from executive.traces.sinks import ListSink
from planner.scenario import load_scenario
from tests import messages_api as anth
from tests import openai_api as oai
from tests.conftest import SCENARIOS

# the SDKs are imported by one worker only, the one running these (tests/conftest.py)
pytestmark = pytest.mark.xdist_group("sdk")

READ = ["mission_overview", "drone_state", "distance", "plan_metrics"]
FINAL = {
    "answer": "D1 has 200.0 km of fuel left.",
    "numbers": [{"label": "D1 fuel left", "value": 200.0, "unit": "km"}],
    "ids": ["D1"],
}


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def context() -> ToolContext:
    demo = load_scenario(SCENARIOS / "demo.json")
    return ToolContext.for_state(posted_state(demo, None, "run-sdk"))


def _call() -> AgentCall:
    return AgentCall(
        agent="responder",
        system="Answer with numbers.",
        prompt="How much fuel does D1 have left?",
        tool=RESPONDER_TOOL,
        deterministic={"answer": "rules"},
    )


def _ask(engine_factory, session: ToolSession, timeout_s: float = 10.0):
    async def go():
        async with engine_factory() as engine:
            return await call_with_tools(engine, _call(), session, ResponderOutput, timeout_s)

    return asyncio.run(go())


# ----------------------------------------------------------------------------- anthropic


def test_anthropic_multi_turn_tool_loop(context):
    sink = ListSink()
    session = ToolSession("responder", context, sink, parent_run_id="responder-run")
    with anth.MessagesAPIServer() as api:
        api.script(
            anth.ToolUse({"drone": "D1"}, name="drone_state", usage=(100, 10)),
            anth.ToolUse({}, name="solve", usage=(150, 10)),  # not the responder's
            anth.ToolUse(FINAL, name="answer", usage=(200, 20)),
        )
        done = _ask(lambda: sdk.AnthropicEngine(api_key="test", base_url=api.url), session)
        requests = api.requests
    assert done.error is None, done.error
    assert done.output == ResponderOutput.model_validate(FINAL)
    assert done.reply is not None
    assert (done.reply.tokens_in, done.reply.tokens_out) == (450, 40)  # summed over turns
    assert done.reply.meta["turns"] == 3
    assert len(requests) == 3
    # every request offers the role's tools and the final one, and asks for a tool call
    assert [t["name"] for t in requests[0]["tools"]] == [*READ, "answer"]
    assert all(r["tool_choice"] == {"type": "any"} for r in requests)
    # turn 2 carries the first call and its result; turn 3 the refusal, as an error result
    assistant, user = requests[1]["messages"][1:]
    assert assistant["role"] == "assistant" and assistant["content"][0]["name"] == "drone_state"
    result = user["content"][0]
    assert result["type"] == "tool_result" and result["is_error"] is False
    assert result["tool_use_id"] == assistant["content"][0]["id"]
    assert json.loads(result["content"])["data"]["fuel_left_km"] == 200.0
    refused = requests[2]["messages"][-1]["content"][0]
    assert refused["is_error"] is True
    assert json.loads(refused["content"])["error"].startswith("access denied")
    # the calls are rows of the agent tree under the responder's run
    rows = sink.of(AgentRunRecord)
    assert [(r.agent, r.applied, r.parent_run_id) for r in rows] == [
        ("tool:drone_state", True, "responder-run"),
        ("tool:solve", False, "responder-run"),
    ]
    # raw holds every block the model sent; the final answer is found as in a forced call
    assert [b["name"] for b in json.loads(done.raw or "[]")] == ["drone_state", "solve", "answer"]


def test_anthropic_budget_spent_forces_the_final_answer(context):
    session = ToolSession("responder", context, ListSink(), max_calls=1)
    with anth.MessagesAPIServer() as api:
        api.script(
            anth.ToolUse({"drone": "D1"}, name="drone_state"),
            anth.ToolUse(FINAL),  # name None: the tool the request forced
        )
        done = _ask(lambda: sdk.AnthropicEngine(api_key="test", base_url=api.url), session)
        requests = api.requests
    assert done.error is None, done.error
    assert requests[0]["tool_choice"] == {"type": "any"}
    assert requests[1]["tool_choice"] == {"type": "tool", "name": "answer"}


def test_anthropic_the_answers_timeout_covers_the_whole_loop(context):
    session = ToolSession("responder", context, ListSink())
    with anth.MessagesAPIServer() as api:
        api.script(
            anth.ToolUse({"drone": "D1"}, name="drone_state"),
            anth.ToolUse(FINAL, name="answer", delay=5),
        )
        done = _ask(
            lambda: sdk.AnthropicEngine(api_key="test", base_url=api.url), session, timeout_s=1.0
        )
    assert done.output is None and done.error is not None
    assert done.error.startswith("timeout")
    assert [c.tool for c in session.calls] == ["drone_state"]


def test_anthropic_a_text_reply_without_a_tool_is_malformed(context):
    session = ToolSession("responder", context, ListSink())
    with anth.MessagesAPIServer() as api:
        api.script(anth.Text("D1 has plenty."))
        done = _ask(lambda: sdk.AnthropicEngine(api_key="test", base_url=api.url), session)
    assert done.error is not None and done.error.startswith("malformed: responder: no tool_use")


# ----------------------------------------------------------------------------- openai


def test_openai_multi_turn_tool_loop(context):
    sink = ListSink()
    session = ToolSession("responder", context, sink, parent_run_id="responder-run")
    with oai.ChatAPIServer() as api:
        api.script(
            oai.ToolCall({"drone": "D1"}, name="drone_state", usage=(100, 10)),
            oai.ToolCall('{"origin": "A1", "destination":', name="distance"),  # not JSON
            oai.ToolCall(FINAL, name="answer", usage=(200, 20)),
        )
        done = _ask(lambda: sdk.OpenAIEngine(model="llama3.1", base_url=api.url), session)
        requests = api.requests
    assert done.error is None, done.error
    assert done.output == ResponderOutput.model_validate(FINAL)
    assert len(requests) == 3
    assert [t["function"]["name"] for t in requests[0]["tools"]] == [*READ, "answer"]
    assert all(r["tool_choice"] == "required" for r in requests)
    # turn 2: the assistant's call as it came, then its result as a tool message
    assistant, tool = requests[1]["messages"][2:]
    call = assistant["tool_calls"][0]
    assert call["function"] == {"name": "drone_state", "arguments": '{"drone": "D1"}'}
    assert tool["role"] == "tool" and tool["tool_call_id"] == call["id"]
    assert json.loads(tool["content"])["data"]["fuel_left_km"] == 200.0
    # arguments that are not JSON are the model's error to read, not a failed answer
    bad = json.loads(requests[2]["messages"][-1]["content"])
    assert bad["ok"] is False and bad["error"].startswith("invalid arguments: not a JSON object")
    assert [r.agent for r in sink.of(AgentRunRecord)] == ["tool:drone_state", "tool:distance"]


def test_openai_budget_spent_forces_the_final_function(context):
    session = ToolSession("responder", context, ListSink(), max_calls=1)
    with oai.ChatAPIServer() as api:
        api.script(
            oai.ToolCall({}, name="mission_overview"),
            oai.ToolCall(FINAL),  # name None: the function the request forced
        )
        done = _ask(lambda: sdk.OpenAIEngine(model="llama3.1", base_url=api.url), session)
        requests = api.requests
    assert done.error is None, done.error
    assert requests[0]["tool_choice"] == "required"
    assert requests[1]["tool_choice"] == {"type": "function", "function": {"name": "answer"}}
