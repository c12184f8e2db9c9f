"""The tools a model can call: schemas generated from their models, ``{ok, data | error}``
results, per-role access control, a call budget, a timeout per call, one trace row per
call under the agent run that asked (in a real SQLite trace store), and the rules engine
driving the same session offline. On a live run the tools plan the remainder on a copy and
leave the run exactly as it was."""

from __future__ import annotations

import asyncio
import math

import jsonschema
import pytest

from agents.engines import make_engine
from agents.engines.base import AgentCall, tool_schema
from agents.engines.tool_loop import call_with_tools
from agents.responder import RESPONDER_TOOL
from agents.responder.role import ResponderOutput
from agents.tools import ROLE_TOOLS, TOOLS, ToolContext, ToolSession, schemas, specs_for
from agents.words.posted import posted_state
from agents.words.state import from_executive
from executive.contracts import AgentRunRecord
from executive.traces import TraceReader, TraceWriter
from executive.traces.sinks import ListSink
from planner.scenario import load_scenario
from tests.conftest import SCENARIOS
from tests.flown import flown

READ = {"mission_overview", "drone_state", "distance", "plan_metrics"}
ACT = {"allocate", "solve", "validate", "optimise", "what_if"}


@pytest.fixture(scope="module")
def demo():
    return load_scenario(SCENARIOS / "demo.json")


@pytest.fixture
def context(demo) -> ToolContext:
    """The demo as posted with no plan: every drone parked at its start, full fuel."""
    return ToolContext.for_state(posted_state(demo, None, "run-tools"))


def _run(session: ToolSession, name: str, arguments) -> dict:
    return asyncio.run(session.run(name, arguments))


def _session(context: ToolContext, role: str = "allocator", **kw) -> ToolSession:
    return ToolSession(role, context, ListSink(), parent_run_id="agent-run-1", **kw)


# ----------------------------------------------------------------------------- registry


def test_every_tool_has_a_schema_generated_from_its_model_and_valid():
    assert set(TOOLS) == READ | ACT
    contracts = schemas()
    for name, tool in TOOLS.items():
        schema = contracts[name]["input_schema"]
        assert schema == tool_schema(tool.args)  # generated, never written by hand
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert contracts[name]["kind"] == ("read" if name in READ else "act")
        assert contracts[name]["roles"], f"{name} is open to no role"
    # an argument the schema accepts parses; one it refuses is refused by the model too
    validator = jsonschema.Draft202012Validator(contracts["what_if"]["input_schema"])
    assert validator.is_valid({"changes": [{"kind": "remove_sam", "sam": "SAM1"}]})
    assert not validator.is_valid({"changes": []})
    assert not validator.is_valid({"changes": [{"kind": "teleport"}]})


def test_roles_see_only_their_tools_and_the_responder_cannot_act():
    assert {s.name for s in specs_for("responder")} == READ
    assert ROLE_TOOLS["responder"].isdisjoint(ACT)
    assert {"allocate", "solve", "validate"} <= ROLE_TOOLS["allocator"]
    assert "what_if" in ROLE_TOOLS["critic"] and "solve" not in ROLE_TOOLS["critic"]
    assert specs_for("coordinator") == []  # asks no engine: no tools


# ----------------------------------------------------------------------------- read


def test_read_tools_answer_from_the_state(context):
    s = _session(context)
    overview = _run(s, "mission_overview", {})
    assert overview["ok"] is True
    data = overview["data"]
    assert data["drones"] == {"D1": "parked", "D2": "parked", "D3": "parked"}
    assert [m["id"] for m in data["known_sams"]] == [m.id for m in context.state.environment.sams]
    assert data["plan"] is None

    d1 = _run(s, "drone_state", {"drone": "D1"})["data"]
    config = context.state.scenario.drone_configs["1"]
    assert d1["fuel_left_km"] == config.fuel_budget and d1["status"] == "parked"
    assert _run(s, "drone_state", {"drone": "1"})["data"] == d1  # id or label

    far = _run(s, "distance", {"origin": "A1", "destination": "T1"})["data"]
    t1 = context.state.environment.target("T1")
    a1 = context.state.environment.airport("A1")
    assert far["straight_km"] == pytest.approx(math.hypot(t1.x - a1.x, t1.y - a1.y), abs=1e-3)
    assert far["path_km"] >= far["straight_km"] - 1e-6
    # a drone stands for its planning start: D1 starts at its start airport
    start = config.start
    assert _run(s, "distance", {"origin": "D1", "destination": "T1"})["data"]["origin"] == start


def test_read_tools_errors_are_results_not_exceptions(context):
    s = _session(context)
    assert _run(s, "drone_state", {"drone": "D9"}) == {
        "ok": False,
        "error": "unknown drone 'D9': the drones are D1, D2, D3",
    }
    assert (
        "inside a known SAM" in _run(s, "distance", {"origin": "A1", "destination": "T7"})["error"]
    )
    assert "unknown place" in _run(s, "distance", {"origin": "A1", "destination": "X9"})["error"]
    assert _run(s, "plan_metrics", {})["error"].startswith("no plan yet")
    bad = _run(s, "drone_state", {"drone": "D1", "fuel": 3})
    assert bad["ok"] is False and "fuel: Extra inputs are not permitted" in bad["error"]
    assert "not a JSON object" in _run(s, "drone_state", "D1")["error"]


