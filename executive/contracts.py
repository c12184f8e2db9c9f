"""The contracts between the executive's parts: the loop, the planning round, the traces.

The loop (``executive/loop.py``) asks a ``MissionPlanner`` for a plan with a ``PlanRequest``
and receives a ``PlanOutcome``; it never awaits one inside a tick. Every part reports what
happened as trace records through a ``TraceSink``, whose ``emit`` never blocks (the real sink
queues rows to a writer thread). Records are plain frozen dataclasses so any part can build
them without the database.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from planner.model import Scenario, Solution

__all__ = [
    "AgentRunRecord",
    "EventRecord",
    "HUMAN_COMMANDS",
    "HumanCommand",
    "InputRecord",
    "MissionPlanner",
    "PlanOutcome",
    "PlanRequest",
    "PlanVersionRecord",
    "RunEndRecord",
    "RunRecord",
    "StateHashRecord",
    "TelemetryRecord",
    "TraceRecord",
    "TraceSink",
    "new_id",
]

HUMAN_COMMANDS = ("CUT", "PAUSE", "RESUME", "RESET", "ACCEPT", "REJECT", "REPLAN")
HumanCommandKind = Literal["CUT", "PAUSE", "RESUME", "RESET", "ACCEPT", "REJECT", "REPLAN"]
PlanStatus = Literal["draft", "committed", "rejected", "stale", "superseded"]


def new_id() -> str:
    return uuid.uuid4().hex[:16]


@dataclass(frozen=True)
class HumanCommand:
    """An operator's command (seed 000 §8: HUMAN_COMMAND), stamped when it reaches the loop."""

    kind: HumanCommandKind
    text: str | None = None  # free words for the coordinator, e.g. "move T5 to D1"
    source: str = "operator"


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
    constraints: dict[str, Any] = field(default_factory=dict)  # moves, forbidden targets, ...
    instruction: str | None = None  # the operator's words, if a human asked
    parent_run_id: str | None = None


@dataclass(frozen=True)
class PlanOutcome:
    round_id: str
    tick: int  # copied from the request: which state it answers
    solution: Solution  # has passed the validator against request.scenario
    baseline: Solution  # the algorithmic plan (== solution unless an agent's proposal won)
    agent_applied: bool
    reasons: tuple[str, ...] = ()  # why an agent's proposal was not used, clamps, fallbacks
    latency_ms: float = 0.0


@runtime_checkable
class MissionPlanner(Protocol):
    async def plan(self, request: PlanRequest) -> PlanOutcome: ...


# --- trace records (seed 002's trace schema, plus the mission's own) -------------------


@dataclass(frozen=True)
class RunRecord:
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


@dataclass(frozen=True)
class TelemetryRecord:
    run_id: str
    tick: int
    drones: dict[str, dict[str, Any]]  # id -> x, y, heading, fuel, status, s


@dataclass(frozen=True)
class EventRecord:
    run_id: str
    tick: int
    kind: str  # sim event class name, or executive action (CUT_AND_FREEZE, DRAFT_READY, ...)
    payload: dict[str, Any]


@dataclass(frozen=True)
class PlanVersionRecord:
    run_id: str
    plan_id: str
    parent_plan_id: str | None
    tick: int
    status: PlanStatus
    trigger: str
    solution: dict[str, Any]
    latency_ms: float | None = None
    round_id: str | None = None


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
    run_id: str
    tick: int
    state_hash: str


TraceRecord = (
    RunRecord | RunEndRecord | InputRecord | TelemetryRecord | EventRecord | PlanVersionRecord
    | AgentRunRecord | StateHashRecord
)


@runtime_checkable
class TraceSink(Protocol):
    def emit(self, record: TraceRecord) -> None:
        """Queue a record; never blocks the caller (drops are counted, never silent)."""
        ...
