"""The planning round with fake engines, in two tiers: the baseline comes back within the
deadline whatever the agents do; the agents' proposal comes later (``followup``), clamped,
checked, offered or refused; engine failures never break a round; every call is traced."""

from __future__ import annotations

import asyncio
import json
import time

import numpy as np
import pytest
from pydantic import ValidationError

from agents.engines.base import EngineError, EngineReply
from agents.planning.round import AgentPlanner, PlanningFailed
from executive.contracts import AgentRunRecord, PlanRequest
from planner.constraints import constraint_violations, parse_constraints
from planner.errors import PlannerError
from planner.mission import compile_mission
from planner.model import Scenario
from planner.planning import plan_mission
from planner.scenario import parse_scenario
from planner.team_search import warmup
from planner.validation import validate_solution
from tests.conftest import SCENARIOS
from tests.factory import random_scenario

DEMO = SCENARIOS / "demo.json"
RULES = object()  # answer with the call's deterministic (rules) answer
SLOW = object()  # sleep far past any deadline


class FakeEngine:
    """Answers per agent: RULES, SLOW, a tool input dict, or an exception to raise."""

    name = "fake"
    model = "fake-1"

    def __init__(self, answers: dict | None = None, default=RULES) -> None:
        self.answers = answers or {}
        self.default = default
        self.calls = []

    async def complete(self, call, *, timeout_s: float) -> EngineReply:
        self.calls.append((call, timeout_s))
        answer = self.answers.get(call.agent, self.default)
        if isinstance(answer, BaseException):
            raise answer
        if answer is SLOW:
            await asyncio.sleep(60)
        tool_input = json.loads(json.dumps(call.deterministic if answer is RULES else answer))
        return EngineReply(
            tool_input=tool_input,
            raw=json.dumps(tool_input),
            model=self.model,
            tokens_in=100,
            tokens_out=20,
        )


class ListSink:
    def __init__(self) -> None:
        self.records: list[AgentRunRecord] = []

    def emit(self, record) -> None:
        self.records.append(record)

    def by_agent(self, agent: str) -> list[AgentRunRecord]:
        return [r for r in self.records if r.agent == agent]


@pytest.fixture(scope="module", autouse=True)
def _compiled_kernels():
    warmup()  # numba kernels loaded before any deadline counts


@pytest.fixture(scope="module")
def demo():
    return parse_scenario(json.loads(DEMO.read_text()))


def _request(scenario, deadline_s=5.0, **kw) -> PlanRequest:
    return PlanRequest(
        run_id="run-1",
        round_id=kw.pop("round_id", "round-1"),
        tick=42,
        trigger=kw.pop("trigger", "sam_detected:SAM3"),
        scenario=scenario,
        deadline_s=deadline_s,
        parent_run_id="run-1",
        **kw,
    )


def _plan(planner: AgentPlanner, request: PlanRequest):
    """The fast tier alone (the slow tier is cancelled when the loop closes)."""
    return _plan_both(planner, request)[0]


def _plan_both(planner: AgentPlanner, request: PlanRequest, *, settle: bool = True):
    """The round's outcome and, with agents, the slow tier's proposal. An offered proposal
    is settled as not applied (the executive's job), so its record is written."""

    async def go():
        outcome = await planner.plan(request)
        proposal = await outcome.followup if outcome.followup is not None else None
        await planner.settled()  # the critic reviews on its own time
        if settle and proposal is not None and proposal.solution is not None:
            proposal.settle(False, "test: not applied")
        return outcome, proposal

    return asyncio.run(go())


def _valid(scenario, solution) -> bool:
    return validate_solution(compile_mission(scenario), solution) == []


def _allocation(assignments: dict) -> dict:
    return {
        "strategy_used": "efficient",
        "assignments": assignments,
        "excluded": [],
        "rationale": {},
        "tradeoffs": "test",
    }


