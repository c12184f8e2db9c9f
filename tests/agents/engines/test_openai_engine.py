"""The openai engine through the real ``openai`` SDK against a local chat-completions server
(``tests/openai_api.py``): the good path, malformed answers, a slow server, 429 and 500, and
the engine's health call; its reply replays like any other engine's."""

from __future__ import annotations

import asyncio
import json

import pytest

from agents import engines as sdk  # SDK engines load on first use (tests/conftest.py)
from agents.engines import AgentCall, Engine, EngineError, ToolSpec, make_engine
from agents.engines.base import call_validated, tool_input_from_blocks
from agents.engines.replay import ReplayEngine
from agents.roles import CRITIC_TOOL, CriticOutput
from executive.errors import ExecutiveError
from tests.openai_api import ChatAPIServer, RawBody, Status, Text, ToolCall

# the SDKs are imported by one worker only, the one running these (tests/conftest.py)
pytestmark = pytest.mark.xdist_group("sdk")

TOOL = ToolSpec(
    name="submit_allocation",
    description="Submit the allocation of targets to drones.",
    input_schema={
        "type": "object",
        "properties": {"assignments": {"type": "object"}},
        "required": ["assignments"],
    },
)
CALL = AgentCall(
    agent="allocator",
    system="You are the allocator. Hard constraints: never enter a SAM ring.",
    prompt="Drones: d1, d2. Targets: t1, t2.",
    tool=TOOL,
    deterministic={"assignments": {"d1": ["t1"], "d2": ["t2"]}},
    max_tokens=321,
)
MODEL = "llama3.1"


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    for name in ("ISR_OPENAI_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID"):
        monkeypatch.delenv(name, raising=False)


def complete(api: ChatAPIServer, call: AgentCall = CALL, *, timeout_s: float = 5.0, key=None):
    """One call through a fresh engine, built and closed on this test's event loop."""

    async def go():
        async with sdk.OpenAIEngine(model=MODEL, base_url=api.url, api_key=key) as engine:
            return await engine.complete(call, timeout_s=timeout_s)

    return asyncio.run(go())


# -- the good path -------------------------------------------------------------------------


def test_tool_call_answer_is_parsed_and_the_function_is_forced(chat_api):
    answer = {"assignments": {"d1": ["t2"], "d2": ["t1"]}}
    chat_api.script(ToolCall(answer, usage=(123, 45), content="thinking..."))

    reply = complete(chat_api)

    assert reply.tool_input == answer
    assert (reply.tokens_in, reply.tokens_out) == (123, 45)
    assert reply.model == MODEL
    assert reply.meta["finish_reason"] == "tool_calls"
    blocks = json.loads(reply.raw)  # the shared convention: text, then tool_use blocks
    assert blocks[0] == {"type": "text", "text": "thinking..."}
    assert blocks[1]["type"] == "tool_use" and blocks[1]["name"] == TOOL.name
    assert tool_input_from_blocks(blocks, TOOL.name) == answer

    [request] = chat_api.requests
    assert request["model"] == MODEL
    assert request["messages"] == [
        {"role": "system", "content": CALL.system},
        {"role": "user", "content": CALL.prompt},
    ]
    assert request["max_tokens"] == 321
    assert request["tools"] == [
        {
            "type": "function",
            "function": {
                "name": TOOL.name,
                "description": TOOL.description,
                "parameters": dict(TOOL.input_schema),
            },
        }
    ]
    assert request["tool_choice"] == {"type": "function", "function": {"name": TOOL.name}}


def test_an_agents_pydantic_tool_schema_is_sent_and_its_answer_validates(chat_api):
    answer = {"review": "fine", "issues": [], "suggestions": [], "final_verdict": "APPROVED"}
    chat_api.responder = lambda request: ToolCall(answer)
    call = AgentCall(
        agent="critic", system="critic", prompt="review", tool=CRITIC_TOOL, deterministic={}
    )

    async def go():
        async with sdk.OpenAIEngine(model=MODEL, base_url=chat_api.url) as engine:
            return await call_validated(engine, call, CriticOutput, 5.0)

    done = asyncio.run(go())
    sent = chat_api.requests[0]["tools"][0]["function"]["parameters"]
    assert sent == dict(CRITIC_TOOL.input_schema)  # generated from CriticOutput
    assert done.error is None, done.error
    assert isinstance(done.output, CriticOutput) and done.output.final_verdict == "APPROVED"


