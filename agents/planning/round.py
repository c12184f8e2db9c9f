"""The planning round, in two tiers: the solver commits fast, the agents improve late.

``AgentPlanner`` is a ``MissionPlanner`` (executive/contracts.py).

Consumes: a ``PlanRequest`` (the replanning problem as a scenario, its deadline, the
operator's constraints and words).
Produces: a ``PlanOutcome`` as soon as the algorithmic baseline is ready, carrying the
compiled mission it was made on (the executive validates it once, before it can fly) and,
with agents on, ``followup``: an asyncio task of the slow tier whose result is an
``AgentProposal``. ``AgentRunRecord`` rows go through the ``TraceSink``: one root record
for the round (``run_id = round_id``, agent ``planning_round``), one for the route optimizer
(engine ``algorithmic``), and one per agent call as each finishes.

The fast tier (never waits on a model):

1. The mission is compiled; drones that cannot be planned are helped or left out with the
   reason (``planner.feasibility``), so one drone never fails the round for the others.
2. The baseline (team search with the operator constraints applied, post-optimised) runs
   in a worker thread within the round's deadline; the event loop is never blocked. A timed
   round's search starts from the plan in force (``request.warm_start``) routed on the
   round's mission, what no longer fits left out, so its first plan is never worth less
   than keeping that plan; a seeded one starts from scratch. With a time budget (no
   fixed ``iterations``) the deadline is the whole round's: the search and the
   post-optimisation end at 80 % of it (``baseline_budget``), what is left is the
   executive's, to validate the plan and turn it into commands. A round whose compile left
   too little for that searches a tenth of the deadline from the plan in force (at 200
   drones that plan is 99.6 % of a 10 s search's), or 80 % of it from scratch, and
   post-optimises a fifth more. Batch runs (fixed ``iterations``: a seed reproduces the plan) search 80 % of it and
   post-optimise to the end.

The slow tier (the agents, off the critical path, each call bounded by its own
``agent_timeout_s``):

3. strategist -> allocator through ``engine.complete``; a failed strategist call falls back
   to its rules answer.
4. The allocator's proposal is parsed, clamped, routed exactly and validated (in a worker
   thread); it is offered only if valid, it honours the operator constraints at least as
   well as the baseline, and it scores more points (tie: less fuel) on the round's mission.
5. The critic reviews the proposal (or the baseline). A NEEDS_REVISION verdict with concrete
   suggestions (move a target, add a missed one, remove crossings) is tried once
   (``agents.revision``: edits, re-optimised, validated, traced as a
   ``route_optimizer`` row with model ``critic_revision``); the revision is offered instead
   only if it is valid, keeps the operator constraints and scores better.

An agent named in ``request.skip_agents`` (switched off, or not asked by a cadence round of
another) is not asked: a trace row (``validated_output.skipped``, why) and a reason say so;
the strategist's rules answer stands in for it, an allocator skipped proposes nothing, a
critic skipped reviews nothing.

The executive rebases an offered proposal onto the state when it arrives and applies it
only if it beats the plan in force then; ``AgentProposal.settle`` records that decision on
the allocator's trace row. Engine failures never leave the round: they become reasons and
traced errors. Only a round that cannot produce any valid baseline raises
``PlanningFailed``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from agents.context import (
    HARD_CONSTRAINTS,
    MemoryLike,
    format_memories,
    mission_context,
    solution_summary,
)
from agents.engines.base import (
    AgentCall,
    Engine,
    call_validated,
    canonical_json,
)
from agents.engines.base import input_hash as hash_parts
from agents.engines.per_role import engine_for
from agents.engines.tool_loop import call_with_tools
from agents.planning.proposals import ProposalResult, evaluate_proposal
from agents.revision import concrete_suggestions, revise
from agents.roles import (
    ALLOCATOR_PROMPT,
    ALLOCATOR_TOOL,
    CRITIC_PROMPT,
    CRITIC_TOOL,
    STRATEGIST_PROMPT,
    STRATEGIST_TOOL,
    AllocatorOutput,
    CriticOutput,
    StrategistOutput,
    allocator_rules,
    critic_rules,
    strategist_rules,
)
from agents.tools import ToolContext, ToolSession
from agents.words.state import scenario_state
from executive.contracts import (
    AgentProposal,
    AgentRunRecord,
    PlanOutcome,
    PlanRequest,
    TraceSink,
    WarmStart,
    new_id,
)
from executive.planning import algorithmic
from planner.allocation import allocate
from planner.constraints import (
    OperatorConstraints,
    constrain_mission,
    constrain_problem,
    constraint_notes,
    constraint_violations,
    describe_constraints,
)
from planner.errors import PlannerError
from planner.feasibility import plannable
from planner.intent import RoutedIntent, route_intent
from planner.mission import Compile, Mission, MissionCompiler
from planner.model import Scenario, Solution, drone_label
from planner.planning import swarm_moves, swarm_sized, team_problem
from planner.postopt import post_optimise
from planner.solution import build_solution
from planner.team_search import StopCriterion, solve_team

__all__ = ["AgentPlanner", "PlanningFailed"]

log = logging.getLogger(__name__)

_BASELINE_SHARE = 0.8  # of the deadline, for a seeded (fixed iterations) team search
_POST_OPT_END = 0.8  # of a timed round's deadline: the search and post-optimisation end
# (the last fifth is the executive's: the plan validated, rebased against, made commands,
# then committed at the next tick: about 0.1 s at 50 drones)
_POST_OPT_SLOT = 0.1  # of the deadline: the post-optimisation's, after the search
# of the deadline: the least search a round fitted to it may have. A round whose compile
# left less is late whatever it does: it searches as a seeded one, not less (at 200 drones
# x 2,000 targets, 0.25 s of search is 98.0 % of a 10 s one, 0.4 s 99.5 %)
_MIN_SEARCH = 0.5
# of the deadline: the least search of a round that starts from the plan in force
_MIN_WARM = 0.1
_MIN_CALL_S = 0.02  # below this much time left, an agent call is not attempted
_EPS = 1e-6


def _search_legs(mission: Mission, routes: list[list[int]]) -> None:
    """``mission.search_legs(routes)`` in a thread of its own: whatever fails there is said
    in the log (the solution searches the legs it needs again, and fails the round if it
    must), never a traceback."""
    try:
        mission.search_legs(routes)
    except Exception as exc:
        log.warning("the plan in force's legs were not searched ahead: %r", exc)


def _scenario_text(scenario: Scenario) -> str:
    """The scenario's JSON, hashed into the traces: pydantic's text, its fields in the
    model's order, the same text for the same scenario. At 1,000 drones x 5,000 targets it
    is 5 ms in one call against 50 for the same dict's sorted text made in Python pieces,
    which, beside a round's compile, competed with it for the GIL and made every round
    60-100 ms later."""
    return scenario.model_dump_json(by_alias=True)


class PlanningFailed(algorithmic.PlanningFailed):
    """No valid baseline could be made for a request (the planner failed)."""


@dataclass
class _Baseline:
    solution: Solution
    seconds: float
    iterations: int
    search_score: float  # with the constraint bonus: what the search maximised
    warm: RoutedIntent | None = None  # the plan in force, routed: where the search began
    searched: float = 0.0  # when the search and its post-optimisation ended (perf_counter)


@dataclass
class _Chain:
    """What the agent chain found so far: the allocator's record, its checked proposal."""

    record: dict[str, Any] | None = None  # AgentRunRecord fields of the allocator call
    proposal: ProposalResult | None = None
    reasons: list[str] = field(default_factory=list)


