"""The typed events a tick produces.

Every event carries the ``tick`` it happened in and a ``kind`` tag, and serialises to JSON
(``event.model_dump(mode="json")``) for traces, the bus and the CLI. Events are about what
is *observable*: the simulation never emits an event that names a hidden SAM before it is
detected or revealed (edits to hidden SAMs are reported separately, in
``TickResult.truth_events``, for the trace store only).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from planner.edits import Edit, RevealSam

__all__ = [
    "CommandApplied",
    "CommandRejected",
    "DroneHolding",
    "DroneLanded",
    "DroneLost",
    "EditApplied",
    "EditRejected",
    "Event",
    "LostReason",
    "SamDetected",
    "TargetCollected",
    "TargetMissed",
]

LostReason = Literal["sam", "fuel", "disabled"]


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tick: int

    def describe(self) -> str:  # pragma: no cover - every subclass overrides
        """One line for a human: what happened."""
        raise NotImplementedError(type(self).__name__)


class TargetCollected(_Event):
    """A drone collected a target: at a planned waypoint, or in passing."""

    kind: Literal["target_collected"] = "target_collected"
    drone: str
    target: str
    points: float
    planned: bool  # a waypoint of the drone's flight, or collected in passing

    def describe(self) -> str:
        """One line for a human."""
        how = "" if self.planned else " (in passing)"
        return f"drone {self.drone} collected {self.target} for {self.points:g} points{how}"


class TargetMissed(_Event):
    """A planned waypoint passed without collecting its target, and why."""

    kind: Literal["target_missed"] = "target_missed"
    drone: str
    target: str
    reason: Literal["removed", "moved", "already_collected", "sensor"]

    def describe(self) -> str:
        """One line for a human."""
        return f"drone {self.drone} missed {self.target}: {self.reason.replace('_', ' ')}"


class SamDetected(_Event):
    """A hidden SAM came within a drone's sensor range; it joins the known environment.

    It is the ``reveal_sam`` edit with source ``sensor`` (``as_edit``)."""

    kind: Literal["sam_detected"] = "sam_detected"
    drone: str
    sam: str
    pos: tuple[float, float]
    range: float

    def as_edit(self) -> RevealSam:
        """This detection as the ``reveal_sam`` edit it amounts to (source ``sensor``)."""
        return RevealSam(id=self.sam, tick=self.tick, source="sensor")

    def describe(self) -> str:
        """One line for a human."""
        return (
            f"drone {self.drone} detected SAM {self.sam} at"
            f" ({self.pos[0]:.1f}, {self.pos[1]:.1f}), range {self.range:g}"
        )


class DroneLost(_Event):
    """A drone was lost: inside a true SAM, out of fuel in the air, or disabled."""

    kind: Literal["drone_lost"] = "drone_lost"
    drone: str
    reason: LostReason
    sam: str | None = None
    pos: tuple[float, float]

    def describe(self) -> str:
        """One line for a human."""
        why = {"sam": f"inside SAM {self.sam}", "fuel": "out of fuel", "disabled": "disabled"}
        return f"drone {self.drone} lost ({why[self.reason]}) at ({self.pos[0]:.2f}, {self.pos[1]:.2f})"


class DroneLanded(_Event):
    """A drone reached the airport its flight ends at and landed."""

    kind: Literal["drone_landed"] = "drone_landed"
    drone: str
    airport: str

    def describe(self) -> str:
        """One line for a human."""
        return f"drone {self.drone} landed at {self.airport}"


class DroneHolding(_Event):
    """A drone started holding: commanded, or its path ended away from an airport."""

    kind: Literal["drone_holding"] = "drone_holding"
    drone: str
    reason: Literal["command", "end_of_path"]
    pos: tuple[float, float]

    def describe(self) -> str:
        """One line for a human."""
        why = "on command" if self.reason == "command" else "at the end of its path"
        return f"drone {self.drone} holding {why} at ({self.pos[0]:.2f}, {self.pos[1]:.2f})"


class EditApplied(_Event):
    """An environment edit took effect at this tick."""

    kind: Literal["edit_applied"] = "edit_applied"
    edit: Edit

    def describe(self) -> str:
        """One line for a human."""
        return f"{self.edit.source} edit applied: {self.edit.describe()}"


class EditRejected(_Event):
    """An environment edit could not be applied, and why."""

    kind: Literal["edit_rejected"] = "edit_rejected"
    edit: Edit
    reason: str

    def describe(self) -> str:
        """One line for a human."""
        return f"{self.edit.source} edit rejected ({self.edit.describe()}): {self.reason}"


class CommandApplied(_Event):
    """A command took effect at this tick; ``detail`` says what the drone does now."""

    kind: Literal["command_applied"] = "command_applied"
    drone: str
    command: str  # the command's kind: fly_path, hold, resume, return_to_base, disable
    detail: str

    def describe(self) -> str:
        """One line for a human."""
        return f"drone {self.drone}: {self.command} applied ({self.detail})"


class CommandRejected(_Event):
    """A command could not be applied, and why."""

    kind: Literal["command_rejected"] = "command_rejected"
    drone: str
    command: str
    reason: str

    def describe(self) -> str:
        """One line for a human."""
        return f"drone {self.drone}: {self.command} rejected: {self.reason}"


Event = Annotated[
    TargetCollected
    | TargetMissed
    | SamDetected
    | DroneLost
    | DroneLanded
    | DroneHolding
    | EditApplied
    | EditRejected
    | CommandApplied
    | CommandRejected,
    Field(discriminator="kind"),
]
