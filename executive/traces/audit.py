"""Audits of a traced run: what must never happen, checked from its records alone.

* ``lost_to_known_sams``: drones lost inside a SAM the executive knew about before the loss
  (on the map from the start, announced by an edit, revealed, or detected by a drone's
  sensors): safety failures.
* ``unapproved_commits``: in review mode, commits that fly something the operator did not
  approve: committed without an approval, or with other targets than the approved draft's
  (beyond those collected by the commit's cut).

Both read trace records (``EventRecord``, ``PlanVersionRecord``), so they serve a live run's
sink, a stored run, a test and a bench alike.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, assert_never

from executive.contracts import EventRecord, PlanVersionRecord, TraceRecord
from executive.traces.codec import recorded_edit
from planner.edits import (
    AddSam,
    AddTarget,
    DisableDrone,
    MoveSam,
    MoveTarget,
    RemoveSam,
    RemoveTarget,
    RevealSam,
    SetFuel,
    SetPriority,
)

__all__ = ["initial_sams", "lost_to_known_sams", "unapproved_commits"]


def lost_to_known_sams(
    records: Iterable[TraceRecord], initially_known: Iterable[str] = ()
) -> list[str]:
    """Drones lost to a SAM that was known (where it was, after a move) at an earlier tick
    than the loss;
    ``initially_known``: the SAMs on the map from the start (``initial_sams``), known
    before the first tick."""
    # Two passes: records are not written in tick order (the sim's and the executive's
    # interleave), so every record is read before any loss is judged.
    known: dict[str, int | float] = dict.fromkeys(initially_known, -math.inf)
    moved: dict[str, set[int]] = {}  # SAM -> the ticks it moved at
    losses: list[tuple[int, str, str]] = []
    for r in records:
        if not isinstance(r, EventRecord):
            continue
        p = r.payload
        if r.kind == "sam_detected":
            known[p["sam"]] = min(known.get(p["sam"], math.inf), r.tick)
        elif r.kind == "edit_applied" and (sam := _made_known(p["edit"])) is not None:
            known[sam] = min(known.get(sam, math.inf), r.tick)
            if isinstance(recorded_edit(p["edit"]), MoveSam):
                moved.setdefault(sam, set()).add(r.tick)
        elif r.kind == "drone_lost" and p.get("reason") == "sam":
            losses.append((r.tick, str(p.get("sam", "")), p["drone"]))
    lost: list[str] = []
    for tick, sam, drone in losses:
        # known where it is now only from its last move on: a SAM moved onto a drone kills it
        # at the move's tick, before anything could act on where it went
        if tick not in moved.get(sam, ()) and known.get(sam, math.inf) < tick:
            lost.append(drone)
    return lost


def initial_sams(scenario: Any) -> list[str]:
    """The ids of the SAMs on a scenario's map from the start (its JSON or its model): known
    to the executive before the first tick (hidden SAMs come by the timeline)."""
    if isinstance(scenario, dict):
        return [str(s["id"]) for s in (scenario.get("environment") or {}).get("sams") or []]
    return [s.id for s in scenario.environment.sams]


def _made_known(data: Any) -> str | None:
    """The SAM an applied edit (its JSON) makes known to the executive, or None."""
    match recorded_edit(data):
        case AddSam() as edit:
            return None if edit.hidden else edit.id
        case MoveSam() | RevealSam() as edit:
            return edit.id
        case (
            AddTarget()
            | RemoveTarget()
            | MoveTarget()
            | SetPriority()
            | RemoveSam()
            | DisableDrone()
            | SetFuel()
            | None
        ):
            return None
        case edit:  # pragma: no cover - the union is closed
            assert_never(edit)


def unapproved_commits(records: Iterable[TraceRecord]) -> list[str]:
    """Review-mode commits not approved as flown; one line per problem."""
    records = list(records)
    drafts = {
        r.plan_id: r.provenance["intent"]
        for r in records
        if isinstance(r, PlanVersionRecord)
        and r.status == "draft"
        and r.provenance
        and "intent" in r.provenance
    }
    collected: dict[str, int] = {}
    for r in records:
        if isinstance(r, EventRecord) and r.kind == "target_collected":
            collected.setdefault(r.payload["target"], r.tick)
    bad: list[str] = []
    for r in records:
        if not isinstance(r, EventRecord) or r.kind != "COMMIT_PLAN":
            continue
        p = r.payload
        if p.get("trigger") == "initial":
            continue
        if p.get("approved") not in ("operator", "policy"):
            bad.append(f"{p['plan_id']}: committed without approval ({p.get('approved')})")
            continue
        source = p.get("rebased_from") or p["plan_id"]
        approved = drafts.get(source)
        if approved is None:
            bad.append(f"{p['plan_id']}: no approved draft {source}")
            continue
        cut = p.get("cut_tick", r.tick)
        for drone, targets in (p.get("intent") or {}).items():
            want = [t for t in approved.get(drone, []) if collected.get(t, math.inf) > cut]
            if list(targets) != want:
                bad.append(f"{p['plan_id']}: {drone} flies {list(targets)}, approved {want}")
    return bad
