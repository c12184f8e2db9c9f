"""What a run achieved: points, per-drone fate, duration; what ``isr sim`` prints."""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict

from sim import _kernels as K
from sim.driver import Sim
from sim.snapshot import DroneStatus

__all__ = ["DroneOutcome", "Outcome", "mission_outcome"]


class DroneOutcome(BaseModel):
    """How one drone ended: status, fuel, distance, points and targets."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    status: DroneStatus
    fuel_left: float
    distance_flown: float
    points: float
    collected: list[str]
    lost_reason: str | None = None


class Outcome(BaseModel):
    """What a run achieved, as ``isr sim`` prints it and a golden scenario checks it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    total_points: float
    state_hash: str
    ticks: int
    sim_seconds: float
    drones: dict[str, DroneOutcome]
    lost: list[str]
    uncollected: list[str]  # live targets nobody collected (``excluded`` ones included)
    excluded: list[str]  # live targets strictly inside a true SAM disk: never collectable


def mission_outcome(sim: Sim) -> Outcome:
    """The outcome of ``sim`` as it stands (after the last tick run)."""
    world = sim.world
    view = world.fleet_view(max(sim.tick - 1, 0))
    drones = {}
    for i, drone_id in enumerate(view.ids):
        drones[drone_id] = DroneOutcome(
            status=K.STATUS_NAMES[int(view.status[i])],
            fuel_left=float(view.fleet[K.FUEL, i]),
            distance_flown=float(view.fleet[K.ODO, i]),
            points=float(view.points[i]),
            collected=list(view.collected[i]),
            lost_reason=view.lost_reasons[i],
        )
    collected = world.collected()
    truth = world.truth_environment
    excluded = [
        t.id
        for t in truth.targets
        if any(math.hypot(t.x - s.x, t.y - s.y) < s.range for s in truth.sams)
    ]
    return Outcome(
        total_points=float(view.points.sum()),
        state_hash=world.state_hash(),
        ticks=sim.tick,
        sim_seconds=sim.time,
        drones=drones,
        lost=[d for d, o in drones.items() if o.status == "lost"],
        uncollected=[t.id for t in truth.targets if t.id not in collected],
        excluded=excluded,
    )