def test_rules_engine_gives_a_valid_plan_and_a_traced_tree(demo):
    sink = ListSink()
    outcome, proposal = _plan_both(AgentPlanner(FakeEngine(), sink, iterations=200), _request(demo))
    assert outcome.round_id == "round-1" and outcome.tick == 42
    assert _valid(demo, outcome.solution)
    assert outcome.solution == outcome.baseline and not outcome.agent_applied  # fast tier
    assert proposal is not None and proposal.round_id == "round-1"
    agents = [r.agent for r in sink.records]
    assert sorted(agents) == [
        "allocator",
        "critic",
        "planning_round",
        "route_optimizer",
        "strategist",
    ]
    root = sink.by_agent("planning_round")[0]
    assert root.run_id == "round-1" and root.parent_run_id == "run-1"
    assert root.mission_run_id == "run-1" and root.tick == 42 and root.error is None
    children = [r for r in sink.records if r is not root]
    assert all(r.parent_run_id == "round-1" and r.mission_run_id == "run-1" for r in children)
    assert len({r.run_id for r in children}) == len(children)
    alloc = sink.by_agent("allocator")[0]
    assert alloc.engine == "fake" and alloc.model == "fake-1" and alloc.error is None
    assert alloc.validated_output["assignments"] and alloc.raw_output
    assert alloc.tokens_in == 100 and alloc.input_size > 0 and len(alloc.input_hash) == 24
    optimizer = sink.by_agent("route_optimizer")[0]
    assert optimizer.engine == "algorithmic"
    assert not alloc.applied  # the executive decides, after a rebase; here nobody did
    assert optimizer.applied  # the baseline is the round's plan
    critic = sink.by_agent("critic")[0]
    assert critic.validated_output["final_verdict"] in ("APPROVED", "NEEDS_REVISION")
    # every prompt carries the hard constraints and the mission context
    engine_calls = FakeEngine()
    _plan_both(
        AgentPlanner(
            engine_calls,
            ListSink(),
            iterations=50,
            memories=lambda: [type("M", (), {"category": "warning", "text": "avoid the north"})()],
        ),
        _request(demo),
    )
    for call, _timeout in engine_calls.calls:
        assert "HARD CONSTRAINTS" in call.system and "[WARNING] avoid the north" in call.system
        assert "ELIGIBLE TARGETS" in call.prompt and "sam_detected:SAM3" in call.prompt


def test_bad_entries_are_clamped_and_traced(demo):
    sink = ListSink()
    engine = FakeEngine(
        {
            "allocator": _allocation(
                {
                    "D1": ["T99", "T3", "T7", "T1", "T8"],
                    "D2": ["T2", "T3"],
                    "D3": ["T2", "T4"],
                    "D9": ["T5"],
                }
            )
        }
    )
    outcome, proposal = _plan_both(AgentPlanner(engine, sink, iterations=200), _request(demo))
    assert _valid(demo, outcome.solution)
    alloc = sink.by_agent("allocator")[0]
    assert alloc.clamp_actions == (
        "dropped T99 from D1: unknown target",
        "dropped T3 from D1: ineligible target (type C not sensed)",
        "dropped T7 from D1: excluded target (inside a SAM zone)",
        "dropped T2 from D3: also assigned to D2",
        "dropped T5 from D9: unknown drone",
    )
    assert "clamped: dropped T99 from D1: unknown target" in proposal.reasons
    assert alloc.validated_output["clamped_allocation"]["1"] == ["T1", "T8"]


def test_over_budget_proposal_is_rejected_and_the_baseline_stands(demo):
    sink = ListSink()
    everything = ["T1", "T2", "T3", "T4", "T5", "T6", "T8", "T9", "T10", "T11"]
    engine = FakeEngine({"allocator": _allocation({"D3": everything})})
    outcome, proposal = _plan_both(AgentPlanner(engine, sink, iterations=200), _request(demo))
    assert not outcome.agent_applied and outcome.solution == outcome.baseline
    assert proposal.solution is None  # nothing to offer
    assert any(
        r.startswith("proposal invalid: D3: ") and "fuel budget" in r for r in proposal.reasons
    ), proposal.reasons
    alloc = sink.by_agent("allocator")[0]
    assert alloc.error.startswith("invalid: D3") and not alloc.applied
    assert sink.by_agent("route_optimizer")[0].applied


