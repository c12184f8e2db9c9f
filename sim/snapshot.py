"""What a tick shows: a light array view every tick, a pydantic snapshot on request.

``FleetView`` is a frozen copy of the fleet's arrays after a tick (two ``ndarray.copy``
calls, so it is cheap enough to return every tick at 1000 drones). ``FleetView.snapshot()``
builds the pydantic ``Snapshot`` (JSON-ready, for the bus, the trace store and the
dashboard) only when someone asks for it. ``FleetView.telemetry()`` decodes the arrays into
plain per-drone values (``DroneTelemetry``) for the telemetry stream, so nobody outside the
simulation needs to know the layout of its arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from pydantic import BaseModel, ConfigDict

from sim._kernels import (
    FUEL,
    HDG,
    LEN,
    ODO,
    SPEED,
    STATUS_NAMES,
    DroneStatus,
    FloatArray,
    S,
    StatusArray,
    X,
    Y,
)

__all__ = ["DroneState", "DroneStatus", "DroneTelemetry", "FleetView", "Snapshot"]


class DroneTelemetry(TypedDict):
    """One drone in a telemetry frame: plain floats and the status name (JSON as it is)."""

    x: float  # km east
    y: float  # km north
    heading: float  # radians, counter-clockwise from east, in (-pi, pi]
    fuel: float  # km of flight left
    s: float  # arc length flown along the current flight
    status: DroneStatus
    points: float  # collected so far


class DroneState(BaseModel):
    """One drone in a ``Snapshot``: where it is, what it has left, what it collected."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    status: DroneStatus
    x: float
    y: float
    heading: float  # radians, counter-clockwise from east, in (-pi, pi]
    speed: float  # km/s
    fuel_left: float  # km
    distance_flown: float  # km
    s: float  # arc length flown along the current path (the holding circle when holding)
    path_length: float
    points: float
    collected: list[str]
    lost_reason: str | None = None


class Snapshot(BaseModel):
    """The whole fleet after a tick, JSON-ready (the bus, the trace store, the dashboard)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tick: int  # the tick just run
    time: float  # simulated seconds at its end
    drones: dict[str, DroneState]
    environment_version: int  # bumps on every change of the known environment


@dataclass(frozen=True, slots=True)
class FleetView:
    """The fleet's arrays after one tick, copied (drone ``i`` is ``ids[i]``)."""

    tick: int
    time: float
    ids: tuple[str, ...]
    fleet: FloatArray  # (rows, n) copy: see sim._kernels for the rows
    status: StatusArray  # (n,) int8 copy
    points: FloatArray  # (n,) copy
    collected: tuple[tuple[str, ...], ...]
    lost_reasons: tuple[str | None, ...]
    environment_version: int

    @property
    def positions(self) -> FloatArray:
        """(n, 2): each drone's x, y."""
        return self.fleet[[X, Y]].T

    @property
    def fuel(self) -> FloatArray:
        """(n,): each drone's fuel left (km)."""
        return self.fleet[FUEL, :]

    def status_of(self, drone_id: str) -> DroneStatus:
        """The status name of ``drone_id`` (ValueError if it is not in the fleet)."""
        return STATUS_NAMES[int(self.status[self.ids.index(drone_id)])]

    def telemetry(self) -> dict[str, DroneTelemetry]:
        """Drone id -> its position, heading, fuel, arc length, status and points, as plain
        floats and the status name, in fleet order: what a telemetry frame carries."""
        # whole rows to Python floats at once (``tolist``): 1,000 drones a tick, every tick
        F = self.fleet
        names = [STATUS_NAMES[k] for k in self.status.tolist()]
        rows = zip(
            self.ids,
            F[X].tolist(),
            F[Y].tolist(),
            F[HDG].tolist(),
            F[FUEL].tolist(),
            F[S].tolist(),
            names,
            self.points.tolist(),
            strict=True,
        )
        return {
            drone_id: {"x": x, "y": y, "heading": h, "fuel": f, "s": s, "status": st, "points": p}
            for drone_id, x, y, h, f, s, st, p in rows
        }

    def snapshot(self) -> Snapshot:
        """The pydantic ``Snapshot`` of this view (built on each call)."""
        F = self.fleet
        drones = {
            drone_id: DroneState(
                status=STATUS_NAMES[int(self.status[i])],
                x=float(F[X, i]),
                y=float(F[Y, i]),
                heading=float(F[HDG, i]),
                speed=float(F[SPEED, i]),
                fuel_left=float(F[FUEL, i]),
                distance_flown=float(F[ODO, i]),
                s=float(F[S, i]),
                path_length=float(F[LEN, i]),
                points=float(self.points[i]),
                collected=list(self.collected[i]),
                lost_reason=self.lost_reasons[i],
            )
            for i, drone_id in enumerate(self.ids)
        }
        return Snapshot(
            tick=self.tick,
            time=self.time,
            drones=drones,
            environment_version=self.environment_version,
        )
