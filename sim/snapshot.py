"""What a tick shows: a light array view every tick, a pydantic snapshot on request.

``FleetView`` is a frozen copy of the fleet's arrays after a tick (two ``ndarray.copy``
calls, so it is cheap enough to return every tick at 1000 drones). ``FleetView.snapshot()``
builds the pydantic ``Snapshot`` (JSON-ready, for the bus, the trace store and the
dashboard) only when someone asks for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from sim._kernels import FUEL, HDG, LEN, ODO, SPEED, STATUS_NAMES, S, X, Y

__all__ = ["DroneState", "DroneStatus", "FleetView", "Snapshot"]

DroneStatus = Literal["parked", "flying", "holding", "landed", "lost"]


class DroneState(BaseModel):
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
    model_config = ConfigDict(extra="forbid", frozen=True)

    tick: int  # the tick just run
    time: float  # simulated seconds at its end
    drones: dict[str, DroneState]
    environment_version: int  # bumps on every change of the known environment


@dataclass(frozen=True, slots=True)
class FleetView:
    tick: int
    time: float
    ids: tuple[str, ...]
    fleet: np.ndarray  # (rows, n) copy: see sim._kernels for the rows
    status: np.ndarray  # (n,) int8 copy
    points: np.ndarray  # (n,) copy
    collected: tuple[tuple[str, ...], ...]
    lost_reasons: tuple[str | None, ...]
    environment_version: int

    @property
    def positions(self) -> np.ndarray:
        return self.fleet[[X, Y]].T

    @property
    def fuel(self) -> np.ndarray:
        return self.fleet[FUEL]

    def status_of(self, drone_id: str) -> str:
        return STATUS_NAMES[int(self.status[self.ids.index(drone_id)])]

    def snapshot(self) -> Snapshot:
        F = self.fleet
        drones = {
            drone_id: DroneState(
                status=STATUS_NAMES[int(self.status[i])],
                x=float(F[X, i]), y=float(F[Y, i]), heading=float(F[HDG, i]),
                speed=float(F[SPEED, i]), fuel_left=float(F[FUEL, i]),
                distance_flown=float(F[ODO, i]), s=float(F[S, i]), path_length=float(F[LEN, i]),
                points=float(self.points[i]), collected=list(self.collected[i]),
                lost_reason=self.lost_reasons[i],
            )
            for i, drone_id in enumerate(self.ids)
        }
        return Snapshot(tick=self.tick, time=self.time, drones=drones,
                        environment_version=self.environment_version)
