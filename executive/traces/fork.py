"""Where a fork begins: a traced run's world and plan at the end of one of its ticks.

A fork at tick T is a new run that starts where the parent was at the end of tick T and
then goes its own way (other edits, commands, policy or engine). ``load_fork`` reads what
it needs from the parent's trace:

* ``inputs``: the parent's stamped inputs that shaped its world up to T: those stamped at
  or before T, and the ``fly_path`` commands of a plan committed by T whose cut falls after
  it (decided before the fork, flown after). Re-executed from tick 0, they rebuild the world
  at T exactly; the parent's state hash at the last hashed tick up to T (``check_tick``,
  ``check_hash``) proves it.
* ``plan``: the plan in force at T (the last committed by then), with its intent and ends,
  for the executive to carry on from.
* ``paused``: whether the operator had paused the mission (and which drones it held).
* ``records(new_run_id)``: the parent's trace up to T (inputs, events, telemetry, state
  hashes, snapshots, plan versions made by then) as the fork's own records, plan ids
  renamed, so that the fork's trace holds its whole history: it replays exactly from tick
  0 like any run, and its replay view shows the parent's past before the fork.

What is not carried: a round, draft or review in flight at T (the fork starts with the plan
in force; a REPLAN asks for a new one), the agents' memory of the parent's rounds and the
operator's standing constraints from words.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from executive.contracts import (
    EventRecord,
    InputRecord,
    PlanVersionRecord,
    SnapshotRecord,
    StateHashRecord,
    TelemetryRecord,
    TraceRecord,
    new_id,
)
from executive.errors import ExecutiveError

if TYPE_CHECKING:  # a fork reads the store it is handed (a run without one: no SQLAlchemy)
    from executive.traces.reader import TraceReader

__all__ = ["ForkPoint", "load_fork"]


@dataclass
class ForkPoint:
    """A parent run at the end of its tick ``tick``; see the module's docstring."""

    parent: dict[str, Any]  # the parent's run row
    tick: int
    inputs: list[dict[str, Any]]
    plan: dict[str, Any] | None  # plan_id, solution, intent, ends
    paused: bool
    holding: list[str]
    check_tick: int | None
    check_hash: str | None
    _events: list[dict[str, Any]] = field(repr=False, default_factory=list)
    _versions: list[dict[str, Any]] = field(repr=False, default_factory=list)
    _committed: set[str] = field(repr=False, default_factory=set)
    _reader: TraceReader | None = field(repr=False, default=None)

    @property
    def parent_id(self) -> str:
        return str(self.parent["run_id"])

    def close(self) -> None:
        """Release the parent's store (after ``records`` were taken)."""
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def records(self, run_id: str) -> Iterator[TraceRecord]:
        """The parent's trace up to the fork tick, as ``run_id``'s records (plan ids
        renamed: a plan version's id is unique across runs)."""
        reader = self._reader
        assert reader is not None, "records() of a ForkPoint not made by load_fork"
        parent, tick = self.parent_id, self.tick
        renamed = {pv["plan_id"]: new_id() for pv in self._versions}
        if self.plan is not None:
            self.plan["plan_id"] = renamed.get(self.plan["plan_id"], self.plan["plan_id"])
        for row in self.inputs:
            yield InputRecord(run_id, row["tick"], row["kind"], row["payload"], row["source"])
        in_force = self.plan["plan_id"] if self.plan is not None else None
        for pv in self._versions:
            new = renamed[pv["plan_id"]]
            # as it stood at the fork: the plan in force then, those it replaced
            status = pv["status"]
            if new == in_force:
                status = "committed"
            elif pv["plan_id"] in self._committed:
                status = "superseded"
            yield PlanVersionRecord(
                run_id,
                new,
                renamed.get(pv["parent_plan_id"] or "", pv["parent_plan_id"]),
                pv["tick"],
                status,
                pv["trigger"],
                pv["solution"],
                pv["latency_ms"],
                pv["round_id"],
                pv["provenance"],
            )
        for e in self._events:
            payload = e["payload"]
            if isinstance(payload, dict) and payload.get("plan_id") in renamed:
                payload = {**payload, "plan_id": renamed[payload["plan_id"]]}
            yield EventRecord(run_id, e["tick"], e["kind"], payload)
        for t in reader.telemetry_range(parent, 0, tick):
            yield TelemetryRecord(run_id, t["tick"], t["drones"])
        for h_tick, digest in sorted(reader.state_hashes(parent).items()):
            if h_tick <= tick:
                yield StateHashRecord(run_id, h_tick, digest)
        for s in reader.snapshots(parent, 0, tick):
            yield SnapshotRecord(run_id, s["tick"], s["scene"])