@pytest.mark.parametrize("kind", ["timeout", "rate_limited", "server_error", "refused"])
def test_engine_errors_fall_back_to_the_baseline(demo, kind):
    sink = ListSink()
    engine = FakeEngine(default=EngineError(kind, "boom"))
    outcome, proposal = _plan_both(AgentPlanner(engine, sink, iterations=200), _request(demo))
    assert _valid(demo, outcome.solution) and not outcome.agent_applied
    assert outcome.solution == outcome.baseline and proposal.solution is None
    assert f"strategist: {kind}: boom (rules answer used)" in proposal.reasons
    assert f"allocator: {kind}: boom" in proposal.reasons
    assert sink.by_agent("allocator")[0].error == f"{kind}: boom"
    assert sink.by_agent("critic")[0].error == f"{kind}: boom"
    assert sink.by_agent("route_optimizer")[0].applied


def test_malformed_and_broken_answers_fall_back(demo):
    sink = ListSink()
    engine = FakeEngine(
        {
            "allocator": {"assignments": {"D1": "T1"}, "strategy_used": "magic"},
            "critic": RuntimeError("socket closed"),
        }
    )
    outcome, proposal = _plan_both(AgentPlanner(engine, sink, iterations=200), _request(demo))
    assert not outcome.agent_applied and proposal.solution is None
    malformed = [r for r in proposal.reasons if r.startswith("allocator: malformed: ")]
    assert malformed, proposal.reasons
    alloc = sink.by_agent("allocator")[0]
    assert alloc.error.startswith("malformed: ") and alloc.validated_output is None
    assert alloc.raw_output  # what the engine said is kept
    assert sink.by_agent("critic")[0].error == "server_error: RuntimeError: socket closed"


def test_an_unusable_reply_keeps_its_raw_text_in_the_trace(demo):
    """An engine that got a reply it could not use (tool arguments that are not JSON) says
    so, and the agent run stores what it said: raw_output is not NULL."""
    said = '[{"type":"tool_use","name":"submit_allocation","input_text":"{\\"assignments\\": {"}]'
    refused = EngineError("malformed", "tool 'submit_allocation' arguments are not valid JSON")
    refused.raw = said
    sink = ListSink()
    engine = FakeEngine({"allocator": refused})
    _, proposal = _plan_both(AgentPlanner(engine, sink, iterations=200), _request(demo))
    alloc = sink.by_agent("allocator")[0]
    assert alloc.error == f"malformed: {refused.message}"
    assert alloc.raw_output == said
    assert any("not valid JSON" in r for r in proposal.reasons), proposal.reasons


def test_a_slow_engine_never_holds_the_fast_tier(demo):
    sink = ListSink()
    planner = AgentPlanner(FakeEngine(default=SLOW), sink, iterations=200, agent_timeout_s=0.3)

    async def go():
        outcome = await asyncio.wait_for(
            planner.plan(_request(demo, deadline_s=0.8)), timeout=0.8 + 1.0
        )
        assert outcome.followup is not None and not outcome.followup.done()  # still thinking
        # The slow tier is bounded by its own per-call timeout, not by the round's deadline.
        proposal = await asyncio.wait_for(outcome.followup, timeout=3 * 0.3 + 2.0)
        return outcome, proposal

    outcome, proposal = asyncio.run(go())
    assert _valid(demo, outcome.solution) and not outcome.agent_applied
    assert outcome.solution == outcome.baseline and proposal.solution is None
    assert any(r.startswith("strategist: timeout") for r in proposal.reasons), proposal.reasons
    strategist = sink.by_agent("strategist")[0]
    assert strategist.error.startswith("timeout")
    assert sink.by_agent("planning_round")[0].error is None


