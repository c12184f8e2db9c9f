"""A known SAM removed, moved away or shrunk: does it free anything worth a replan?

It does when the part of its old disk it no longer covers held

* a **target**: a live, uncollected target inside the old disk (as the planner buffers it),
  now outside every known SAM, that a drone still in the mission can sense (the plan left it
  out because of this SAM; the next plan can take it); or
* a **planned path**: an airborne drone's flight still ahead that runs along (or close to)
  the old disk's buffered circle: the SAM bent it, and a shorter way may now be open.

Anything else (a SAM nothing went near, one that only grew or moved over its old disk) is
no reason to replan: the loop notes it and flies on. The old disk is read from the known
SAMs as they were before the tick (``KnownSams``), since the world has already dropped it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.geometry import MARGIN_ABS, planning_radius
from planner.geometry.contact import first_contact
from planner.model import Sam, Scenario
from sim import World
from sim.flight import slice_path

__all__ = ["KnownSams", "freed_by"]

# km beyond the buffered circle within which a path counts as running along it
_ALONG = 0.5 * MARGIN_ABS


@dataclass(frozen=True)
class _Disk:
    x: float
    y: float
    r: float

    def covers(self, other: _Disk) -> bool:
        """Does this disk contain all of ``other``?"""
        return math.hypot(self.x - other.x, self.y - other.y) + other.r <= self.r + 1e-9


def _disk(sam: Sam, r: float | None = None) -> _Disk:
    return _Disk(sam.x, sam.y, sam.range if r is None else r)


class KnownSams:
    """The known SAMs as they were before the tick: refreshed before each tick (only when
    the world's environment changed), read while reacting to the tick's events."""

    def __init__(self) -> None:
        self._sams: dict[str, Sam] = {}
        self._version = -1

    def refresh(self, world: World) -> None:
        """Take the known SAMs now, if the environment changed since the last time."""
        version = world.environment_version
        if version != self._version:
            self._sams = {s.id: s for s in world.known_environment.sams}
            self._version = version

    def get(self, sam_id: str) -> Sam | None:
        """The SAM ``sam_id`` as it was known before the tick, or None."""
        return self._sams.get(sam_id)


def freed_by(
    before: Sam, after: Sam | None, world: World, scenario: Scenario, not_planned: set[str]
) -> str | None:
    """Why the change of a known SAM from ``before`` to ``after`` (None: removed) is worth
    a replan, or None. ``not_planned``: drones no plan re-tasks (sent home)."""
    old = _disk(before, planning_radius(before.range))
    if after is not None and _disk(after).covers(_disk(before)):
        return None  # it covers all it covered: nothing is freed
    known = world.known_environment
    collected = world.collected()
    others = [s for s in known.sams if s.id != before.id] + ([after] if after else [])
    sensors = [
        config
        for drone_id, config in scenario.drone_configs.items()
        if drone_id not in not_planned and world.status(drone_id) not in ("lost", "landed")
    ]
    for t in known.targets:
        if t.id in collected or math.hypot(t.x - old.x, t.y - old.y) >= old.r:
            continue
        if any(math.hypot(t.x - s.x, t.y - s.y) < s.range for s in others):
            continue  # still inside a SAM
        if any(config.can_sense(t.type) for config in sensors):
            return f"frees target {t.id}"
    along = (old.x, old.y, old.r + _ALONG)
    for drone_id in scenario.drone_configs:
        if drone_id in not_planned or world.status(drone_id) not in ("flying", "holding"):
            continue
        flight = world.flight(drone_id)
        if flight is None or flight.holding:
            continue
        ahead = slice_path(flight.path, world.progress(drone_id))
        if ahead is not None and first_contact(ahead, [along]) is not None:
            return f"frees the path of drone {drone_id}"
    return None
