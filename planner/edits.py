"""Environment edits: the changes the world can undergo, as pure stamped data.

An edit is one small value object, discriminated by ``op``, stamped with when it takes effect
(``t`` in simulated seconds or ``tick``; neither means "as soon as possible", and the receiver
stamps it) and with where it came from (``source``: the scenario's ``timeline``, an
``operator``, or a drone's ``sensor``). The scenario's ``timeline`` is a list of them; the
executive and the dashboard create them too; the simulation applies them at the start of
their tick, or rejects them with a reason. Nothing here applies anything: the planner stays
pure and never imports the simulation.

======================  =========================================================
op                      fields (besides ``t`` / ``tick`` / ``source``)
======================  =========================================================
``add_target``          ``id, x, y, priority, type``
``remove_target``       ``id``
``move_target``         ``id, x, y``
``set_priority``        ``id, priority``
``add_sam``             ``id, pos, range, hidden`` (hidden: in the truth only, until
                        a drone detects it or a ``reveal_sam`` announces it)
``remove_sam``          ``id``
``move_sam``            ``id, pos`` and optionally a new ``range``
``reveal_sam``          ``id`` (a hidden SAM becomes known; a detection is one)
``disable_drone``       ``drone`` (the drone is lost)
``set_fuel``            ``drone, fuel`` (km of flight left)
======================  =========================================================

This module is the one place a kind of change is defined: its model (fields typed from
``planner.limits``, so its bounds hold at every door) and, in its ``change`` (a
``ChangeKind``), what the rest of the code derives from it: whether it changes the
environment or the fleet (``ENV_EDITS``, ``FLEET_EDITS``), the replan trigger it raises (its
class in lessons), the generator's disruption classes that place it, and whether a replay
seek and a what-if apply it (or why not). How it changes a world is one ``case`` of
``planner.changes.apply_edit``. Every other dispatch on an edit is a ``match`` ending in
``assert_never``, so a kind added here and forgotten there fails mypy (``docs/extending.md``
lists the places).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal, Self, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator
from typing_extensions import override

from planner.limits import (
    Coordinate,
    Flag,
    Fuel,
    Identifier,
    Priority,
    SamRange,
    Seconds,
    SensorType,
    Tick,
)

__all__ = [
    "DISRUPTION_CLASSES",
    "EDIT_MODELS",
    "EDIT_OPS",
    "ENV_EDITS",
    "FLEET_EDITS",
    "TRIGGERS",
    "AddSam",
    "AddTarget",
    "ChangeKind",
    "DisableDrone",
    "DisruptionClass",
    "Edit",
    "EditSource",
    "MoveSam",
    "MoveTarget",
    "RemoveSam",
    "RemoveTarget",
    "RevealSam",
    "SetFuel",
    "SetPriority",
    "Trigger",
    "model_of",
    "parse_edit",
    "tick_of_time",
]

EditSource = Literal["timeline", "operator", "sensor"]

# Why the executive replans (``Policy.triggers`` picks which do): sam, a newly known SAM
# touches a planned path or target; drone_lost, a drone is lost; target, a target is added,
# removed, moved or its priority changes; fuel, a drone's fuel is changed by an edit;
# operator, CUT, REPLAN, RESET or a reallocation in words; sam_cleared, a known SAM removed,
# moved off or shrunk frees a target or a planned path it bent (executive.loop.cleared).
Trigger = Literal["sam", "drone_lost", "target", "fuel", "operator", "sam_cleared"]
TRIGGERS: tuple[Trigger, ...] = ("sam", "drone_lost", "target", "fuel", "operator", "sam_cleared")

# The generator's disruption classes (planner.scenario.generator), each placed as the edit
# whose ``change`` names it; a suite cycles through them in this order. The last two are
# the adversarial ones (issue 22: a second leak, a pop-up closing the corridor home).
DisruptionClass = Literal[
    "popup_sam",
    "lost_drone",
    "new_target",
    "moved_target",
    "fuel_leak",
    "sam_moves",
    "leak_twice",
    "corridor_closes",
]
DISRUPTION_CLASSES: tuple[DisruptionClass, ...] = get_args(DisruptionClass)


@dataclass(frozen=True)
class ChangeKind:
    """What a kind of edit means beyond its fields; every edit class says it (``change``).

    ``scope``: "environment" (targets and SAMs: what a scene, a scenario and the sim's
    environment hold) or "fleet" (a drone's state). ``trigger``: the replan trigger it
    raises, and its disruption class in lessons. ``disruptions``: the generator's classes
    that place it. ``seek`` / ``what_if``: None when a replay seek / a what-if applies it
    with ``planner.changes.apply_edit``, else why it does not apply there."""

    scope: Literal["environment", "fleet"]
    trigger: Trigger
    disruptions: tuple[DisruptionClass, ...] = ()
    seek: str | None = None
    what_if: str | None = None


# A fleet edit's effect reaches a replay's picture through the events and telemetry it
# causes, not through the edit itself.
_SEEK_FLEET = "a drone's state in a replay's picture comes from its events and telemetry"

# A time given in seconds lands on the first tick boundary at or after it; this slack keeps
# 0.15 s at 20 Hz on tick 3 despite binary rounding (0.15 * 20 = 3.0000000000000004).
_STAMP_SLACK = 1e-9


def tick_of_time(t: float, tick_hz: float) -> int:
    """The tick at whose start a time ``t`` (seconds) takes effect: ceil(t * hz)."""
    return max(0, math.ceil(t * tick_hz - _STAMP_SLACK))


class _Edit(BaseModel):
    """What every edit has: its stamp (``t`` or ``tick``) and its ``source``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    change: ClassVar[ChangeKind]  # what the kind means (see ChangeKind)

    t: Seconds | None = None
    tick: Tick | None = None
    source: EditSource = "timeline"

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if "change" not in cls.__dict__:  # fails on import, before anything can use it
            raise TypeError(f"edit {cls.__name__} must say what it means: change = ChangeKind(...)")

    @model_validator(mode="after")
    def _one_stamp(self) -> Self:
        if self.t is not None and self.tick is not None:
            raise ValueError('give "t" (seconds) or "tick", not both')
        return self

    def tick_at(self, tick_hz: float) -> int | None:
        """The tick this edit takes effect at, or None if it is not stamped yet."""
        if self.tick is not None:
            return self.tick
        if self.t is not None:
            return tick_of_time(self.t, tick_hz)
        return None

    def stamped(self, tick: int) -> Self:
        """A copy stamped with ``tick`` (and no ``t``): what a log records and replays."""
        return self.model_copy(update={"tick": int(tick), "t": None})

    def describe(self) -> str:  # pragma: no cover - every subclass overrides
        """The edit in a few words, for logs and events."""
        raise NotImplementedError


class AddTarget(_Edit):
    """A new target appears (a pop-up), with its priority and sensor type."""

    op: Literal["add_target"] = "add_target"
    change = ChangeKind(scope="environment", trigger="target", disruptions=("new_target",))
    id: Identifier
    x: Coordinate
    y: Coordinate
    priority: Priority
    type: SensorType

    @override
    def describe(self) -> str:
        return f"add target {self.id} ({self.type}, priority {self.priority:g}) at ({self.x:g}, {self.y:g})"


class RemoveTarget(_Edit):
    """A target disappears; nobody can collect it any more."""

    op: Literal["remove_target"] = "remove_target"
    change = ChangeKind(scope="environment", trigger="target")
    id: Identifier

    @override
    def describe(self) -> str:
        return f"remove target {self.id}"


class MoveTarget(_Edit):
    """A target moves to ``(x, y)``."""

    op: Literal["move_target"] = "move_target"
    change = ChangeKind(scope="environment", trigger="target", disruptions=("moved_target",))
    id: Identifier
    x: Coordinate
    y: Coordinate

    @override
    def describe(self) -> str:
        return f"move target {self.id} to ({self.x:g}, {self.y:g})"


class SetPriority(_Edit):
    """A target's priority (its points) changes."""

    op: Literal["set_priority"] = "set_priority"
    change = ChangeKind(scope="environment", trigger="target")
    id: Identifier
    priority: Priority

    @override
    def describe(self) -> str:
        return f"set priority of target {self.id} to {self.priority:g}"


class AddSam(_Edit):
    """A SAM appears at ``pos`` with ``range`` km; ``hidden`` ones exist in the truth only,
    until a drone detects them or a ``reveal_sam`` announces them."""

    op: Literal["add_sam"] = "add_sam"
    change = ChangeKind(
        scope="environment", trigger="sam", disruptions=("popup_sam", "corridor_closes")
    )
    id: Identifier
    pos: tuple[Coordinate, Coordinate]
    range: SamRange
    hidden: Flag = False

    @override
    def describe(self) -> str:
        kind = "hidden SAM" if self.hidden else "SAM"
        return f"add {kind} {self.id} at ({self.pos[0]:g}, {self.pos[1]:g}), range {self.range:g}"


class RemoveSam(_Edit):
    """A SAM is gone."""

    op: Literal["remove_sam"] = "remove_sam"
    change = ChangeKind(scope="environment", trigger="sam_cleared")
    id: Identifier

    @override
    def describe(self) -> str:
        return f"remove SAM {self.id}"


class MoveSam(_Edit):
    """A SAM moves to ``pos`` (and takes a new ``range`` if one is given)."""

    op: Literal["move_sam"] = "move_sam"
    change = ChangeKind(scope="environment", trigger="sam", disruptions=("sam_moves",))
    id: Identifier
    pos: tuple[Coordinate, Coordinate]
    range: SamRange | None = None

    @override
    def describe(self) -> str:
        extra = "" if self.range is None else f", range {self.range:g}"
        return f"move SAM {self.id} to ({self.pos[0]:g}, {self.pos[1]:g}){extra}"


class RevealSam(_Edit):
    """A hidden SAM becomes known: announced, or detected by a drone."""

    op: Literal["reveal_sam"] = "reveal_sam"
    change = ChangeKind(
        scope="environment",
        trigger="sam",
        what_if="a what-if plans on the known world, where a hidden SAM is not there to reveal",
    )
    id: Identifier

    @override
    def describe(self) -> str:
        return f"reveal SAM {self.id}"


class DisableDrone(_Edit):
    """A drone is lost: it stops flying and its remaining targets need another drone."""

    op: Literal["disable_drone"] = "disable_drone"
    change = ChangeKind(
        scope="fleet", trigger="drone_lost", disruptions=("lost_drone",), seek=_SEEK_FLEET
    )
    drone: Identifier

    @override
    def describe(self) -> str:
        return f"disable drone {self.drone}"


class SetFuel(_Edit):
    """A drone has ``fuel`` km of flight left from now on."""

    op: Literal["set_fuel"] = "set_fuel"
    change = ChangeKind(
        scope="fleet", trigger="fuel", disruptions=("fuel_leak", "leak_twice"), seek=_SEEK_FLEET
    )
    drone: Identifier
    fuel: Fuel

    @override
    def describe(self) -> str:
        return f"set fuel of drone {self.drone} to {self.fuel:g} km"


Edit = Annotated[
    AddTarget
    | RemoveTarget
    | MoveTarget
    | SetPriority
    | AddSam
    | RemoveSam
    | MoveSam
    | RevealSam
    | DisableDrone
    | SetFuel,
    Field(discriminator="op"),
]

# Derived from the union: every model, its op, and which change the environment or the fleet.
EDIT_MODELS: tuple[type[_Edit], ...] = get_args(get_args(Edit)[0])
EDIT_OPS: tuple[str, ...] = tuple(m.model_fields["op"].default for m in EDIT_MODELS)
ENV_EDITS: tuple[type[_Edit], ...] = tuple(
    m for m in EDIT_MODELS if m.change.scope == "environment"
)
FLEET_EDITS: tuple[type[_Edit], ...] = tuple(m for m in EDIT_MODELS if m.change.scope == "fleet")
_BY_OP: dict[str, type[_Edit]] = dict(zip(EDIT_OPS, EDIT_MODELS, strict=True))


def model_of(op: str) -> type[_Edit] | None:
    """The edit model of ``op`` ("add_sam" -> ``AddSam``), or None for no such op."""
    return _BY_OP.get(op)


_ADAPTER: TypeAdapter[Edit] = TypeAdapter(Edit)


def parse_edit(data: dict[str, Any]) -> Edit:
    """One edit from JSON-like data (raises pydantic's ValidationError on bad input)."""
    return _ADAPTER.validate_python(data)