def test_a_better_proposal_is_applied():
    # A search cut after one iteration leaves points on the table; the fake allocator
    # proposes the allocation of a long search on the same mission.
    scenario = random_scenario(
        np.random.default_rng(4), n_targets=30, n_sams=2, n_drones=3, fuel=(120, 200)
    )
    strong = plan_mission(compile_mission(scenario), seconds=None, iterations=3000, seed=1)
    sink = ListSink()
    engine = FakeEngine({"allocator": _allocation(strong.solution.allocation)})
    outcome, proposal = _plan_both(
        AgentPlanner(engine, sink, iterations=1), _request(scenario, deadline_s=20.0), settle=False
    )
    assert _valid(scenario, outcome.solution) and outcome.solution == outcome.baseline
    assert proposal.solution is not None and _valid(scenario, proposal.solution)
    assert proposal.solution.total_points > outcome.baseline.total_points
    assert any(r.startswith("proposal offered") for r in proposal.reasons)
    assert not sink.by_agent("allocator")  # written when the executive decides
    proposal.settle(True, "applied after the rebase")
    alloc = sink.by_agent("allocator")[0]
    assert alloc.applied
    assert alloc.validated_output["outcome"]["decision"] == "applied after the rebase"


def test_a_proposal_no_better_than_the_baseline_is_not_applied(demo):
    sink = ListSink()
    engine = FakeEngine({"allocator": _allocation({"D1": ["T1"]})})
    outcome, proposal = _plan_both(AgentPlanner(engine, sink, iterations=200), _request(demo))
    assert not outcome.agent_applied and outcome.solution == outcome.baseline
    assert proposal.solution is None
    assert any(r.startswith("proposal ") and "baseline" in r for r in proposal.reasons)
    assert sink.by_agent("allocator")[0].validated_output["outcome"]["decision"] != "applied"


def test_move_and_forbidden_constraints_are_honoured(demo):
    free = _plan(AgentPlanner(FakeEngine(), ListSink(), iterations=200), _request(demo))
    visitor = {t: d for d, r in free.solution.routes.items() for t in r.visited_targets}
    mission = compile_mission(demo)
    # move a target visited by one drone to another drone that can sense it; forbid
    # another target to the drone that flies it
    moved = next(
        t
        for t, d in visitor.items()
        if any(mission.index[t] in s.eligible for s in mission.drones if s.id != d)
    )
    to = next(
        s.id
        for s in mission.drones
        if s.id != visitor[moved] and mission.index[moved] in s.eligible
    )
    banned = next(t for t, d in visitor.items() if t != moved and d != to)
    constraints = {
        "moves": [{"target": moved, "to_drone": f"D{to}"}],
        "forbidden": {visitor[banned]: [banned]},
    }
    sink = ListSink()
    outcome, _ = _plan_both(
        AgentPlanner(FakeEngine(), sink, iterations=200),
        _request(demo, constraints=parse_constraints(constraints), instruction=f"move {moved}"),
    )
    assert _valid(demo, outcome.solution)
    routes = outcome.solution.routes
    assert moved in routes[to].visited_targets
    assert banned not in routes[visitor[banned]].visited_targets
    assert constraint_violations(outcome.solution, constraints, mission) == []
    strategist = sink.by_agent("strategist")[0].validated_output
    assert strategist["request_type"] == "reallocate"
    assert f"move {moved} to D{to}" in strategist["commands_detected"]


def test_agents_off_runs_the_baseline_only(demo):
    sink = ListSink()
    engine = FakeEngine()
    outcome = _plan(AgentPlanner(engine, sink, iterations=200, use_agents=False), _request(demo))
    assert _valid(demo, outcome.solution) and outcome.reasons == ("agents off",)
    assert engine.calls == []
    assert sorted(r.agent for r in sink.records) == ["planning_round", "route_optimizer"]