def test_a_local_server_needs_no_key_but_one_given_is_sent(chat_api):
    from agents.engines.openai_engine import NO_KEY

    captured: list[str] = []
    engine = sdk.OpenAIEngine(model=MODEL, base_url=chat_api.url)
    assert engine.base_url == chat_api.url
    assert isinstance(engine, Engine) and engine.name == "openai"
    assert complete(chat_api).tool_input == {}  # no key: a placeholder, the server ignores it
    assert complete(chat_api, key="sk-local").tool_input == {}
    captured.extend(r["model"] for r in chat_api.requests)
    assert captured == [MODEL, MODEL]
    assert NO_KEY == "no-key"


def test_model_and_server_from_the_environment(monkeypatch, chat_api):
    monkeypatch.setenv("ISR_OPENAI_MODEL", "qwen2.5:14b")
    monkeypatch.setenv("OPENAI_BASE_URL", chat_api.url)
    engine = make_engine("openai")
    assert (engine.name, engine.model) == ("openai", "qwen2.5:14b")

    async def go():
        try:
            return await engine.complete(CALL, timeout_s=5)
        finally:
            await engine.aclose()  # type: ignore[attr-defined]

    assert asyncio.run(go()).model == "qwen2.5:14b"
    assert chat_api.requests[0]["model"] == "qwen2.5:14b"


def test_no_model_or_no_server_is_a_clear_error():
    with pytest.raises(ExecutiveError, match="ISR_OPENAI_MODEL"):
        sdk.OpenAIEngine(base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ExecutiveError, match="OPENAI_BASE_URL"):
        sdk.OpenAIEngine(model=MODEL)


# -- errors become kinds ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        (429, "rate_limited"),
        (500, "server_error"),
        (503, "server_error"),
        (400, "refused"),
        (401, "refused"),
        (404, "refused"),  # e.g. Ollama: model "x" not found
    ],
)
def test_http_errors_map_to_kinds_without_retries(chat_api, code, kind):
    chat_api.script(Status(code, message=f"scripted {code}"))

    with pytest.raises(EngineError) as info:
        complete(chat_api)

    assert info.value.kind == kind
    assert str(code) in info.value.message and f"scripted {code}" in info.value.message
    assert len(chat_api.requests) == 1  # max_retries=0: the caller owns the fallback


def test_rate_limit_is_reported_quickly(chat_api):
    chat_api.script(Status(429, "rate_limit_exceeded", "slow down"))

    async def go():
        loop = asyncio.get_running_loop()
        async with sdk.OpenAIEngine(model=MODEL, base_url=chat_api.url) as engine:
            start = loop.time()
            with pytest.raises(EngineError) as info:
                await engine.complete(CALL, timeout_s=5)
            return info.value, loop.time() - start

    error, elapsed = asyncio.run(go())
    assert error.kind == "rate_limited" and "slow down" in error.message
    assert elapsed < 1.0  # no SDK back-off


def test_slow_reply_times_out_without_blocking_the_loop(chat_api):
    timeout_s = 0.4
    chat_api.script(ToolCall({"warm": True}), ToolCall({"late": True}, delay=5))

    async def go():
        loop = asyncio.get_running_loop()
        stamps: list[float] = []

        async def ticker():
            while True:
                stamps.append(loop.time())
                await asyncio.sleep(0.01)

        async with sdk.OpenAIEngine(model=MODEL, base_url=chat_api.url) as engine:
            # a first call pays the SDK's one-time setup (lazy imports, the pool)
            assert (await engine.complete(CALL, timeout_s=5)).tool_input == {"warm": True}
            ticking = asyncio.create_task(ticker())
            await asyncio.sleep(0)
            start = loop.time()
            try:
                with pytest.raises(EngineError) as info:
                    await engine.complete(CALL, timeout_s=timeout_s)
                elapsed = loop.time() - start
            finally:
                ticking.cancel()
        gaps = [b - a for a, b in zip(stamps, stamps[1:])]
        return info.value, elapsed, stamps, gaps

    error, elapsed, stamps, gaps = asyncio.run(go())
    assert error.kind == "timeout"
    assert timeout_s <= elapsed < timeout_s + 0.5
    # the loop kept ticking through the call: no gap near the call's length (a blocked
    # loop gaps >= 0.4 s), and ticks until its end; how many ticks a loaded machine fits
    # in 0.4 s is not the claim (CI once fitted 20 where 20.05 were asked)
    assert max(gaps) < 0.2
    assert stamps[-1] >= stamps[0] + elapsed - 0.2