@dataclass
class _Call:
    """One agent call's outcome, for the trace and the round's decisions."""

    output: BaseModel | None
    error: str | None  # "kind: message"
    record: dict[str, Any]


class AgentPlanner:
    """Plans a replan round with the baseline planner and the agent chain."""

    def __init__(
        self,
        engine: Engine,
        sink: TraceSink,
        *,
        seed: int = 0,
        iterations: int | None = None,
        agent_timeout_s: float = 30.0,
        memories: Callable[[], Iterable[MemoryLike]] = lambda: (),
        use_agents: bool = True,
        strategy: str = "efficient",
        post_opt: Mapping[str, bool] | None = None,
        agent_tools: bool = False,
        compile: Compile | None = None,
        whole_round: bool = True,
    ) -> None:
        self.engine = engine
        # a request's deadline is the whole round's (a live round, the tick waiting on its
        # commit); False: the search's 80 % of it, post-optimised to the end (a posted
        # mission's plan, nothing waiting on a tick)
        self.whole_round = whole_round
        # the rounds' missions on one incremental distance table (shared with the
        # executive's rebases when the session wires it so)
        self.compile = compile if compile is not None else MissionCompiler()
        # the allocator and the critic may call their tools (agents.tools) on the round's
        # problem, a copy: an acting tool answers with a proposal, never a commit
        self.agent_tools = agent_tools
        self.sink = sink
        self.seed = seed
        self.iterations = iterations
        self.agent_timeout_s = agent_timeout_s
        self.memories = memories
        self.use_agents = use_agents
        self.strategy = strategy
        # the baseline's post-optimisation switches (planner.postopt.post_optimise's insert,
        # swap, no_cross); all on unless a request says otherwise
        self.post_opt = dict(post_opt or {})
        self._critics: set[asyncio.Task[None]] = set()  # reviews still running (advisory)
        # recent timed rounds' wall seconds from the search's end to the plan handed over
        # (the solution built, checked, traced): the budget leaves that much for them
        self._posts: list[float] = []

    # ------------------------------------------------------------------ the round

    async def plan(self, request: PlanRequest) -> PlanOutcome:
        """The fast tier: the baseline as soon as it is ready; the slow tier goes on as
        ``outcome.followup``."""
        started = time.perf_counter()
        reasons: list[str] = []
        constraints = request.constraints
        # The scenario's JSON, hashed into the traces, is made beside the compile, whose new
        # rows hold no GIL
        texts = asyncio.ensure_future(asyncio.to_thread(_scenario_text, request.scenario))
        try:
            compiled = await asyncio.to_thread(
                self.compile, request.scenario, reach=request.reach_km
            )
        except Exception as exc:
            texts.cancel()
            kind = "planner_error" if isinstance(exc, PlannerError) else type(exc).__name__
            self._emit_root(request, "", started, None, reasons, error=f"{kind}: {exc}")
            raise PlanningFailed(f"planning round {request.round_id}: {exc}") from exc
        narrowed = plannable(compiled)
        mission = narrowed.mission
        reasons += list(narrowed.rerouted.values()) + list(narrowed.left_out.values())
        reasons += [f"constraint not applied: {n}" for n in constraint_notes(mission, constraints)]
        warm = self._warm(request)
        seconds, until = self.baseline_budget(
            request.deadline_s, started, warm is not None, request.reserved_s
        )
        try:
            baseline = await asyncio.to_thread(
                self._baseline, mission, constraints, seconds, until, warm
            )
        except Exception as exc:
            kind = "planner_error" if isinstance(exc, PlannerError) else type(exc).__name__
            text = await texts
            self._emit_root(request, text, started, None, reasons, error=f"{kind}: {exc}")
            raise PlanningFailed(f"planning round {request.round_id}: {exc}") from exc
        text = await texts
        base_violations = constraint_violations(baseline.solution, constraints, mission)
        reasons += [f"baseline: {v}" for v in base_violations]
        self._emit_algorithmic(request, text, baseline, True)
        followup = None
        if self.use_agents:
            followup = asyncio.get_running_loop().create_task(
                self._slow_tier(request, mission, constraints, baseline, base_violations),
                name=f"agents:{request.round_id}",
            )
        else:
            reasons.append("agents off")
        outcome = PlanOutcome(
            round_id=request.round_id,
            tick=request.tick,
            solution=baseline.solution,
            baseline=baseline.solution,
            agent_applied=False,
            reasons=tuple(reasons),
            latency_ms=(time.perf_counter() - started) * 1000,
            mission=mission,
            left_out=dict(narrowed.left_out),
            followup=followup,
            warm=baseline.warm,
        )
        self._emit_root(request, text, started, outcome, reasons)
        if until is not None:
            self._posts = [*self._posts[-7:], time.perf_counter() - baseline.searched]
        return outcome

    async def settled(self) -> None:
        """Wait for the advisory reviews still running (tests, a clean shutdown)."""
        while self._critics:
            await asyncio.gather(*list(self._critics), return_exceptions=True)

    async def _slow_tier(
        self,
        request: PlanRequest,
        mission: Mission,
        constraints: OperatorConstraints,
        baseline: _Baseline,
        base_violations: list[str],
    ) -> AgentProposal:
        """strategist -> allocator -> proposal check -> critic, each call bounded by its own
        timeout; what is offered beat the baseline on the round's mission."""
        chain = _Chain()
        reasons: list[str] = []
        try:
            await self._agent_chain(
                request, mission, constraints, math.inf, chain, baseline.solution
            )
        except asyncio.CancelledError:
            if chain.record is not None:
                chain.record["error"] = "cancelled: a newer plan superseded the round"
                self.sink.emit(AgentRunRecord(**chain.record))
            raise
        except Exception as exc:  # the agents never break a round
            log.exception("agent chain failed in round %s", request.round_id)
            if chain.record is not None and chain.record["error"] is None:
                chain.record["error"] = f"server_error: {type(exc).__name__}: {exc}"
            reasons.append(f"agents: failed: {type(exc).__name__}: {exc}")
        reasons = [*chain.reasons, *reasons]
        cand, record = self._judge(mission, constraints, baseline, base_violations, chain, reasons)
        # The critic reviews what would be offered; its NEEDS_REVISION with concrete
        # suggestions is tried once, and the revision is offered only if valid and better.
        current = cand if cand is not None else baseline.solution
        try:
            review = await self._critic(
                request, mission, constraints, current, baseline.solution, math.inf, reasons
            )
            revised = await self._revise(request, mission, constraints, current, review, reasons)
        except asyncio.CancelledError:
            if record is not None:
                record["error"] = "cancelled: a newer plan superseded the round"
                self.sink.emit(AgentRunRecord(**record))
            raise
        if revised is not None:
            if record is not None and cand is not None:  # the allocator's, now superseded
                out = dict(record["validated_output"] or {})
                out["outcome"] = {**out.get("outcome", {}), "decision": "revised by the critic"}
                self.sink.emit(AgentRunRecord(**{**record, "validated_output": out}))
            cand, record = revised
        if cand is None or record is None:
            if record is not None:
                self.sink.emit(AgentRunRecord(**record))
            return AgentProposal(request.round_id, tuple(reasons))
        sink = self.sink

        def settle(applied: bool, decision: str) -> None:
            """Record the executive's decision on the proposal's allocator row."""
            out = dict(record["validated_output"] or {})
            out["outcome"] = {**out.get("outcome", {}), "decision": decision}
            sink.emit(AgentRunRecord(**{**record, "applied": applied, "validated_output": out}))

        return AgentProposal(request.round_id, tuple(reasons), cand, mission, settle)

    def _judge(
        self,
        mission: Mission,
        constraints: OperatorConstraints,
        baseline: _Baseline,
        base_violations: list[str],
        chain: _Chain,
        reasons: list[str],
    ) -> tuple[Solution | None, dict[str, Any] | None]:
        """The chain's proposal, if it is worth offering: valid, no worse on the operator's
        constraints, and better than the baseline on the round's mission."""
        record, proposal = chain.record, chain.proposal
        if proposal is None or record is None:  # no call, or a failed one: the chain said why
            return None, record
        reasons.extend(f"clamped: {a}" for a in proposal.clamp_actions)
        if not proposal.ok or proposal.solution is None:
            why = "; ".join(proposal.errors)
            reasons.append(f"proposal invalid: {why}")
            record["error"] = f"invalid: {why}"
            return None, record
        cand, base = proposal.solution, baseline.solution
        violations = constraint_violations(cand, constraints, mission)
        worse = [v for v in violations if v not in base_violations]
        decision = None
        if worse:
            decision = f"proposal breaks operator constraints: {'; '.join(worse)}"
        elif cand.total_points < base.total_points - _EPS:
            decision = f"proposal {cand.total_points:g} points < baseline {base.total_points:g}"
        elif (
            cand.total_points <= base.total_points + _EPS
            and cand.total_fuel >= base.total_fuel - _EPS
        ):
            decision = (
                f"proposal {cand.total_points:g} points = baseline, fuel"
                f" {cand.total_fuel:.1f} >= baseline {base.total_fuel:.1f}"
            )
        record["validated_output"] = {
            **(record["validated_output"] or {}),
            "outcome": {
                "points": cand.total_points,
                "fuel": cand.total_fuel,
                "baseline_points": base.total_points,
                "baseline_fuel": base.total_fuel,
                "constraint_violations": violations,
                "decision": decision or "offered",
            },
        }
        if decision is not None:
            reasons.append(decision)
            return None, record
        reasons.append(
            f"proposal offered: {cand.total_points:g} points, fuel"
            f" {cand.total_fuel:.1f} (baseline {base.total_points:g},"
            f" {base.total_fuel:.1f})"
        )
        return cand, record

    # ------------------------------------------------------------------ baseline

    @property
    def after_search_s(self) -> float:
        """Wall seconds from a timed round's search end to its plan handed over (built,
        checked, traced): the longest of the last three rounds' (0 before any)."""
        return max(self._posts[-3:], default=0.0)

    def baseline_budget(
        self, deadline_s: float, started: float, warm: bool = False, reserved_s: float = 0.0
    ) -> tuple[float, float | None]:
        """The baseline's share of the round's deadline, from when the planner got the
        request (``started``, ``time.perf_counter()``: the cut before it takes a few ms),
        once the mission is compiled: the search's seconds, and the instant after which
        the post-optimisation starts no move (None: it runs to the end: for fixed
        ``iterations``, or not ``whole_round``). The two end when what follows them is left
        of the deadline: the executive's part (``reserved_s``, measured: its cut, checks,
        commands and commit; ``PlanRequest.reserved_s``) and this planner's own after its
        search (measured on its last rounds), or, before anything is measured, at 80 % of
        the deadline. The post-optimisation takes the last tenth of the deadline before that
        end, if that leaves the search half of the deadline, or
        if the search starts from the plan in force (``warm``: its first plan is already
        worth that plan, so a short search loses little: at least ``_MIN_WARM`` of the
        deadline). Otherwise the round will be late whatever it does, and it is not made
        worse as well: it searches as a seeded one does (80 % of the deadline), and
        post-optimises for a fifth of the deadline after that (a swarm's uncrossing fits:
        80 ms at 1,000 drones; the swap at 50 drones would take 0.47 s)."""
        if self.iterations is not None or not self.whole_round:
            return max(0.01, _BASELINE_SHARE * deadline_s), None
        now = time.perf_counter()
        if reserved_s > 0:  # the round's own parts, measured (a swarm's take 0.2 s)
            end = started + deadline_s - reserved_s - self.after_search_s
        else:
            end = started + _POST_OPT_END * deadline_s
        slot = _POST_OPT_SLOT * deadline_s
        seconds = end - now - slot
        if warm:
            seconds = max(seconds, _MIN_WARM * deadline_s)
            return seconds, max(end, now + seconds + slot)
        if seconds < _MIN_SEARCH * deadline_s:
            seconds = _BASELINE_SHARE * deadline_s
            return seconds, now + seconds + 2 * slot
        return seconds, end

    def _warm(self, request: PlanRequest) -> WarmStart | None:
        """The plan in force for a timed round's search to start from. A seeded round
        (fixed ``iterations``: batch runs, whose figures a seed reproduces) starts from
        scratch, as it always has; the executive's judge keeps it monotone."""
        return request.warm_start if self.iterations is None else None

    def _baseline(
        self,
        mission: Mission,
        constraints: OperatorConstraints,
        seconds: float,
        until: float | None = None,
        warm: WarmStart | None = None,
    ) -> _Baseline:
        """Team search on the constrained arrays, from ``warm`` (the plan in force routed on
        ``mission``, what does not fit left out) or from scratch, post-optimised until
        ``until`` (a ``time.perf_counter()`` instant; None: to the end) (worker thread)."""
        t0 = time.perf_counter()
        constrained = constrain_mission(mission, constraints)
        problem = constrain_problem(team_problem(constrained), mission, constraints)
        stop = StopCriterion(max_seconds=seconds, max_iterations=self.iterations)
        start = routed = None
        if warm is not None:
            routed = route_intent(mission, warm.intent, ends=warm.ends, gone=warm.gone)
            start = [routed.routes[spec.id] for spec in mission.drones]
            # the legs of the plan in force (most of the plan to come) searched beside the
            # search's nogil kernels, for the solution to find (after a SAM change: all)
            threading.Thread(
                target=_search_legs, args=(mission, start), name="legs-ahead", daemon=True
            ).start()
        found = solve_team(problem, stop, seed=self.seed, warm=start)
        routes = {spec.id: list(r) for spec, r in zip(mission.drones, found.routes)}
        # as planner.planning does: the windowed search moved and inserted targets itself
        options = dict(self.post_opt) | swarm_moves(constrained)
        routes = post_optimise(constrained, routes, **options, deadline=until).routes
        searched = time.perf_counter()
        solution = build_solution(mission, routes)  # validated once, by the executive
        took = time.perf_counter() - t0
        return _Baseline(solution, took, found.iterations, found.score, routed, searched)

    # ------------------------------------------------------------------ agents

    def _system(self, role: str) -> str:
        memories = format_memories(self.memories())
        return "\n".join(part for part in (role, HARD_CONSTRAINTS, memories) if part)

    def _request_text(self, request: PlanRequest, constraints: OperatorConstraints) -> str:
        lines = [f"TRIGGER: {request.trigger} (state at tick {request.tick})"]
        lines.append(f"OPERATOR INSTRUCTION: {request.instruction or 'none'}")
        described = describe_constraints(constraints)
        lines.append("OPERATOR CONSTRAINTS: " + ("; ".join(described) if described else "none"))
        return "\n".join(lines)

    async def _agent_chain(
        self,
        request: PlanRequest,
        mission: Mission,
        constraints: OperatorConstraints,
        deadline: float,
        chain: _Chain,
        baseline: Solution | None = None,
    ) -> None:
        """strategist -> allocator -> proposal check, filling ``chain`` as it goes (so a
        round that stops waiting still knows what happened)."""
        ask = self._request_text(request, constraints)
        current = (
            "CURRENT SOLUTION: the plan is being recomputed from the checkpoints;"
            " frozen legs are listed under DRONES"
        )

        def prepare():  # prompts, rules answers and the memories read: off the event loop
            return (
                mission_context(mission),
                self._system(STRATEGIST_PROMPT),
                strategist_rules(mission, request.trigger, constraints, request.instruction),
            )

        context, system, rules = await asyncio.to_thread(prepare)
        skip = request.skip_agents
        if "strategist" in skip:  # its rules answer stands in, as for a failed call
            self._skipped(request, "strategist", chain.reasons, "rules answer used")
            strategy: BaseModel | None = StrategistOutput.model_validate(rules)
        else:
            call = AgentCall(
                agent="strategist",
                system=system,
                prompt="\n\n".join([context, current, ask]),
                tool=STRATEGIST_TOOL,
                deterministic=rules,
            )
            done = await self._call(request, call, StrategistOutput, deadline)
            self.sink.emit(AgentRunRecord(**done.record))
            strategy = done.output
            if not isinstance(strategy, StrategistOutput):
                chain.reasons.append(f"strategist: {done.error} (rules answer used)")
                strategy = StrategistOutput.model_validate(rules)
        assert isinstance(strategy, StrategistOutput)
        if "allocator" in skip:
            self._skipped(request, "allocator", chain.reasons, "no proposal")
            return
        if not strategy.needs_allocation:
            chain.reasons.append("strategist: no allocation needed")
            return

        def prepare_allocator():
            constrained = constrain_mission(mission, constraints)
            if baseline is not None and swarm_sized(constrained):
                # the greedy auction is minutes of Python at a swarm's size (holding the GIL
                # the tick needs, outliving the round); the fast tier's plan is a better
                # reference, and made already
                allocation: Mapping[str, Sequence[int]] = {
                    d: mission.nodes(r.visited_targets) for d, r in baseline.routes.items()
                }
                source = "the fast tier's plan"
            else:
                allocation = allocate(constrained, self.strategy)
                source = f"{self.strategy}, deterministic rules"
            return (
                allocator_rules(mission, allocation, self.strategy),
                self._system(ALLOCATOR_PROMPT),
                source,
            )

        rules, system, source = await asyncio.to_thread(prepare_allocator)
        reference = "; ".join(
            f"{d}: {', '.join(ts) or '-'}" for d, ts in rules["assignments"].items()
        )
        prompt = "\n\n".join(
            [
                context,
                current,
                ask,
                f"STRATEGIST ANALYSIS: {canonical_json(strategy.model_dump())}",
                f"REFERENCE ALLOCATION ({source}): {reference}",
            ]
        )
        tools = self._tools(request, mission, None)
        call = AgentCall(
            agent="allocator",
            system=system,
            prompt=prompt,
            tool=ALLOCATOR_TOOL,
            deterministic=rules,
            # the rules engine's calls: the rule's allocation, then the plan on a copy
            tool_plan=(("allocate", {"strategy": self.strategy}), ("solve", {}))
            if tools is not None
            else (),
        )
        done = await self._call(request, call, AllocatorOutput, deadline, tools)
        chain.record = done.record
        allocation = done.output
        if not isinstance(allocation, AllocatorOutput):
            chain.reasons.append(f"allocator: {done.error}")
            return
        proposal = await asyncio.to_thread(
            evaluate_proposal, mission, allocation.assignments, constraints
        )
        chain.record["clamp_actions"] = tuple(proposal.clamp_actions)
        chain.record["validated_output"] = {
            **(chain.record["validated_output"] or allocation.model_dump()),
            "clamped_allocation": proposal.allocation,
        }
        chain.proposal = proposal

    def _tools(
        self, request: PlanRequest, mission: Mission, solution: Solution | None
    ) -> ToolContext | None:
        """What the role's tools read when the round offers them (``agent_tools``): the
        round's problem (the remainder, already cut: a copy) and its compiled mission, the
        drones at their checkpoints, the operator's constraints, ``solution`` the plan
        under review (the critic's); None when tools are off."""
        if not self.agent_tools:
            return None
        state = scenario_state(
            request.scenario,
            solution,
            request.run_id,
            tick=request.tick,
            constraints=request.constraints.model_dump(mode="json"),
            remainder=True,
        )
        return ToolContext(
            state=state,
            problem=request.scenario,
            iterations=min(self.iterations or 200, 200),
            seed=self.seed,
            _mission=mission,
        )

    async def _call(
        self,
        request: PlanRequest,
        call: AgentCall,
        model: type[BaseModel],
        deadline: float,
        tools: ToolContext | None = None,
    ) -> _Call:
        """One engine call raced against the deadline; never raises an engine failure.
        With ``tools`` the engine may call the role's tools first, each call traced under
        this call's run."""
        started = time.perf_counter()
        run_id = new_id()  # before the call: its tool calls' rows name it as their parent
        timeout = min(self.agent_timeout_s, deadline - started)
        reply = None
        error = None
        output = None
        raw = None
        session = None
        if timeout < _MIN_CALL_S:
            error = "timeout: no time left before the deadline"
        else:
            if tools is None:
                done = await call_validated(self.engine, call, model, timeout)
            else:
                session = ToolSession(call.agent, tools, self.sink, parent_run_id=run_id)
                done = await call_with_tools(self.engine, call, session, model, timeout)
            # raw: what the engine said, also when it was unusable (no reply then)
            reply, output, error, raw = done.reply, done.output, done.error, done.raw
        answered = engine_for(self.engine, call.agent)  # the role's own engine, if per role
        validated = output.model_dump() if output is not None else None
        if validated is not None and session is not None:
            validated["tool_calls"] = [c.run_id for c in session.calls]
        record = dict(
            run_id=run_id,
            parent_run_id=request.round_id,
            mission_run_id=request.run_id,
            agent=call.agent,
            engine=getattr(answered, "name", "unknown"),
            model=(
                reply.model
                if reply is not None and reply.model
                else getattr(answered, "model", None)
            ),
            input_hash=call.input_hash,
            input_size=call.input_size,
            tokens_in=reply.tokens_in if reply is not None else None,
            tokens_out=reply.tokens_out if reply is not None else None,
            duration_ms=(time.perf_counter() - started) * 1000,
            raw_output=raw,
            validated_output=validated,
            clamp_actions=(),
            applied=False,
            error=error,
            tick=request.tick,
        )
        return _Call(output, error, record)

    async def _revise(
        self,
        request: PlanRequest,
        mission: Mission,
        constraints: OperatorConstraints,
        solution: Solution,
        review: CriticOutput | None,
        reasons: list[str],
    ) -> tuple[Solution, dict[str, Any]] | None:
        """One re-optimisation from the critic's concrete suggestions (worker thread):
        (the revised plan, its trace row) when it is valid and better, else None. The row
        of a revision not kept is written at once."""
        if review is None or review.final_verdict != "NEEDS_REVISION":
            return None
        suggestions = concrete_suggestions(review, mission)
        if not suggestions:
            reasons.append("critic: NEEDS_REVISION without a concrete suggestion")
            return None
        started = time.perf_counter()
        revision = await asyncio.to_thread(revise, mission, solution, suggestions, constraints)
        reasons.append(f"critic revision: {revision.reason}")
        record: dict[str, Any] = dict(
            run_id=new_id(),
            parent_run_id=request.round_id,
            mission_run_id=request.run_id,
            agent="route_optimizer",
            engine="algorithmic",
            model="critic_revision",
            input_hash=hash_parts(canonical_json(revision.to_dict()["suggestions"])),
            input_size=sum(len(s.text) for s in suggestions),
            tokens_in=None,
            tokens_out=None,
            duration_ms=(time.perf_counter() - started) * 1000,
            raw_output=None,
            validated_output={"revision": revision.to_dict()},
            clamp_actions=(),
            applied=False,
            error=None,
            tick=request.tick,
        )
        if not revision.kept or revision.solution is None:
            self.sink.emit(AgentRunRecord(**record))
            return None
        return revision.solution, record

    async def _critic(
        self, request, mission, constraints, solution, baseline, deadline, reasons
    ) -> CriticOutput | None:
        if "critic" in request.skip_agents:
            self._skipped(request, "critic", reasons, "no review")
            return None

        def prepare():  # off the event loop, like every prompt
            violations = constraint_violations(solution, constraints, mission)
            rules = critic_rules(mission, solution, baseline=baseline, violations=violations)
            prompt = "\n\n".join(
                [
                    mission_context(mission),
                    solution_summary(mission, solution),
                    self._request_text(request, constraints),
                ]
            )
            return rules, prompt, self._system(CRITIC_PROMPT)

        try:
            rules, prompt, system = await asyncio.to_thread(prepare)
        except Exception as exc:
            log.exception("critic rules failed in round %s", request.round_id)
            reasons.append(f"critic: skipped: {type(exc).__name__}: {exc}")
            return None
        tools = self._tools(request, mission, solution)
        routes = {drone_label(d): list(r.route) for d, r in solution.routes.items()}
        call = AgentCall(
            agent="critic",
            system=system,
            prompt=prompt,
            tool=CRITIC_TOOL,
            deterministic=rules,
            # the rules engine's call: the plan under review through the validator
            tool_plan=(("validate", {"routes": routes}),) if tools is not None else (),
        )
        done = await self._call(request, call, CriticOutput, deadline, tools)
        self.sink.emit(AgentRunRecord(**done.record))
        if done.output is None:
            reasons.append(f"critic: {done.error}")
            return None
        review = done.output
        return review if isinstance(review, CriticOutput) else None

    # ------------------------------------------------------------------ traces

    def _skipped(self, request: PlanRequest, agent: str, reasons: list[str], so: str) -> None:
        """``agent`` is not asked in this round (``request.skip_agents`` says why): never
        silently, a trace row of its own and a reason of the round. The row has no input
        hash, so a replay engine reading the trace never takes it for an answer."""
        why = request.skip_agents[agent]
        reasons.append(f"{agent}: skipped: {why} ({so})")
        self.sink.emit(
            AgentRunRecord(
                run_id=new_id(),
                parent_run_id=request.round_id,
                mission_run_id=request.run_id,
                agent=agent,
                engine=getattr(engine_for(self.engine, agent), "name", "unknown"),
                model=None,
                input_hash="",
                input_size=0,
                tokens_in=None,
                tokens_out=None,
                duration_ms=0.0,
                raw_output=None,
                validated_output={"skipped": why, "why": f"skipped: {why} ({so})"},
                tick=request.tick,
            )
        )

    def _emit_algorithmic(
        self, request: PlanRequest, text: str, baseline: _Baseline, applied: bool
    ) -> None:
        sol = baseline.solution
        self.sink.emit(
            AgentRunRecord(
                run_id=new_id(),
                parent_run_id=request.round_id,
                mission_run_id=request.run_id,
                agent="route_optimizer",
                engine="algorithmic",
                model="team_search",
                input_hash=hash_parts(
                    text,
                    canonical_json(request.constraints.model_dump(mode="json")),
                    str(self.seed),
                ),
                input_size=len(text),
                tokens_in=None,
                tokens_out=None,
                duration_ms=baseline.seconds * 1000,
                raw_output=None,
                validated_output={
                    "routes": {d: r.route for d, r in sol.routes.items()},
                    "total_points": sol.total_points,
                    "total_fuel": sol.total_fuel,
                    "unassigned_targets": list(sol.unassigned_targets),
                    "iterations": baseline.iterations,
                    "seed": self.seed,
                },
                applied=applied,
                tick=request.tick,
            )
        )

    def _emit_root(
        self,
        request: PlanRequest,
        text: str,
        started: float,
        outcome: PlanOutcome | None,
        reasons: list[str],
        error: str | None = None,
    ) -> None:
        summary = None
        if outcome is not None:
            summary = {
                "trigger": request.trigger,
                "agent_applied": outcome.agent_applied,
                "total_points": outcome.solution.total_points,
                "total_fuel": outcome.solution.total_fuel,
                "baseline_points": outcome.baseline.total_points,
                "reasons": list(outcome.reasons),
            }
        self.sink.emit(
            AgentRunRecord(
                run_id=request.round_id,
                parent_run_id=request.parent_run_id,
                mission_run_id=request.run_id,
                agent="planning_round",
                engine=getattr(self.engine, "name", "unknown")
                if self.use_agents
                else "algorithmic",
                model=getattr(self.engine, "model", None) if self.use_agents else None,
                input_hash=hash_parts(
                    text,
                    request.trigger,
                    canonical_json(request.constraints.model_dump(mode="json")),
                    request.instruction or "",
                ),
                input_size=len(text),
                tokens_in=None,
                tokens_out=None,
                duration_ms=(time.perf_counter() - started) * 1000,
                raw_output=None,
                validated_output=summary,
                clamp_actions=tuple(r for r in reasons if r.startswith("clamped: ")),
                applied=outcome is not None,
                error=error,
                tick=request.tick,
            )
        )