def test_a_drone_that_cannot_be_planned_does_not_fail_the_others(demo):
    data = demo.model_dump(mode="json", by_alias=True)
    data["drone_configs"]["1"]["fuelBudget"] = 1.0
    data["drone_configs"]["1"]["frozen_segments"] = [{"from": "A1", "to": "T10"}]
    scenario = parse_scenario(data)
    sink = ListSink()
    outcome = _plan(
        AgentPlanner(FakeEngine(), sink, iterations=50, use_agents=False),
        _request(scenario, deadline_s=2.0),
    )
    assert set(outcome.left_out) == {"1"} and "frozen legs" in outcome.left_out["1"]
    assert "1" not in outcome.solution.routes and outcome.solution.total_points > 0
    assert validate_solution(outcome.mission, outcome.solution) == []
    assert any(r.startswith("D1: ") for r in outcome.reasons)


def test_a_drone_whose_home_is_blocked_ends_at_another_airport(demo):
    # A SAM over A1 (D1's home): D1 may end at any airport it can reach instead.
    data = demo.model_dump(mode="json", by_alias=True)
    home = next(a for a in data["environment"]["airports"] if a["id"] == "A1")
    data["environment"]["sams"].append({"id": "S9", "pos": [home["x"], home["y"]], "range": 3})
    for drone in data["drone_configs"].values():
        drone["start_airport"] = "A2"
    # As a live replan builds it (a SAM can appear over an airport mid-flight), not as a
    # file would be checked.
    scenario = Scenario.model_validate(data)
    outcome = _plan(
        AgentPlanner(FakeEngine(), ListSink(), iterations=200, use_agents=False),
        _request(scenario, deadline_s=2.0),
    )
    route = outcome.solution.routes["1"].route
    assert route[-1] != "A1" and validate_solution(outcome.mission, outcome.solution) == []
    assert any("cannot reach its end airport A1" in r for r in outcome.reasons), outcome.reasons


def test_a_timed_round_keeps_its_deadline_and_a_seeded_one_its_search():
    # The deadline is the whole round's: the search and the post-optimisation end at 80 %
    # of it, the post-optimisation taking the last tenth; when that would leave the search
    # less than half of it, the round is late anyway: it searches as a seeded one does, and
    # post-optimises a fifth of the deadline after. A seeded round (fixed iterations) or a
    # posted mission's plan (no tick waits on it) searches 80 % of it and post-optimises to
    # the end.
    timed = AgentPlanner(FakeEngine(), ListSink(), use_agents=False)
    now = time.perf_counter()
    seconds, until = timed.baseline_budget(0.5, now - 0.05)  # the compile took 0.05 s
    assert seconds == pytest.approx(0.4 - 0.05 - 0.05, abs=0.01)
    assert until == pytest.approx(now - 0.05 + 0.4, abs=0.01)
    for compiled in (2.0, 0.2):  # the compile overran the deadline, or left 0.15 s to search
        now = time.perf_counter()
        seconds, until = timed.baseline_budget(0.5, now - compiled)
        assert seconds == pytest.approx(0.4)
        assert until is not None and until - now == pytest.approx(0.5, abs=0.01)
    # From the plan in force (warm), a round is not late for its search's sake: it searches
    # what the deadline leaves, a tenth of it at least, and post-optimises its tenth after
    for compiled, search in ((0.2, 0.15), (0.35, 0.05), (2.0, 0.05)):
        now = time.perf_counter()
        seconds, until = timed.baseline_budget(0.5, now - compiled, warm=True)
        assert seconds == pytest.approx(search, abs=0.01)
        assert until is not None and until - now == pytest.approx(search + 0.05, abs=0.01)
    # Measured (the executive's part reserved in the request, the planner's own after its
    # search from its last rounds), the search and post-optimisation end when those are
    # left of the deadline, not at 80 % of it
    now = time.perf_counter()
    seconds, until = timed.baseline_budget(0.5, now - 0.05, warm=True, reserved_s=0.15)
    assert timed.after_search_s == 0.0
    assert seconds == pytest.approx(0.5 - 0.15 - 0.05 - 0.05, abs=0.01)
    assert until == pytest.approx(now - 0.05 + 0.35, abs=0.01)
    seeded = AgentPlanner(FakeEngine(), ListSink(), use_agents=False, iterations=50)
    assert seeded.baseline_budget(0.5, time.perf_counter() - 2.0) == (pytest.approx(0.4), None)
    assert seeded.baseline_budget(0.5, time.perf_counter(), warm=True)[1] is None
    posted = AgentPlanner(FakeEngine(), ListSink(), use_agents=False, whole_round=False)
    assert posted.baseline_budget(0.5, time.perf_counter() - 2.0) == (pytest.approx(0.4), None)