# ----------------------------------------------------------------------------- act


def test_acting_tools_propose_on_a_copy_and_their_proposals_check_out(context):
    problem_before = context.problem.model_dump_json()
    state_before = context.state.model_dump_json()
    s = _session(context, max_calls=10)
    plan = _run(s, "solve", {})
    assert plan["ok"] is True and plan["data"]["proposal"] is True
    routes = plan["data"]["routes"]
    assert plan["data"]["total_points"] == sum(plan["data"]["points"].values()) > 0
    checked = _run(s, "validate", {"routes": routes})["data"]
    assert checked["valid"] is True and checked["violations"] == []
    assert checked["total_points"] == plan["data"]["total_points"]

    allocated = _run(s, "allocate", {"strategy": "greedy"})["data"]
    assigned = [t for ts in allocated["assignments"].values() for t in ts]
    assert len(assigned) == len(set(assigned)) and not {"T7", "T12"} & set(assigned)

    # more constraints: T1 forbidden to every drone that would fly it
    holder = next(d for d, r in routes.items() if "T1" in r)
    again = _run(s, "solve", {"constraints": {"forbidden": {holder: ["T1"]}}})["data"]
    assert "T1" not in again["routes"][holder]
    assert again["constraint_violations"] == []

    critic = _session(context, "critic")
    better = _run(critic, "optimise", {"routes": routes})["data"]
    assert better["valid"] is True and better["total_points"] >= plan["data"]["total_points"]
    # nothing read or planned changed the state or the problem the tools plan on
    assert context.problem.model_dump_json() == problem_before
    assert context.state.model_dump_json() == state_before


def test_validate_names_what_breaks_a_route(context):
    s = _session(context)
    start = context.state.scenario.drone_configs["1"].start
    # T7 lies inside a known SAM; a round trip through every target exceeds the fuel
    through_sam = _run(s, "validate", {"routes": {"D1": [start, "T7", start]}})
    assert "unknown places T7" in through_sam["error"]  # not a node the planner can fly to
    everything = [t.id for t in context.state.environment.targets if t.id not in ("T7", "T12")]
    long = _run(s, "validate", {"routes": {"D1": [start, *everything, start]}})["data"]
    assert long["valid"] is False
    assert any("[fuel]" in v for v in long["violations"])


# ----------------------------------------------------------------------------- contract


def test_access_control_refuses_with_an_error_result_and_traces_it(context):
    sink = ListSink()
    s = ToolSession("responder", context, sink, parent_run_id="responder-run")
    result = _run(s, "solve", {})
    assert result["ok"] is False
    assert result["error"].startswith("access denied: the responder may not call solve")
    assert _run(s, "commit_plan", {})["error"].startswith("unknown tool 'commit_plan'")
    rows = sink.of(AgentRunRecord)
    assert [r.agent for r in rows] == ["tool:solve", "tool:commit_plan"]
    assert all(r.parent_run_id == "responder-run" and not r.applied for r in rows)
    assert rows[0].error == result["error"]


def test_the_budget_stops_calls_and_counts_refused_ones(context):
    s = _session(context, role="responder", max_calls=2)
    assert _run(s, "what_if", {"changes": [{"kind": "remove_sam", "sam": "SAM1"}]})["ok"] is False
    assert _run(s, "mission_overview", {})["ok"] is True
    assert s.exhausted
    over = _run(s, "mission_overview", {})
    assert over == {
        "ok": False,
        "error": "budget spent: 2 tool calls per answer; give the final answer",
    }
    assert len(s.calls) == 3


def test_a_call_over_its_timeout_is_an_error_result(context):
    s = _session(context, timeout_s=1e-6)
    result = _run(s, "solve", {})
    assert result == {"ok": False, "error": "timeout: solve gave no answer within 1e-06 s"}


