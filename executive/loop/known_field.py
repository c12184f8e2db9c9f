"""The known SAMs' field for the safety layer's diverts and ways home: one per known-world
version, and, in a paced run, built in a worker thread.

Building it is all numba ``nogil`` work (the bitangents and the static tangent graph: 55-68
ms at 500 SAMs on a quiet day, 250 ms on a slow one). On the tick, the first divert after a
SAM became known stalled the tick for that long. Paced, a build started here runs beside the
ticks; whoever needs the field before it is done waits only for what is left of it. As fast
as possible it is built where it is asked for, as before, so batch runs act at the same
ticks.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import TYPE_CHECKING

from planner.geo import GeoOrigin
from planner.geodesy import planning_disks
from planner.geometry import SamField

if TYPE_CHECKING:
    from sim import World

__all__ = ["KnownField"]


class KnownField:
    """The field of the SAMs a world knows, for its current known-world version."""

    def __init__(self, geo: GeoOrigin | None) -> None:
        self.geo = geo
        self._built: tuple[int, SamField] | None = None
        self._building: tuple[int, Future[SamField]] | None = None
        self.builds = 0  # fields built, here or in a worker (one per version asked for)
        self.in_worker = 0  # of those, built in a worker thread

    def get(self, world: World) -> SamField:
        """The field of the SAMs ``world`` knows now: the one built for this version, the
        one a worker is building (waiting for the rest of it), or a new one built here."""
        version = world.environment_version
        built = self._built
        if built is not None and built[0] == version:
            return built[1]
        building = self._building
        if building is not None and building[0] == version:
            field = building[1].result()
        else:
            field = SamField(planning_disks(world.known_environment.sams, self.geo))
            self.builds += 1
        self._built, self._building = (version, field), None
        return field

    def ready(self, world: World) -> bool:
        """Whether ``get`` would answer at once (built, or its worker done)."""
        version = world.environment_version
        if self._built is not None and self._built[0] == version:
            return True
        building = self._building
        return building is not None and building[0] == version and building[1].done()

    def prefetch(self, world: World) -> None:
        """Start building the field of what ``world`` knows now in a worker thread, unless it
        is built or being built. The SAMs are read here, on the tick; the worker sees only
        their disks."""
        version = world.environment_version
        if self.ready(world) or (self._building is not None and self._building[0] == version):
            return
        disks = planning_disks(world.known_environment.sams, self.geo)
        future: Future[SamField] = Future()

        def build() -> None:
            try:
                future.set_result(SamField(disks))
            except BaseException as exc:  # handed to whoever asks for the field
                future.set_exception(exc)

        self._building = (version, future)
        self.builds += 1
        self.in_worker += 1
        # a thread per build (a SAM change is rare), gone once the field is built
        threading.Thread(target=build, name="safety-field", daemon=True).start()
