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

from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

from planner.geometry import Path

__all__ = ["START_TOLERANCE", "Command", "Disable", "FlyPath", "Hold", "ResumeFlight",
           "ReturnToBase"]

# How far (km) a new path's start may be from the drone's position at its tick.
START_TOLERANCE = 1e-6

_Tick = Annotated[int, Field(ge=0)] | None


class _Command(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    drone: Annotated[str, Field(min_length=1)]
    tick: _Tick = None

    def stamped(self, tick: int):
        return self.model_copy(update={"tick": int(tick)})


class FlyPath(_Command):
    kind: Literal["fly_path"] = "fly_path"
    path: Path
    waypoints: tuple[tuple[str, float], ...] = ()


class Hold(_Command):
    kind: Literal["hold"] = "hold"


class ResumeFlight(_Command):
    kind: Literal["resume"] = "resume"


class ReturnToBase(_Command):
    kind: Literal["return_to_base"] = "return_to_base"
    airport: str | None = None


class Disable(_Command):
    kind: Literal["disable"] = "disable"


Command = Annotated[
    Union[FlyPath, Hold, ResumeFlight, ReturnToBase, Disable], Field(discriminator="kind")
]
