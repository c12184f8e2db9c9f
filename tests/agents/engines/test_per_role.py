"""An engine per agent role: ``ROLE=ENGINE[:MODEL][@URL]``, routing each agent's call to
its own engine (the run configuration's table: ``tests/mission/test_config.py``), the engines' health, and a whole mission with the critic
on the openai engine (a local chat-completions server) whose trace says so."""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import SecretStr

from agents import engines as sdk  # SDK engines load on first use (tests/conftest.py)
from agents.engines import AgentCall, ToolSpec
from agents.engines.health import EngineMonitor, check_engines
from agents.engines.per_role import (
    RoleEngines,
    engine_for,
    planner_engine,
    responder_engine,
    role_engines,
)
from agents.engines.rules import RulesEngine
from agents.engines.spec import EngineSpec, parse_agent_engine
from executive.loop import Policy
from executive.traces import TraceReader
from mission.config import RunConfig
from mission.session import run_mission
from planner.scenario import load_scenario
from tests.conftest import SCENARIOS
from tests.openai_api import ChatAPIServer, Status, ToolCall

# the SDKs are imported by one worker only, the one running these (tests/conftest.py)
pytestmark = pytest.mark.xdist_group("sdk")

TOOL = ToolSpec(name="answer", description="answer", input_schema={"type": "object"})


def _call(agent: str) -> AgentCall:
    return AgentCall(
        agent=agent, system="s", prompt="p", tool=TOOL, deterministic={"from": "rules"}
    )


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    for name in ("ISR_OPENAI_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)


# -- ROLE=ENGINE[:MODEL][@URL] -----------------------------------------------------------------


def test_agent_engine_text_names_the_role_engine_model_and_server():
    role, spec = parse_agent_engine("responder=openai:llama3.1:8b@http://gpu-box:11434/v1")
    assert role == "responder"
    assert (spec.engine, spec.model, spec.base_url) == (
        "openai",
        "llama3.1:8b",  # Ollama's tag stays part of the model
        "http://gpu-box:11434/v1",
    )
    assert parse_agent_engine("critic=anthropic")[1] == EngineSpec(engine="anthropic")
    assert parse_agent_engine(" critic = rules")[1] == EngineSpec()
    assert spec.label == "openai:llama3.1:8b@http://gpu-box:11434/v1"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("critic", "expected ROLE=ENGINE"),
        ("pilot=rules", "unknown role 'pilot'"),
        ("coordinator=openai:x", "coordinator is deterministic"),
        ("critic=gpt", "unknown engine 'gpt' for critic"),
        ("critic=replay", "unknown engine 'replay'"),
        ("critic=openai:", "model after openai: is empty"),
        ("critic=openai:m@", "server URL after @ is empty"),
        ("critic=openai:m@ftp://host", "expected http(s)://HOST"),
        ("critic=openai:m@http://u:pw@host/v1", "holds a password"),
        ("critic=rules:big", "rules engine takes no model"),
    ],
)
def test_a_bad_agent_engine_says_what_is_wrong(text, says):
    with pytest.raises(ValueError) as info:
        parse_agent_engine(text)
    assert says in str(info.value)


# -- routing ---------------------------------------------------------------------------------


def test_one_engine_for_all_roles_is_that_engine():
    engine = planner_engine(RunConfig().engine_table())
    assert isinstance(engine, RulesEngine)
    assert engine_for(engine, "critic") is engine


def test_the_agents_off_the_planning_round_gets_the_rules_whatever_the_responder_runs_on():
    spec = EngineSpec(engine="openai", model="m", base_url="http://127.0.0.1:9")
    table = RunConfig(agents=False, agent_engines={"responder": spec}).engine_table()
    assert isinstance(planner_engine(table), RulesEngine)
    asker = responder_engine(table)
    assert isinstance(asker, sdk.OpenAIEngine)
    asyncio.run(asker.aclose())


def test_mixed_roles_route_each_call_to_its_own_engine(chat_api):
    config = RunConfig(
        agent_engines={
            "critic": EngineSpec(engine="openai", model="llama3.1", base_url=chat_api.url),
            "responder": EngineSpec(engine="openai", model="llama3.1", base_url=chat_api.url),
        }
    )
    chat_api.responder = lambda request: ToolCall({"from": "model"})
    engine = planner_engine(config.engine_table())
    assert isinstance(engine, RoleEngines) and engine.name == "per_role"
    assert isinstance(engine_for(engine, "critic"), sdk.OpenAIEngine)
    assert isinstance(engine_for(engine, "allocator"), RulesEngine)
    assert engine_for(engine, "allocator") is engine_for(engine, "strategist")  # one per spec

    async def go():
        try:
            critic = await engine.complete(_call("critic"), timeout_s=5)
            allocator = await engine.complete(_call("allocator"), timeout_s=5)
        finally:
            await engine.aclose()
        asker = responder_engine(config.engine_table())
        try:
            return critic, allocator, await asker.complete(_call("responder"), timeout_s=5)
        finally:
            await asker.aclose()  # type: ignore[attr-defined]

    critic, allocator, responder = asyncio.run(go())
    assert critic.tool_input == {"from": "model"} and critic.model == "llama3.1"
    assert allocator.tool_input == {"from": "rules"} and allocator.model is None
    assert responder.tool_input == {"from": "model"}
    assert len(chat_api.requests) == 2  # the critic's and the responder's, not the allocator's


