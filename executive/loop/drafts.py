"""The values of a plan's life: a round of the fast tier in flight, a draft and its intent,
a rebase and what it produced, a slow-tier (agents) work in flight, and a commit's
provenance. ``RoundHost`` is what the lifecycle (``executive.loop.rounds``) needs from the
executive it belongs to."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from executive.contracts import AgentProposal, MissionPlanner, PlanOutcome, PlanRequest
from executive.loop.cut import ReplanProblem
from executive.loop.options import LoopOptions
from executive.loop.policy import Policy
from executive.loop.record import Recorder
from executive.loop.report import Replan
from planner.constraints import OperatorConstraints
from planner.geometry import Path
from planner.intent import Intent
from planner.mission import Compile, Mission
from planner.model import Solution
from planner.validation import Violation
from planner.way_home import HomeCheck
from sim import FlyPath, Sim

__all__ = [
    "AgentWork",
    "Approval",
    "Asking",
    "Draft",
    "InForce",
    "Planned",
    "RebaseJob",
    "Rebased",
    "Remainder",
    "Rival",
    "Round",
    "RoundHost",
    "airborne",
    "better",
    "checkpoints_json",
    "ends_of",
    "provenance",
]

_EPS = 1e-6
Approval = Literal["auto", "operator", "policy"]  # who let a plan fly


class RoundHost(Protocol):
    """What the plan lifecycle needs from the executive it belongs to."""

    run_id: str
    policy: Policy
    options: LoopOptions  # the agents of the chain, those off at the start, their cadences
    agents_off: dict[str, str]  # the agents switched off now, each with why
    planner: MissionPlanner
    compile: Compile  # the rebases' missions (incremental)
    recorder: Recorder
    constraints: OperatorConstraints
    instruction: str | None
    paused: bool
    speed: float | None

    @property
    def sim(self) -> Sim:
        """The running simulation."""
        ...

    @property
    def returning(self) -> dict[str, str]:
        """Drones the safety layer sent home: not planned any more."""
        ...

    @property
    def reserve_km(self) -> float:
        """Km of fuel every plan keeps above its way home (the policy's, the SAMs known)."""
        ...

    @property
    def home_check(self) -> HomeCheck | None:
        """The way-home check every plan passes at commit (planner.way_home); None: none."""
        ...

    @property
    def leak_reserve(self) -> dict[str, float]:
        """Km more a drone whose fuel leaked keeps (Policy.leak_share), by drone: what its
        plan in force was made to keep."""
        ...

    def planned(self, drones: set[str], leak_extra: Mapping[str, float]) -> None:
        """A committed plan re-tasks these drones, and keeps ``leak_extra`` (drone -> km
        above the reserve, ``ReplanProblem.leak_extra``) for the leaked ones."""
        ...

    def fallback(self, drone_id: str, reason: str) -> None:
        """A drone the planner could not plan gets the safety layer's fallback."""
        ...

    def replan_failed(self, reason: str) -> None:
        """No new plan is coming: the safety layer takes over."""
        ...

    def taken_by(self, seconds: float) -> float:
        """Seconds from now by which a plan must be ready for the tick that takes it to
        come within ``seconds`` (ticks start on a schedule); ``seconds`` unpaced."""
        ...

    def ahead(self) -> Callable[[Iterable[Path]], None]:
        """Called on the tick; what it returns, called in a worker thread with the paths a
        plan will fly, works out their first contacts with the SAMs known at the call."""
        ...


@dataclass(frozen=True)
class Asking:
    """What the tick knew when a round started, for the planner's request made once the
    remainder is cut (paced: in a worker): the round's id, its trigger, the agents not
    asked (role -> why), the operator's constraints and words in force then."""

    round_id: str
    trigger: str
    skip: dict[str, str]
    constraints: OperatorConstraints
    instruction: str | None
    started: float = 0.0  # the round's start (``time.perf_counter()``)
    after_s: float = 0.0  # the executive's part after the plan, measured (0: not yet)
    # the deadline's part after the last tick that can take the plan within it (paced)
    past_tick_s: float = 0.0


@dataclass(frozen=True)
class Remainder:
    """A round's remainder, cut: the problem, the plan in force when the round started
    (auto: the fresh draft is judged against it rebased onto the same cut) and the
    planner's request."""

    problem: ReplanProblem
    in_force: InForce | None
    request: PlanRequest


@dataclass
class Round:
    """A planning round of the fast tier in flight."""

    replan: Replan
    cut: int  # the tick its plan starts at
    task: asyncio.Task[Planned]
    known_version: int
    started: float
    invalid: str | None = None  # why its draft can no longer be used (paused, reset)
    only: set[str] | None = None  # a move's round: the drones it re-plans (the others kept)
    remainder: Remainder | None = None  # once cut (paced: in a worker, soon after the start)
    planned: float | None = None  # when the planner answered (``time.perf_counter()``)
    ready: float | None = None  # when its plan was validated and made into commands


@dataclass
class Planned:
    """A round's outcome, validated and turned into commands (off the tick)."""

    outcome: PlanOutcome
    mission: Mission
    violations: list[Violation]
    commands: list[FlyPath]
    rival: Rival | None = None  # the plan in force rebased onto the same cut (auto)
    intent: Intent = field(default_factory=dict)  # of the outcome's solution
    ends: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class InForce:
    """The plan in force when a round starts, as a rebase needs it: what it means to do."""

    plan_id: str
    intent: Intent
    ends: dict[str, str]
    gone: dict[str, str]  # targets collected or reached before the cut, and why


@dataclass(frozen=True)
class Rival:
    """The plan in force rebased onto a round's cut, routed on the round's mission, so the
    round's fresh draft is judged against it (``executive.loop.fast_tier``)."""

    plan_id: str
    points: float  # what it collects, routed
    # validated and made into commands only when it might win (``fast_tier.contends``):
    # None when the fresh draft is worth at least as much, which it usually is
    rebased: Rebased | None
    breaks: tuple[str, ...] = ()  # the operator's constraints it does not honour
    fresh_breaks: tuple[str, ...] = ()  # ... and those the fresh draft does not


@dataclass
class Draft:
    """A validated plan that can fly from its cut tick, and what it means to do."""

    plan_id: str
    replan: Replan  # the round it belongs to, as the report tells it
    origin: str  # planner | agents | rebase
    problem: ReplanProblem
    mission: Mission
    solution: Solution
    commands: list[FlyPath]
    intent: Intent  # per drone, the ordered targets still to visit
    ends: dict[str, str]  # per drone, its end airport
    ready_tick: int
    parent_id: str | None = None  # the draft it was rebased from
    dropped: dict[str, str] = field(default_factory=dict)  # target -> why (vs its parent)
    agent_applied: bool = False
    left_out: dict[str, str] = field(default_factory=dict)  # drones not planned, and why
    preview: Rebased | None = None  # rebased onto a recent state, for the review panel
    preview_at: float = -math.inf  # wall time of the last preview

    @property
    def cut(self) -> int:
        """The tick from which the draft's commands fly."""
        return self.problem.tick


@dataclass
class Rebased:
    """An intent routed again from a later cut (the work of a rebase job)."""

    problem: ReplanProblem
    mission: Mission
    solution: Solution
    commands: list[FlyPath]
    violations: list[Violation]
    intent: Intent
    ends: dict[str, str]
    dropped: dict[str, str]
    left_out: dict[str, str]
    current: Solution | None = None  # the plan in force, rebased on the same cut


@dataclass
class RebaseJob:
    """A rebase in a worker thread, and what to do with it."""

    purpose: Literal["commit", "preview", "agents"]
    draft: Draft  # what is rebased
    task: asyncio.Task[Rebased]
    cut: int
    known_version: int
    started: float
    approved: Approval | None = None
    proposal: AgentProposal | None = None


@dataclass
class AgentWork:
    """A round's slow tier, still thinking."""

    replan: Replan
    problem: ReplanProblem
    task: asyncio.Task[AgentProposal]
    due: int  # as fast as possible, the tick at which it is awaited


def airborne(problem: ReplanProblem) -> set[str]:
    """The drones that are in the air at the problem's cut."""
    return {d for d, c in problem.checkpoints.items() if c.airborne}


def ends_of(solution: Solution) -> dict[str, str]:
    """Each drone's end airport in ``solution``."""
    return {d: r.route[-1] for d, r in solution.routes.items() if r.route}


def checkpoints_json(problem: ReplanProblem) -> dict[str, dict[str, Any]]:
    """The cut's checkpoints as the CUT_AND_FREEZE event carries them."""
    return {
        d: {
            "x": c.x,
            "y": c.y,
            "fuel": c.fuel,
            "start": c.start_id,
            "frozen_targets": list(c.frozen_targets),
        }
        for d, c in problem.checkpoints.items()
    }


def provenance(draft: Draft, approved: Approval | None) -> dict[str, Any]:
    """Where ``draft`` came from and who let it fly, for its trace row and event."""
    return {
        "origin": draft.origin,
        "approved": approved,
        "rebased_from": draft.parent_id,
        "dropped": dict(draft.dropped),
        "agent_applied": draft.agent_applied,
        "intent": {d: list(ts) for d, ts in draft.intent.items()},
        "not_planned": dict(draft.left_out),
    }


def better(cand: Solution, current: Solution) -> bool:
    """``cand`` scores more points than ``current`` (tie: less fuel)."""
    if cand.total_points > current.total_points + _EPS:
        return True
    return cand.total_points >= current.total_points - _EPS and (
        cand.total_fuel < current.total_fuel - _EPS
    )
