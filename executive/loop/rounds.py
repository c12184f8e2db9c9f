"""The life of a plan: rounds (the fast tier), drafts, rebases, review, the agents' late
proposals (the slow tier), commits.

* **Round**: a trigger (a known SAM on a path, a lost drone, a target change, an operator's
  REPLAN) queues; at a tick boundary, with no round in flight, a round starts: each drone's
  checkpoint is where it will be at the cut tick (now + the planning latency + a margin),
  the path up to it is frozen, and the remainder is planned off the tick by the fast tier.
  With ``commit="auto"`` the fresh draft flies only if it is worth at least the plan in
  force rebased onto the same cut; otherwise that rebased plan flies on (``fast_tier``).
* **Draft**: the round's plan, validated against the mission it was made on (the validator
  guards every commit, whoever produced the plan). It records its *intent*: per drone, the
  ordered targets still to visit and where it ends.
* **Rebase**: a draft whose cut has passed (it came late, or was approved late) is never
  flown blindly and never thrown away: it is cut again from the current state and its
  intent routed exactly from the new checkpoints (``planner.intent``), validated, and
  committed with its provenance. Targets that no longer fit or became unsafe are dropped
  and named.
* **Review** (policy ``commit="review"``): nothing flies that the operator did not approve.
  A draft waits as long as needed (or until the policy's timeout) while the drones fly the
  plan in force under the safety layer; its preview is rebased as time passes. ACCEPT
  commits it (rebased when its cut has passed); if the rebase had to drop targets, the
  result is a new draft for review, saying what changed and why.
* **Agents** (the slow tier): a round's agent chain answers late. Its proposal is rebased
  onto the state when it arrives, together with the plan in force, and applied only if it
  beats it then (auto), or offered for review. A newer round cancels it.

Rebase, review and both tiers *decide* (``decisions``: commit, offer, rebase, hold, drop,
each with its reason); ``Rounds.apply`` is the one place a decision takes effect.

As fast as possible (``speed`` None) every job is awaited at its cut tick, so batch runs
reproduce exactly whatever the wall clock does; paced, nothing is ever awaited in a tick.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import math
import time
from collections.abc import Callable, Iterable
from typing import Any, Literal, assert_never

from executive.contracts import PlanOutcome, PlanRequest, PlanStatus, WarmStart, new_id
from executive.loop import fast_tier, rebase, review, slow_tier
from executive.loop.cadence import CADENCE, AgentCadence, cadence_roles
from executive.loop.cut import (
    Checkpoint,
    ReplanProblem,
    build_replan,
    fuel_at_start,
    start_reach,
)
from executive.loop.decisions import (
    AgentVerdict,
    Commit,
    Decision,
    Drop,
    Hold,
    Moment,
    Offer,
    Rebase,
    Rebasing,
)
from executive.loop.drafts import (
    AgentWork,
    Approval,
    Asking,
    Draft,
    InForce,
    Planned,
    Rebased,
    RebaseJob,
    Remainder,
    Rival,
    Round,
    RoundHost,
    airborne,
    checkpoints_json,
    ends_of,
    provenance,
)
from executive.loop.plan_commands import fly_commands
from executive.loop.prepared import prepare_json, solution_json
from executive.loop.report import Replan
from planner.constraints import constraint_violations, keep_others
from planner.geometry import Path
from planner.intent import Intent, intent_of
from planner.mission import Mission
from planner.model import Solution, drone_label
from planner.validation import validate_solution
from planner.way_home import WayHome, guard_solution
from sim.world import World

__all__ = ["Draft", "Round", "Rounds"]

# The first round's estimate of its part after the plan, as a multiple of the first plan's
# (validated and made into commands the same way; a round also routes the plan in force
# to judge it and writes the JSON its records carry)
_FIRST_AFTER = 1.5

log = logging.getLogger(__name__)


class Rounds:
    """The rounds, drafts, rebases and proposals of one run, and the plan in force."""

    def __init__(self, host: RoundHost) -> None:
        self.host = host
        self.plan: Solution | None = None  # the plan in force (its remainder form)
        self.plan_id: str | None = None
        self.intent: Intent = {}  # of the plan in force
        self.ends: dict[str, str] = {}
        self.replans: list[Replan] = []
        self.pending: list[str] = []  # triggers waiting for a round
        # The drones the waiting round re-plans when only moves asked for it (the others
        # keep the plan in force, rebased onto the cut); None with ``_full``: the whole
        # remainder, because another trigger (or words that were not only moves) asked.
        self.only: set[str] | None = None
        self._full = False
        # drones kept parked for value that arrives late (Policy.spare_drones), and why
        self.spares: dict[str, str] = {}
        self.round: Round | None = None
        self.review: Draft | None = None  # waiting for the operator
        self.jobs: list[RebaseJob] = []
        self.agents: list[AgentWork] = []
        self.approved_waiting: list[tuple[Draft, Approval]] = []  # approved while paused
        self.start_after = -1  # a round may not start before this tick (safety acted)
        self.known_version = 0  # bumps on every change that invalidates work in flight
        self.commits: list[dict[str, Any]] = []  # each commit's provenance, for the report
        self._latencies: list[float] = []  # recent rounds' wall latency, ms
        # recent rounds' wall seconds from the planner's answer to its plan checked and made
        # into commands; before any, an estimate from the first plan's (``commit_initial``)
        self._afters: list[float] = []
        self._rebase_latencies: list[float] = []
        self._cadence: AgentCadence | None = None  # built at the first tick boundary

    # ----- what the loop asks ----------------------------------------------------------

    @property
    def checkpoints(self) -> dict[str, Checkpoint]:
        """The checkpoints of the round in flight (or of the draft waiting), else {}."""
        if self.round is not None:  # paced, its remainder is cut in a worker: {} till then
            cut = self.round.remainder
            return {} if cut is None else dict(cut.problem.checkpoints)
        if self.review is not None:
            return dict(self.review.problem.checkpoints)
        return {}

    @property
    def busy(self) -> bool:
        """A round or a commit is being worked on."""
        return self.round is not None or any(j.purpose == "commit" for j in self.jobs)

    def changed(self) -> None:
        """Something changed that work in flight did not see."""
        self.known_version += 1

    def trigger(self, kind: str, trigger: str, only: Iterable[str] = ()) -> None:
        """A change of ``kind`` (a policy trigger) asks for a replan, if the policy says so.
        ``only``: an operator's move names these drones; the round re-plans only them,
        unless another trigger waiting with it asks for the whole remainder."""
        host = self.host
        self.known_version += 1
        if not host.policy.replan or kind not in host.policy.triggers:
            host.recorder.event(host.sim.tick, "CONTINUE", {"change": trigger, "replan": False})
            return
        self._scope(set(only))
        if self.spares and kind in host.policy.spare_release:
            host.recorder.event(
                host.sim.tick, "SPARES_RELEASED", {"drones": sorted(self.spares), "change": trigger}
            )
            self.spares = {}
        if trigger not in self.pending:
            self.pending.append(trigger)

    def decide(self) -> None:
        """At a tick boundary: finish what is due, start what waits."""
        host = self.host
        tick = host.sim.tick
        batch = host.speed is None
        r = self.round
        if r is not None and r.task.done() and (not batch or tick >= r.cut):
            self._finish_round()
        for job in list(self.jobs):
            if job.task.done() and (not batch or tick >= job.cut):
                self.jobs.remove(job)
                self._finish_job(job)
        for work in list(self.agents):
            if work.task.done() and (not batch or tick >= work.due):
                self.agents.remove(work)
                self._finish_agents(work)
        if not host.paused:
            waiting, self.approved_waiting = self.approved_waiting, []
            for draft, approved in waiting:
                self.apply(
                    Rebase(draft, "commit", "resumed: approved while paused", approved=approved)
                )
        self._review_clock()
        self._cadence_due(tick)
        if self.pending and self.round is None and not host.paused and tick >= self.start_after:
            self.start()

    def _scope(self, only: set[str]) -> None:
        """What the waiting round re-plans: the union of the moves' drones, or everything
        once any trigger asks for it."""
        if only:
            self.only = (self.only or set()) | only
        else:
            self._full = True

    def _cadence_due(self, tick: int) -> None:
        """The agents on a cadence that are due (and on) join the triggers, when the agent
        chain is free: never while a round or its agents still work (``cadence``)."""
        host = self.host
        every = host.options.agent_cadence_s
        if not every or not host.policy.replan:
            return
        if self._cadence is None:
            self._cadence = AgentCadence(every, host.sim.tick_hz, tick)
        cadence = self._cadence
        due = [r for r in cadence.due(tick) if r not in host.agents_off]
        if not due or host.paused or tick < self.start_after:
            return
        settling = any(j.purpose == "agents" for j in self.jobs)  # a proposal rebased
        if self.round is not None or self.agents or settling:  # busy: the due agents wait
            return
        for role in due:
            was_due = cadence.next_due[role]
            cadence.started(role, tick)
            waited = {"waited": "the agent chain was busy"} if tick > was_due else {}
            host.recorder.event(
                tick,
                "AGENT_CADENCE",
                {
                    "agent": role,
                    "every_s": cadence.every_s[role],
                    "due_tick": was_due,
                    "next_due_tick": cadence.next_due[role],
                    **waited,
                },
            )
            if f"{CADENCE}{role}" not in self.pending:
                self.pending.append(f"{CADENCE}{role}")
            self._full = True  # the agents due plan the whole remainder

    async def await_due(self) -> None:
        """As fast as possible: whatever is due at this tick is awaited, so the run
        reproduces whatever the wall clock does."""
        tick = self.host.sim.tick
        due: list[asyncio.Task[Any]] = []
        r = self.round
        if r is not None and tick >= r.cut and not r.task.done():
            due.append(r.task)
        due += [j.task for j in self.jobs if tick >= j.cut and not j.task.done()]
        due += [w.task for w in self.agents if tick >= w.due and not w.task.done()]
        if due:
            await asyncio.wait(due)

    def lookahead(self) -> int:
        """Ticks from now to the cut: the planning latency (measured, when paced) + a margin."""
        return self._ticks_for(self._latencies)

    def _rebase_lookahead(self) -> int:
        return self._ticks_for(self._rebase_latencies)

    def _ticks_for(self, latencies: list[float]) -> int:
        host = self.host
        p = host.policy
        hz = host.sim.tick_hz
        if host.speed is None:  # the loop waits: a fixed, reproducible cut
            return max(1, math.ceil((p.planning_deadline_s + p.lookahead_margin_s) * hz))
        latency = max([p.planning_deadline_s, *(x / 1000 for x in latencies[-8:])])
        return max(1, math.ceil((latency + p.lookahead_margin_s) * hz * host.speed))

    def invalidate(self, why: str) -> None:
        """Work in flight may finish but will not be used (paused, reset)."""
        if self.round is not None:
            self.round.invalid = why
            if why == "reset":
                self.round.task.cancel()
        for job in list(self.jobs):
            if job.purpose == "commit" and job.approved is not None and why == "paused":
                self.approved_waiting.append((job.draft, job.approved))
            job.task.cancel()
            self.jobs.remove(job)

    def reset(self) -> None:
        """RESET: drop the round, the rebases, the agents, the draft and the triggers."""
        self.invalidate("reset")
        for work in self.agents:
            work.task.cancel()
        self.agents = []
        self.approved_waiting = []
        if self.review is not None:
            self.drop_draft("rejected", "reset")
        self.pending = []
        self.only, self._full = None, False

    def cancel(self) -> None:
        """The run is over: stop everything still working."""
        tasks: list[asyncio.Task[Any]] = [j.task for j in self.jobs]
        tasks += [w.task for w in self.agents]
        if self.round is not None:
            tasks.append(self.round.task)
        for task in tasks:
            if not task.done():
                task.cancel()

    # ----- the first plan --------------------------------------------------------------

    def commit_initial(
        self,
        mission: Mission,
        solution: Solution,
        latency_ms: float,
        left_out: dict[str, str] | None = None,
        reasons: tuple[str, ...] = (),
        checked_s: float = 0.0,
    ) -> None:
        """The first plan flies like every later one: fly_path commands stamped for tick 0,
        recorded as inputs, so a replay needs nothing but the inputs. Each drone in
        ``left_out`` (the plan goes around it: it stays parked) is a NOT_PLANNED event with
        the reason; ``reasons`` (routes the way-home check ended sooner) go with its commit.
        ``checked_s``: the seconds its validation took; with the commands' own, the first
        round's estimate of what it does after its plan."""
        made = time.perf_counter()
        host = self.host
        self.plan = solution
        self.plan_id = new_id()
        self.intent = intent_of(solution)
        self.ends = {d: r.route[-1] for d, r in solution.routes.items() if r.route}
        starts = {spec.id for spec in mission.drones}
        live = {t.id for t in host.sim.world.known_environment.targets}
        commands = fly_commands(mission, solution, 0, starts, live)
        # before tick 0, off the clock: what the first check and the first step would
        # otherwise work out on their ticks (first contacts, piece tables)
        host.ahead()(c.path for c in commands)
        # a round does this and more (routes the plan in force, writes the JSON): half again
        self._afters = [_FIRST_AFTER * (checked_s + time.perf_counter() - made)]
        for command in commands:
            host.recorder.submit(command, "executive")
        host.recorder.plan_version(
            self.plan_id,
            None,
            0,
            "committed",
            "initial",
            solution,
            latency_ms,
            provenance={"origin": "planner", "approved": "auto"},
        )
        host.recorder.event(
            0,
            "COMMIT_PLAN",
            {
                "plan_id": self.plan_id,
                "trigger": "initial",
                "points": solution.total_points,
                **({"reasons": list(reasons)} if reasons else {}),
            },
        )
        for drone_id, reason in (left_out or {}).items():
            host.recorder.event(0, "NOT_PLANNED", {"drone": drone_id, "reason": reason})
        self._publish_plan(0, {"origin": "planner", "approved": "auto"})

    def take_over(
        self, plan_id: str, solution: Solution, intent: Intent, ends: dict[str, str]
    ) -> None:
        """A fork's start: the plan in force where the parent was (already flying: its
        commands are in the inputs re-executed, its version in the copied trace)."""
        self.plan, self.plan_id = solution, plan_id
        self.intent, self.ends = dict(intent), dict(ends)
        self._publish_plan(self.host.sim.tick, {"origin": "fork", "approved": "parent"})

    # ----- rounds (the fast tier) --------------------------------------------------------

    def start(self) -> None:
        """Cut at the checkpoints, freeze what is flown up to them, plan the remainder."""
        host = self.host
        sim = host.sim
        trigger = " + ".join(self.pending)
        self.pending = []
        only = None if self._full or self.plan_id is None else self.only
        self.only, self._full = None, False
        # A newer round supersedes the agents still thinking about an older world.
        for work in self.agents:
            work.task.cancel()
        self.agents = []
        for job in [j for j in self.jobs if j.purpose == "agents"]:
            job.task.cancel()
            self.jobs.remove(job)
        cut = sim.tick + self.lookahead()
        round_id = new_id()
        skip = self._skip_agents(trigger)
        keep = None
        # the plan in force: the round's search starts from it (in review too: the draft
        # offered is then worth at least keeping it)
        warm = None if self.plan_id is None else (self.plan_id, dict(self.intent), dict(self.ends))
        if (host.policy.commit == "auto" or only) and warm is not None:
            # The fresh draft will be judged against the plan in force rebased onto the
            # same cut (``fast_tier``), and a move's round keeps the drones it does not
            # name on it: what that rebase needs, taken on the tick.
            keep = warm
            if only:  # the agents would re-allocate everything
                why = (
                    f"not asked: a move re-plans only {_labels(only)}; the others keep their routes"
                )
                skip |= {r: why for r in host.options.agent_roles if r not in skip}
        replan = Replan(round_id, trigger, sim.tick, cut)
        self.replans.append(replan)
        ahead = host.ahead()
        # Paced, the tick only copies the world (``World.frozen``: well under a ms at 1,000
        # drones) and the remainder is cut from the copy in a worker (10-50 ms of Python
        # at that size, measured on the tick); as fast as possible it is cut now, so batch
        # runs trace the same records at the same ticks.
        paced = host.speed is not None
        world = sim.world.frozen() if paced else sim.world
        started = time.perf_counter()
        # the executive's part after the plan (its checks and commands), as long as the
        # longest of the last rounds', and when the plan must be ready for the tick that
        # takes it to come within the deadline (ticks start on the schedule: at 1x 20 Hz a
        # plan ready just before the deadline would be taken up to 50 ms after it)
        after = max(self._afters[-3:], default=0.0) if paced else 0.0
        deadline = host.policy.planning_deadline_s
        past_tick = deadline - host.taken_by(deadline)
        asking = Asking(
            round_id, trigger, skip, host.constraints, host.instruction, started, after, past_tick
        )
        cutting = functools.partial(
            self._cut, world, self._cutter(world, cut), keep, only, asking, warm
        )
        loop = asyncio.get_running_loop()
        name = f"round-{round_id}"
        if paced:
            task = loop.create_task(self._cut_and_plan(cutting, ahead, only), name=name)
            self.round = Round(replan, cut, task, self.known_version, started, only=only)
            return
        remainder = cutting()
        task = loop.create_task(self._plan(remainder, ahead, only), name=name)
        self.round = Round(replan, cut, task, self.known_version, started, only=only)
        self._cut_done(remainder)

    def _cutter(self, world: World, cut: int) -> Callable[[], ReplanProblem]:
        """The remainder at ``cut`` from ``world``, to be cut later (in a worker, from a
        frozen world), with the reserves, the drones not planned and the way-home check
        taken now, on the tick."""
        host = self.host
        return functools.partial(
            build_replan,
            world,
            cut,
            reserve=host.reserve_km,
            leaked=frozenset(host.leak_reserve),
            leak_share=host.policy.leak_share,
            not_planned={**host.returning, **self.spares},
            home_check=host.home_check,
        )

    def _cut(
        self,
        world: World,
        cutter: Callable[[], ReplanProblem],
        keep: tuple[str, Intent, dict[str, str]] | None,
        only: set[str] | None,
        asking: Asking,
        warm: tuple[str, Intent, dict[str, str]] | None = None,
    ) -> Remainder:
        """The round's remainder (``cutter``) read from ``world`` (the sim's, or a frozen
        copy of it in a worker), with the plan in force (``warm``: its id, intent and ends)
        its search starts from, and judged against (``keep``: the same, or None), and the
        planner's request (``asking``, as on the tick)."""
        host = self.host
        constraints = asking.constraints
        problem = cutter()
        in_force = start = None
        if warm is not None:
            gone = problem.gone(world)
            start = WarmStart(warm[1], warm[2], gone)
            if keep is not None:
                in_force = InForce(*keep, gone)
                if only:
                    # the planner may give each drone only what it has (a named one: less
                    # what moves away, plus what moves to it)
                    left = {d: [t for t in ts if t not in gone] for d, ts in keep[1].items()}
                    constraints = keep_others(constraints, left, only)
        request = PlanRequest(
            host.run_id,
            asking.round_id,
            problem.tick,
            asking.trigger,
            problem.scenario,
            host.policy.planning_deadline_s,
            constraints,
            asking.instruction,
            host.run_id,
            asking.skip,
            start,
            # the cut so far, what follows the plan and the wait for the tick that takes
            # it: not the planner's to spend
            (time.perf_counter() - asking.started + asking.past_tick_s + asking.after_s)
            if asking.after_s
            else 0.0,
            start_reach(problem),
        )
        return Remainder(problem, in_force, request)

    async def _cut_and_plan(
        self,
        cutting: Callable[[], Remainder],
        ahead: Callable[[Iterable[Path]], None],
        only: set[str] | None,
    ) -> Planned:
        """Paced: cut the remainder in a worker, trace it, then plan it."""
        remainder = await asyncio.to_thread(cutting)
        self._cut_done(remainder)
        return await self._plan(remainder, ahead, only)

    def _cut_done(self, remainder: Remainder) -> None:
        """The round's remainder is cut: keep it with the round and trace it."""
        r = self.round
        assert r is not None and r.replan.round_id == remainder.request.round_id
        r.remainder = remainder
        host = self.host
        tick = host.sim.tick
        problem, request = remainder.problem, remainder.request
        host.recorder.event(
            tick,
            "CUT_AND_FREEZE",
            {
                "round_id": request.round_id,
                "cut_tick": r.cut,
                "trigger": request.trigger,
                "checkpoints": checkpoints_json(problem),
                "not_planned": problem.left_out,
            },
        )
        skip, only = request.skip_agents, r.only
        host.recorder.event(
            tick,
            "REPLAN_REMAINDER",
            {
                "round_id": request.round_id,
                "trigger": request.trigger,
                "constraints": host.constraints.model_dump(mode="json"),
                **({"agents_skipped": dict(skip)} if skip else {}),
                **({"only_drones": sorted(only)} if only else {}),
            },
        )

    def _skip_agents(self, trigger: str) -> dict[str, str]:
        """The agents a round does not ask, with why: those switched off, and, in a round
        only cadences started, the agents not due."""
        host = self.host
        skip = dict(host.agents_off)
        asked = cadence_roles(trigger)
        if asked is not None:
            why = f"not asked: a cadence round of {', '.join(sorted(asked))}"
            skip |= {r: why for r in host.options.agent_roles if r not in asked and r not in skip}
        return skip

    async def _plan(
        self,
        remainder: Remainder,
        ahead: Callable[[Iterable[Path]], None],
        only: set[str] | None = None,
    ) -> Planned:
        """Plan, then (in a worker thread) validate on the mission the plan was made on and
        turn it into commands: the tick only ever submits ready commands. With ``in_force``
        the plan in force is rebased onto the same cut and mission, to be judged against
        (auto), and with ``only`` every drone not in it flies that rebased route."""
        problem, in_force, request = remainder.problem, remainder.in_force, remainder.request
        fresh = await self.host.planner.plan(request)
        r = self.round
        if r is not None and r.replan.round_id == request.round_id:
            r.planned = time.perf_counter()
        auto = self.host.policy.commit == "auto"

        def prepare() -> Planned:
            # The planner hands over the mission it compiled; one that does not (a plain
            # MissionPlanner) has its scenario compiled here. Either way: validated once.
            outcome = fresh
            mission = outcome.mission or self.host.compile(
                problem.scenario, reach=start_reach(problem)
            )
            routed = kept = None
            check = problem.home_check
            # the way-home check's figures, shared by both drafts
            way_home = None if check is None else WayHome(mission, check.ends)
            if in_force is not None:
                routed = rebase.route_only(
                    problem,
                    mission,
                    outcome.left_out,
                    in_force.intent,
                    in_force.ends,
                    in_force.gone,
                    way_home=way_home,
                    # the planner's warm start is the same routing, on the same mission
                    routed=outcome.warm if outcome.mission is mission else None,
                )
            if only and routed is not None:
                kept = rebase.finish(routed)
                solution, why = rebase.keep_unnamed(mission, outcome.solution, kept.solution, only)
                outcome = dataclasses.replace(
                    outcome, solution=solution, reasons=(*outcome.reasons, why)
                )
            if check is not None:
                # the way home with one more SAM on it: a route that fails it ends sooner
                fuel = fuel_at_start(problem)
                solution, cuts = guard_solution(mission, outcome.solution, fuel, check, way_home)
                if cuts:
                    outcome = dataclasses.replace(
                        outcome,
                        solution=solution,
                        reasons=(*outcome.reasons, *(c.reason for c in cuts)),
                    )
            violations = validate_solution(mission, outcome.solution)
            commands = fly_commands(mission, outcome.solution, problem.tick, airborne(problem))
            prepare_json(outcome.solution, commands)  # the JSON its draft and commit record
            ahead(c.path for c in commands)  # the first check after its commit reads these
            rival = None
            if auto and in_force is not None and routed is not None and not violations:
                # The plan in force is validated and made into commands only if it might
                # fly instead (at 200 drones that is 0.3 s of a round's Python, mostly legs)
                if kept is None and fast_tier.contends(
                    routed.points, outcome.solution.total_points
                ):
                    kept = rebase.finish(routed)
                if kept is None:
                    rival = Rival(in_force.plan_id, routed.points, None)
                else:
                    constraints = request.constraints
                    ahead(c.path for c in kept.commands)
                    rival = Rival(
                        in_force.plan_id,
                        kept.solution.total_points,
                        kept,
                        tuple(constraint_violations(kept.solution, constraints, mission)),
                        tuple(constraint_violations(outcome.solution, constraints, mission)),
                    )
            solution = outcome.solution  # its intent and ends, for its draft (off the tick)
            return Planned(
                outcome,
                mission,
                list(violations),
                commands,
                rival,
                intent_of(solution),
                ends_of(solution),
            )

        try:
            planned = await asyncio.to_thread(prepare)
        except BaseException:
            if fresh.followup is not None:
                fresh.followup.cancel()
            raise
        r = self.round
        if r is not None and r.replan.round_id == request.round_id:
            r.ready = time.perf_counter()
        return planned

    def _finish_round(self) -> None:
        r = self.round
        assert r is not None
        self.round = None
        host = self.host
        tick = host.sim.tick
        replan = r.replan
        now = time.perf_counter()
        latency = (now - r.started) * 1000
        replan.latency_ms = latency
        self._latencies = [*self._latencies[-7:], latency]
        if r.planned is not None and r.ready is not None:  # the executive's part: checks, commands
            self._afters = [*self._afters[-7:], r.ready - r.planned]
        try:
            planned = r.task.result()
        except asyncio.CancelledError:
            replan.status = "superseded"
            return
        except Exception as exc:  # a failed round never stops the mission
            replan.status = "failed"
            replan.reasons = (str(exc),)
            host.recorder.event(
                tick,
                "REPLAN_FAILED",
                {"round_id": replan.round_id, "reason": str(exc), "latency_ms": latency},
            )
            log.warning("planning round %s failed: %s", replan.round_id, exc)
            host.replan_failed(str(exc))
            return
        assert r.remainder is not None  # cut before the plan was asked for
        problem, in_force = r.remainder.problem, r.remainder.in_force
        outcome = planned.outcome
        replan.reasons = tuple(outcome.reasons)
        replan.points = outcome.solution.total_points
        plan_id = new_id()
        version = (replan.trigger, outcome.solution, latency, replan.round_id)
        if planned.violations:  # the validator guards: whatever produced it, it does not fly
            self._cancel_followup(outcome)
            replan.status = "rejected"
            why = "; ".join(map(str, planned.violations))
            host.recorder.plan_version(plan_id, self.plan_id, r.cut, "rejected", *version)
            host.recorder.event(tick, "REPLAN_FAILED", {"round_id": replan.round_id, "reason": why})
            host.replan_failed(why)
            return
        host.recorder.plan_version(plan_id, self.plan_id, r.cut, "draft", *version)
        host.recorder.event(
            tick,
            "DRAFT_READY",
            {
                "round_id": replan.round_id,
                "plan_id": plan_id,
                "latency_ms": latency,
                "points": outcome.solution.total_points,
                "reasons": list(outcome.reasons),
                "cut_tick": r.cut,
                "not_planned": outcome.left_out,
            },
        )
        why_not = r.invalid or (
            "the world changed while planning" if r.known_version != self.known_version else None
        )
        if why_not:
            self._cancel_followup(outcome)
            replan.status = "superseded"
            host.recorder.plan_version(plan_id, self.plan_id, r.cut, "superseded", *version)
            self.pending.insert(
                0, f"superseded:{replan.trigger}" if r.invalid is None else replan.trigger
            )
            self._scope(set(r.only or ()))  # asked again as it was: a move's drones only
            return
        draft = Draft(
            plan_id,
            replan,
            "planner",
            problem,
            planned.mission,
            outcome.solution,
            planned.commands,
            planned.intent,
            planned.ends,
            tick,
            left_out=dict(outcome.left_out),
        )
        for drone_id, reason in outcome.left_out.items():
            host.fallback(drone_id, reason)
        if outcome.followup is not None:
            self.agents.append(AgentWork(replan, problem, outcome.followup, due=r.cut))
        if host.policy.commit == "auto":
            # Monotone: the fresh draft flies only if worth at least the plan in force
            # rebased onto the same cut (unless the plan in force changed meanwhile).
            rival = planned.rival if in_force and in_force.plan_id == self.plan_id else None
            decision = fast_tier.judge(draft, rival, tick)
            if decision.draft is not draft:
                replan.points = decision.draft.solution.total_points
                host.recorder.plan_version(plan_id, self.plan_id, r.cut, "superseded", *version)
            self.apply(decision)
        else:
            self.apply(Offer(draft))

    def _cancel_followup(self, outcome: PlanOutcome) -> None:
        if outcome.followup is not None:
            outcome.followup.cancel()

    # ----- commit -----------------------------------------------------------------------

    def _commit(self, draft: Draft, approved: Approval, why: str) -> None:
        host = self.host
        tick = host.sim.tick
        for command in draft.commands:
            host.recorder.submit(command, "executive")
        previous = self.plan_id
        if previous is not None:
            host.recorder.superseded(previous, tick)
        solution = draft.solution
        self.plan = solution
        self.plan_id = draft.plan_id
        self.intent = dict(draft.intent)
        self.ends = dict(draft.ends)
        replan = draft.replan
        replan.status = "committed"
        replan.approved = approved
        replan.points = solution.total_points
        origin = provenance(draft, approved)
        self.commits.append({"plan_id": draft.plan_id, "tick": tick, **origin})
        host.recorder.plan_version(
            draft.plan_id,
            previous,
            draft.cut,
            "committed",
            replan.trigger,
            solution,
            replan.latency_ms,
            replan.round_id,
            provenance=origin,
        )
        host.recorder.event(
            tick,
            "COMMIT_PLAN",
            {
                "plan_id": draft.plan_id,
                "cut_tick": draft.cut,
                "points": solution.total_points,
                "routes": {d: r.route for d, r in solution.routes.items()},
                **origin,
                "why": why,
            },
        )
        host.planned({c.drone for c in draft.commands}, draft.problem.leak_extra)
        for drone_id, reason in draft.left_out.items():
            host.fallback(drone_id, reason)
        self._publish_plan(tick, origin)

    def _publish_plan(self, tick: int, provenance: dict[str, Any]) -> None:
        """The plan in force on the bus (retained: a view that joins later gets it)."""
        publish = self.host.recorder.publish
        if publish and self.plan is not None:
            publish(
                "plan",
                {
                    "plan_id": self.plan_id,
                    "tick": tick,
                    "solution": solution_json(self.plan),
                    "provenance": provenance,
                },
            )

    # ----- review: what the operator (or the policy's timeout) says ----------------------

    def accept(self) -> None:
        """The operator approves the draft under review: it flies (rebased if late)."""
        draft = self.review
        assert draft is not None
        self.review = None
        draft.replan.approved = "operator"
        self.apply(review.accept(draft, self._moment()))

    def drop_draft(self, status: Literal["rejected", "expired"], reason: str) -> None:
        """The draft under review is not flown (rejected by the operator, reset, expired)."""
        draft = self.review
        assert draft is not None
        self.review = None
        self.apply(Drop(draft, status, reason))

    def review_view(self) -> dict[str, Any] | None:
        """The draft under review as the review panel shows it (``review.review_view``)."""
        host = self.host
        return review.review_view(self.review, self.intent, host.sim, host.policy)

    def _review_clock(self) -> None:
        """A waiting draft: its timeout, and its preview rebased as time passes."""
        draft = self.review
        if draft is None:
            return
        host = self.host
        policy = host.policy
        tick = host.sim.tick
        waited = review.timed_out(draft, tick, host.sim.tick_hz, policy)
        if waited is not None:
            self.review = None
            decision = review.timeout(draft, policy, tick)
            if not isinstance(decision, Drop):
                draft.replan.approved = "policy"
                host.recorder.event(
                    tick,
                    "REVIEW_TIMEOUT",
                    {"plan_id": draft.plan_id, "waited_s": waited, "action": "commit"},
                )
            self.apply(decision)
            return
        # The review panel's preview: only for someone watching, only paced, one at a time.
        now = time.perf_counter()
        if (
            host.recorder.publish is not None
            and host.speed is not None
            and tick > draft.cut
            and now - draft.preview_at >= policy.review_preview_s
            and not any(j.purpose == "preview" for j in self.jobs)
        ):
            draft.preview_at = now
            self.apply(Rebase(draft, "preview", "the review panel's preview"))

    # ----- finished work: a rebase, the agents ------------------------------------------

    def _finish_job(self, job: RebaseJob) -> None:
        """A rebase is done: decide what follows (``rebase``, ``slow_tier``) and apply it."""
        draft = job.draft
        if job.purpose != "preview":
            self._rebase_latencies = [
                *self._rebase_latencies[-7:],
                (time.perf_counter() - job.started) * 1000,
            ]
        failure: str | None = None
        rebased: Rebased | None = None
        try:
            rebased = job.task.result()
        except asyncio.CancelledError:
            return
        except Exception as exc:
            log.warning("rebasing %s failed: %s", draft.plan_id, exc)
            failure = f"{type(exc).__name__}: {exc}"
        if rebased is not None and rebased.violations:
            failure = "; ".join(map(str, rebased.violations))
        if job.purpose == "preview":
            if rebased is not None and failure is None and self.review is draft:
                draft.preview = rebased
            return
        if failure is not None or rebased is None:
            self.apply(rebase.failed(job, failure or "no plan"))
        elif job.purpose == "agents":
            self.apply(slow_tier.settle_agents(job, rebased, self._moment()))
        else:
            self.apply(rebase.settle_commit(job, rebased, self._moment()))

    def _finish_agents(self, work: AgentWork) -> None:
        """A round's agents answered: an offered proposal is rebased with the plan in force."""
        host = self.host
        try:
            proposal = work.task.result()
        except asyncio.CancelledError:
            return
        except Exception as exc:  # the agents never break a run
            log.warning("agent chain of round %s failed: %s", work.replan.round_id, exc)
            return
        work.replan.reasons = (*work.replan.reasons, *proposal.reasons)
        host.recorder.event(
            host.sim.tick,
            "AGENTS_DONE",
            {
                "round_id": work.replan.round_id,
                "offered": proposal.solution is not None,
                "reasons": list(proposal.reasons),
            },
        )
        self.apply(slow_tier.answered(work, proposal, host.sim.tick))

    # ----- the one place decisions are applied ------------------------------------------

    def _moment(self) -> Moment:
        host = self.host
        return Moment(host.sim.tick, self.known_version, host.paused, host.policy.commit)

    def apply(self, decision: Decision) -> None:
        """Apply what rebase, review or the slow tier decided (``executive.loop.decisions``)."""
        log.debug("%s: %s", type(decision).__name__, getattr(decision, "reason", ""))
        match decision:
            case Commit(draft=draft, approved=approved):
                self._count_rebase(decision.rebased)
                if decision.agents is not None:
                    self._agents_verdict(draft, decision.agents)
                    decision.agents.proposal.settle(True, decision.agents.verdict)
                    draft.replan.agent_applied = True
                self._commit(draft, approved, decision.reason)
            case Offer(draft=draft):
                self._count_rebase(decision.rebased)
                if decision.agents is not None:
                    self._agents_verdict(draft, decision.agents)
                    verdict = decision.agents.verdict
                    decision.agents.proposal.settle(False, f"offered for review: {verdict}")
                self._offer(draft, decision.reason)
            case Rebase():
                self._start_rebase(decision)
            case Hold(draft=draft, approved=approved):
                self.approved_waiting.append((draft, approved))
            case Drop():
                self._drop(decision)
            case _:
                assert_never(decision)

    def _count_rebase(self, rebased: Rebasing | None) -> None:
        """The new draft was rebased from a parent: count it, and trace the parent's
        version as rebased when it was one."""
        if rebased is None:
            return
        parent = rebased.parent
        parent.replan.rebased += 1
        if rebased.recorded:
            self.host.recorder.plan_version(
                parent.plan_id,
                self.plan_id,
                parent.cut,
                "rebased",
                parent.replan.trigger,
                parent.solution,
                None,
                parent.replan.round_id,
            )

    def _agents_verdict(self, draft: Draft, agents: AgentVerdict) -> None:
        host = self.host
        host.recorder.event(
            host.sim.tick,
            "AGENT_PROPOSAL",
            {"round_id": draft.replan.round_id, "applied": True, "why": agents.verdict},
        )

    def _start_rebase(self, decision: Rebase) -> None:
        """Route the draft's intent again from a cut a rebase's latency ahead (worker thread)."""
        host = self.host
        sim = host.sim
        draft, purpose = decision.draft, decision.purpose
        cut = sim.tick + self._rebase_lookahead()
        # Read from a frozen copy of the world in the worker (see ``start``), as fast as
        # possible too: a rebase's records do not depend on when its remainder is cut.
        world = sim.world.frozen()
        cutter = self._cutter(world, cut)
        compare = (dict(self.intent), dict(self.ends)) if purpose == "agents" else None
        ahead = host.ahead()

        def job() -> Rebased:
            problem = cutter()
            rebased = rebase.rebase_job(
                problem, draft.intent, draft.ends, problem.gone(world), compare, host.compile
            )
            ahead(c.path for c in rebased.commands)  # for the first check after its commit
            return rebased

        task = asyncio.get_running_loop().create_task(
            asyncio.to_thread(job), name=f"rebase-{purpose}-{draft.plan_id}"
        )
        self.jobs.append(
            RebaseJob(
                purpose,
                draft,
                task,
                cut,
                self.known_version,
                time.perf_counter(),
                decision.approved,
                decision.proposal,
            )
        )
        if purpose != "preview":
            host.recorder.event(
                sim.tick,
                "REBASE",
                {
                    "plan_id": draft.plan_id,
                    "purpose": purpose,
                    "cut_tick": cut,
                    "why": decision.reason,
                },
            )

    def _offer(self, draft: Draft, note: str | None = None) -> None:
        """The draft waits for the operator; an older one waiting is superseded."""
        host = self.host
        old = self.review
        if old is not None:
            old.replan.status = "superseded"
            host.recorder.plan_version(
                old.plan_id,
                self.plan_id,
                old.cut,
                "superseded",
                old.replan.trigger,
                old.solution,
                old.replan.latency_ms,
                old.replan.round_id,
            )
        draft.replan.status = "review"
        self.review = draft
        host.recorder.plan_version(
            draft.plan_id,
            self.plan_id,
            draft.cut,
            "draft",
            draft.replan.trigger,
            draft.solution,
            draft.replan.latency_ms,
            draft.replan.round_id,
            provenance=provenance(draft, None),
        )
        host.recorder.event(
            host.sim.tick,
            "REVIEW",
            {
                "plan_id": draft.plan_id,
                "points": draft.solution.total_points,
                "origin": draft.origin,
                "rebased_from": draft.parent_id,
                "dropped": draft.dropped,
                **({"note": note} if note else {}),
            },
        )

    def _drop(self, decision: Drop) -> None:
        host = self.host
        tick = host.sim.tick
        draft, proposal, reason = decision.draft, decision.proposal, decision.reason
        match decision.cause:
            case "rebase_failed":
                assert draft is not None
                host.recorder.event(
                    tick,
                    "REBASE_FAILED",
                    {"plan_id": draft.plan_id, "purpose": decision.purpose, "reason": reason},
                )
                if decision.purpose == "agents" and proposal is not None:
                    proposal.settle(False, f"rebase failed: {reason}")
                    return
                # An approved plan could not be flown: plan again from the state (a review
                # run's new draft waits for its own approval); the safety layer keeps the
                # drones safe.
                draft.replan.status = "failed"
                self.pending.insert(0, f"rebase_failed:{draft.replan.trigger}")
            case "superseded":
                assert proposal is not None
                proposal.settle(False, reason)
            case "not_better":
                assert proposal is not None and draft is not None
                proposal.settle(False, reason)
                host.recorder.event(
                    tick,
                    "AGENT_PROPOSAL",
                    {"round_id": draft.replan.round_id, "applied": False, "why": reason},
                )
            case "rejected" | "expired":
                assert draft is not None
                self._retire(draft, decision.cause, reason)
            case "no_proposal":
                pass
            case _:
                assert_never(decision.cause)

    def _retire(self, draft: Draft, status: PlanStatus, reason: str) -> None:
        """A draft that was under review is not flown (rejected, reset, expired)."""
        host = self.host
        replan = draft.replan
        replan.status = status
        host.recorder.plan_version(
            draft.plan_id,
            self.plan_id,
            draft.cut,
            status,
            replan.trigger,
            draft.solution,
            replan.latency_ms,
            replan.round_id,
        )
        host.recorder.event(
            host.sim.tick, "PLAN_REJECTED", {"plan_id": draft.plan_id, "reason": reason}
        )


def _labels(drones: Iterable[str]) -> str:
    return ", ".join(drone_label(d) for d in sorted(drones))
