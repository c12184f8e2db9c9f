"""Commands to one drone, stamped with the tick at which they take effect.

=================  ============================================================
kind               effect (applied at the start of its tick, before movement)
=================  ============================================================
``fly_path``       fly ``path`` from its start (which must be where the drone is,
                   within ``START_TOLERANCE`` km), collecting ``waypoints``
                   ``(target id, arc length)``; lands if the path ends at an airport,
                   holds at its end otherwise
``hold``           fly a holding circle (``SimConfig.hold_radius``) through the
                   current position, keeping the current flight to resume
``resume``         finish the current orbit back to where the hold began, then
                   continue the kept flight from there
``return_to_base`` fly the shortest path that avoids the *known* SAMs to
                   ``airport`` (default: the drone's home) and land
``disable``        the drone is lost (reason ``disabled``)
=================  ============================================================

``tick=None`` means "the next tick": ``Sim.submit`` stamps it and returns the stamped copy,
which is what a trace records and a replay resubmits. A command that cannot be applied (an
unknown drone, a lost drone, a path that does not start where the drone is) is rejected
with a ``CommandRejected`` event; it never raises inside a tick.
"""

from __future__ import annotations

from typing import Annotated, Literal, Self

from pydantic import BaseModel, ConfigDict, Field

from planner.geometry import Path

__all__ = [
    "COMMAND_TYPES",
    "START_TOLERANCE",
    "Command",
    "Disable",
    "FlyPath",
    "Hold",
    "ResumeFlight",
    "ReturnToBase",
]

# How far (km) a new path's start may be from the drone's position at its tick.
START_TOLERANCE = 1e-6

_Tick = Annotated[int, Field(ge=0)] | None


class _Command(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    drone: Annotated[str, Field(min_length=1)]
    tick: _Tick = None

    def stamped(self, tick: int) -> Self:
        """A copy stamped with ``tick``: what a trace records and a replay resubmits (the
        command itself when it already has that tick: it is immutable, and a commit
        stamps 1,000 of them on the tick at the door's size)."""
        if self.tick == tick:
            return self
        return self.model_copy(update={"tick": int(tick)})


class FlyPath(_Command):
    """Fly ``path`` from where the drone is, collecting ``waypoints`` on the way."""

    kind: Literal["fly_path"] = "fly_path"
    path: Path
    waypoints: tuple[tuple[str, float], ...] = ()


class Hold(_Command):
    """Fly a holding circle through where the drone is, keeping its flight to resume."""

    kind: Literal["hold"] = "hold"


class ResumeFlight(_Command):
    """Finish the orbit back to where the hold began, then continue the kept flight."""

    kind: Literal["resume"] = "resume"


class ReturnToBase(_Command):
    """Fly around the known SAMs to ``airport`` (default: the drone's home) and land."""

    kind: Literal["return_to_base"] = "return_to_base"
    airport: str | None = None


class Disable(_Command):
    """The drone is lost (reason ``disabled``)."""

    kind: Literal["disable"] = "disable"


Command = Annotated[
    FlyPath | Hold | ResumeFlight | ReturnToBase | Disable, Field(discriminator="kind")
]

# Every command class: ``isinstance(item, COMMAND_TYPES)`` tells a command from an edit.
COMMAND_TYPES = (FlyPath, Hold, ResumeFlight, ReturnToBase, Disable)