def test_a_slow_call_fails_cleanly_through_call_validated(chat_api):
    chat_api.script(ToolCall({"assignments": {}}, delay=5))

    async def go():
        async with sdk.OpenAIEngine(model=MODEL, base_url=chat_api.url) as engine:
            return await call_validated(engine, CALL, CriticOutput, 0.3)

    done = asyncio.run(go())
    assert done.output is None and done.reply is None
    assert done.error is not None and done.error.startswith("timeout: ")


def test_text_only_reply_is_malformed(chat_api):
    chat_api.script(Text("I would rather not call the function."))

    with pytest.raises(EngineError) as info:
        complete(chat_api)

    assert info.value.kind == "malformed"
    assert json.loads(info.value.raw) == [
        {"type": "text", "text": "I would rather not call the function."}
    ]


def test_arguments_that_are_not_json_are_malformed(chat_api):
    chat_api.script(ToolCall('{"assignments": {"d1": ["t1"]'))  # cut off mid-object

    with pytest.raises(EngineError) as info:
        complete(chat_api)

    assert info.value.kind == "malformed"
    # said as what it is, not as "input is not an object: NoneType"
    assert "arguments are not valid JSON" in info.value.message, info.value.message
    assert "NoneType" not in info.value.message
    [block] = json.loads(info.value.raw)
    assert block["input_text"] == '{"assignments": {"d1": ["t1"]'


def test_wrong_function_and_non_object_arguments_are_malformed(chat_api):
    chat_api.script(ToolCall({"x": 1}, name="some_other_tool"), ToolCall(["not", "an", "object"]))

    with pytest.raises(EngineError) as wrong:
        complete(chat_api)
    with pytest.raises(EngineError) as listed:
        complete(chat_api)

    assert wrong.value.kind == "malformed" and "some_other_tool" in wrong.value.message
    assert listed.value.kind == "malformed" and "not an object" in listed.value.message


def test_an_answer_that_does_not_validate_is_malformed_not_applied(chat_api):
    chat_api.script(ToolCall({"verdict": "MAYBE", "issues": "none"}))

    async def go():
        async with sdk.OpenAIEngine(model=MODEL, base_url=chat_api.url) as engine:
            return await call_validated(engine, CALL, CriticOutput, 5.0)

    done = asyncio.run(go())
    assert done.output is None
    assert done.error is not None and done.error.startswith("malformed: ")
    assert "verdict" in done.error


def test_invalid_json_body_is_malformed_and_a_5xx_is_a_server_error(chat_api):
    chat_api.script(RawBody("{this is not json"), RawBody("{nor this", status=502))

    with pytest.raises(EngineError) as first:
        complete(chat_api)
    with pytest.raises(EngineError) as second:
        complete(chat_api)

    assert first.value.kind == "malformed"
    assert second.value.kind == "server_error"


def test_non_json_content_type_is_malformed(chat_api):
    chat_api.script(RawBody("plain words", content_type="text/plain"))

    with pytest.raises(EngineError) as info:
        complete(chat_api)

    assert info.value.kind == "malformed"


def test_connection_refused_is_unavailable():
    with ChatAPIServer() as api:
        url = api.url
    # the port is closed now

    async def go():
        async with sdk.OpenAIEngine(model=MODEL, base_url=url) as engine:
            await engine.complete(CALL, timeout_s=5)

    with pytest.raises(EngineError) as info:
        asyncio.run(go())
    assert info.value.kind == "unavailable"


# -- the health call and replay ------------------------------------------------------------------


def test_list_models_is_the_cheap_call_and_its_errors_are_kinds(chat_api):
    chat_api.script_models(Status(401, "invalid_api_key", "bad key"))

    async def go():
        async with sdk.OpenAIEngine(model=MODEL, base_url=chat_api.url) as engine:
            with pytest.raises(EngineError) as info:
                await engine.list_models(timeout_s=5)
            return info.value, await engine.list_models(timeout_s=5)

    error, served = asyncio.run(go())
    assert error.kind == "refused" and "401" in error.message and "bad key" in error.message
    assert served == ["llama3.1:latest", "qwen2.5:14b"]
    assert chat_api.model_requests == 2 and chat_api.requests == []  # no completion asked


def test_an_openai_reply_replays_from_its_trace_record(chat_api):
    answer = {"assignments": {"d1": ["t2"]}}
    chat_api.script(ToolCall(answer))
    reply = complete(chat_api)
    record = {
        "agent": CALL.agent,
        "input_hash": CALL.input_hash,
        "raw_output": reply.raw,
        "error": None,
        "model": reply.model,
    }

    replayed = asyncio.run(ReplayEngine([record]).complete(CALL, timeout_s=1))

    assert replayed.tool_input == answer and replayed.model == MODEL
