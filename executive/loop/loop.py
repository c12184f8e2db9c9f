"""The mission executive: observe -> decide -> act, once per tick, never waiting on a plan.

Contract
--------
Options
    ``Executive(scenario, planner=..., sink=..., options=LoopOptions(), run_id=None,
    publish=None, coordinate=None)``. ``planner`` is a ``MissionPlanner`` (async; it plans
    in worker threads and races its agents against the deadline); ``sink`` a ``TraceSink``
    (``emit`` never blocks); ``options`` the loop's own (policy, seed, the configuration the
    run record keeps); ``publish(topic, payload)`` an optional non-blocking bus hook
    (topics ``telemetry``, ``events``, ``plan``, ``agents``, ``status``);
    ``coordinate(text, executive)`` (a ``Coordinate``: the dialogue stack's, passed in by
    ``mission.session``) turns an operator's words into a typed verdict, the constraints to
    add or the errors that refuse them; ``on_tick(result)`` is called after every tick (the
    live host publishes its scene from it; it must not block).
Consumes
    ``command(HumanCommand)``: CUT, PAUSE, RESUME, RESET, ACCEPT, REJECT, REPLAN, AGENT_OFF /
    AGENT_ON (one agent of the planning chain, its role in ``text``; agents on a timer:
    ``executive.loop.cadence``) (and words
    for the coordinator: words it refuses, e.g. a move the drone cannot sense, are a
    COMMAND_IGNORED event with the reasons and replan nothing; without a coordinator, words
    are refused the same way, with that reason); for one drone (``drone``):
    RETURN home and HOLD where it is, through the safety layer, and RESUME of a drone the
    operator held (refused with a COMMAND_IGNORED reason when it cannot); ``edit(Edit)``: an
    operator's environment edit. Both are queued and take effect at the next tick boundary
    (edits are stamped for the next tick).
Produces
    Commands stamped into the sim (``fly_path`` at each cut, ``hold``/``resume`` for PAUSE,
    ``return_to_base`` for fuel safety), trace records (run, inputs, telemetry, events,
    plan versions, state hashes), bus messages, and at the end a ``RunReport``.
Lifecycle
    ``await run(speed)``: plans the first mission, then ticks until the mission is over or
    ``stop()``. ``speed`` None runs as fast as possible and waits for each planning round
    at its cut tick (so batch runs reproduce); a number paces at that multiple of real time
    and never waits: a draft that arrives after its cut tick is stale and is replanned.
    Paced, Python's cyclic collector runs between ticks, never in one
    (``executive.loop.collector``; ``collector`` has its passes).

The state machine (seed 000 §8): FLYING (CONTINUE) -> a trigger -> CUT_AND_FREEZE at the
checkpoints + REPLAN_REMAINDER (a round in flight) -> DRAFT_READY -> COMMIT_PLAN (policy
``auto``) or REVIEW until ACCEPT (COMMIT_PLAN) / REJECT. PAUSE holds every flying drone,
RESUME resumes them; RESET drops drafts and constraints and replans from scratch.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import math
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any, assert_never

from executive.contracts import (
    AGENT_COMMANDS,
    DRONE_COMMANDS,
    Coordinate,
    CoordinatorVerdict,
    HumanCommand,
    MissionPlanner,
    PlanOutcome,
    PlanRequest,
    RunRecord,
    TraceSink,
    new_id,
)
from executive.errors import ExecutiveError
from executive.gate import GATE
from executive.loop.cleared import KnownSams, freed_by
from executive.loop.collector import Collector
from executive.loop.cut import Checkpoint, with_reserve
from executive.loop.fork import start_forked
from executive.loop.options import LoopOptions
from executive.loop.policy import leak_plan_extra, leak_turn_extra
from executive.loop.record import Publish, Recorder
from executive.loop.report import Replan, RunReport, lateness_summary
from executive.loop.rounds import Rounds
from executive.loop.safety import Safety
from executive.loop.workers import install_workers
from executive.traces.fork import ForkPoint
from executive.traces.loss import describe
from executive.traces.sinks import backlog, drain, dropped_by, lost_by, settle
from planner.constraints import OperatorConstraints, merge_constraints
from planner.edits import (
    AddSam,
    AddTarget,
    DisableDrone,
    Edit,
    MoveSam,
    MoveTarget,
    RemoveSam,
    RemoveTarget,
    RevealSam,
    SetFuel,
    SetPriority,
)
from planner.geometry import Path
from planner.mission import Compile, Mission, MissionCompiler, compile_mission
from planner.model import Scenario, Solution, drone_label
from planner.validation import validate_solution
from planner.way_home import HomeCheck, guard_solution
from sim import (
    Clock,
    CommandApplied,
    CommandRejected,
    DroneHolding,
    DroneLanded,
    DroneLost,
    DroneTelemetry,
    EditApplied,
    EditRejected,
    Event,
    Hold,
    Pacer,
    ResumeFlight,
    SamDetected,
    Sim,
    SimError,
    TargetCollected,
    TargetMissed,
    TickResult,
    WallClock,
)
from sim.flight import lay_out
from sim.outcome import mission_outcome
from sim.pacing import check_speed

__all__ = ["Executive", "Replan", "RunReport"]

log = logging.getLogger(__name__)

# How long the run's end waits for the trace store to take what is queued: past the
# writer's retries (60 s by default), so a store back in time loses nothing.
_SETTLE_S = 90.0

# a paced run's snapshots after a change come no more often than this many times the
# drawing's own duration (in mission time): at 1,000 drones a drawing is 0.10-0.17 s of CPU
# in a worker (0.1-0.45 s wall), contending with the tick for the GIL, and the policy's gap
# after a change is 1 s (measured: 12 drawings in 40 s without this rule, 9 with it)
_DRAW_SHARE = 10
# how long a snapshot's drawing waits at most for the planning round in flight to have its
# plan (rounds take 0.5-1.2 s at swarm sizes; a run that replans back to back still draws)
_DRAW_WAIT_S = 2.0
# The interpreter's thread switch interval while a run ticks: a tick waits about that long
# for the GIL each time it takes it back (after its sleep, after the swarm's nogil kernel)
# from a worker running Python, more with several. At 1,000 drones, 1 ms gave lateness p99
# 11.5 ms (max 36), 0.2 ms 7.4 ms (max 18) on the same quiet machine, rounds as fast.
_SWITCH_INTERVAL_S = 0.0002
# A tick starts this late at most, and reaches the rounds this long after its start (p99
# lateness under 5 ms at every size, ``bench/executive_ticks.py``): a plan ready at a
# tick's due time is committed within this of it.
_TAKEN_MARGIN_S = 0.005


def _left_out(scenario: Scenario, mission: Mission, said: dict[str, str]) -> dict[str, str]:
    """Each enabled drone the first plan's mission has no room for and ``said`` does not
    name, with why (the feasibility check's words): an oracle's plan says no reasons."""
    planned = {spec.id for spec in mission.drones}
    missing = [d for d in scenario.enabled_drones() if d not in planned and d not in said]
    if not missing:
        return {}
    from planner.feasibility import plannable

    why = plannable(compile_mission(scenario)).left_out
    return {d: why.get(d, f"{drone_label(d)}: not planned") for d in missing}


def _spares(first: Solution, count: int) -> dict[str, str]:
    """The ``count`` drones the first plan gives the fewest points (one flies at least), and
    why they stay parked."""
    flying = [d for d, r in first.routes.items() if len(r.route) > 2]
    chosen = sorted(flying, key=lambda d: (first.routes[d].total_points, d))[
        : min(count, len(flying) - 1)
    ]
    return {
        d: f"{drone_label(d)}: a spare, parked for value that arrives late "
        f"(its {first.routes[d].total_points:g} planned points left to the others)"
        for d in chosen
    }


def _parked(scenario: Scenario, drones: dict[str, str]) -> Scenario:
    configs = {
        d: c.model_copy(update={"enabled": False}) if d in drones else c
        for d, c in scenario.drone_configs.items()
    }
    return scenario.model_copy(update={"drone_configs": configs})


class Executive:
    """Observe -> decide -> act over one mission; see the module's contract."""

    def __init__(
        self,
        scenario: Scenario,
        *,
        planner: MissionPlanner,
        sink: TraceSink,
        options: LoopOptions | None = None,
        run_id: str | None = None,
        publish: Publish | None = None,
        coordinate: Coordinate[Executive] | None = None,
        initial_plan: Solution | None = None,
        initial_mission: Mission | None = None,
        on_tick: Callable[[TickResult], None] | None = None,
        clock: Clock | None = None,
        snapshot: Callable[[Executive], Callable[[], dict[str, Any]]] | None = None,
        fork: ForkPoint | None = None,
        compile: Compile | None = None,
    ) -> None:
        options = options if options is not None else LoopOptions()
        self.scenario = scenario
        self.planner = planner
        # the rebases' missions on one incremental distance table (the planner's, when the
        # session shares it: a replan pays for what changed, not for a recompile)
        self.compile = compile if compile is not None else MissionCompiler()
        self.sink = sink
        self.options = options
        self.policy = options.policy
        self.seed = options.seed
        self.run_id = run_id or new_id()
        self.recorder = Recorder(self.run_id, sink, publish)
        self.rounds = Rounds(self)
        self.safety = Safety(self)
        self._sams_before = KnownSams()  # the known SAMs before the tick (sam_cleared)
        # Operator words in CUT / REPLAN -> constraints, read over what is known when the
        # words arrive; None: words are refused (the core reads no words itself).
        self._coordinate = coordinate
        self._initial_plan = initial_plan
        self._initial_mission = initial_mission  # what the initial plan was made on
        self._on_tick = on_tick  # a watcher (the live host): after each tick, never blocks
        self._sim: Sim | None = None
        # drone -> km it keeps on top of the reserve since its fuel leaked (Policy.leak_share):
        # what its plan in force was made to keep (policy.leak_plan_extra at its cut)
        self.leak_reserve: dict[str, float] = {}
        self._reserve: tuple[int, float] | None = None  # (known-world version, reserve_km)
        self._done_at: int | None = None  # the tick the sim was first done at (_over)
        self.constraints = OperatorConstraints()  # from the operator's words, for every replan
        # The planning chain's agents switched off now, each with why (AGENT_OFF / AGENT_ON)
        self.agents_off: dict[str, str] = dict.fromkeys(
            options.agents_off, "off in the run configuration"
        )
        self.instruction: str | None = None
        self.paused = False
        self.speed: float | None = None
        self._commands: deque[HumanCommand] = deque()
        self._edits: deque[Edit] = deque()
        self._paused_drones: list[str] = []
        self._operator_holds: set[str] = set()  # HOLD: until RESUME <drone>, RETURN or a plan
        self._stop = False
        self._clock = clock or WallClock()
        self._pacer: Pacer | None = None
        self.collector: Collector | None = None  # the cyclic collector while a run is paced
        self._woken = asyncio.Event()  # wakes a paced sleep when the speed changes
        self._trace_dropped = 0  # trace records the sink dropped, as last reported
        # the picture to keep in the traces (the live scene): captured between ticks, drawn
        # by the function the capture returns, in a worker thread when the run is paced
        self._snapshot = snapshot
        self._drawing: asyncio.Future[tuple[dict[str, Any], float]] | None = None  # being drawn
        self._fork = fork  # begin where a traced run was at a tick (executive.loop.fork)
        self._last_snapshot = -(10**9)
        # paced: the fewest ticks between two snapshots after a change, so that drawing
        # them takes at most 1/_DRAW_SHARE of the run (a swarm's takes hundreds of ms)
        self._draw_gap = 0
        self._initial_points = 0.0
        self.last: TickResult | None = None

    # ----- inputs (any coroutine or thread of the event loop) ------------------------

    def command(self, command: HumanCommand) -> None:
        """Queue an operator's command for the next tick boundary."""
        self._commands.append(command)

    def edit(self, edit: Edit) -> None:
        """Queue an operator's environment edit, stamped for the next tick."""
        self._edits.append(edit)

    def stop(self) -> None:
        """End the run after the current tick."""
        self._stop = True

    def watch(
        self,
        *,
        publish: Publish | None = None,
        on_tick: Callable[[TickResult], None] | None = None,
    ) -> None:
        """Attach a watcher's hooks (the live host's), as the constructor's would be."""
        self.recorder.publish = publish
        self._on_tick = on_tick

    def set_speed(self, speed: float | None) -> None:
        """Change the pace (K x real time, None: as fast as possible) from the next tick;
        a tick waiting on the old pace is woken at once. Raises ``ExecutiveError`` outside
        the sim's bounds."""
        try:
            check_speed(speed)
        except SimError as exc:
            raise ExecutiveError(str(exc)) from None
        self.speed = speed
        if self._pacer is not None:
            self._pacer.set_speed(speed)
        self._woken.set()

    # ----- what watchers read ----------------------------------------------------------

    @property
    def sim(self) -> Sim:
        """The simulation (``ExecutiveError`` before ``start``)."""
        if self._sim is None:
            raise ExecutiveError("the run has not started")
        return self._sim

    @property
    def forked_from(self) -> dict[str, str | int] | None:
        """A fork's parent run and tick (``{"parent", "tick"}``), else None."""
        if self._fork is None:
            return None
        return {"parent": self._fork.parent_id, "tick": self._fork.tick}

    @property
    def started(self) -> bool:
        """The first plan is made and the simulation built."""
        return self._sim is not None

    @property
    def plan(self) -> Solution | None:
        """The committed plan (its remainder form)."""
        return self.rounds.plan

    @property
    def plan_id(self) -> str | None:
        """The id of the plan in force."""
        return self.rounds.plan_id

    @property
    def replans(self) -> list[Replan]:
        """Every planning round so far, as the report tells them."""
        return self.rounds.replans

    @property
    def events_seen(self) -> deque[dict[str, Any]]:
        """The last 500 events (sim and executive), for a joining view."""
        return self.recorder.events_seen

    @property
    def mode(self) -> str:
        """PAUSED, REVIEW (a draft waits for the operator), PLANNING or FLYING."""
        if self.paused:
            return "PAUSED"
        if self.rounds.review is not None:
            return "REVIEW"
        if self.rounds.busy:
            return "PLANNING"
        return "FLYING"

    @property
    def draft(self) -> tuple[str, Solution, int] | None:
        """The draft waiting for review: (plan id, solution, cut tick), or None."""
        d = self.rounds.review
        return None if d is None else (d.plan_id, d.solution, d.cut)

    def review(self) -> dict[str, Any] | None:
        """The draft under review as the review panel shows it (``Rounds.review_view``)."""
        return self.rounds.review_view()

    @property
    def returning(self) -> dict[str, str]:
        """Drones the safety layer sent home (id -> why): no plan re-tasks them."""
        return dict(self.safety.returning)

    # ----- what the plan lifecycle asks of the loop -------------------------------------

    def planned(self, drones: set[str], leak_extra: Mapping[str, float]) -> None:
        """A committed plan re-tasks these drones; the leaked ones keep what it was made to
        keep (``ReplanProblem.leak_extra``)."""
        self.leak_reserve.update(leak_extra)
        self.safety.planned(drones)

    def fallback(self, drone_id: str, reason: str) -> None:
        """A drone the planner could not plan gets the safety layer's fallback."""
        self.safety.fallback(drone_id, reason)

    def replan_failed(self, reason: str) -> None:
        """No new plan is coming: the safety layer takes over what is unsafe."""
        self.safety.after_failure(reason)

    def taken_by(self, seconds: float) -> float:
        """Seconds from now by which a plan must be ready for a tick to take it within
        ``seconds``: the due time of the last tick that starts that soon, less its lateness
        (``Pacer.within``); ``seconds`` as fast as possible."""
        pacer = self._pacer
        if pacer is None:
            return seconds
        return min(seconds, pacer.within(self.sim.tick, seconds, _TAKEN_MARGIN_S))

    def ahead(self) -> Callable[[Iterable[Path]], None]:
        """For a worker thread: the first contacts of paths a plan will fly, worked out for
        the safety layer's first check after the commit (``Safety.ahead``), and their piece
        tables for the sim's tick that starts them (``sim.flight.lay_out``)."""
        contacts = self.safety.ahead()

        def work(paths: Iterable[Path]) -> None:
            paths = list(paths)
            contacts(paths)
            lay_out(paths)

        return work

    @property
    def checkpoints(self) -> dict[str, Checkpoint]:
        """The checkpoints of the round in flight (drone -> ``Checkpoint``), else {}."""
        return self.rounds.checkpoints

    # ----- the run -------------------------------------------------------------------

    async def start(self) -> Solution | None:
        """Plan the first mission (before tick 0) and build the simulation."""
        if self._sim is not None:
            return self.plan
        self.recorder.status("starting", phase="compiling")
        # imported here: ``python -m executive.loop.warm`` must find it not yet imported
        from executive.loop.warm import warm_kernels

        if self._fork is not None:
            await asyncio.to_thread(warm_kernels)
            self.recorder.status("starting", phase="forking")
            return await start_forked(self, self._fork)
        self.sink.emit(
            RunRecord(
                self.run_id,
                self.scenario.model_dump(mode="json", by_alias=True),
                self.seed,
                self.options.record(),
            )
        )
        # Load every numba kernel now: a first load in a worker thread mid-run holds the GIL
        # for tens of milliseconds, long enough to make a tick late.
        await asyncio.to_thread(warm_kernels)
        self.recorder.status("starting", phase="planning")
        solution = self._initial_plan
        mission = self._initial_mission
        latency = 0.0
        left_out: dict[str, str] = {}
        reasons: tuple[str, ...] = ()
        if solution is None:
            started = time.perf_counter()
            planning = with_reserve(self.scenario, self.reserve_km)
            outcome = await self._plan_first(planning)
            spares = _spares(
                outcome.solution, self.policy.spare_drones if self.policy.replan else 0
            )
            if spares:
                # hedging: the first plan goes around the spares; a change that brings value
                # (Policy.spare_release) launches them
                outcome = await self._plan_first(_parked(planning, spares))
                self.rounds.spares = spares
            latency = (time.perf_counter() - started) * 1000
            solution = outcome.solution
            mission = outcome.mission
            left_out = {**dict(outcome.left_out), **spares}
        mission = mission or compile_mission(self.scenario)
        if self._initial_plan is None and self.home_check is not None:
            # the way home with one more SAM on it, from the full fuel: a route that fails
            # it ends sooner
            fuel = {d: c.fuel_budget for d, c in self.scenario.drone_configs.items()}
            solution, cuts = guard_solution(mission, solution, fuel, self.home_check)
            reasons = tuple(cut.reason for cut in cuts)
        checking = time.perf_counter()
        problems = validate_solution(mission, solution)
        if problems:
            raise ExecutiveError("the first plan is invalid: " + "; ".join(map(str, problems)))
        checked_s = time.perf_counter() - checking
        self._sim = Sim(self.scenario, None, hash_every=self.policy.hash_every)
        self.recorder.sim = self._sim
        self._initial_points = solution.total_points
        left_out |= _left_out(self.scenario, mission, left_out)
        self.rounds.commit_initial(mission, solution, latency, left_out, reasons, checked_s)
        return solution

    async def _plan_first(self, scenario: Scenario) -> PlanOutcome:
        request = PlanRequest(
            self.run_id,
            new_id(),
            0,
            "initial",
            scenario,
            self.policy.planning_deadline_s * 4,
            self.constraints,
            skip_agents=dict(self.agents_off),
        )
        outcome = await self.planner.plan(request)
        if outcome.followup is not None:
            # The first plan is the planner's: agents weigh in from the first replan on.
            outcome.followup.cancel()
        return outcome

    def reserve_for(self, drone_id: str, home: float | None = None) -> float:
        """Km of fuel ``drone_id`` keeps above its way home now: the fleet's reserve and,
        after a leak, what its plan in force was made to keep, and with a way home of
        ``home`` km, at least what a further leak (Policy.leak_share) of its fuel would
        take there (``policy.leak_turn_extra``)."""
        reserve = self.reserve_km
        kept = self.leak_reserve.get(drone_id)
        if kept is None:
            return reserve
        if home is None:
            return reserve + kept
        return reserve + max(kept, leak_turn_extra(self.policy.leak_share, home, reserve))

    @property
    def home_check(self) -> HomeCheck | None:
        """The way-home check every plan passes (Policy.home_rule; planner.way_home)."""
        return self.policy.home_rule

    @property
    def reserve_km(self) -> float:
        """Km of fuel every plan keeps above its way home now: the policy's, with the SAMs
        known now (before the first tick: the mission's). Once per known-world version: the
        safety check reads it for every airborne drone (1,000 x 500 SAMs at the door's size)."""
        if self._sim is None:
            return self.policy.reserve_km(s.range for s in self.scenario.environment.sams)
        world = self._sim.world
        version = world.environment_version
        if self._reserve is None or self._reserve[0] != version:
            ranges = (s.range for s in world.known_environment.sams)
            self._reserve = (version, self.policy.reserve_km(ranges))
        return self._reserve[1]

    def adopt(self, sim: Sim, fork: ForkPoint) -> None:
        """Fly on in ``sim``, rebuilt to the end of the fork tick; paused if the parent was."""
        self._sim = sim
        self.recorder.sim = sim
        self._last_snapshot = fork.tick  # the copied trace holds the picture up to here
        self.paused = fork.paused
        self._paused_drones = list(fork.holding)
        initial = fork.parent.get("outcome") or {}
        self._initial_points = float(initial.get("initial_planned_points") or 0.0)

    def _over(self) -> bool:
        """The mission is over when the sim is (nothing airborne, nothing left on its
        timeline or queued) and no replan asked for or in flight could still launch a drone
        from the ground: a change at the very end (a target after every drone landed) is
        planned, for a while at most (a planner that never answers does not hold the run)."""
        sim = self.sim
        if not sim.done:
            self._done_at = None
            return False
        if not (self.rounds.pending or self.rounds.busy) or self.paused:
            return True
        if self._done_at is None:
            self._done_at = sim.tick
        return sim.tick - self._done_at > 4 * self.rounds.lookahead()

    async def run(self, speed: float | None = None, *, until: int | None = None) -> RunReport:
        """Run the mission to its end (or ``stop()``, or tick ``until``) at ``speed`` x real
        time (None: as fast as possible), paced by the sim's ``Pacer`` on this executive's
        clock; returns the report."""
        await self.start()
        sim = self.sim
        self.speed = speed
        pacer = self._pacer = Pacer(sim.tick_hz, speed, clock=self._clock)
        # Worker threads (planning, traces) hand the GIL back to the loop every 0.2 ms
        # instead of every 5: a tick waits about that long for it (``_SWITCH_INTERVAL_S``).
        switch = sys.getswitchinterval()
        sys.setswitchinterval(min(switch, _SWITCH_INTERVAL_S))
        if speed is not None:  # and they get a core after the tick (executive.loop.workers)
            install_workers(asyncio.get_running_loop())
        # Paced, the cyclic collector runs between ticks, never in one (``collector``);
        # its set-up pass is done before the clock starts, so it delays no tick.
        collector = self.collector = Collector(sim.tick_hz) if self.speed is not None else None
        if collector is not None:
            collector.start()
        began = self._clock.now()
        pacer.start(sim.tick)
        self.recorder.status("running", agents=self.agent_switches())
        try:
            while not self._stop and not self._over() and (until is None or sim.tick < until):
                if pacer.speed is None:
                    await self.rounds.await_due()
                    self.tick_once()
                else:
                    await self._until_due(pacer, sim.tick)
                    pacer.started(sim.tick)
                    with GATE.ticking():  # the trace writer waits for it (executive.gate)
                        self.tick_once()
                if collector is not None:
                    collector.after_tick(pacer.slack(sim.tick))
                if pacer.speed is None:
                    # As fast as possible the run may wait: for the trace writer to catch
                    # up (nothing is dropped), and for the bus, clients and rounds.
                    if backlog(self.sink) >= 0.5:
                        await drain(self.sink)
                    if sim.tick % 64 == 0:
                        await asyncio.sleep(0)
                if sim.tick % 64 == 0:
                    self._check_traces()
        finally:
            sys.setswitchinterval(switch)
            if collector is not None:
                collector.stop()
            self.rounds.cancel()
        if self._drawing is not None:  # the last snapshot, stored before the run settles
            with contextlib.suppress(Exception):
                await self._drawing
        # Wait for the store to take what the run emitted (or give it up, counted), so the
        # report and the last TRACE_DROPPED event, live on the bus, say the whole of it.
        await settle(self.sink, _SETTLE_S)
        self._check_traces()
        report = RunReport(
            self.run_id,
            mission_outcome(sim),
            list(self.replans),
            self._clock.now() - began,
            sim.tick,
            pacer.overruns,
            lateness_summary(pacer.lateness, pacer.worst[1]),
            sorted(self.safety.returning),
            self._initial_points,
            self.safety.actions,
            list(self.rounds.commits),
            dropped_by(self.sink),
            lost_by(self.sink),
        )
        self.recorder.status("ended", report.to_dict())
        return report

    def _check_traces(self) -> None:
        """Trace records the store did not take (a full queue paced, a store down, locked or
        full past the writer's retries): never silently. Say so once per batch of losses,
        with the tables and ticks, on the bus (the live stream hears it even when the store
        is down) and in the log, and count them for the report."""
        dropped = dropped_by(self.sink)
        if dropped > self._trace_dropped:
            lost = lost_by(self.sink)
            log.warning("trace records not stored: %d so far: %s", dropped, describe(lost))
            self.recorder.event(
                self.sim.tick,
                "TRACE_DROPPED",
                {"dropped": dropped - self._trace_dropped, "total": dropped, "tables": lost},
            )
            self._trace_dropped = dropped

    async def _until_due(self, pacer: Pacer, tick: int) -> None:
        """Sleep until ``tick`` is due; a speed change wakes the sleep at once. A tick that
        is already due still yields once: behind its schedule (a fast speed on a slow
        machine) the loop would otherwise never run the rounds, the bus or the clients."""
        if pacer.delay(tick) <= 0:
            await asyncio.sleep(0)
            return
        while (delay := pacer.delay(tick)) > 0:
            self._woken.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._woken.wait(), delay)

    def tick_once(self) -> TickResult:
        """One tick: decide and act on what is due, step the sim, observe."""
        sim = self.sim
        self._sams_before.refresh(sim.world)
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
            self.recorder.submit(self._edits.popleft(), "operator")
        while self._commands:
            self._human(self._commands.popleft())
        self.rounds.decide()
        if sim.tick % self.policy.safety_every == 0:
            self.safety.check()
        elif self.safety.waiting:  # a divert waits for the field; ways home past a budget
            self.safety.recheck()

    def _human(self, command: HumanCommand) -> None:
        tick = self.sim.tick
        kind = command.kind
        rounds = self.rounds
        said = {"command": kind, "text": command.text, "source": command.source}
        if command.drone:
            said["drone"] = command.drone
        if command.id:
            said["id"] = command.id
        self.recorder.event(tick, "HUMAN_COMMAND", said)
        if command.drone is not None or kind in DRONE_COMMANDS:
            return self._one_drone(command)
        if kind in AGENT_COMMANDS:
            return self._switch_agent(command)
        if kind in ("CUT", "REPLAN"):
            only: tuple[str, ...] = ()
            if command.text:
                verdict = self._apply_words(command.text, kind)
                if verdict is None:
                    return  # refused: the words ask for what cannot be done, nothing replanned
                only = verdict.only_drones  # a move: the other drones keep their routes
            rounds.trigger("operator", f"operator:{kind}", only)
        elif kind == "PAUSE":
            if self.paused:
                return self._ignored(kind, "already paused")
            self.paused = True
            rounds.invalidate("paused")
            self._paused_drones = [
                d for d in self.scenario.drone_configs if self.sim.world.status(d) == "flying"
            ]
            for drone_id in self._paused_drones:
                self.recorder.submit(Hold(drone=drone_id, tick=tick), "executive")
            self.recorder.event(tick, "PAUSE", {"holding": self._paused_drones})
        elif kind == "RESUME":
            if not self.paused:
                return self._ignored(kind, "not paused")
            self.paused = False
            for drone_id in self._paused_drones:
                if self.sim.world.status(drone_id) == "holding":
                    self.recorder.submit(ResumeFlight(drone=drone_id, tick=tick), "executive")
            self.recorder.event(tick, "CONTINUE", {"resumed": self._paused_drones})
            self._paused_drones = []
            # The pause burnt fuel the plan in force counted on: replan the remainder now
            # (committed in auto, offered in review) rather than fly a plan that may no
            # longer fit.
            rounds.trigger("operator", "operator:RESUME")
        elif kind == "RESET":
            rounds.reset()
            self.constraints, self.instruction = OperatorConstraints(), None
            self.recorder.event(tick, "RESET", {})
            rounds.trigger("operator", "operator:RESET")
        elif kind == "ACCEPT":
            if rounds.review is None:
                return self._ignored(kind, "no draft waits for review")
            rounds.accept()
        elif kind == "REJECT":
            if rounds.review is None:
                return self._ignored(kind, "no draft waits for review")
            rounds.drop_draft("rejected", "operator rejected the draft")

    def _switch_agent(self, command: HumanCommand) -> None:
        """AGENT_OFF / AGENT_ON of one agent of the planning chain (its role in ``text``):
        from the next round on, an agent off is not asked and each round traces it as
        skipped with why; an AGENTS event says which are off. Refused with the reason when
        the run has no such agent or it is already so."""
        kind, role = command.kind, (command.text or "").strip().lower()
        roles = self.options.agent_roles
        if role not in roles:
            have = ", ".join(roles) or "none: this run asks no agents"
            return self._ignored(kind, f"no agent {role!r} to switch; this run's: {have}")
        tick = self.sim.tick
        if kind == "AGENT_OFF":
            if role in self.agents_off:
                return self._ignored(kind, f"{role} is already off")
            self.agents_off[role] = f"switched off by {command.source} at tick {tick}"
        else:
            if role not in self.agents_off:
                return self._ignored(kind, f"{role} is already on")
            del self.agents_off[role]
        self.recorder.event(
            tick, "AGENTS", {"agent": role, "on": kind == "AGENT_ON", "off": dict(self.agents_off)}
        )

    def agent_switches(self) -> dict[str, Any]:
        """The planning chain's agents, those off now (each with why) and their cadences
        (mission seconds): what the dashboard's engines panel switches."""
        return {
            "roles": list(self.options.agent_roles),
            "off": dict(self.agents_off),
            "cadence_s": dict(self.options.agent_cadence_s),
        }

    def _ignored(self, kind: str, why: str, drone: str | None = None) -> None:
        self.recorder.event(
            self.sim.tick,
            "COMMAND_IGNORED",
            {"command": kind, "reason": why} | ({"drone": drone} if drone else {}),
        )

    def _one_drone(self, command: HumanCommand) -> None:
        """RETURN, HOLD, or RESUME of one held drone, through the safety layer: each refused
        with its reason (COMMAND_IGNORED) when the drone cannot do it now."""
        kind, drone = command.kind, command.drone
        world = self.sim.world
        if drone is None:
            return self._ignored(kind, f"{kind} needs a drone's id")
        if drone not in self.scenario.drone_configs:
            return self._ignored(kind, f"no drone {drone!r} in this mission", drone)
        status = world.status(drone)
        name = drone_label(drone)
        if kind == "RETURN":
            if status not in ("flying", "holding"):
                return self._ignored(kind, f"{name} is {status}, not airborne", drone)
            if drone in self.safety.returning:
                return self._ignored(kind, f"{name} is already on its way home", drone)
            # a paused or held drone goes home now; RESUME must not send it back on its path
            self._paused_drones = [d for d in self._paused_drones if d != drone]
            self._operator_holds.discard(drone)
            self.safety.send_home(drone, "operator: return home")
        elif kind == "HOLD":
            if drone in self.safety.returning:
                return self._ignored(kind, f"{name} is on its way home", drone)
            refused = self.safety.hold_here(drone, "operator: hold")
            if refused is not None:
                return self._ignored(kind, f"{name}: {refused}", drone)
            self._operator_holds.add(drone)
        elif kind == "RESUME":
            if drone not in self._operator_holds or status != "holding":
                return self._ignored(kind, f"{name} is not held by the operator", drone)
            self._operator_holds.discard(drone)
            self.recorder.submit(ResumeFlight(drone=drone, tick=self.sim.tick), "executive")
            self.recorder.event(self.sim.tick, "CONTINUE", {"resumed": [drone]})
        else:
            self._ignored(kind, f"{kind} is for the whole mission: give no drone", drone)

    @property
    def operator_holds(self) -> set[str]:
        """The drones the operator held (HOLD), until RESUME, RETURN or a plan re-tasks them."""
        world = self.sim.world
        return {d for d in self._operator_holds if world.status(d) == "holding"}

    def _apply_words(self, text: str, kind: str = "REPLAN") -> CoordinatorVerdict | None:
        """The operator's words into the constraints in force, and the verdict on them;
        None (and the reasons on a COMMAND_IGNORED event) when the coordinator refuses them:
        an unknown id, a drone that cannot sense the target, a target inside a SAM, not
        enough fuel; or when this run has no coordinator to read them."""
        if self._coordinate is None:
            self.recorder.event(
                self.sim.tick,
                "COMMAND_IGNORED",
                {
                    "command": kind,
                    "reason": "refused: no coordinator reads words in this run",
                    "text": text,
                },
            )
            return None
        verdict = self._coordinate(text, self)
        if verdict.errors:
            errors = list(verdict.errors)
            self.recorder.event(
                self.sim.tick,
                "COMMAND_IGNORED",
                {
                    "command": kind,
                    "reason": "refused: " + "; ".join(errors),
                    "text": text,
                    "errors": errors,
                    "refused": [r.model_dump(mode="json") for r in verdict.refused],
                },
            )
            return None
        added = verdict.constraints
        # the last word wins (never both T5->2 and T5->1 in force): planner.constraints' merge
        self.constraints = merge_constraints(self.constraints, added)
        self.instruction = text
        # each event carries its own copies: what this command added, what it refused or
        # replaced, and the constraints in force after it (a later command never shows here)
        self.recorder.event(
            self.sim.tick,
            "CONSTRAINTS",
            copy.deepcopy(
                {
                    "text": text,
                    "added": added.model_dump(mode="json"),
                    "constraints": self.constraints.model_dump(mode="json"),
                    "replaced": [r.model_dump(mode="json") for r in verdict.replaced],
                    "only_drones": list(verdict.only_drones),
                }
            ),
        )
        return verdict

    # ----- observe -------------------------------------------------------------------

    def _observe(self, result: TickResult) -> None:
        recorder = self.recorder
        for event in result.events:
            recorder.event(result.tick, event.kind, event.model_dump(mode="json"))
            if isinstance(event, EditApplied) and event.edit.change.scope == "environment":
                # seed 000 §8's ENV_EDITS (a public event: a hidden edit is a truth event)
                recorder.event(result.tick, "ENV_EDITS", {"edits": [event.edit.describe()]})
            self._react(event)
        for event in result.truth_events:  # hidden things: traces only
            recorder.truth_event(result.tick, event.kind, event.model_dump(mode="json"))
        traced = result.tick % self.policy.telemetry_every == 0
        drones = self.telemetry(result) if traced or recorder.publish else None
        if traced and drones is not None:
            recorder.telemetry(result.tick, drones)
        if result.state_hash is not None:
            recorder.state_hash(result.tick, result.state_hash)
        if recorder.publish:
            recorder.publish(
                "telemetry",
                {"tick": result.tick, "time": result.time, "mode": self.mode, "drones": drones},
            )
        self._maybe_snapshot(result.tick)

    def _maybe_snapshot(self, tick: int) -> None:
        """Keep the picture in the traces: every ``snapshot_every`` ticks, and soon after
        anything happened, so a replay seeks from the nearest snapshot. The tick only
        captures it; at 1x the drawing (hundreds of ms of Python at swarm sizes) runs in a
        worker thread, which hands the GIL back every switch interval, and the record is
        stored when it is drawn (one at a time: a capture waits for the previous drawing,
        and a snapshot after a change waits ten times as long as the last drawing took).
        As fast as possible it is drawn at once, so batch runs store the same records."""
        every = self.policy.snapshot_every
        if self._snapshot is None or not every or self._drawing is not None:
            return
        since = tick - self._last_snapshot
        gap = max(self.policy.snapshot_gap, self._draw_gap)
        if since >= every or (self.recorder.changed and since >= gap):
            draw = self._snapshot(self)
            self.recorder.changed = False  # what happens from now on is in the next one
            self._last_snapshot = tick
            try:
                asyncio.get_running_loop()
            except RuntimeError:  # ticked by hand, outside a run
                paced = False
            else:
                paced = self.speed is not None
            if not paced:
                self.recorder.snapshot(tick, draw())
                return
            drawing = asyncio.ensure_future(self._draw_after_round(draw))
            self._drawing = drawing

            def store(done: asyncio.Future[tuple[dict[str, Any], float]]) -> None:
                self._drawing = None
                if not done.cancelled() and done.exception() is None:
                    picture, took = done.result()
                    self._draw_gap = math.ceil(
                        _DRAW_SHARE * took * self.sim.tick_hz * (self.speed or 1.0)
                    )
                    self.recorder.snapshot(tick, picture)
                elif not done.cancelled():
                    log.warning("the snapshot at tick %d was not drawn: %s", tick, done.exception())

            drawing.add_done_callback(store)

    async def _draw_after_round(
        self, draw: Callable[[], dict[str, Any]]
    ) -> tuple[dict[str, Any], float]:
        """A captured picture drawn in a worker once the planning round in flight has its
        plan (at most ``_DRAW_WAIT_S`` later), and the drawing's seconds. The drawing is
        Python that shares the GIL with the round's: drawn beside a 200-drone round it
        doubled the wall time of the round's Python (40-70 ms of a 0.5 s deadline). What
        is drawn was captured at its tick, so waiting changes nothing in it."""
        r = self.rounds.round
        if r is not None and not r.task.done():
            await asyncio.wait({r.task}, timeout=_DRAW_WAIT_S)
        began = time.perf_counter()
        picture = await asyncio.to_thread(draw)
        return picture, time.perf_counter() - began

    def telemetry(self, result: TickResult) -> dict[str, DroneTelemetry]:
        """Each drone's telemetry frame at the end of the tick (``FleetView.telemetry``)."""
        return result.fleet.telemetry()

    def _react(self, event: Event) -> None:
        match event:
            case SamDetected():
                self.safety.sam_known(event.sam, f"sam_detected:{event.sam}")
            case EditApplied():
                self._react_edit(event.edit)
            case DroneLost():
                self.safety.lost(event.drone)
                self.rounds.trigger("drone_lost", f"drone_lost:{event.drone}")
            case (
                TargetCollected()
                | TargetMissed()
                | DroneLanded()
                | DroneHolding()
                | EditRejected()
                | CommandApplied()
                | CommandRejected()
            ):
                pass  # traced and published; nothing to replan
            case _:  # pragma: no cover - the union is closed
                assert_never(event)

    def _react_edit(self, edit: Edit) -> None:
        """An applied edit, by kind: a SAM that becomes known goes to the safety layer
        (which asks for a "sam" replan if it touches a plan); a known SAM removed or moved
        may free what it bent ("sam_cleared"); the others ask for a replan of their kind's
        trigger (``planner.edits``: ``edit.change.trigger``)."""
        match edit:
            case AddSam():
                if not edit.hidden:  # a hidden one reaches the traces only, never here
                    self.safety.sam_known(edit.id, f"{edit.op}:{edit.id}")
            case MoveSam():
                self.safety.sam_known(edit.id, f"{edit.op}:{edit.id}")
                self._sam_cleared(edit.id, f"{edit.op}:{edit.id}")
            case RemoveSam():
                self._sam_cleared(edit.id, f"{edit.op}:{edit.id}")
            case RevealSam():
                self.safety.sam_known(edit.id, f"{edit.op}:{edit.id}")
            case AddTarget() | RemoveTarget() | MoveTarget() | SetPriority():
                self.rounds.trigger(edit.change.trigger, f"{edit.op}:{edit.id}")
            case SetFuel():
                # until the leak's replan measures the way home (in its cut, off the tick),
                # the bound that needs none: a share of the fuel left (home unknown: inf)
                self.leak_reserve[edit.drone] = leak_plan_extra(
                    self.policy.leak_share, edit.fuel, math.inf, self.reserve_km
                )
                self.rounds.trigger(edit.change.trigger, f"{edit.op}:{edit.drone}")
            case DisableDrone():
                pass  # the DroneLost event it causes asks for the replan
            case _:  # pragma: no cover - the union is closed
                assert_never(edit)

    def _sam_cleared(self, sam_id: str, trigger: str) -> None:
        """A known SAM removed, moved or shrunk: replan at once if that frees a target or a
        path it bent (``executive.loop.cleared``), else say why not."""
        self.safety.sams_changed()  # the known SAMs' field is built again (paced: a worker)
        before = self._sams_before.get(sam_id)
        if before is None:
            return  # it was not known: nothing was planned around it
        world = self.sim.world
        after = next((s for s in world.known_environment.sams if s.id == sam_id), None)
        why = freed_by(before, after, world, self.scenario, set(self.returning))
        if why is None:
            self.rounds.changed()
            self.recorder.event(
                world.tick, "CONTINUE", {"change": trigger, "reason": "frees nothing planned"}
            )
            return
        self.recorder.event(world.tick, "SAM_CLEARED", {"change": trigger, "reason": why})
        self.rounds.trigger("sam_cleared", trigger)
