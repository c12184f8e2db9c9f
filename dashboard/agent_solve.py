"""``POST /api/agent_solve`` (seed 000 Appendix F.1): the operator's words through the one
dialogue pipeline (``agents.words.pipeline``) at a posted mission (``agents.words.posted``);
this module only adapts HTTP: it checks the request, builds the venue and shapes the answer.

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
    replanned: the responder answers about the existing solution (without one: "No plan yet
    — plan first?"; a debug request is answered about a plan computed now, with a warning).
    Every plan answer lists ``constraints_applied`` and ``constraints_refused`` (each with
    its reason); "do not recompute routes" answers from the existing solution and plans
    nothing. what_if -> planned on a copy
    (``agents.words.whatif``); the plan answered is the one the question is about.
    A memory cannot be stored by this stateless endpoint: ``success`` false, and why.
Lifecycle
    One call per request, on the event loop; the planning runs in worker threads.
"""

from __future__ import annotations

import asyncio
import importlib
import json
from dataclasses import asdict
from typing import Any

from agents.engines.base import Engine, canonical_json
from agents.words.stages import StageReport
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
from executive.contracts import AgentRunRecord

__all__ = ["agent_solve"]


def _record(record: AgentRunRecord) -> dict[str, Any]:
    """One agent run as the ``trace`` lists it."""
    data: dict[str, Any] = json.loads(canonical_json(asdict(record)))
    data.pop("mission_run_id", None)
    return data


async def agent_solve(
    body: SolveRequest, limits: Limits, engine: Engine, on_stage: StageReport | None = None
) -> dict[str, Any]:
    """Answer the posted request (see the module docstring); ``on_stage`` hears the
    pipeline's stages as they happen."""
    # Here, not at the top: the dialogue stack and the planner's kernels (agents.words.posted
    # imports them all) are loaded by the first request, in a worker thread, so that a
    # viewers' process starts without them (dashboard.process) and serves on while they load.
    await asyncio.to_thread(importlib.import_module, "agents.words.posted")
    from agents.words.pipeline import run_words
    from agents.words.posted import PostedPlanError, PostedVenue
    from planner.feasibility import plannable
    from planner.mission import compile_mission

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
    venue = PostedVenue(scenario, mission, fleet, existing, prefs.model_dump(), engine)
    try:
        reply = await run_words(text, venue, on_stage)
    except PostedPlanError as exc:
        raise ApiError(exc.status, str(exc)) from None
    records = venue.sink.of(AgentRunRecord)
    records.sort(key=lambda r: r.agent != "coordinator")  # the root first, then as they ran
    runs = [_record(r) for r in records]
    plan = reply.plan if reply.plan is not None else existing  # nothing planned: as posted
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
    extra: dict[str, Any] = {}
    if reply.what_if is not None:
        extra["what_if"] = reply.what_if.model_dump(mode="json")
    return {
        "success": not reply.errors,
        "response": reply.answer,
        **solution_json,
        "intent": str(reply.intent),
        "plan_changed": reply.plan_changed,
        "warnings": warnings + reply.warnings,
        # every order of a plan request: applied, or refused with its reason
        "constraints_applied": (reply.report or {}).get("applied", []),
        "constraints_refused": (reply.report or {}).get("refused", []),
        "left_out": dict(fleet.left_out),
        "rerouted": dict(fleet.rerouted),
        **extra,
        "trace": {
            "agent_runs": runs,
            "agents": [r["agent"] for r in runs],
            "reasons": reply.reasons,
            "against_existing": venue.comparison,
        },
        "coordinator_decision": reply.decision.model_dump(mode="json"),
    }