def test_every_call_is_a_row_of_the_agent_tree_in_the_trace_store(context, tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    writer = TraceWriter(url)
    writer.start()
    s = ToolSession("allocator", context, writer, parent_run_id="allocator-run")
    _run(s, "drone_state", {"drone": "D2"})
    _run(s, "what_if", {"changes": [{"kind": "remove_sam", "sam": "SAM1"}]})
    writer.close()
    reader = TraceReader(url)
    try:
        rows = reader.agent_runs("run-tools")
    finally:
        reader.close()
    assert [(r["agent"], r["parent_run_id"], r["applied"]) for r in rows] == [
        ("tool:drone_state", "allocator-run", True),
        ("tool:what_if", "allocator-run", False),
    ]
    assert rows[0]["validated_output"] == {
        "tool": "drone_state",
        "role": "allocator",
        "arguments": {"drone": "D2"},
        "ok": True,
    }
    assert '"fuel_left_km"' in rows[0]["raw_output"]
    assert rows[1]["error"].startswith("access denied")


# ----------------------------------------------------------------------------- rules engine


def test_the_rules_engine_runs_its_tool_plan_through_the_same_session(context):
    sink = ListSink()
    s = ToolSession("responder", context, sink, parent_run_id="responder-run", max_calls=2)
    rules = {"answer": "D1 has 200 km of fuel left.", "numbers": [], "ids": ["D1"]}
    call = AgentCall(
        agent="responder",
        system="system",
        prompt="How much fuel does D1 have?",
        tool=RESPONDER_TOOL,
        deterministic=rules,
        tool_plan=(
            ("drone_state", {"drone": "D1"}),
            ("solve", {}),  # not the responder's: refused, traced, counted
            ("mission_overview", {}),  # over the budget: never made
        ),
    )
    done = asyncio.run(call_with_tools(make_engine("rules"), call, s, ResponderOutput, 5.0))
    assert done.error is None
    assert done.output == ResponderOutput.model_validate(rules)
    assert [(c.tool, c.ok) for c in s.calls] == [("drone_state", True), ("solve", False)]
    assert s.calls[0].result["data"]["fuel_left_km"] == 200.0
    assert done.reply is not None and done.reply.meta == {"tool_calls": 2, "tool_errors": 1}
    assert [r.agent for r in sink.of(AgentRunRecord)] == ["tool:drone_state", "tool:solve"]


def test_an_engine_without_a_loop_answers_without_tools(context):
    s = _session(context)
    call = AgentCall(
        agent="responder",
        system="s",
        prompt="p",
        tool=RESPONDER_TOOL,
        deterministic={"answer": "x"},
    )
    replay = make_engine("replay", records=[])
    done = asyncio.run(call_with_tools(replay, call, s, ResponderOutput, 5.0))
    assert done.error is not None and done.error.startswith("not_recorded")
    assert s.calls == []


# ----------------------------------------------------------------------------- live


@pytest.fixture(scope="module")
def live():
    return flown("new_target.json", 3000, iterations=300)


def test_on_a_live_run_the_tools_plan_the_remainder_and_change_nothing(live):
    def fingerprint():
        return (
            live.plan_id,
            live.sim.tick,
            live.sim.world.state_hash(),
            live.constraints.model_dump(mode="json"),
            live.plan.model_dump_json(),
        )

    before = fingerprint()
    state = from_executive(live)
    context = ToolContext.for_state(state, world=live.sim.world, iterations=100)
    assert context.problem.environment.synthetic_starts  # cut at the drones' checkpoints
    s = ToolSession("critic", context, ListSink(), max_calls=10)
    metrics = _run(s, "plan_metrics", {})["data"]
    assert metrics["plan_id"] == live.plan_id
    assert metrics["points_collected"] == state.collected_points
    sam = state.environment.sams[0].id
    changed = _run(s, "what_if", {"changes": [{"kind": "remove_sam", "sam": sam}]})
    assert changed["ok"] is True, changed
    assert changed["data"]["proposal"] is True and changed["data"]["tick"] == state.tick
    allocator = ToolSession("allocator", context, ListSink())
    plan = _run(allocator, "solve", {})["data"]
    flying = [d for d in state.drones.values() if d.status == "flying"]
    assert flying, "the fixture should have drones in the air"
    for d in flying:
        assert plan["routes"][d.label][0] == f"{d.label}_START"
    assert fingerprint() == before  # nothing a tool did reached the run


def test_without_its_world_a_mission_under_way_is_read_but_not_planned(live):
    state = from_executive(live)
    context = ToolContext.for_state(state)  # no world: the remainder cannot be cut
    s = ToolSession("allocator", context, ListSink())
    refused = _run(s, "solve", {})
    assert refused["ok"] is False and refused["error"].startswith("the mission is under way")
    flying = next(d for d in state.drones.values() if d.status == "flying")
    # a drone in the air is measured from where it is now
    here = _run(s, "distance", {"origin": flying.label, "destination": "A1"})["data"]
    assert here["origin"] == f"{flying.label}_START"
    airport = state.environment.airport("A1")
    assert here["straight_km"] == pytest.approx(
        math.hypot(flying.x - airport.x, flying.y - airport.y), abs=1e-3
    )


def test_a_what_ifs_ids_are_read_as_the_mission_spells_them(context):
    """Any case the model writes, the id the mission has; none made up (an upper-cased
    "Bridge" would have been an unknown target)."""
    sam = context.state.environment.sams[0].id
    assert context.known_id("target", "t1") == "T1"
    assert context.known_id("sam", sam.lower()) == sam
    assert context.known_id("target", "T99") == "T99"  # unknown: the what-if names it
    s = _session(context, "critic")
    lower = _run(s, "what_if", {"changes": [{"kind": "remove_sam", "sam": sam.lower()}]})
    assert lower["ok"] is True, lower
    unknown = _run(s, "what_if", {"changes": [{"kind": "remove_sam", "sam": "nosuch"}]})
    assert unknown["ok"] is False and "nosuch" in unknown["error"]
