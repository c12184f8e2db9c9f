"""The contracts between the executive's parts (the loop, the planning round, the traces)
and the plug points the layers above fill in.

The loop (``executive/loop/loop.py``) asks a ``MissionPlanner`` for a plan with a
``PlanRequest`` and receives a ``PlanOutcome``; it never awaits one inside a tick. Every
part reports what happened as trace records through a ``TraceSink``, whose ``emit`` never
blocks (the real sink queues rows to a writer thread). Records are plain frozen dataclasses
so any part can build them without the database.

An operator's words in a CUT or REPLAN are read by a ``Coordinate`` (the dialogue stack,
``agents``, builds one; ``mission.session`` passes it in), which returns a typed
``CoordinatorVerdict``: the constraints to add, or the errors that refuse the command. The
core never imports the dialogue stack.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, get_args, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from planner.constraints import OperatorConstraints
from planner.model import Scenario, Solution

if TYPE_CHECKING:  # a type only: the bus's messages import this module without the kernels
    from planner.intent import RoutedIntent
    from planner.mission import Mission

__all__ = [
    "AGENT_COMMANDS",
    "DRONE_COMMANDS",
    "HUMAN_COMMANDS",
    "AgentProposal",
    "AgentRunRecord",
    "Coordinate",
    "CoordinatorVerdict",
    "EventRecord",
    "HumanCommand",
    "InputRecord",
    "MissionPlanner",
    "PlanOutcome",
    "PlanRequest",
    "PlanVersionRecord",
    "Refusal",
    "Replacement",
    "RunEndRecord",
    "RunRecord",
    "SnapshotRecord",
    "StateHashRecord",
    "TelemetryRecord",
    "TraceRecord",
    "TraceSink",
    "WarmStart",
    "new_id",
]

HumanCommandKind = Literal[
    "CUT",
    "PAUSE",
    "RESUME",
    "RESET",
    "ACCEPT",
    "REJECT",
    "REPLAN",
    "RETURN",
    "HOLD",
    "AGENT_OFF",
    "AGENT_ON",
]
HUMAN_COMMANDS: tuple[str, ...] = get_args(HumanCommandKind)
# The commands that switch one agent of the planning chain off or on (its role in ``text``).
AGENT_COMMANDS = ("AGENT_OFF", "AGENT_ON")
# The commands for one drone (``HumanCommand.drone`` required): RETURN home, HOLD where it is;
# RESUME takes a drone too (one the operator held), else it resumes the paused fleet.
DRONE_COMMANDS = ("RETURN", "HOLD")
# draft: made, not yet flown; committed: flying; rejected: by the validator or the operator;
# stale: its cut passed before it could fly; superseded: a newer plan or world replaced it;
# rebased: routed again from a later cut (the rebased copy is a new version); expired: a
# review that waited past the policy's timeout.
PlanStatus = Literal["draft", "committed", "rejected", "stale", "superseded", "rebased", "expired"]


def new_id() -> str:
    """A fresh 16-hex-digit id for a run, a round, a plan or an agent run."""
    return uuid.uuid4().hex[:16]


@dataclass(frozen=True)
class HumanCommand:
    """An operator's command (seed 000 §8: HUMAN_COMMAND), stamped when it reaches the loop."""

    kind: HumanCommandKind
    # free words for the coordinator, e.g. "move T5 to D1"; AGENT_OFF / AGENT_ON: the role
    text: str | None = None
    source: str = "operator"
    drone: str | None = None  # RETURN, HOLD (and RESUME of one held drone): which drone
    id: str | None = None  # the command's one id from the door (traced in HUMAN_COMMAND)


@dataclass(frozen=True)
class WarmStart:
    """The plan in force when a round was cut, for its search to start from: per drone,
    the ordered targets it still meant to visit (``intent``) and its end airport
    (``ends``); ``gone``, the targets collected or reached before the cut, and why."""

    intent: Mapping[str, tuple[str, ...]]
    ends: Mapping[str, str]
    gone: Mapping[str, str]


