"""``POST /api/agent_solve`` (seed 000 Appendix F.1): the operator's words through the
coordinator and the agent chain, on a posted mission.

Contract
--------
Consumes
    A ``SolveRequest``: ``user_message``, the seed's ``environment`` and ``drone_configs``,
    maybe an ``existing_solution`` (the plan the words are about) and ``preferences``.
Produces
    The seed's answer: ``success``, ``response`` (the responder's text), the Solution JSON
    of the plan the answer is about (routes, allocation, sequences, totals), ``trace`` (every
    agent run of the request: coordinator, planning round, route optimizer, strategist,
    allocator, critic and its revision, responder; the reasons; the comparison with the
    existing solution), the real ``coordinator_decision`` (seed B.5), plus ``intent``,
    ``plan_changed``, ``warnings`` and, for a what-if, ``what_if`` (the difference);
    ``left_out`` and ``rerouted``: the drones that cannot fly as posted, and why (the plan
    is made for the rest of the fleet, and a warning names each).
Behaviour, by the coordinator's intent
    plan / replan / reallocate -> the agent chain (``agents.planning.round.AgentPlanner``:
    the algorithmic baseline under the words' constraints, strategist -> allocator -> critic,
    a proposal kept only if valid and better) plans the mission; a reallocation's moves are
    honoured or the answer says which were not and why. A command the coordinator refuses
    (a drone that cannot sense the target, a target inside a SAM, not enough fuel) plans
    nothing: ``success`` false and the reason. question / explain / debug -> nothing is
    replanned: the responder answers about the existing solution (or, without one, about a
    plan computed now, with a warning). what_if -> planned on a copy
    (``agents.words.whatif``); the plan answered is the one the question is about.
    A memory cannot be stored by this stateless endpoint: ``success`` false, and why.
Lifecycle
    One call per request, on the event loop; the planning runs in worker threads.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from dataclasses import asdict
from typing import Any

from agents.coordinator import coordinate_scenario, planner_constraints
from agents.engines.base import Engine, canonical_json
from agents.engines.base import input_hash as hash_parts
from agents.engines.per_role import engine_for
from agents.planning.round import AgentPlanner, PlanningFailed
from agents.responder import respond
from agents.words.state import DroneState, MissionState
from agents.words.troubles import PlanningLog, stored_log
from agents.words.whatif import WhatIfError, what_if
from dashboard.errors import ApiError
from dashboard.planning_api import (
    Limits,
    SolveRequest,
    checked,
    left_out_words,
    mission_scenario,
    posted_routes,
    without_left_out,
)
from dashboard.planning_api import summary as plan_summary
from executive.contracts import AgentRunRecord, PlanRequest, new_id
from executive.traces.sinks import ListSink
from planner.constraints import OperatorConstraints, constraint_violations, parse_constraints
from planner.feasibility import Plannable, plannable
from planner.mission import Mission, compile_mission
from planner.model import Scenario, Solution, drone_label
from planner.validation import validate_solution
from sim import World

__all__ = ["agent_solve", "posted_state"]

_AGENT_TIMEOUT_S = 20.0
_PLAN_INTENTS = ("plan", "replan", "reallocate")


def posted_state(
    scenario: Scenario,
    solution: Solution | None,
    run_id: str,
    planning: PlanningLog | None = None,
) -> MissionState:
    """A posted mission before take-off, as the responder reads it: every drone parked at
    its start with its whole budget, the plan's route still to fly; ``planning``: the
    request's own planning troubles (a debug request's)."""
    airports = {a.id: (a.x, a.y) for a in scenario.environment.airports}
    drones = {}
    for drone_id, cfg in scenario.drone_configs.items():
        route = solution.routes.get(drone_id) if solution is not None else None
        x, y = airports.get(cfg.start or "", (0.0, 0.0))
        drones[drone_id] = DroneState(
            id=drone_id,
            status="parked",
            x=x,
            y=y,
            fuel=float(cfg.fuel_budget),
            budget=float(cfg.fuel_budget),
            sensors=cfg.accessible_targets,
            home=cfg.home,
            route=list(route.route) if route is not None else [],
            planned_targets=list(route.visited_targets) if route is not None else [],
            remaining_km=float(route.distance) if route is not None else 0.0,
        )
    env = scenario.environment
    excluded = [
        t.id
        for t in env.targets
        if any(math.hypot(t.x - s.x, t.y - s.y) < s.range for s in env.sams)
    ]
    return MissionState(
        source="stored",
        run_id=run_id,
        tick=0,
        time=0.0,
        mode="PLANNED" if solution is not None else "NO PLAN",
        scenario=scenario,
        environment=env,
        drones=drones,
        plan_id="posted" if solution is not None else None,
        plan=solution,
        excluded=excluded,
        planning=planning or PlanningLog(),
    )


async def _plan(
    scenario: Scenario,
    constraints: OperatorConstraints,
    text: str,
    body: SolveRequest,
    decision: dict[str, Any],
    engine: Engine,
    sink: ListSink,
    ids: tuple[str, str],
    *,
    agents: bool = True,
) -> tuple[Solution, Mission, list[str]]:
    """The agent chain on the posted mission: (the plan, the mission it is on, the reasons)."""
    prefs = body.preferences
    policy = decision["policy"]
    post_opt = policy["post_opt"]
    planner = AgentPlanner(
        engine,
        sink,
        seed=prefs.seed,
        iterations=prefs.iterations,
        agent_timeout_s=_AGENT_TIMEOUT_S,
        use_agents=agents,
        strategy=policy["allocation_strategy"],
        post_opt={
            "insert": post_opt["insert_unvisited"],
            "swap": post_opt["trajectory_swap"],
            "no_cross": post_opt["crossing_removal"],
        },
    )
    run_id, root = ids
    request = PlanRequest(
        run_id,
        new_id(),
        0,
        "operator:agent_solve",
        scenario,
        prefs.seconds / 0.8,  # the round gives its baseline 80% of the deadline
        constraints,
        text,
        parent_run_id=root,
    )
    try:
        outcome = await planner.plan(request)
    except PlanningFailed as exc:
        raise ApiError(422, f"the mission cannot be planned: {exc.__cause__ or exc}") from None
    reasons = list(outcome.reasons)
    solution = outcome.solution
    if outcome.followup is not None:
        proposal = await outcome.followup
        reasons += list(proposal.reasons)
        if proposal.solution is not None:
            solution = proposal.solution
            proposal.settle(True, "applied: the agent_solve answer")
    mission = outcome.mission
    if mission is None:
        mission = await asyncio.to_thread(compile_mission, scenario)
    problems = validate_solution(mission, solution)
    if problems:  # never expected: every plan is validated before it is answered
        raise ApiError(500, "the plan failed validation: " + "; ".join(map(str, problems)))
    return solution, mission, reasons


def _record(record: AgentRunRecord) -> dict[str, Any]:
    """One agent run as the ``trace`` lists it."""
    data: dict[str, Any] = json.loads(canonical_json(asdict(record)))
    data.pop("mission_run_id", None)
    return data


async def agent_solve(body: SolveRequest, limits: Limits, engine: Engine) -> dict[str, Any]:
    """Answer the posted request (see the module docstring)."""
    started = time.perf_counter()
    prefs = body.preferences
    if prefs.seconds > limits.max_seconds:
        raise ApiError(
            422,
            "search too long for this endpoint",
            [("$.preferences.seconds", f"at most {limits.max_seconds:g} s")],
        )
    scenario = mission_scenario(body, limits)
    mission = await asyncio.to_thread(compile_mission, scenario)
    # A drone that cannot fly is left out of every plan (the planner's own narrowing), and
    # the answer says which and why.
    fleet = plannable(mission)
    warnings: list[str] = left_out_words(fleet)
    existing = None
    if body.existing_solution is not None:
        posted, dropped = without_left_out(body.existing_solution, fleet, "existing_solution")
        warnings += dropped
        routes = posted_routes(fleet.mission, posted, "existing_solution")
        existing = await asyncio.to_thread(checked, fleet.mission, routes, "existing_solution")
    text = (body.user_message or "").strip()
    if not text:
        text = "Generate optimal routes"
        warnings.append("no user_message: the mission is planned from scratch")
    if body.distance_matrix is not None:
        warnings.append("distance_matrix ignored: distances are recomputed SAM-aware")
    if prefs.solver_mode is not None:
        warnings.append(f"solver_mode {prefs.solver_mode!r} ignored")
    allocation = existing.allocation if existing is not None else None
    decision = coordinate_scenario(text, scenario, prefs.model_dump(), allocation)
    warnings += decision["warnings"]
    intent, errors = decision["intent"], list(decision["errors"])
    sink = ListSink()
    run_id, root = f"agent_solve-{new_id()}", new_id()
    ids = (run_id, root)
    plan: Solution | None = existing
    plan_changed = False
    reasons: list[str] = []
    answer = ""
    extra: dict[str, Any] = {}

    async def about_a_plan() -> Solution:
        """The plan a question is about: the existing one, else one computed now."""
        if existing is not None:
            return existing
        warnings.append("no existing_solution: answered about a plan computed now")
        solution, _, why = await _plan(
            scenario, OperatorConstraints(), text, body, decision, engine, sink, ids, agents=False
        )
        reasons.extend(why)
        return solution

    async def responder(
        solution: Solution | None, whatif: Any = None, planning: PlanningLog | None = None
    ) -> str:
        done = await respond(
            text,
            posted_state(scenario, solution, run_id, planning),
            engine=engine_for(engine, "responder"),  # its own engine, traced by name
            sink=sink,
            parent_run_id=root,
            timeout_s=_AGENT_TIMEOUT_S,
            whatif=whatif,
        )
        return done.output.answer

    if errors:
        verb = {"what_if": "Cannot plan this what-if"}.get(
            intent, "Not applied" if intent in _PLAN_INTENTS else "Cannot answer"
        )
        answer = f"{verb}: " + "; ".join(errors) + "."
    elif intent in _PLAN_INTENTS:
        if intent == "replan":
            warnings.append(
                "a posted mission has no checkpoint yet: planned from the drones' starts"
            )
        constraints = parse_constraints(planner_constraints(decision))
        plan, planned_on, why = await _plan(
            scenario, constraints, text, body, decision, engine, sink, ids
        )
        reasons += why
        plan_changed = existing is None or _routes_of(plan) != _routes_of(existing)
        answer = await responder(plan)
        broken = constraint_violations(plan, constraints, planned_on)
        lines = [plan_summary(plan), *(f"Not planned: {why}" for why in fleet.left_out.values())]
        moves = [f"{m.target} -> {drone_label(m.to_drone)}" for m in constraints.moves]
        if moves and not broken:
            lines.append("Honoured: " + ", ".join(moves))
        if broken:
            lines.append("NOT honoured: " + "; ".join(broken))
            warnings += [f"not honoured: {b}" for b in broken]
        if decision["warnings"]:  # a premise the plan contradicts, an order replaced
            lines.append("Note: " + "; ".join(decision["warnings"]))
        answer = "\n".join([*lines, "", answer])
    elif intent == "what_if":
        plan = await about_a_plan()
        state = posted_state(scenario, plan, run_id)
        try:
            result = await what_if(
                decision["what_if"],
                state,
                world=World(scenario, mission=mission),
                iterations=prefs.iterations or 2000,
                seed=prefs.seed,
            )
        except WhatIfError as exc:
            errors.append(str(exc))
            answer = f"Cannot plan this what-if: {exc}."
        else:
            extra["what_if"] = result.model_dump(mode="json")
            answer = await responder(plan, result)
    elif intent == "memory":
        memory = decision["memory"] or {}
        answer = (
            f"Not stored: this stateless endpoint keeps no memories ({memory.get('kind')}:"
            f" {memory.get('text')!r}); use `isr memory add` for the mission's store."
        )
        errors.append("memories cannot be stored here")
    else:  # question, explain, debug, unknown: nothing is replanned
        if intent == "unknown":
            warnings.append(
                "not recognised as a plan, command, question or what-if:"
                " answered as a question about the mission"
            )
        plan = await about_a_plan()
        # a debug request is answered from this request's own agent runs (all at tick 0):
        # which failed, with their engine, model and error
        rows = [asdict(r) for r in sink.of(AgentRunRecord)] if intent == "debug" else []
        answer = await responder(plan, planning=stored_log({}, [], rows, until=1))
        if intent == "debug":
            answer = _diagnosis(fleet, plan) + "\n\n" + answer
    comparison = None
    if existing is not None and plan is not None and plan is not existing:
        comparison = {
            "points_delta": plan.total_points - existing.total_points,
            "fuel_delta": plan.total_fuel - existing.total_fuel,
        }
        answer += (
            f"\nAgainst the existing solution: {comparison['points_delta']:+g} points,"
            f" {comparison['fuel_delta']:+.1f} km"
        )
    sink.emit(_coordinator_record(decision, text, run_id, root, started, errors))
    records = sink.of(AgentRunRecord)
    records.sort(key=lambda r: r.agent != "coordinator")  # the root first, then as they ran
    runs = [_record(r) for r in records]
    solution_json = (
        plan.model_dump(mode="json", by_alias=True)
        if plan is not None
        else {
            "routes": {},
            "allocation": {},
            "sequences": {},
            "total_points": 0.0,
            "total_fuel": 0.0,
        }
    )
    return {
        "success": not errors,
        "response": answer,
        **solution_json,
        "intent": intent,
        "plan_changed": plan_changed,
        "warnings": warnings,
        "left_out": dict(fleet.left_out),
        "rerouted": dict(fleet.rerouted),
        **extra,
        "trace": {
            "agent_runs": runs,
            "agents": [r["agent"] for r in runs],
            "reasons": reasons,
            "against_existing": comparison,
        },
        "coordinator_decision": decision,
    }


def _diagnosis(fleet: Plannable, plan: Solution) -> str:
    """What a debugging request is told before the responder's account of the request's
    agent runs: the validator's verdict on the plan, the drones the planner could not plan
    and why."""
    mission = fleet.mission  # the fleet that can fly: the plan is validated on it
    problems = validate_solution(mission, plan)
    lines = [
        "DIAGNOSIS: the plan passes the validator (hard constraints hold)."
        if not problems
        else "DIAGNOSIS: the plan breaks hard constraints: " + "; ".join(map(str, problems))
    ]
    if mission.excluded_targets:
        lines.append(
            "Left out by design: " + ", ".join(mission.excluded_targets) + " (inside a SAM)."
        )
    lines += [f"Not planned: {why}." for why in fleet.left_out.values()]
    lines += [f"Rerouted: {why}." for why in fleet.rerouted.values()]
    return "\n".join(lines)


def _routes_of(solution: Solution) -> dict[str, list[str]]:
    return {d: list(r.route) for d, r in solution.routes.items()}


def _coordinator_record(
    decision: dict[str, Any], text: str, run_id: str, root: str, started: float, errors: list[str]
) -> AgentRunRecord:
    return AgentRunRecord(
        run_id=root,
        parent_run_id=None,
        mission_run_id=run_id,
        agent="coordinator",
        engine="rules",
        model=None,
        input_hash=hash_parts(text),
        input_size=len(text),
        tokens_in=None,
        tokens_out=None,
        duration_ms=(time.perf_counter() - started) * 1000,
        raw_output=None,
        validated_output=decision,
        clamp_actions=(),
        applied=not errors,
        error="invalid: " + "; ".join(errors) if errors else None,
        tick=0,
    )
