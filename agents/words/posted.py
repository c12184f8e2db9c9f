"""A posted mission (seed 000 Appendix F.1) as the dialogue pipeline's venue: what
``POST /api/agent_solve`` answers, the web layer only adapting HTTP (``dashboard.agent_solve``).

Contract
--------
Consumes
    The posted scenario, its compiled mission, the fleet that can fly (``Plannable``), maybe
    the existing solution the words are about, the preferences (seed, iterations, seconds,
    strategy, post-optimisation switches) and the engine the agents ask.
Produces
    Through ``run_words``: the ``Reply`` with the plan the answer is about (``reply.plan``),
    whether it changed, the reasons of the planning round, the comparison with the existing
    solution (``PostedVenue.comparison``).
Behaviour
    plan / replan / reallocate -> the agent chain (``agents.planning.round.AgentPlanner``:
    the algorithmic baseline under the words' constraints, strategist -> allocator -> critic,
    a proposal kept only if valid and better) plans the mission; a reallocation's moves are
    honoured or the answer says which were not and why. question / explain / debug ->
    nothing is replanned: the responder answers about the existing solution (without one,
    the answer starts "No plan yet — plan first?"; a debug request or a what-if is answered
    about a plan computed now, with a warning). what_if -> planned on a copy. A memory
    cannot be stored by a stateless request: refused, and why. A mission that cannot be
    planned raises ``PostedPlanError`` (status 422), a plan failing validation (never
    expected) status 500.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from agents.context import MemoryLike
from agents.coordinator import (
    CoordinatorDecision,
    coordinate_scenario,
    only_drones,
    planner_constraints,
)
from agents.engines.base import Engine
from agents.engines.per_role import engine_for
from agents.planning.round import AgentPlanner, PlanningFailed
from agents.tools import ToolContext
from agents.words.pipeline import ANSWERED, Ground, Reply, Responder, kept_orders
from agents.words.state import MissionState, scenario_state
from agents.words.troubles import PlanningLog, stored_log
from executive.contracts import AgentRunRecord, PlanRequest, new_id
from executive.errors import ExecutiveError
from executive.loop.rebase import keep_unnamed
from executive.traces.sinks import ListSink
from planner.constraints import (
    OperatorConstraints,
    constraint_notes,
    constraint_violations,
    keep_others,
)
from planner.feasibility import Plannable
from planner.mission import Mission, compile_mission
from planner.model import Scenario, Solution, drone_label
from planner.validation import validate_solution
from sim import World

__all__ = ["PostedPlanError", "PostedVenue", "plan_summary", "posted_state"]

AGENT_TIMEOUT_S = 20.0


class PostedPlanError(ExecutiveError):
    """The posted mission cannot be planned (``status`` 422) or its plan failed validation
    (500, never expected)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def plan_summary(solution: Solution) -> str:
    """The plan in the seed's words: "MISSION PLAN COMPUTED", totals, one line per drone."""
    lines = [
        "MISSION PLAN COMPUTED",
        f"Total points: {solution.total_points:g}   total fuel: {solution.total_fuel:.1f} km",
    ]
    for drone_id, route in solution.routes.items():
        budget = route.fuel_budget if route.fuel_budget is not None else float("nan")
        lines.append(
            f"{drone_label(drone_id)}: {' -> '.join(route.route)}  "
            f"({route.total_points:g} points, {route.fuel_used:.1f} / {budget:g} km)"
        )
    if solution.unassigned_targets:
        lines.append(f"Not visited: {', '.join(solution.unassigned_targets)}")
    if solution.excluded_targets:
        lines.append(f"Excluded (inside a SAM): {', '.join(solution.excluded_targets)}")
    return "\n".join(lines)


def posted_state(
    scenario: Scenario,
    solution: Solution | None,
    run_id: str,
    planning: PlanningLog | None = None,
) -> MissionState:
    """A posted mission before take-off, as the responder reads it: every drone parked at
    its start with its whole budget, the plan's route still to fly; ``planning``: the
    request's own planning troubles (a debug request's). (``scenario_state``.)"""
    return scenario_state(scenario, solution, run_id, planning)


def _routes_of(solution: Solution) -> dict[str, list[str]]:
    return {d: list(r.route) for d, r in solution.routes.items()}


