"""Whether an environment edit's ids resolve against a world: the one rule for everyone.

The simulation applies this rule at the tick boundary (an edit that breaks it becomes an
``EditRejected`` with ``problem.message`` as the reason); the dashboard applies the same rule
when an edit is posted, against the world it mirrors, and refuses it at the door with a 4xx
naming ``problem.path``. The world is anything that answers ``EditWorld``'s few questions.

``IdWorld`` is a plain set-of-ids world (what a mirror builds from a scene) with
``IdWorld.apply(edit)``: the edit's effect on the ids, so a mirror can count edits it
accepted but has not seen applied yet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol, assert_never

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

__all__ = ["DroneState", "EditProblem", "EditWorld", "IdWorld", "changes_ids", "edit_problem"]

# absent: no such drone; lost: it was lost (no edit can touch it); live: any other state.
DroneState = Literal["absent", "lost", "live"]


class EditWorld(Protocol):
    """The questions the rule asks of a world."""

    def has_target(self, target_id: str) -> bool:
        """Is there a live target ``target_id`` (collected ones included)?"""
        ...

    def sam_state(self, sam_id: str) -> Literal["absent", "known", "hidden"]:
        """Is there a live SAM ``sam_id``, and is it known?"""
        ...

    def is_airport_or_start(self, node_id: str) -> bool:
        """Is ``node_id`` taken by an airport or a synthetic start?"""
        ...

    def drone_state(self, drone_id: str) -> DroneState:
        """Does the drone exist, and is it lost?"""
        ...


@dataclass(frozen=True)
class EditProblem:
    """Why an edit cannot be applied: ``kind`` "unknown" (an id that names nothing) or
    "conflict" (an id already taken, a state already reached), the JSON path of the field
    at fault in the edit, and the message (the sim's rejection reason)."""

    kind: Literal["unknown", "conflict"]
    path: str
    message: str


def edit_problem(edit: Edit, world: EditWorld) -> EditProblem | None:
    """The reason ``edit`` cannot be applied to ``world``, or None when its ids resolve."""
    match edit:
        case AddTarget(id=tid):
            if world.is_airport_or_start(tid):
                return EditProblem("conflict", "$.id", f"id {tid!r} is an airport or start")
            if world.has_target(tid):
                return EditProblem("conflict", "$.id", f"target {tid!r} already exists")
        case RemoveTarget(id=tid) | MoveTarget(id=tid) | SetPriority(id=tid):
            if not world.has_target(tid):
                return EditProblem("unknown", "$.id", f"no target {tid!r}")
        case AddSam(id=sid):
            if world.sam_state(sid) != "absent":
                return EditProblem("conflict", "$.id", f"SAM {sid!r} already exists")
        case RemoveSam(id=sid) | MoveSam(id=sid):
            if world.sam_state(sid) == "absent":
                return EditProblem("unknown", "$.id", f"no SAM {sid!r}")
        case RevealSam(id=sid):
            state = world.sam_state(sid)
            if state == "absent":
                return EditProblem("unknown", "$.id", f"no SAM {sid!r}")
            if state == "known":
                return EditProblem("conflict", "$.id", f"SAM {sid!r} is already known")
        case SetFuel(drone=did) | DisableDrone(drone=did):
            drone = world.drone_state(did)
            if drone == "absent":
                return EditProblem("unknown", "$.drone", f"no drone {did!r}")
            if drone == "lost":
                return EditProblem("conflict", "$.drone", f"drone {did} is already lost")
        case _:  # pragma: no cover - the union is closed
            assert_never(edit)
    return None


def changes_ids(edit: Edit) -> bool:
    """Does ``edit`` change which ids exist (or a SAM's known state, or a drone's lost
    state): what ``IdWorld.apply`` remembers of it?"""
    match edit:
        case AddTarget() | RemoveTarget() | AddSam() | RemoveSam() | RevealSam() | DisableDrone():
            return True
        case MoveTarget() | SetPriority() | MoveSam() | SetFuel():
            return False
        case _:  # pragma: no cover - the union is closed
            assert_never(edit)


@dataclass
class IdWorld:
    """A world of ids only: live targets, live SAMs (id -> known), airport and start ids,
    drones (id -> lost). Answers ``EditWorld``."""

    targets: set[str] = field(default_factory=set)
    sams: dict[str, bool] = field(default_factory=dict)
    airports: set[str] = field(default_factory=set)
    drones: dict[str, bool] = field(default_factory=dict)

    def has_target(self, target_id: str) -> bool:
        """Is there a live target ``target_id``?"""
        return target_id in self.targets

    def sam_state(self, sam_id: str) -> Literal["absent", "known", "hidden"]:
        """absent, known or hidden."""
        known = self.sams.get(sam_id)
        return "absent" if known is None else "known" if known else "hidden"

    def is_airport_or_start(self, node_id: str) -> bool:
        """Is ``node_id`` an airport or a start?"""
        return node_id in self.airports

    def drone_state(self, drone_id: str) -> DroneState:
        """absent, lost or live."""
        lost = self.drones.get(drone_id)
        return "absent" if lost is None else "lost" if lost else "live"

    def apply(self, edit: Edit) -> None:
        """The edit's effect on the ids (nothing when it breaks the rule)."""
        if edit_problem(edit, self) is not None:
            return
        match edit:
            case AddTarget(id=tid):
                self.targets.add(tid)
            case RemoveTarget(id=tid):
                self.targets.discard(tid)
            case AddSam(id=sid, hidden=hidden):
                self.sams[sid] = not hidden
            case RemoveSam(id=sid):
                self.sams.pop(sid, None)
            case RevealSam(id=sid):
                self.sams[sid] = True
            case DisableDrone(drone=did):
                self.drones[did] = True
            case MoveTarget() | SetPriority() | MoveSam() | SetFuel():
                pass  # moves, priorities and fuel change no id
            case _:  # pragma: no cover - the union is closed
                assert_never(edit)