@dataclass(frozen=True)
class PlanRequest:
    """Plan the remainder of the mission as it will be at ``tick``.

    ``scenario`` is already the replanning problem: known environment only, synthetic starts
    at the checkpoints, fuel left there as budgets, collected targets removed, frozen prefixes.
    """

    run_id: str
    round_id: str
    tick: int  # the state version the request was made about
    trigger: str  # e.g. "sam_detected:SAM3", "drone_lost:3", "target_added:T13", "operator:REPLAN"
    scenario: Scenario
    deadline_s: float  # planning budget in wall seconds; the baseline must be ready by then
    constraints: OperatorConstraints = field(default_factory=OperatorConstraints)
    instruction: str | None = None  # the operator's words, if a human asked
    parent_run_id: str | None = None
    # The agents of the chain not to ask in this round, each with why (switched off; not
    # asked by a cadence round of another agent): the planner traces each as skipped.
    skip_agents: Mapping[str, str] = field(default_factory=dict)
    # The plan in force, for a timed round's search to start from (so its first plan is
    # never worth less than keeping it); None: from scratch
    warm_start: WarmStart | None = None
    # Of ``deadline_s``, the wall seconds the executive's own part of a timed round takes:
    # the cut before this request, and after the plan its checks, its commands and the tick
    # that commits it (measured on its recent rounds): the plan is due that much before the
    # deadline, for the round to end by it. 0: not measured (the planner keeps a share).
    reserved_s: float = 0.0
    # Airborne drones' synthetic starts -> the km of fuel each drone has there: the
    # compile may bound the start's distances beyond it (``compile_mission``'s ``reach``)
    reach_km: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class PlanOutcome:
    """What a planner answers to a ``PlanRequest``: the fast plan, and the slow tier still at work."""

    round_id: str
    tick: int  # copied from the request: which state it answers
    solution: Solution  # the executive validates it before it can fly
    baseline: Solution  # the algorithmic plan (== solution unless an agent's proposal won)
    agent_applied: bool
    reasons: tuple[str, ...] = ()  # why an agent's proposal was not used, clamps, fallbacks
    latency_ms: float = 0.0
    # The mission the plan was made on (compiled from the request's scenario), so the loop
    # validates and flies it without compiling again; None: the loop compiles it.
    mission: Mission | None = None
    left_out: dict[str, str] = field(default_factory=dict)  # drones not planned, and why
    # The slow tier (the agent chain), still working when the fast plan is handed over:
    # its result may improve on the plan later. None: no agents.
    followup: asyncio.Task[AgentProposal] | None = None
    # The request's warm start routed on ``mission`` (what the search started from), so
    # the executive judges the plan in force without routing it again; None: not routed
    warm: RoutedIntent | None = None


def _unsettled(applied: bool, decision: str) -> None:
    """A proposal nobody records a decision for."""


@dataclass(frozen=True)
class AgentProposal:
    """What the agent chain concluded about a round, late, off the critical path.

    ``solution`` is a valid plan on ``mission`` (the round's, from its checkpoints) that
    beat the round's baseline there; None when there is nothing to apply (``reasons`` say
    why). The executive rebases it onto the state when it arrives, applies it only if it
    beats the plan in force then, and calls ``settle(applied, decision)`` to record that.
    """

    round_id: str
    reasons: tuple[str, ...]
    solution: Solution | None = None
    mission: Mission | None = None
    settle: Callable[[bool, str], None] = _unsettled


@runtime_checkable
class MissionPlanner(Protocol):
    """Anything that plans a request: the agent round, the planner alone, a test's fake."""

    async def plan(self, request: PlanRequest) -> PlanOutcome:
        """Plan the request, off the tick (the loop never awaits it inside one)."""
        ...


# --- an operator's words: what a coordinator makes of them ------------------------------