@dataclass
class PostedVenue:
    """A posted mission, the words answered before take-off (see the module docstring)."""

    scenario: Scenario
    mission: Mission
    fleet: Plannable
    existing: Solution | None
    preferences: Mapping[str, Any]
    agents_engine: Engine
    sink: ListSink = field(default_factory=ListSink)
    run_id: str = field(default_factory=lambda: f"agent_solve-{new_id()}")
    tick: int = 0
    timeout_s: float = AGENT_TIMEOUT_S
    comparison: dict[str, float] | None = None

    @property
    def engine(self) -> Engine:
        """The responder's own engine, traced by name."""
        return engine_for(self.agents_engine, "responder")

    def tool_context(self, state: MissionState) -> ToolContext:
        """The posted mission before take-off: the tools read the state."""
        return ToolContext.for_state(state)

    @property
    def responder_tools(self) -> bool:
        """The request's ``preferences`` say ``"responder_tools": true``."""
        return bool(self.preferences.get("responder_tools"))

    @property
    def iterations(self) -> int:
        return int(self.preferences.get("iterations") or 2000)

    @property
    def seed(self) -> int:
        return int(self.preferences.get("seed") or 0)

    def memories(self) -> Iterable[MemoryLike]:
        return ()

    def decide(self, text: str) -> CoordinatorDecision:
        allocation = self.existing.allocation if self.existing is not None else None
        return coordinate_scenario(text, self.scenario, self.preferences, allocation)

    async def _plan(
        self, reply: Reply, constraints: OperatorConstraints, *, agents: bool = True
    ) -> tuple[Solution, Mission]:
        """The agent chain on the posted mission: (the plan, the mission it is on)."""
        policy = reply.decision.policy
        post_opt = policy.post_opt
        planner = AgentPlanner(
            self.agents_engine,
            self.sink,
            seed=self.seed,
            iterations=self.preferences.get("iterations"),
            agent_timeout_s=AGENT_TIMEOUT_S,
            use_agents=agents,
            whole_round=False,  # the preferences' seconds are the search's; nothing ticks
            strategy=policy.allocation_strategy,
            post_opt={
                "insert": post_opt.insert_unvisited,
                "swap": post_opt.trajectory_swap,
                "no_cross": post_opt.crossing_removal,
            },
        )
        request = PlanRequest(
            self.run_id,
            new_id(),
            0,
            "operator:agent_solve",
            self.scenario,
            float(self.preferences.get("seconds") or 1.0) / 0.8,  # the round's baseline: 80%
            constraints,
            reply.text,
            parent_run_id=reply.root,
        )
        try:
            outcome = await planner.plan(request)
        except PlanningFailed as exc:
            raise PostedPlanError(
                422, f"the mission cannot be planned: {exc.__cause__ or exc}"
            ) from None
        reply.reasons += list(outcome.reasons)
        solution = outcome.solution
        if outcome.followup is not None:
            proposal = await outcome.followup
            reply.reasons += list(proposal.reasons)
            if proposal.solution is not None:
                solution = proposal.solution
                proposal.settle(True, "applied: the agent_solve answer")
        mission = outcome.mission
        if mission is None:
            mission = await asyncio.to_thread(compile_mission, self.scenario)
        problems = validate_solution(mission, solution)
        if problems:  # never expected: every plan is validated before it is answered
            raise PostedPlanError(
                500, "the plan failed validation: " + "; ".join(map(str, problems))
            )
        return solution, mission

    async def _about_a_plan(self, reply: Reply) -> Solution:
        """The plan a question is about: the existing one, else one computed now."""
        if self.existing is not None:
            return self.existing
        reply.warnings.append("no existing_solution: answered about a plan computed now")
        solution, _ = await self._plan(reply, OperatorConstraints(), agents=False)
        return solution

    async def about(self, reply: Reply) -> MissionState:
        if self.existing is None and reply.intent != "debug":
            # a question about no plan is not answered about one computed in secret
            return posted_state(self.scenario, None, self.run_id)
        reply.plan = await self._about_a_plan(reply)
        # a debug request is answered from this request's own agent runs (all at tick 0):
        # which failed, with their engine, model and error
        debug = reply.intent == "debug"
        rows = [asdict(r) for r in self.sink.of(AgentRunRecord)] if debug else []
        return posted_state(
            self.scenario, reply.plan, self.run_id, stored_log({}, [], rows, until=1)
        )

    async def ground(self, reply: Reply) -> Ground:
        reply.plan = await self._about_a_plan(reply)
        state = posted_state(self.scenario, reply.plan, self.run_id)
        return Ground(state, World(self.scenario, mission=self.mission))

    async def command(self, reply: Reply, respond: Responder) -> None:
        decision = reply.decision
        keep = decision.constraints.keep
        if keep is not None:  # "do not recompute routes": never a new plan
            await self._keep(reply, respond, keep)
            return
        if decision.intent == "replan":
            reply.warnings.append(
                "a posted mission has no checkpoint yet: planned from the drones' starts"
            )
        asked = constraints = planner_constraints(decision)
        # a move on the posted plan re-plans only the drones it names (as on a live run)
        existing = self.existing
        named = set(only_drones(decision, existing.allocation if existing else None))
        if named and existing is not None:
            constraints = keep_others(asked, existing.allocation, named)
        plan, planned_on = await self._plan(reply, constraints)
        if named and existing is not None:
            plan, why = keep_unnamed(self.fleet.mission, plan, existing, named)
            reply.reasons.append(f"use_existing_allocation: {why}")
        reply.plan = plan
        reply.applied = True
        reply.plan_changed = self.existing is None or _routes_of(plan) != _routes_of(self.existing)
        await respond(posted_state(self.scenario, plan, self.run_id))
        broken = constraint_violations(plan, asked, planned_on)
        # a ban on a target inside a SAM holds by itself: not a refusal
        notes = [
            n
            for n in constraint_notes(planned_on, asked)
            if not (n.startswith("forbid ") and "excluded" in n)
        ]
        reply.not_honoured += [*notes, *broken]
        lines = [plan_summary(plan), *(f"Not planned: {w}" for w in self.fleet.left_out.values())]
        moves = [f"{m.target} -> {drone_label(m.to_drone)}" for m in asked.moves]
        if moves and not broken:
            lines.append("Honoured: " + ", ".join(moves))
        if broken:
            lines.append("NOT honoured: " + "; ".join(broken))
            reply.warnings += [f"not honoured: {b}" for b in broken]
        if decision.warnings:  # a premise the plan contradicts, an order replaced
            lines.append("Note: " + "; ".join(decision.warnings))
        reply.answer = "\n".join([*lines, "", reply.answer])

    async def _keep(self, reply: Reply, respond: Responder, keep: str) -> None:
        """Answer from the existing solution as it is: nothing planned, nothing committed."""
        what = "do not recompute routes" if keep == "routes" else "keep the allocation"
        if self.existing is None:
            reply.errors.append(f"{what}: there is no existing solution to keep (plan first)")
            reply.not_honoured.append(f"{what}: no existing_solution was posted")
            reply.answer = f"Not applied: {what}: there is no existing solution to keep."
            return
        reply.plan = self.existing
        kept_orders(reply)
        await respond(posted_state(self.scenario, self.existing, self.run_id))
        reply.answer = "\n".join(
            [
                f"Kept as posted ({what}): no new plan was computed or committed.",
                plan_summary(self.existing),
                "",
                reply.answer,
            ]
        )

    def remember(self, reply: Reply) -> None:
        memory = reply.decision.memory or {}
        reply.answer = (
            f"Not stored: this stateless endpoint keeps no memories ({memory.get('kind')}:"
            f" {memory.get('text')!r}); use `isr memory add` for the mission's store."
        )
        reply.errors.append("memories cannot be stored here")

    def finish(self, reply: Reply) -> None:
        if (
            reply.intent in ANSWERED
            and reply.plan is None
            and not reply.errors
            and not reply.answer.startswith("No plan yet")  # the responder said it already
        ):
            reply.answer = (
                "No plan yet — plan first? (post an existing_solution, or ask to plan the mission)\n"
                + reply.answer
            )
        if reply.intent == "debug" and reply.plan is not None and not reply.decision.errors:
            reply.answer = _diagnosis(self.fleet, reply.plan) + "\n\n" + reply.answer
        plan, existing = reply.plan, self.existing
        if existing is not None and plan is not None and plan is not existing:
            self.comparison = {
                "points_delta": plan.total_points - existing.total_points,
                "fuel_delta": plan.total_fuel - existing.total_fuel,
            }
            reply.answer += (
                f"\nAgainst the existing solution: {self.comparison['points_delta']:+g} points,"
                f" {self.comparison['fuel_delta']:+.1f} km"
            )


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
