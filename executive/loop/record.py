"""What the executive tells the world, in one place: inputs stamped into the sim, events,
plan versions, telemetry, state hashes and status. Inputs, events, plan versions,
telemetry and hashes go to the trace sink; when a watcher is attached (``publish``),
events also go to the bus and status goes there only (the rounds and the loop use the same
hook for ``plan`` and ``telemetry``). Events that name something hidden: traces only.

Every part of the loop (rounds, safety, the operator's commands) records through one
``Recorder``, so a record is written the same way whoever made it, and nothing here blocks:
the sink queues, the publish hook hands the message to a bounded bus.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Any

from executive.contracts import (
    EventRecord,
    InputRecord,
    PlanStatus,
    PlanVersionRecord,
    SnapshotRecord,
    StateHashRecord,
    TelemetryRecord,
    TraceSink,
)
from executive.loop.prepared import input_json, solution_json
from planner.edits import Edit
from planner.model import Solution
from sim import Command, Sim
from sim.commands import COMMAND_TYPES

__all__ = ["Publish", "Recorder"]

Publish = Callable[[str, dict[str, Any]], None]


class Recorder:
    """Records one run's inputs, events, plan versions, telemetry and status."""

    def __init__(self, run_id: str, sink: TraceSink, publish: Publish | None = None) -> None:
        self.run_id = run_id
        self.sink = sink
        self.publish = publish
        self.sim: Sim | None = None  # set when the run starts; inputs go into it
        self.events_seen: deque[dict[str, Any]] = deque(maxlen=500)
        self.changed = False  # an event since the last snapshot
        # the plan the run started with (its first commit, or a fork's parent's): a what-if
        # on a finished run compares against it
        self.first_plan: Solution | None = None
        self.started_at: float | None = None  # wall time of the first status (start-up)

    def submit(self, item: Edit | Command, source: str) -> Edit | Command:
        """Stamp an edit or a command into the sim and record it as an input (replays
        need nothing else); returns the stamped copy."""
        assert self.sim is not None, "the run has not started"
        stamped = self.sim.submit(item)
        kind, payload = input_json(item, stamped)  # prepared off the tick, when it was
        # a command has no source (pydantic answers a missing attribute slowly)
        src = (None if isinstance(stamped, COMMAND_TYPES) else stamped.source) or source
        tick = stamped.tick if stamped.tick is not None else self.sim.tick
        self.sink.emit(InputRecord(self.run_id, int(tick), kind, payload, src))
        return stamped

    def event(self, tick: int, kind: str, payload: dict[str, Any]) -> None:
        """An executive action or a sim event, for the traces, the bus and the history."""
        self.sink.emit(EventRecord(self.run_id, tick, kind, payload))
        self.changed = True
        self.events_seen.append({"tick": tick, "kind": kind, **payload})
        if self.publish:
            self.publish("events", {"tick": tick, "kind": kind, **payload})

    def truth_event(self, tick: int, kind: str, payload: dict[str, Any]) -> None:
        """An event that names something hidden: traces only, never the bus."""
        self.sink.emit(EventRecord(self.run_id, tick, f"truth:{kind}", payload))

    def plan_version(
        self,
        plan_id: str,
        parent: str | None,
        tick: int,
        status: PlanStatus,
        trigger: str,
        solution: Solution,
        latency_ms: float | None,
        round_id: str | None = None,
        *,
        provenance: dict[str, Any] | None = None,
    ) -> None:
        """A plan version for the traces (upserted by ``plan_id``); the bus hears of plans
        from the caller, not from here. The first committed one is kept as ``first_plan``."""
        if status == "committed" and self.first_plan is None:
            self.first_plan = solution
        self.sink.emit(
            PlanVersionRecord(
                self.run_id,
                plan_id,
                parent,
                tick,
                status,
                trigger,
                solution_json(solution),  # prepared off the tick, when it was
                latency_ms,
                round_id,
                provenance,
            )
        )

    def superseded(self, plan_id: str, tick: int) -> None:
        """The plan in force until now gives way to a newer one."""
        self.sink.emit(PlanVersionRecord(self.run_id, plan_id, None, tick, "superseded", "", {}))

    def telemetry(self, tick: int, drones: dict[str, Any]) -> None:
        """A telemetry row for the traces (drone -> position, fuel, status ...)."""
        self.sink.emit(TelemetryRecord(self.run_id, tick, drones))

    def snapshot(self, tick: int, scene: dict[str, Any]) -> None:
        """The whole picture at ``tick``, for seeking a replay (the caller clears
        ``changed`` when it captures the picture: it may be drawn later)."""
        self.sink.emit(SnapshotRecord(self.run_id, tick, scene))

    def state_hash(self, tick: int, digest: str) -> None:
        """The sim's state hash at ``tick``, for the traces (what a replay compares)."""
        self.sink.emit(StateHashRecord(self.run_id, tick, digest))

    def status(
        self,
        state: str,
        outcome: dict[str, Any] | None = None,
        *,
        phase: str | None = None,
        agents: dict[str, Any] | None = None,
    ) -> None:
        """The run's state (``starting`` with its ``phase``: ``compiling`` while the
        planner's kernels load, ``planning`` the first plan, ``forking`` a fork's rebuild;
        ``running``; ``ended`` with its outcome) on the bus ``status`` topic, with
        ``started_at``, the wall time (Unix seconds) of the first status: a view counts the
        start-up from it; ``agents``: the planning agents, those off and their cadences (a
        view follows the switches from the ``AGENTS`` events after it). Nothing is traced
        (the session writes the run's end to the store)."""
        if self.started_at is None:
            self.started_at = time.time()
        if self.publish:
            self.publish(
                "status",
                {
                    "run_id": self.run_id,
                    "state": state,
                    "started_at": self.started_at,
                    **({"phase": phase} if phase else {}),
                    **({"outcome": outcome} if outcome else {}),
                    **({"agents": agents} if agents is not None else {}),
                },
            )