def test_a_timed_round_starts_from_the_plan_in_force_and_a_seeded_one_from_scratch(
    demo, monkeypatch
):
    """With the plan in force (``warm_start``), a timed round's search starts from it routed
    on the round's mission, so its plan is worth at least that; a seeded round (batch runs:
    a seed reproduces their figures) searches from scratch as it always has."""
    from agents.planning import round as round_module
    from executive.contracts import WarmStart
    from planner.intent import intent_of, route_intent

    solve = round_module.solve_team
    warms: list = []

    def recorded(*args, **kwargs):
        warms.append(kwargs.get("warm"))
        return solve(*args, **kwargs)

    monkeypatch.setattr(round_module, "solve_team", recorded)
    mission = compile_mission(demo)
    in_force = plan_mission(mission, seed=3, iterations=300).solution
    intent = intent_of(in_force)
    ends = {d: r.route[-1] for d, r in in_force.routes.items()}
    gone = {next(ts[0] for ts in intent.values() if ts): "collected"}  # one done since
    warm = WarmStart(intent, ends, gone)
    routed = route_intent(mission, intent, ends=ends, gone=gone)
    floor = sum(float(mission.scores[n]) for r in routed.routes.values() for n in r[1:-1])
    assert floor > 0

    timed = AgentPlanner(FakeEngine(), ListSink(), use_agents=False)
    outcome = _plan(timed, _request(demo, deadline_s=0.5, warm_start=warm))
    assert warms == [[routed.routes[spec.id] for spec in mission.drones]]
    assert outcome.warm == routed  # handed over: the executive judges it without routing it
    assert outcome.solution.total_points >= floor
    assert _valid(demo, outcome.solution)
    # what followed its search was measured, and a measured round's budget leaves it
    after = timed.after_search_s
    assert 0.0 < after < 0.5
    now = time.perf_counter()
    _, until = timed.baseline_budget(0.5, now, warm=True, reserved_s=0.1)
    assert until == pytest.approx(now + 0.5 - 0.1 - after, abs=0.01)

    seeded = AgentPlanner(FakeEngine(), ListSink(), use_agents=False, iterations=50)
    with_warm = _plan(seeded, _request(demo, warm_start=warm))
    without = _plan(seeded, _request(demo))
    assert warms[1:] == [None, None]
    assert with_warm.warm is None
    assert with_warm.solution.routes == without.solution.routes


def test_no_baseline_raises_planning_failed(demo):
    class Broken(AgentPlanner):
        def _baseline(self, mission, constraints, seconds, until=None, warm=None):
            raise PlannerError("the search found nothing")

    sink = ListSink()
    with pytest.raises(PlanningFailed, match="the search found nothing"):
        _plan(Broken(FakeEngine(default=SLOW), sink, iterations=50), _request(demo))
    root = sink.by_agent("planning_round")[0]
    assert root.error and root.run_id == "round-1" and not root.applied


def test_malformed_constraints_are_refused_before_a_round_exists():
    # A request carries typed constraints: what does not parse never reaches a round.
    with pytest.raises(ValidationError, match="teleport"):
        parse_constraints({"teleport": ["T1"]})