def load_fork(reader: TraceReader, run_id: str, tick: int) -> ForkPoint:
    """The fork point of run ``run_id`` (an id or a unique prefix) at the end of ``tick``.

    Raises ``ExecutiveError`` (one line) for an unknown run, a tick outside what the run
    has stored, or a run with no inputs to re-execute.
    """
    parent = reader.run(run_id)
    rid = parent["run_id"]
    last = reader.telemetry_at(rid, 2**62)
    ticks = (parent.get("outcome") or {}).get("ticks")
    end = int(ticks) - 1 if ticks else (last["tick"] if last else -1)
    if tick < 0 or tick > end:
        raise ExecutiveError(
            f"run {rid} has ticks 0 to {end}: cannot fork at tick {tick}"
            if end >= 0
            else f"run {rid} stored no tick: nothing to fork"
        )
    events = reader.events_range(rid, 0, tick)
    commits = [e for e in events if e["kind"] == "COMMIT_PLAN"]
    pending_cuts = {
        int(e["payload"]["cut_tick"])
        for e in commits
        if isinstance(e["payload"].get("cut_tick"), int) and e["payload"]["cut_tick"] > tick
    }
    inputs = [
        row
        for row in reader.inputs(rid)
        if row["tick"] <= tick
        or (
            row["tick"] in pending_cuts
            and row["kind"] == "command"
            and row["payload"].get("kind") == "fly_path"
        )
    ]
    if not any(r["kind"] in ("edit", "command") for r in inputs):
        raise ExecutiveError(f"run {rid} holds no inputs up to tick {tick}: nothing to fork")
    committed_ids = [e["payload"].get("plan_id") for e in commits]
    versions = {pv["plan_id"]: pv for pv in reader.plan_versions(rid)}
    made = [pv for pv in versions.values() if pv["plan_id"] in committed_ids or pv["tick"] <= tick]
    plan = None
    if committed_ids and committed_ids[-1] in versions:
        pv = versions[committed_ids[-1]]
        solution = pv["solution"]
        intent = (pv.get("provenance") or {}).get("intent") or {
            d: list(r.get("visited_targets") or []) for d, r in solution["routes"].items()
        }
        ends = {d: r["route"][-1] for d, r in solution["routes"].items() if r.get("route")}
        plan = {"plan_id": pv["plan_id"], "solution": solution, "intent": intent, "ends": ends}
    paused, holding = False, []
    for e in events:
        if e["kind"] == "PAUSE":
            paused, holding = True, list(e["payload"].get("holding") or [])
        elif e["kind"] == "CONTINUE" and "resumed" in (e["payload"] or {}):
            paused, holding = False, []
    hashed = [t for t in reader.state_hashes(rid) if t <= tick]
    check_tick = max(hashed) if hashed else None
    return ForkPoint(
        parent=parent,
        tick=tick,
        inputs=inputs,
        plan=plan,
        paused=paused,
        holding=holding,
        check_tick=check_tick,
        check_hash=reader.state_hashes(rid)[check_tick] if check_tick is not None else None,
        _events=events,
        _versions=sorted(made, key=lambda pv: pv["tick"]),
        _committed={str(i) for i in committed_ids},
        _reader=reader,
    )