def test_roles_with_equal_specs_share_one_client(chat_api):
    spec = EngineSpec(engine="openai", model="m", base_url=chat_api.url)
    engine = role_engines({"critic": spec, "responder": spec, "allocator": EngineSpec()})
    assert isinstance(engine, RoleEngines)
    assert engine_for(engine, "critic") is engine_for(engine, "responder")


# -- health ----------------------------------------------------------------------------------


def test_health_reports_each_engine_once_with_its_latency_or_why_not(chat_api):
    with ChatAPIServer() as gone:
        dead = gone.url
    specs = {
        "strategist": EngineSpec(),
        "allocator": EngineSpec(engine="openai", model="llama3.1", base_url=chat_api.url),
        "critic": EngineSpec(engine="openai", model="llama3.1", base_url=chat_api.url),
        "responder": EngineSpec(engine="openai", model="mistral", base_url=dead),
    }

    rules, local, down = asyncio.run(check_engines(specs, timeout_s=3))

    assert (rules.engine, rules.roles, rules.ok, rules.latency_ms) == (
        "rules",
        ["strategist"],
        True,
        None,
    )
    assert local.roles == ["allocator", "critic"] and local.ok and local.error is None
    assert local.latency_ms is not None and 0 < local.latency_ms < 3000
    assert (local.models_listed, local.model_listed) == (2, True)  # llama3.1:latest is listed
    assert down.roles == ["responder"] and not down.ok
    assert down.error is not None and down.error.startswith("unavailable: ")
    assert chat_api.model_requests == 1  # two roles, one engine, one call


def test_health_of_a_refusing_server_an_unlisted_model_and_a_missing_key(chat_api):
    chat_api.script_models(Status(401, "invalid_api_key", "bad key"))
    refused = asyncio.run(
        check_engines({"critic": EngineSpec(engine="openai", model="m", base_url=chat_api.url)})
    )[0]
    unlisted = asyncio.run(
        check_engines({"critic": EngineSpec(engine="openai", model="m", base_url=chat_api.url)})
    )[0]
    no_key = asyncio.run(check_engines({"critic": EngineSpec(engine="anthropic")}))[0]

    assert not refused.ok and refused.error is not None and "HTTP 401" in refused.error
    assert unlisted.ok and unlisted.model_listed is False  # reachable; the model is not served
    assert not no_key.ok and no_key.latency_ms is None
    assert no_key.error is not None and "ANTHROPIC_API_KEY" in no_key.error


def test_the_monitor_checks_at_most_once_per_ttl_even_when_asked_at_once(chat_api):
    spec = EngineSpec(engine="openai", model="llama3.1", base_url=chat_api.url)
    monitor = EngineMonitor({"critic": spec}, ttl_s=60)

    async def go():
        first = await asyncio.gather(*(monitor.check() for _ in range(5)))
        return first, await monitor.check()

    first, again = asyncio.run(go())
    assert all(result == first[0] for result in first) and again == first[0]
    assert chat_api.model_requests == 1


# -- a whole mission with the critic on the openai engine ---------------------------------------------


def test_a_mission_runs_with_the_critic_on_a_local_model_and_the_trace_says_so(tmp_path, chat_api):
    answer = {"review": "Plan holds.", "issues": [], "suggestions": [], "final_verdict": "APPROVED"}
    chat_api.responder = lambda request: ToolCall(answer, usage=(200, 20))
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    config = RunConfig(
        trace_url=url,
        agent_timeout_s=10,
        policy=Policy(batch_iterations=300),
        agent_engines={
            "critic": EngineSpec(
                engine="openai",
                model="llama3.1",
                base_url=chat_api.url,
                api_key=SecretStr("sk-local-secret"),
            )
        },
    )

    report = asyncio.run(run_mission(load_scenario(SCENARIOS / "popup_sam.json"), config))

    assert report is not None
    reader = TraceReader(url)
    try:
        run = reader.run(report.run_id)
        rows = reader.agent_runs(run["run_id"])
    finally:
        reader.close()
    critics = [r for r in rows if r["agent"] == "critic"]
    others = [r for r in rows if r["agent"] in ("strategist", "allocator")]
    assert critics and others
    assert {(r["engine"], r["model"]) for r in critics} == {("openai", "llama3.1")}
    assert all(r["error"] is None and r["tokens_in"] == 200 for r in critics)
    assert {r["engine"] for r in others} == {"rules"}
    assert len(chat_api.requests) == len(critics)  # every critic call reached the server
    recorded = run["config"]["agent_engines"]["critic"]
    assert (recorded["engine"], recorded["base_url"]) == ("openai", chat_api.url)
    assert recorded["api_key"] == "**********"
    assert "sk-local-secret" not in json.dumps(run["config"])
