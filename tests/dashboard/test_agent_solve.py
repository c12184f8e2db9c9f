"""``POST /api/agent_solve`` through the real app (uvicorn on 127.0.0.1): the user's words go
through the coordinator and the agent chain. Four different messages give four different,
right answers; a reallocation is honoured or refused with the reason; a question and a
what-if leave the plan as it was; with a scripted model (the real anthropic SDK against the
local Messages API server) the agent runs say which engine answered."""

from __future__ import annotations

import asyncio
import functools
import json
from contextlib import asynccontextmanager

import httpx
import pytest

from agents import engines as sdk  # SDK engines load on first use (tests/conftest.py)
from dashboard.server import start_dashboard
from executive.bus import InProcessBus
from planner.mission import compile_mission
from planner.model import Solution
from planner.scenario import parse_scenario
from planner.validation import validate_solution
from tests.dashboard.harness import SCENARIOS, TIMEOUT, TOKEN
from tests.messages_api import MessagesAPIServer, Status, ToolUse

# the SDKs are imported by one worker only, the one running these (tests/conftest.py)
pytestmark = pytest.mark.xdist_group("sdk")

DEMO = json.loads((SCENARIOS / "demo.json").read_text())  # D1 senses A, B; D2 B, C; D3 all
SOLUTION_KEYS = (
    "routes",
    "allocation",
    "sequences",
    "unassigned_targets",
    "excluded_targets",
    "total_points",
    "total_fuel",
)


def run_async(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return asyncio.run(asyncio.wait_for(fn(*args, **kwargs), 4 * TIMEOUT))

    return wrapper


@asynccontextmanager
async def dashboard():
    """The real app, served, with no live mission (the planning endpoints need none)."""
    server = await start_dashboard(InProcessBus(), host="127.0.0.1", port=0, token=TOKEN)
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=4 * TIMEOUT) as http:
            yield server, http
    finally:
        await server.stop()


def _body(message: str, existing: dict | None = None) -> dict:
    body = {
        "user_message": message,
        "environment": DEMO["environment"],
        "drone_configs": DEMO["drone_configs"],
        "preferences": {"iterations": 500},
    }
    if existing is not None:
        body["existing_solution"] = {
            "routes": {d: {"route": r["route"]} for d, r in existing["routes"].items()}
        }
    return body


async def _solve(http, message: str, existing: dict | None = None) -> dict:
    r = await http.post("/api/agent_solve", json=_body(message, existing))
    assert r.status_code == 200, r.text
    return r.json()


def _solution(body: dict) -> Solution:
    return Solution.model_validate({k: body[k] for k in SOLUTION_KEYS})


def _routes(body: dict) -> dict[str, list[str]]:
    return {d: r["route"] for d, r in body["routes"].items()}


MISSION = compile_mission(parse_scenario(DEMO))


