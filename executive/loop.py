"""The mission executive: observe -> decide -> act, once per tick, never waiting on a plan.

Contract
--------
Options
    ``Executive(scenario, planner=..., sink=..., policy=Policy(), run_id=None, seed=0,
    publish=None, coordinate=None)``. ``planner`` is a ``MissionPlanner`` (async; it plans
    in worker threads and races its agents against the deadline); ``sink`` a ``TraceSink``
    (``emit`` never blocks); ``publish(topic, payload)`` an optional non-blocking bus hook
    (topics ``telemetry``, ``events``, ``plan``, ``agents``, ``status``); ``coordinate(text)``
    turns an operator's words into constraints (default: the deterministic coordinator); ``on_tick(result)`` is
    called after every tick (the live host publishes its scene from it; it must not block).
Consumes
    ``command(HumanCommand)``: CUT, PAUSE, RESUME, RESET, ACCEPT, REJECT, REPLAN (and words
    for the coordinator); ``edit(Edit)``: an operator's environment edit. Both are queued and
    take effect at the next tick boundary (edits are stamped for the next tick).
Produces
    Commands stamped into the sim (``fly_path`` at each cut, ``hold``/``resume`` for PAUSE,
    ``return_to_base`` for fuel safety), trace records (run, inputs, telemetry, events,
    plan versions, state hashes), bus messages, and at the end a ``RunReport``.
Lifecycle
    ``await run(speed)``: plans the first mission, then ticks until the mission is over or
    ``stop()``. ``speed`` None runs as fast as possible and waits for each planning round
    at its cut tick (so batch runs reproduce); a number paces at that multiple of real time
    and never waits: a draft that arrives after its cut tick is stale and is replanned.

The state machine (seed 000 §8): FLYING (CONTINUE) -> a trigger -> CUT_AND_FREEZE at the
checkpoints + REPLAN_REMAINDER (a round in flight) -> DRAFT_READY -> COMMIT_PLAN (policy
``auto``) or REVIEW until ACCEPT (COMMIT_PLAN) / REJECT. PAUSE holds every flying drone,
RESUME resumes them; RESET drops drafts and constraints and replans from scratch.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import math
import statistics
import sys
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable

from executive.contracts import (
    EventRecord,
    HumanCommand,
    InputRecord,
    MissionPlanner,
    PlanOutcome,
    PlanRequest,
    PlanVersionRecord,
    RunRecord,
    StateHashRecord,
    TelemetryRecord,
    TraceSink,
    new_id,
)
from executive.inputs_codec import input_to_json
from executive.plan_commands import fly_commands
from executive.policy import Policy
from executive.replan_problem import ReplanProblem, build_replan
from planner.edits import Edit
from planner.geometry import SamField
from planner.mission import Mission, compile_mission
from planner.model import Scenario, Solution
from planner.validation import validate_solution
from sim import Hold, ResumeFlight, ReturnToBase, Sim, TickResult
from sim._kernels import FUEL, HDG, STATUS_NAMES, S, X, Y
from sim.outcome import Outcome, mission_outcome

__all__ = ["Executive", "Replan", "RunReport"]

log = logging.getLogger(__name__)

_SAM_MARGIN = 0.05  # km: a SAM this close to a planned path "touches" it
_SAMPLE_KM = 0.25  # spacing of the points a path is checked at against a new SAM
_SWITCH_INTERVAL_S = 0.001  # the interpreter's thread switch interval while a run ticks


def _default_coordinator(executive: Executive) -> Callable[[str], dict]:
    from executive.agents.coordinator import make_coordinate

    return make_coordinate(lambda: executive.sim.world.known_environment,
                           executive.scenario.drone_configs,
                           lambda: executive.sim.world.collected())


def _warm_kernels() -> None:
    from planner import orienteering, team_search

    team_search.warmup()
    orienteering.warmup()


@dataclass
class Replan:
    """One planning round, as the outcome reports it."""

    round_id: str
    trigger: str
    asked_tick: int
    cut_tick: int
    status: str = "planning"  # committed | stale | superseded | failed | rejected | review
    latency_ms: float | None = None
    agent_applied: bool = False
    reasons: tuple[str, ...] = ()
    points: float | None = None  # the draft's planned points for the remainder

    def to_dict(self) -> dict[str, Any]:
        return {"round_id": self.round_id, "trigger": self.trigger, "asked_tick": self.asked_tick,
                "cut_tick": self.cut_tick, "status": self.status, "latency_ms": self.latency_ms,
                "agent_applied": self.agent_applied, "reasons": list(self.reasons),
                "points": self.points}


@dataclass
class _Round:
    replan: Replan
    problem: ReplanProblem
    request: PlanRequest
    task: asyncio.Task
    known_version: int
    started: float
    auto_commit: bool
    invalid: str | None = None  # why its draft can no longer be used (paused, reset)


@dataclass
class _Draft:
    plan_id: str
    round: _Round
    outcome: PlanOutcome
    mission: Mission
    commands: list


@dataclass
class RunReport:
    run_id: str
    outcome: Outcome
    replans: list[Replan]
    wall_seconds: float
    ticks: int
    overruns: int
    jitter_ms: dict[str, float]
    safety_returns: list[str]
    initial_points: float

    def to_dict(self) -> dict[str, Any]:
        out = self.outcome.model_dump(mode="json")
        return {"run_id": self.run_id, "total_points": out["total_points"],
                "drones": out["drones"], "lost": out["lost"], "state_hash": out["state_hash"],
                "ticks": self.ticks, "sim_seconds": out["sim_seconds"],
                "uncollected": out["uncollected"], "excluded": out["excluded"],
                "replans": [r.to_dict() for r in self.replans],
                "initial_planned_points": self.initial_points,
                "safety_returns": self.safety_returns,
                "wall_seconds": self.wall_seconds, "overruns": self.overruns,
                "jitter_ms": self.jitter_ms}


class Executive:
    def __init__(
        self,
        scenario: Scenario,
        *,
        planner: MissionPlanner,
        sink: TraceSink,
        policy: Policy | None = None,
        run_id: str | None = None,
        seed: int = 0,
        publish: Callable[[str, dict], None] | None = None,
        coordinate: Callable[[str], dict] | None = None,
        initial_plan: Solution | None = None,
        initial_mission: Mission | None = None,
        config: dict[str, Any] | None = None,
        on_tick: Callable[[TickResult], None] | None = None,
    ) -> None:
        self.scenario = scenario
        self.planner = planner
        self.sink = sink
        self.policy = policy or Policy()
        self.run_id = run_id or new_id()
        self.seed = seed
        self._publish = publish
        # Operator words in CUT / REPLAN -> constraints; the deterministic coordinator over
        # what is known when the words arrive, unless the caller brings its own.
        self._coordinate = coordinate or _default_coordinator(self)
        self._initial_plan = initial_plan
        self._initial_mission = initial_mission  # what the initial plan was made on
        self._config = dict(config or {})
        self._on_tick = on_tick  # a watcher (the live host): after each tick, never blocks
        self.sim: Sim | None = None
        self.plan: Solution | None = None  # the committed plan (its remainder form)
        self.plan_id: str | None = None
        self.replans: list[Replan] = []
        self.constraints: dict[str, Any] = {}
        self.instruction: str | None = None
        self.paused = False
        self.speed: float | None = None
        self._commands: deque[HumanCommand] = deque()
        self._edits: deque[Edit] = deque()
        self._pending: list[str] = []  # triggers waiting for a round
        self._round: _Round | None = None
        self._draft: _Draft | None = None
        self._start_after = -1  # a round may not start before this tick (diverts first)
        self._known_version = 0  # bumps on every change that invalidates a draft
        self._returning: dict[str, str] = {}  # drones sent home: not planned any more
        self._paused_drones: list[str] = []
        self._latencies: deque[float] = deque(maxlen=8)
        self._stop = False
        self._lateness: list[float] = []
        self._worst = (0.0, -1)  # the latest tick start and its tick
        self._overruns = 0
        self._initial_points = 0.0
        self.last: TickResult | None = None
        self.events_seen: deque[dict] = deque(maxlen=500)

    # ----- inputs (any coroutine or thread of the event loop) ------------------------

    def command(self, command: HumanCommand) -> None:
        self._commands.append(command)

    def edit(self, edit: Edit) -> None:
        self._edits.append(edit)

    def stop(self) -> None:
        self._stop = True

    def watch(self, *, publish: Callable[[str, dict], None] | None = None,
              on_tick: Callable[[TickResult], None] | None = None) -> None:
        """Attach a watcher's hooks (the live host's), as the constructor's would be."""
        self._publish = publish
        self._on_tick = on_tick

    def set_speed(self, speed: float | None) -> None:
        self.speed = speed

    @property
    def mode(self) -> str:
        if self.paused:
            return "PAUSED"
        if self._draft is not None:
            return "REVIEW"
        if self._round is not None:
            return "PLANNING"
        return "FLYING"

    @property
    def draft(self) -> tuple[str, Solution, int] | None:
        """The draft waiting for review: (plan id, solution, cut tick), or None."""
        d = self._draft
        return None if d is None else (d.plan_id, d.outcome.solution, d.round.request.tick)

    @property
    def returning(self) -> dict[str, str]:
        """Drones sent home by fuel safety (id -> why): no plan re-tasks them."""
        return dict(self._returning)

    @property
    def checkpoints(self) -> dict:
        """The checkpoints of the round in flight (drone -> ``Checkpoint``), else {}."""
        r = self._round or (self._draft.round if self._draft is not None else None)
        return dict(r.problem.checkpoints) if r is not None else {}

    # ----- the run -------------------------------------------------------------------

    async def start(self) -> Solution:
        """Plan the first mission (before tick 0) and build the simulation."""
        if self.sim is not None:
            return self.plan
        self.sink.emit(RunRecord(self.run_id, self.scenario.model_dump(mode="json", by_alias=True),
                                 self.seed, {"policy": self.policy.model_dump(mode="json"),
                                             **self._config}))
        # Load every numba kernel now: a first load in a worker thread mid-run holds the GIL
        # for tens of milliseconds, long enough to make a tick late.
        await asyncio.to_thread(_warm_kernels)
        solution = self._initial_plan
        latency = 0.0
        if solution is None:
            request = PlanRequest(self.run_id, new_id(), 0, "initial", self.scenario,
                                  self.policy.planning_deadline_s * 4, dict(self.constraints))
            started = time.perf_counter()
            outcome = await self.planner.plan(request)
            latency = (time.perf_counter() - started) * 1000
            solution = outcome.solution
        mission = self._initial_mission or compile_mission(self.scenario)
        problems = validate_solution(mission, solution)
        if problems:
            from executive.errors import ExecutiveError

            raise ExecutiveError("the first plan is invalid: " + "; ".join(map(str, problems)))
        # The first plan flies like every later one: fly_path commands stamped for tick 0,
        # recorded as inputs, so a replay needs nothing but the inputs.
        self.sim = Sim(self.scenario, None, hash_every=self.policy.hash_every)
        self.plan = solution
        self.plan_id = new_id()
        self._initial_points = solution.total_points
        starts = {spec.id for spec in mission.drones}
        live = {t.id for t in self.sim.world.known_environment.targets}
        for command in fly_commands(mission, solution, 0, starts, live):
            self._submit(command, "executive")
        self._plan_version(self.plan_id, None, 0, "committed", "initial", solution, latency)
        self._event(0, "COMMIT_PLAN", {"plan_id": self.plan_id, "trigger": "initial",
                                       "points": solution.total_points})
        return solution

    async def run(self, speed: float | None = None, *, until: int | None = None) -> RunReport:
        await self.start()
        sim = self.sim
        assert sim is not None
        self.speed = speed
        loop = asyncio.get_running_loop()
        # Worker threads (planning, traces) hand the GIL back to the loop every 1 ms instead
        # of every 5: a tick waits at most about that long for it.
        switch = sys.getswitchinterval()
        sys.setswitchinterval(min(switch, _SWITCH_INTERVAL_S))
        frozen = self.speed is not None
        if frozen:
            # What exists now (modules, kernels, the compiled mission) lives for the run:
            # keep it out of the cyclic collector, whose full passes over it take tens of ms.
            # Done before the clock starts, so this one full pass delays no tick.
            gc.collect()
            gc.freeze()
        began = loop.time()
        base, base_tick, base_speed = loop.time(), sim.tick, self.speed
        self._status("running")
        try:
            while not self._stop and not sim.done and (until is None or sim.tick < until):
                if self.speed != base_speed:  # the operator changed the pace
                    base, base_tick, base_speed = loop.time(), sim.tick, self.speed
                if self.speed is None:
                    await self._await_due_round()
                else:
                    due = base + (sim.tick - base_tick) / (sim.tick_hz * self.speed)
                    late = loop.time() - due
                    self._lateness.append(max(0.0, late))
                    if late > self._worst[0]:
                        self._worst = (late, sim.tick)
                    if late > 1.0 / (sim.tick_hz * self.speed):
                        self._overruns += 1
                        base, base_tick = loop.time(), sim.tick  # do not burst to catch up
                self.tick_once()
                if self.speed is None:
                    if sim.tick % 64 == 0:
                        await asyncio.sleep(0)  # let the bus, clients and rounds breathe
                else:
                    due = base + (sim.tick - base_tick) / (sim.tick_hz * self.speed)
                    await asyncio.sleep(max(0.0, due - loop.time()))
        finally:
            sys.setswitchinterval(switch)
            if frozen:
                gc.unfreeze()
            if self._round is not None and not self._round.task.done():
                self._round.task.cancel()
        report = self._report(loop.time() - began)
        self._status("ended", report.to_dict())
        return report

    def tick_once(self) -> TickResult:
        """One tick: decide and act on what is due, step the sim, observe."""
        sim = self.sim
        assert sim is not None
        self._decide()
        result = sim.step()
        self.last = result
        self._observe(result)
        if self._on_tick is not None:
            self._on_tick(result)
        return result

    # ----- decide & act (at the tick boundary) ---------------------------------------

    def _decide(self) -> None:
        sim = self.sim
        while self._edits:
            self._submit(self._edits.popleft(), "operator")
        while self._commands:
            self._human(self._commands.popleft())
        if self._round is not None and self._round.task.done():
            if self.speed is not None or sim.tick >= self._round.request.tick:
                self._finish_round()
        if (self._pending and self._round is None and self._draft is None and not self.paused
                and sim.tick >= self._start_after):
            self._start_round()
        if sim.tick % self.policy.safety_every == 0:
            self._safety()

    async def _await_due_round(self) -> None:
        """As fast as possible: a round whose cut tick is next is awaited, so the run
        reproduces whatever the wall clock does."""
        r = self._round
        if r is not None and self.sim.tick >= r.request.tick and not r.task.done():
            try:
                await asyncio.wait({r.task})
            except asyncio.CancelledError:
                raise

    def _human(self, command: HumanCommand) -> None:
        tick = self.sim.tick
        kind = command.kind
        self._event(tick, "HUMAN_COMMAND", {"command": kind, "text": command.text,
                                            "source": command.source})
        if kind in ("CUT", "REPLAN"):
            if command.text:
                self._apply_words(command.text)
            self._trigger("operator", f"operator:{kind}")
        elif kind == "PAUSE":
            if self.paused:
                return self._ignored(kind, "already paused")
            self.paused = True
            self._invalidate_round("paused")
            self._paused_drones = [d for d in self.scenario.drone_configs
                                   if self.sim.world.status(d) == "flying"]
            for drone_id in self._paused_drones:
                self._submit(Hold(drone=drone_id, tick=tick), "executive")
            self._event(tick, "PAUSE", {"holding": self._paused_drones})
        elif kind == "RESUME":
            if not self.paused:
                return self._ignored(kind, "not paused")
            self.paused = False
            for drone_id in self._paused_drones:
                if self.sim.world.status(drone_id) == "holding":
                    self._submit(ResumeFlight(drone=drone_id, tick=tick), "executive")
            self._event(tick, "CONTINUE", {"resumed": self._paused_drones})
            self._paused_drones = []
        elif kind == "RESET":
            self._invalidate_round("reset")
            if self._draft is not None:
                self._drop_draft("rejected", "reset")
            self.constraints, self.instruction = {}, None
            self._pending = []
            self._event(tick, "RESET", {})
            self._trigger("operator", "operator:RESET")
        elif kind == "ACCEPT":
            if self._draft is None:
                return self._ignored(kind, "no draft waits for review")
            self._accept()
        elif kind == "REJECT":
            if self._draft is None:
                return self._ignored(kind, "no draft waits for review")
            self._drop_draft("rejected", "operator rejected the draft")

    def _ignored(self, kind: str, why: str) -> None:
        self._event(self.sim.tick, "COMMAND_IGNORED", {"command": kind, "reason": why})

    def _apply_words(self, text: str) -> None:
        decision = self._coordinate(text)
        constraints = decision.get("constraints") or {}
        for key in ("moves", "required_targets", "forbidden_targets"):
            if constraints.get(key):
                self.constraints.setdefault(key, [])
                self.constraints[key] = [*self.constraints[key], *constraints[key]]
        for drone_id, targets in (constraints.get("forbidden") or {}).items():
            merged = set(self.constraints.setdefault("forbidden", {}).get(drone_id, []))
            self.constraints["forbidden"][drone_id] = sorted(merged | set(targets))
        self.instruction = text
        self._event(self.sim.tick, "CONSTRAINTS", {"text": text, "constraints": self.constraints})

    def _trigger(self, kind: str, trigger: str) -> None:
        self._known_version += 1
        if not self.policy.replan or kind not in self.policy.triggers:
            self._event(self.sim.tick, "CONTINUE", {"change": trigger, "replan": False})
            return
        if trigger not in self._pending:
            self._pending.append(trigger)

    # ----- planning rounds -----------------------------------------------------------

    def _lookahead(self) -> int:
        sim = self.sim
        p = self.policy
        if self.speed is None:  # the loop waits: a fixed, reproducible cut
            return max(1, math.ceil((p.planning_deadline_s + p.lookahead_margin_s) * sim.tick_hz))
        latency = max([p.planning_deadline_s, *(x / 1000 for x in self._latencies)])
        return max(1, math.ceil((latency + p.lookahead_margin_s) * sim.tick_hz * self.speed))

    def _start_round(self, *, auto_commit: bool | None = None) -> None:
        sim = self.sim
        trigger = " + ".join(self._pending)
        self._pending = []
        cut = sim.tick + self._lookahead()
        problem = build_replan(sim.world, cut, reserve=self.policy.fuel_reserve,
                               not_planned=self._returning)
        round_id = new_id()
        request = PlanRequest(self.run_id, round_id, cut, trigger, problem.scenario,
                              self.policy.planning_deadline_s, dict(self.constraints),
                              self.instruction, self.run_id)
        replan = Replan(round_id, trigger, sim.tick, cut)
        self.replans.append(replan)
        task = asyncio.get_running_loop().create_task(self._plan_job(request, problem),
                                                       name=f"round-{round_id}")
        self._round = _Round(replan, problem, request, task, self._known_version,
                             time.perf_counter(),
                             self.policy.commit == "auto" if auto_commit is None else auto_commit)
        checkpoints = {d: {"x": c.x, "y": c.y, "fuel": c.fuel, "start": c.start_id,
                           "frozen_targets": list(c.frozen_targets)}
                       for d, c in problem.checkpoints.items()}
        self._event(sim.tick, "CUT_AND_FREEZE", {"round_id": round_id, "cut_tick": cut,
                                                 "trigger": trigger, "checkpoints": checkpoints,
                                                 "not_planned": problem.left_out})
        self._event(sim.tick, "REPLAN_REMAINDER", {"round_id": round_id, "trigger": trigger,
                                                   "constraints": self.constraints})

    async def _plan_job(self, request: PlanRequest, problem: ReplanProblem):
        """Plan, then (in a worker thread) compile, validate and turn into commands: the
        tick only ever submits ready commands."""
        outcome = await self.planner.plan(request)

        def prepare():
            mission = compile_mission(problem.scenario)
            violations = validate_solution(mission, outcome.solution)
            airborne = {d for d, c in problem.checkpoints.items() if c.airborne}
            return mission, violations, fly_commands(mission, outcome.solution, problem.tick,
                                                     airborne)

        mission, violations, commands = await asyncio.to_thread(prepare)
        return outcome, mission, violations, commands

    def _finish_round(self) -> None:
        r = self._round
        self._round = None
        sim = self.sim
        replan = r.replan
        latency = (time.perf_counter() - r.started) * 1000
        replan.latency_ms = latency
        self._latencies.append(latency)
        try:
            outcome, mission, violations, commands = r.task.result()
        except asyncio.CancelledError:
            replan.status = "superseded"
            return
        except Exception as exc:  # a failed round never stops the mission
            replan.status = "failed"
            replan.reasons = (str(exc),)
            self._event(sim.tick, "REPLAN_FAILED", {"round_id": replan.round_id,
                                                    "reason": str(exc), "latency_ms": latency})
            log.warning("planning round %s failed: %s", replan.round_id, exc)
            return
        replan.agent_applied = outcome.agent_applied
        replan.reasons = tuple(outcome.reasons)
        replan.points = outcome.solution.total_points
        plan_id = new_id()
        if violations:  # the validator guards: whatever produced it, it does not fly
            replan.status = "rejected"
            self._plan_version(plan_id, self.plan_id, r.request.tick, "rejected", replan.trigger,
                               outcome.solution, latency, replan.round_id)
            self._event(sim.tick, "REPLAN_FAILED", {"round_id": replan.round_id, "reason":
                                                    "; ".join(map(str, violations))})
            return
        self._plan_version(plan_id, self.plan_id, r.request.tick, "draft", replan.trigger,
                           outcome.solution, latency, replan.round_id)
        self._event(sim.tick, "DRAFT_READY", {
            "round_id": replan.round_id, "plan_id": plan_id, "latency_ms": latency,
            "points": outcome.solution.total_points, "agent_applied": outcome.agent_applied,
            "reasons": list(outcome.reasons), "cut_tick": r.request.tick})
        why_not = r.invalid or ("the world changed while planning"
                                if r.known_version != self._known_version else None)
        if why_not:
            replan.status = "superseded"
            self._plan_version(plan_id, self.plan_id, r.request.tick, "superseded",
                               replan.trigger, outcome.solution, latency, replan.round_id)
            self._pending.insert(0, f"superseded:{replan.trigger}" if r.invalid is None
                                 else replan.trigger)
            return
        draft = _Draft(plan_id, r, outcome, mission, commands)
        if sim.tick > r.request.tick:
            return self._stale(draft)
        if r.auto_commit:
            self._commit(draft)
        else:
            replan.status = "review"
            self._draft = draft
            self._event(sim.tick, "REVIEW", {"plan_id": plan_id, "points":
                                             outcome.solution.total_points})

    def _stale(self, draft: _Draft) -> None:
        """Its drones passed their checkpoints: never applied blindly; plan again from the
        real state, with the latency just measured in the lookahead."""
        replan = draft.round.replan
        replan.status = "stale"
        self._plan_version(draft.plan_id, self.plan_id, draft.round.request.tick, "stale",
                           replan.trigger, draft.outcome.solution, replan.latency_ms,
                           replan.round_id)
        self._event(self.sim.tick, "STALE_DRAFT", {"plan_id": draft.plan_id,
                                                   "cut_tick": draft.round.request.tick})
        self._pending.insert(0, f"stale:{replan.trigger}")
        if self._pending and self._round is None and not self.paused:
            self._start_round(auto_commit=draft.round.auto_commit)

    def _accept(self) -> None:
        draft = self._draft
        self._draft = None
        if self.sim.tick > draft.round.request.tick:
            # Accepted, but its cut has passed: revalidate from the real state; the operator
            # has accepted, so the fresh draft commits.
            self._stale(draft)
            if self._round is not None:
                self._round.auto_commit = True
            return
        self._commit(draft)

    def _drop_draft(self, status: str, reason: str) -> None:
        draft = self._draft
        self._draft = None
        draft.round.replan.status = status
        self._plan_version(draft.plan_id, self.plan_id, draft.round.request.tick, status,
                           draft.round.replan.trigger, draft.outcome.solution,
                           draft.round.replan.latency_ms, draft.round.replan.round_id)
        self._event(self.sim.tick, "PLAN_REJECTED", {"plan_id": draft.plan_id, "reason": reason})

    def _commit(self, draft: _Draft) -> None:
        sim = self.sim
        for command in draft.commands:
            self._submit(command, "executive")
        previous = self.plan_id
        if previous is not None:
            self.sink.emit(PlanVersionRecord(self.run_id, previous, None, sim.tick,
                                             "superseded", "", {}))
        self.plan = draft.outcome.solution
        self.plan_id = draft.plan_id
        draft.round.replan.status = "committed"
        self._plan_version(draft.plan_id, previous, draft.round.request.tick, "committed",
                           draft.round.replan.trigger, draft.outcome.solution,
                           draft.round.replan.latency_ms, draft.round.replan.round_id)
        self._event(sim.tick, "COMMIT_PLAN", {
            "plan_id": draft.plan_id, "cut_tick": draft.round.request.tick,
            "points": draft.outcome.solution.total_points,
            "routes": {d: r.route for d, r in draft.outcome.solution.routes.items()}})
        if self._publish:
            self._publish("plan", {"plan_id": draft.plan_id, "tick": sim.tick,
                                   "solution": draft.outcome.solution.model_dump(mode="json")})

    def _invalidate_round(self, why: str) -> None:
        if self._round is not None:
            self._round.invalid = why
            if why == "reset":
                self._round.task.cancel()

    # ----- observe -------------------------------------------------------------------

    def _observe(self, result: TickResult) -> None:
        for event in result.events:
            payload = event.model_dump(mode="json")
            self.sink.emit(EventRecord(self.run_id, result.tick, event.kind, payload))
            self.events_seen.append({"tick": result.tick, **payload})
            if self._publish:
                self._publish("events", {"tick": result.tick, **payload})
            self._react(event)
        for event in result.truth_events:  # hidden things: traces only
            self.sink.emit(EventRecord(self.run_id, result.tick, f"truth:{event.kind}",
                                       event.model_dump(mode="json")))
        traced = result.tick % self.policy.telemetry_every == 0
        drones = self.telemetry(result) if traced or self._publish else None
        if traced:
            self.sink.emit(TelemetryRecord(self.run_id, result.tick, drones))
        if result.state_hash is not None:
            self.sink.emit(StateHashRecord(self.run_id, result.tick, result.state_hash))
        if self._publish:
            self._publish("telemetry", {"tick": result.tick, "time": result.time,
                                        "mode": self.mode, "drones": drones})

    def telemetry(self, result: TickResult) -> dict[str, dict]:
        F = result.fleet.fleet
        return {d: {"x": float(F[X, i]), "y": float(F[Y, i]), "heading": float(F[HDG, i]),
                    "fuel": float(F[FUEL, i]), "s": float(F[S, i]),
                    "status": STATUS_NAMES[int(result.fleet.status[i])],
                    "points": float(result.fleet.points[i])}
                for i, d in enumerate(result.fleet.ids)}

    def _react(self, event) -> None:
        kind = event.kind
        if kind == "sam_detected":
            self._sam_known(event.sam, f"sam_detected:{event.sam}")
        elif kind == "edit_applied":
            edit = event.edit
            op = edit.op
            if op in ("add_sam", "move_sam") and not getattr(edit, "hidden", False):
                self._sam_known(edit.id, f"{op}:{edit.id}")
            elif op == "reveal_sam":
                self._sam_known(edit.id, f"reveal_sam:{edit.id}")
            elif op in ("add_target", "remove_target", "move_target", "set_priority"):
                self._trigger("target", f"{op}:{edit.id}")
            elif op == "set_fuel":
                self._trigger("fuel", f"set_fuel:{edit.drone}")
        elif kind == "drone_lost":
            self._returning.pop(event.drone, None)
            self._trigger("drone_lost", f"drone_lost:{event.drone}")

    def _sam_known(self, sam_id: str, trigger: str) -> None:
        """A SAM became known: replan if it touches a planned path or target; divert at once
        any drone whose frozen path (up to the next cut) would enter it."""
        sam = next((s for s in self.sim.world.known_environment.sams if s.id == sam_id), None)
        if sam is None:
            return
        touched = self._touching(sam)
        if not touched:
            self._known_version += 1
            self._event(self.sim.tick, "CONTINUE", {"change": trigger,
                                                    "reason": "touches no planned path"})
            return
        horizon = self._lookahead()
        for drone_id, s_hit in touched.items():
            world = self.sim.world
            speed = world.config.speed_of(drone_id) * world.dt
            if s_hit - world.progress(drone_id) <= (horizon + 2) * speed + 1.0 and \
                    self.policy.replan and world.status(drone_id) == "flying":
                self._submit(Hold(drone=drone_id, tick=self.sim.tick), "executive")
                self._event(self.sim.tick, "DIVERT", {"drone": drone_id, "sam": sam_id})
                self._start_after = self.sim.tick + 1
        self._trigger("sam", trigger)

    def _touching(self, sam) -> dict[str, float]:
        """Airborne drones whose remaining flight passes within the SAM (plus a margin) or
        visits a target inside it: drone -> arc length of the first contact."""
        world = self.sim.world
        out: dict[str, float] = {}
        r = sam.range + _SAM_MARGIN
        for drone_id in self.scenario.drone_configs:
            if world.status(drone_id) not in ("flying", "holding"):
                continue
            flight = world.flight(drone_id)
            if flight is None or flight.holding:
                continue
            s0 = world.progress(drone_id)
            n = max(2, int((flight.length - s0) / _SAMPLE_KM) + 2)
            for k in range(n):
                s = s0 + (flight.length - s0) * k / (n - 1)
                x, y, _ = flight.path.locate(s)
                if math.hypot(x - sam.x, y - sam.y) < r:
                    out[drone_id] = s
                    break
        return out

    # ----- fuel safety ---------------------------------------------------------------

    def _safety(self) -> None:
        """A drone whose fuel no longer covers its way to an allowed end airport plus the
        reserve goes home now, whatever the plan says."""
        world = self.sim.world
        reserve = self.policy.fuel_reserve
        field_ = None
        for drone_id, config in self.scenario.drone_configs.items():
            if drone_id in self._returning or world.status(drone_id) not in ("flying", "holding"):
                continue
            fuel = world.fuel(drone_id)
            flight = world.flight(drone_id)
            s = world.progress(drone_id)
            if flight is not None and not flight.holding and self._ends_at_airport(flight) \
                    and fuel >= flight.length - s - 1e-9:
                continue  # its flight (validated when committed) still fits its fuel
            x, y, _ = world.position(drone_id)
            env = world.known_environment
            ends = [a for a in env.airports
                    if a.id in config.end_options([a.id for a in env.airports])]
            if min(math.hypot(a.x - x, a.y - y) for a in ends) + reserve < fuel * 0.5:
                continue  # far from critical: skip the exact paths
            field_ = field_ or SamField([(s_.x, s_.y, s_.range) for s_ in env.sams])
            best, best_len = None, math.inf
            for a in ends:
                path = field_.shortest_path((x, y), (a.x, a.y))
                if path is not None and path.length < best_len:
                    best, best_len = a, path.length
            if best is None or fuel < best_len + reserve:
                if best is None:
                    continue
                self._returning[drone_id] = "fuel safety"
                self._submit(ReturnToBase(drone=drone_id, airport=best.id, tick=self.sim.tick),
                             "executive")
                self._event(self.sim.tick, "RETURN_TO_BASE", {
                    "drone": drone_id, "airport": best.id, "fuel": fuel,
                    "needed": best_len, "reserve": reserve})
                self._trigger("drone_lost", f"safety_return:{drone_id}")

    def _ends_at_airport(self, flight) -> bool:
        ex, ey = flight.path.end
        return any(math.hypot(a.x - ex, a.y - ey) <= 1e-6
                   for a in self.sim.world.known_environment.airports)

    # ----- traces --------------------------------------------------------------------

    def _submit(self, item, source: str) -> None:
        stamped = self.sim.submit(item)
        kind, payload = input_to_json(stamped)
        src = getattr(stamped, "source", None) or source
        self.sink.emit(InputRecord(self.run_id, int(stamped.tick), kind, payload, src))

    def _event(self, tick: int, kind: str, payload: dict) -> None:
        self.sink.emit(EventRecord(self.run_id, tick, kind, payload))
        self.events_seen.append({"tick": tick, "kind": kind, **payload})
        if self._publish:
            self._publish("events", {"tick": tick, "kind": kind, **payload})

    def _plan_version(self, plan_id, parent, tick, status, trigger, solution, latency,
                      round_id=None) -> None:
        self.sink.emit(PlanVersionRecord(self.run_id, plan_id, parent, tick, status, trigger,
                                         solution.model_dump(mode="json"), latency, round_id))

    def _status(self, state: str, outcome: dict | None = None) -> None:
        if self._publish:
            self._publish("status", {"run_id": self.run_id, "state": state,
                                     **({"outcome": outcome} if outcome else {})})

    def _report(self, wall: float) -> RunReport:
        lateness = sorted(self._lateness)

        def pct(q: float) -> float:
            if not lateness:
                return 0.0
            return 1000 * lateness[min(len(lateness) - 1, int(q * len(lateness)))]

        jitter = {"p50": pct(0.5), "p99": pct(0.99), "max": 1000 * (lateness[-1] if lateness else 0.0),
                  "mean": 1000 * (statistics.fmean(lateness) if lateness else 0.0),
                  "max_at_tick": self._worst[1]}
        return RunReport(self.run_id, mission_outcome(self.sim), list(self.replans), wall,
                         self.sim.tick, self._overruns, jitter, sorted(self._returning),
                         self._initial_points)