def test_the_event_loop_keeps_ticking_while_planning():
    scenario = random_scenario(np.random.default_rng(7), n_targets=40, n_sams=2, n_drones=3)
    planner = AgentPlanner(FakeEngine(), ListSink(), iterations=None)
    ticks = 0

    async def ticker(stop: asyncio.Event):
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0.005)

    async def go():
        stop = asyncio.Event()
        task = asyncio.create_task(ticker(stop))
        await asyncio.sleep(0)
        before = ticks
        outcome = await planner.plan(_request(scenario, deadline_s=0.6))
        during = ticks - before
        stop.set()
        await task
        return outcome, during

    outcome, during = asyncio.run(go())
    assert _valid(scenario, outcome.solution)
    # the search ran ~0.3 s in a worker thread; a blocked loop would not have ticked
    assert during >= 10, during


def test_cancelling_the_slow_tier_leaves_nothing_running(demo):
    sink = ListSink()
    planner = AgentPlanner(FakeEngine(default=SLOW), sink, iterations=50)

    async def go():
        outcome = await planner.plan(_request(demo, deadline_s=5.0))
        await asyncio.sleep(0.05)
        outcome.followup.cancel()  # a newer round supersedes it
        with pytest.raises(asyncio.CancelledError):
            await outcome.followup
        await asyncio.sleep(0)
        return [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]

    assert asyncio.run(go()) == []


def test_a_swarms_allocator_is_shown_the_fast_tiers_plan_not_the_greedy_auction(monkeypatch):
    """At a swarm's size the greedy auction (planner.allocation.allocate) is minutes of
    Python holding the GIL; the allocator's reference is the fast tier's plan instead."""
    from agents.planning import round as module
    from planner.model import drone_label

    rng = np.random.default_rng(11)
    scenario = random_scenario(rng, n_targets=1001, n_sams=0, n_drones=101, excluded=0)
    asked = []
    monkeypatch.setattr(module, "allocate", lambda *a, **k: asked.append(a))
    engine = FakeEngine()
    outcome, _ = _plan_both(AgentPlanner(engine, ListSink(), iterations=50), _request(scenario))
    call = next(call for call, _ in engine.calls if call.agent == "allocator")
    assert "REFERENCE ALLOCATION (the fast tier's plan): " in call.prompt
    assert asked == []
    assert call.deterministic["assignments"] == {
        drone_label(d): list(r.visited_targets) for d, r in outcome.baseline.routes.items()
    }


def test_a_failure_searching_the_legs_ahead_is_said_in_the_log_not_raised(
    demo, monkeypatch, caplog
):
    """A timed round searches the plan in force's legs in a thread of their own beside its
    team search; whatever fails there is a warning in the log (the solution searches the
    legs it needs again), never a thread's traceback, and the round's plan is whole."""
    import threading

    from agents.planning import round as round_module
    from executive.contracts import WarmStart
    from planner.intent import intent_of
    from planner.mission import Mission

    asked: list[list[list[int]]] = []
    done = threading.Event()

    def failing(self, routes):
        asked.append([list(r) for r in routes])
        done.set()
        raise MemoryError("no room for a leg")

    monkeypatch.setattr(Mission, "search_legs", failing)
    in_force = plan_mission(compile_mission(demo), seed=3, iterations=300).solution
    ends = {d: r.route[-1] for d, r in in_force.routes.items()}
    warm = WarmStart(intent_of(in_force), ends, {})
    timed = AgentPlanner(FakeEngine(), ListSink(), use_agents=False)
    with caplog.at_level("WARNING", logger=round_module.__name__):
        outcome = _plan(timed, _request(demo, deadline_s=0.5, warm_start=warm))
        assert done.wait(10)
        waited = time.monotonic() + 10  # the thread logs right after the failure
        while "not searched ahead" not in caplog.text and time.monotonic() < waited:
            time.sleep(0.01)
    assert asked and len(asked[0]) == len(demo.enabled_drones())
    assert "not searched ahead" in caplog.text and "no room for a leg" in caplog.text
    assert _valid(demo, outcome.solution)