@run_async
async def test_four_messages_give_four_different_right_answers():
    async with dashboard() as (_, http):
        planned = await _solve(http, "Generate optimal routes")
        move = await _solve(http, "move T5 to D1", planned)
        what_if = await _solve(http, "What if we increase D1's fuel budget to 300?", planned)
        margin = await _solve(http, "Which drone has the most fuel margin?", planned)

    # plan: the agent chain planned a valid mission, and says so
    assert planned["success"] and planned["intent"] == "plan" and planned["plan_changed"]
    plan = _solution(planned)
    assert validate_solution(MISSION, plan) == [] and plan.total_points > 0
    assert planned["response"].startswith("MISSION PLAN COMPUTED")
    assert f"Total points: {plan.total_points:g}" in planned["response"]
    decision = planned["coordinator_decision"]
    assert decision["intent"] == "plan" and decision["rules_hit"][0] == "plan_token"
    assert decision["policy"]["allow_solver"] and decision["policy"]["drone_contracts"]
    agents = planned["trace"]["agents"]
    assert agents[0] == "coordinator"
    assert {"planning_round", "route_optimizer", "strategist", "allocator", "critic"} <= set(agents)
    assert "responder" in agents
    root = planned["trace"]["agent_runs"][0]["run_id"]
    [round_row] = [r for r in planned["trace"]["agent_runs"] if r["agent"] == "planning_round"]
    assert round_row["parent_run_id"] == root

    # move T5 to D1: refused at once with the reason; nothing planned, the plan as it was
    assert move["success"] is False and move["intent"] == "reallocate"
    assert move["response"] == (
        "Not applied: cannot move T5 to D1: D1's sensors (A, B) cannot see T5 (type C);"
        " it can be sensed by D2, D3."
    )
    assert _routes(move) == _routes(planned) and move["plan_changed"] is False
    assert move["coordinator_decision"]["refused"][0]["reason"] == "sensor"
    assert move["trace"]["agents"] == ["coordinator"]

    # what-if: planned on a copy, compared with the posted plan, the plan itself unchanged
    assert what_if["success"] and what_if["intent"] == "what_if"
    assert _routes(what_if) == _routes(planned) and what_if["plan_changed"] is False
    result = what_if["what_if"]
    # the one pipeline spells a budget change as the live ask does
    assert result["changes"] == [{"kind": "set_budget", "drone": "1", "budget": 300.0}]
    assert result["current"]["points"] == plan.total_points
    assert result["diff"]["points"] == result["changed"]["points"] - result["current"]["points"]
    assert "D1" in what_if["response"]

    # question: answered from the posted plan, with the margin computed here independently
    assert margin["success"] and margin["intent"] == "question"
    assert _routes(margin) == _routes(planned) and margin["plan_changed"] is False
    margins = {d: r.fuel_budget - r.fuel_used for d, r in plan.routes.items()}
    best = max(margins, key=lambda d: margins[d])
    assert margin["response"].startswith(f"D{best} has the most fuel margin")
    assert f"{margins[best]:.1f}" in margin["response"]
    assert "planning_round" not in margin["trace"]["agents"]  # a question does not replan

    responses = [b["response"] for b in (planned, move, what_if, margin)]
    assert len(set(responses)) == 4
    intents = [b["coordinator_decision"]["intent"] for b in (planned, move, what_if, margin)]
    assert intents == ["plan", "reallocate", "what_if", "question"]


@run_async
async def test_a_possible_move_is_honoured_and_compared_with_the_existing_plan():
    async with dashboard() as (_, http):
        planned = await _solve(http, "Generate optimal routes")
        holder = next(d for d, ts in planned["allocation"].items() if "T5" in ts)
        other = "3" if holder != "3" else "2"
        wrong = next(d for d in ("1", "2", "3") if d not in (holder, other))
        moved = await _solve(http, f"move T5 from D{wrong} to D{other}", planned)
        debug = await _solve(http, "Why is the solver crashing?", planned)
        explain = await _solve(http, "compare D1 and D2 instead", planned)
    assert moved["success"] and moved["intent"] == "reallocate"
    assert "T5" in moved["allocation"][other] and moved["plan_changed"]
    assert validate_solution(MISSION, _solution(moved)) == []
    assert f"Honoured: T5 -> D{other}" in moved["response"]
    # the words' premise is checked against the posted plan, and the answer says so
    note = f"T5 is not on D{wrong}: the plan has it on D{holder}"
    assert note in moved["warnings"] and f"Note: {note}" in moved["response"]
    delta = moved["trace"]["against_existing"]["points_delta"]
    assert delta == moved["total_points"] - planned["total_points"]
    assert debug["intent"] == "debug" and debug["response"].startswith("DIAGNOSIS: the plan passes")
    assert _routes(debug) == _routes(planned)
    assert explain["intent"] == "question" and _routes(explain) == _routes(planned)


@run_async
async def test_no_user_message_plans_and_says_so():
    async with dashboard() as (_, http):
        r = await http.post(
            "/api/agent_solve",
            json={"environment": DEMO["environment"], "drone_configs": DEMO["drone_configs"]},
        )
    body = r.json()
    assert r.status_code == 200 and body["intent"] == "plan" and body["success"]
    assert "no user_message: the mission is planned from scratch" in body["warnings"]