class _Words(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Refusal(_Words):
    """A command that cannot be carried out, refused before anything is acknowledged."""

    command: str  # "move T5 to D1", "require T9"
    target: str
    drone: str | None = None
    reason: str  # sensor | excluded | fuel | collected | unavailable | no_sensor
    detail: str  # the reason in words, with the numbers


class Replacement(_Words):
    """An order in force that a new command replaces (the last word wins)."""

    target: str
    before: str  # "move T5 to D2"
    after: str  # "move T5 to D1"


class CoordinatorVerdict(_Words):
    """What an operator's words in a CUT or REPLAN come to, as the loop applies them.

    With ``errors`` the whole command is refused (a COMMAND_IGNORED event with the errors
    and ``refused``; nothing is replanned) and ``constraints`` is empty: nothing is ever
    half-applied. Without, ``constraints`` are added to those in force (the last word wins
    over an earlier move of the same target) and ``replaced`` names the earlier orders the
    words replace. ``only_drones``: a move or swap on the plan in force names these drones
    (the moved targets' drones now and after): the round it asks re-plans only them and the
    others keep their routes; empty: the whole remainder is replanned."""

    constraints: OperatorConstraints = Field(default_factory=OperatorConstraints)
    errors: tuple[str, ...] = ()
    refused: tuple[Refusal, ...] = ()
    replaced: tuple[Replacement, ...] = ()
    only_drones: tuple[str, ...] = ()


Run_contra = TypeVar("Run_contra", contravariant=True)


class Coordinate(Protocol[Run_contra]):
    """Reads an operator's words against the live run (``executive.loop.Executive``) when
    the loop reads the command, at a tick boundary, and never changes the run. It runs
    inside the tick, so it must not block or wait on anything (no LLM call: the
    deterministic coordinator takes well under a millisecond), and the same words on the
    same run give the same verdict."""

    def __call__(self, text: str, run: Run_contra, /) -> CoordinatorVerdict:
        """The verdict on ``text`` (see ``CoordinatorVerdict``)."""
        ...


# --- trace records (seed 002's trace schema, plus the mission's own) -------------------


@dataclass(frozen=True)
class RunRecord:
    """Plan the request (never inside a tick: the loop awaits it off the tick)."""

    run_id: str
    scenario: dict[str, Any]  # the scenario JSON as loaded
    seed: int
    config: dict[str, Any]  # engine, model, policy, speed, tick_hz, ...
    started_at: float = field(default_factory=time.time)
    parent_run_id: str | None = None  # a replay of another run


@dataclass(frozen=True)
class RunEndRecord:
    """A run's end: its status (ended, interrupted, failed) and outcome summary."""

    run_id: str
    ended_at: float
    status: str
    outcome: dict[str, Any]


@dataclass(frozen=True)
class InputRecord:
    """Anything stamped into the sim: an edit or a command, with the tick it takes effect."""

    run_id: str
    tick: int
    kind: str  # "edit" | "command" | "plan"
    payload: dict[str, Any]
    source: str  # timeline | operator | sensor | executive
    # 1, 2, 3 ... per run in the order emitted, set by the trace writer (None until then):
    # a gap in the stored numbers is an input the store lost (executive.traces.completeness)
    seq: int | None = None


@dataclass(frozen=True)
class TelemetryRecord:
    """Every drone's telemetry frame at a tick."""

    run_id: str
    tick: int
    drones: dict[str, dict[str, Any]]  # id -> x, y, heading, fuel, status, s


@dataclass(frozen=True)
class EventRecord:
    """One event: a sim event, or an executive action, with its payload."""

    run_id: str
    tick: int
    kind: str  # sim event class name, or executive action (CUT_AND_FREEZE, DRAFT_READY, ...)
    payload: dict[str, Any]


@dataclass(frozen=True)
class PlanVersionRecord:
    """One version of a plan: draft, committed, rejected, rebased... (upserted by id)."""

    run_id: str
    plan_id: str
    parent_plan_id: str | None
    tick: int
    status: PlanStatus
    trigger: str
    solution: dict[str, Any]
    latency_ms: float | None = None
    round_id: str | None = None
    # Where the plan came from and who let it fly: origin (planner, agents, rebase, safety),
    # rebased_from (the draft it was routed again from), dropped (target -> why), approved
    # (auto, operator, policy), agent_applied.
    provenance: dict[str, Any] | None = None


@dataclass(frozen=True)
class AgentRunRecord:
    """Seed 002's agent trace row."""

    run_id: str  # this agent run's id
    parent_run_id: str | None  # the planning round (or mission run) it belongs to
    mission_run_id: str
    agent: str  # coordinator | strategist | allocator | route_optimizer | critic | responder
    engine: str  # rules | anthropic | replay
    model: str | None
    input_hash: str
    input_size: int
    tokens_in: int | None
    tokens_out: int | None
    duration_ms: float
    raw_output: str | None
    validated_output: dict[str, Any] | None
    clamp_actions: tuple[str, ...] = ()
    applied: bool = False
    error: str | None = None
    tick: int | None = None


@dataclass(frozen=True)
class StateHashRecord:
    """The sim's state hash at a tick, so a replay can prove itself exact."""

    run_id: str
    tick: int
    state_hash: str


@dataclass(frozen=True)
class SnapshotRecord:
    """The whole picture at a tick (the live scene, without trails), so a replay can seek
    anywhere fast: the last snapshot before a tick, then the events and telemetry after it."""

    run_id: str
    tick: int
    scene: dict[str, Any]


TraceRecord = (
    RunRecord
    | RunEndRecord
    | InputRecord
    | TelemetryRecord
    | EventRecord
    | PlanVersionRecord
    | AgentRunRecord
    | StateHashRecord
    | SnapshotRecord
)


@runtime_checkable
class TraceSink(Protocol):
    """Where trace records go; ``emit`` never blocks."""

    def emit(self, record: TraceRecord) -> None:
        """Queue a record; never blocks the caller (drops are counted, never silent)."""
        ...
