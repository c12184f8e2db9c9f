"""``POST /api/agent_solve`` on a dashboard serving a run whose critic and responder run on a
local model (the real openai SDK against a local chat-completions server): those agents are
asked there and the trace names the engine and model that answered; the roles the run
leaves on the rules stay there; a dashboard with no run answers with the rules."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from pydantic import SecretStr

from agents.engines.spec import EngineSpec
from dashboard.server import start_dashboard
from executive.bus import InProcessBus
from tests.dashboard.harness import SCENARIOS, TIMEOUT, TOKEN, CliProcess
from tests.openai_api import ChatAPIServer, ToolCall

# the SDKs are imported by one worker only, the one running these (tests/conftest.py)
pytestmark = pytest.mark.xdist_group("sdk")

DEMO = json.loads((SCENARIOS / "demo.json").read_text())


def _model(request: dict):
    """A local model: an approving critic and a responder answer the state supports."""
    name = request["tool_choice"]["function"]["name"]
    if name == "critique":
        return ToolCall({"review": "fine", "issues": [], "final_verdict": "APPROVED"})
    return ToolCall(
        {
            "answer": "D1 has the most fuel margin: 200.0 km.",
            "numbers": [{"label": "D1 fuel margin", "value": 200.0, "unit": "km"}],
            "ids": ["D1"],
        }
    )


def _solve(engines, *messages: str) -> list[dict]:
    async def go():
        server = await start_dashboard(InProcessBus(), port=0, token=TOKEN, engines=engines)
        try:
            async with httpx.AsyncClient(base_url=server.url, timeout=4 * TIMEOUT) as http:
                out = []
                for message in messages:
                    body = {
                        "user_message": message,
                        "environment": DEMO["environment"],
                        "drone_configs": DEMO["drone_configs"],
                        "preferences": {"iterations": 300},
                    }
                    r = await http.post("/api/agent_solve", json=body)
                    assert r.status_code == 200, r.text
                    out.append(r.json())
                return out
        finally:
            await server.stop()

    return asyncio.run(asyncio.wait_for(go(), 8 * TIMEOUT))


def _runs(body: dict) -> dict[str, dict]:
    return {r["agent"]: r for r in body["trace"]["agent_runs"]}


def test_agent_solve_asks_the_engines_of_the_dashboards_run():
    with ChatAPIServer(_model, models=["llama3.1:latest"]) as api:
        local = EngineSpec(
            engine="openai", model="llama3.1", base_url=api.url, api_key=SecretStr("sk-local")
        )
        engines = {
            "strategist": EngineSpec(),
            "allocator": EngineSpec(),
            "critic": local,
            "responder": local,
        }
        planned, margin = _solve(
            engines, "Generate optimal routes", "Which drone has the most fuel margin?"
        )
        asked = [r["tool_choice"]["function"]["name"] for r in api.requests]

    runs = _runs(planned)
    assert (runs["critic"]["engine"], runs["critic"]["model"]) == ("openai", "llama3.1")
    assert runs["critic"]["validated_output"]["final_verdict"] == "APPROVED"
    assert (runs["strategist"]["engine"], runs["allocator"]["engine"]) == ("rules", "rules")
    answered = _runs(margin)["responder"]
    assert (answered["engine"], answered["model"]) == ("openai", "llama3.1")
    assert answered["applied"] is True
    assert margin["response"].endswith("D1 has the most fuel margin: 200.0 km.")
    # the model was asked for the critique and the answers, never for the rules' roles
    assert "critique" in asked and "answer" in asked
    assert not {"strategist_decision", "allocation"} & set(asked)


def test_a_replayed_runs_roles_and_a_dashboard_with_no_run_answer_with_the_rules():
    replayed = {role: EngineSpec(engine="replay") for role in ("strategist", "critic")}
    for engines in (None, replayed):
        [body] = _solve(engines, "Generate optimal routes")
        assert body["success"]
        engines_used = {r["engine"] for r in body["trace"]["agent_runs"]}
        assert engines_used <= {"rules", "algorithmic"}, engines_used


def test_a_debug_request_is_answered_from_its_agent_runs():
    [body] = _solve(None, "Why is the solver crashing?")
    assert body["intent"] == "debug" and body["success"]
    planning = [
        r for r in body["trace"]["agent_runs"] if r["agent"] not in ("coordinator", "responder")
    ]
    assert planning and all(r["error"] is None for r in planning)
    assert body["response"].startswith("DIAGNOSIS: the plan passes the validator")
    assert (
        "No planner errors in this run: 0 planning rounds after the first plan, none failed or"
        f" rejected by the validator; {len(planning)} planning agent runs, none failed;"
    ) in body["response"]


def test_a_live_isr_run_serves_agent_solve_on_its_own_engines():
    """The real ``isr run`` with its dashboard: agent_solve's critic and responder are the
    run's (``--agent-engine``), asked on the local server."""
    with (
        ChatAPIServer(_model, models=["llama3.1:latest"]) as api,
        CliProcess(
            "run", "scenarios/demo.json", "--port", "0", "--token", TOKEN, "--db", "none",
            "--speed", "1", "--agent-engine", f"critic=openai:llama3.1@{api.url}",
            "--agent-engine", f"responder=openai:llama3.1@{api.url}",
        ) as cli,
    ):  # fmt: skip
        url = cli.wait_for(r"dashboard: (http://\S+)").split("/?")[0]
        body = {
            "user_message": "Which drone has the most fuel margin?",
            "environment": DEMO["environment"],
            "drone_configs": DEMO["drone_configs"],
            "preferences": {"iterations": 300},
        }
        r = httpx.post(f"{url}/api/agent_solve", json=body, timeout=4 * TIMEOUT)
    assert r.status_code == 200, r.text
    answered = _runs(r.json())["responder"]
    assert (answered["engine"], answered["model"], answered["applied"]) == (
        "openai",
        "llama3.1",
        True,
    )