def _model(request: dict):
    """A scripted model: a strategist, an allocator that fails (500), an approving critic,
    and a responder answer that matches the state."""
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
    if tool == "critique":
        return ToolUse({"review": "fine", "final_verdict": "APPROVED"})
    return ToolUse(
        {
            "answer": "D1 has the most fuel margin: 200.0 km.",
            "numbers": [{"label": "D1 fuel margin", "value": 200.0, "unit": "km"}],
            "ids": ["D1"],
        }
    )


@run_async
async def test_the_agent_runs_name_the_model_that_answered():
    with MessagesAPIServer(_model) as api:
        async with (
            dashboard() as (server, http),
            sdk.AnthropicEngine(model="claude-test", api_key="sk-test", base_url=api.url) as engine,
        ):
            server.app.state.context.planning.engine = engine
            body = await _solve(http, "Generate optimal routes")
    runs = {r["agent"]: r for r in body["trace"]["agent_runs"]}
    assert runs["strategist"]["engine"] == "anthropic" and runs["strategist"]["error"] is None
    assert runs["allocator"]["error"].startswith("server_error")
    assert runs["critic"]["validated_output"]["final_verdict"] == "APPROVED"
    assert runs["responder"]["applied"] is True
    assert body["success"] and body["response"].endswith("D1 has the most fuel margin: 200.0 km.")
    assert validate_solution(MISSION, _solution(body)) == []


@run_async
async def test_words_that_cannot_be_served_say_why_and_plan_nothing():
    async with dashboard() as (_, http):
        unknown = await _solve(http, "where is T42?")
        what_if = await _solve(http, "what if D9 had 300 fuel?")
        memory = await _solve(http, "remember that D2's camera is weak")
    assert unknown["success"] is False and unknown["response"].startswith(
        "Cannot answer: unknown target T42 (known: T1, T2"
    )
    assert what_if["success"] is False and what_if["response"].startswith(
        "Cannot plan this what-if: unknown drone D9 (known: D1, D2, D3)"
    )
    assert memory["success"] is False and memory["response"].startswith("Not stored:")
    for body in (unknown, what_if, memory):
        assert body["routes"] == {} and body["trace"]["agents"] == ["coordinator"]


@run_async
async def test_with_responder_tools_a_model_calls_them_and_the_trace_shows_each_call():
    """``preferences.responder_tools``: the responder is offered its read-only tools; the
    scripted model reads D1's state with one, then answers; the call is an agent run under
    the responder, and a tool it may not call is refused with an error result."""

    def model(request: dict):
        if request["tool_choice"].get("name"):  # a forced call: not the responder's loop
            return _model(request)
        answered = sum(m["role"] == "user" for m in request["messages"]) - 1
        if answered == 0:
            return ToolUse({"drone": "D1"}, name="drone_state")
        if answered == 1:
            return ToolUse({}, name="solve")
        return ToolUse(
            {
                "answer": "D1 has 200.0 km of fuel left.",
                "numbers": [{"label": "D1 fuel left", "value": 200.0, "unit": "km"}],
                "ids": ["D1"],
            },
            name="answer",
        )

    body = _body("How much fuel does D1 have left?")
    body["preferences"]["responder_tools"] = True
    with MessagesAPIServer(model) as api:
        async with (
            dashboard() as (server, http),
            sdk.AnthropicEngine(model="claude-test", api_key="sk-test", base_url=api.url) as engine,
        ):
            server.app.state.context.planning.engine = engine
            r = await http.post("/api/agent_solve", json=body)
    assert r.status_code == 200, r.text
    out = r.json()
    runs = out["trace"]["agent_runs"]
    [responder] = [x for x in runs if x["agent"] == "responder"]
    tools = [x for x in runs if x["agent"].startswith("tool:")]
    assert [(x["agent"], x["applied"]) for x in tools] == [
        ("tool:drone_state", True),
        ("tool:solve", False),
    ]
    assert all(x["parent_run_id"] == responder["run_id"] for x in tools)
    assert tools[1]["error"].startswith("access denied: the responder may not call solve")
    assert responder["applied"] is True
    assert out["response"].endswith("D1 has 200.0 km of fuel left.")  # after "No plan yet"
