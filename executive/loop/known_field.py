"""The known SAMs' field for the safety layer's diverts and ways home: one per known-world
version, and, in a paced run, built in a worker thread.

Building it is all numba ``nogil`` work (the bitangents and the static tangent graph: 55-68
ms at 500 SAMs on a quiet day, 250 ms on a slow one). On the tick, the first divert after a
SAM became known stalled the tick for that long. Paced, a build started here runs beside the
ticks; whoever needs the field before it is done waits only for what is left of it. As fast
as possible it is built where it is asked for, as before, so batch runs act at the same
ticks. A build is ``planner.geometry.sam_field.field_of``'s: a planning round's compile asking
for the same SAMs at the same time (a pop-up) waits for it instead of building it again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING

from planner.geo import GeoOrigin
from planner.geodesy import planning_disks
from planner.geometry import SamField
from planner.geometry.sam_field import field_of
from planner.mission import compile_workers

if TYPE_CHECKING:
    from sim import World

__all__ = ["KnownField"]

Disks = list[tuple[float, float, float]]


class KnownField:
    """The field of the SAMs a world knows, for its current known-world version.

    A field is kept with the SAMs' disks it was built on: a new version with the same disks
    (a target edited, a hidden SAM added) takes it over instead of building it again (55-68
    ms at 500 SAMs, on the tick when a divert or a way home needs it)."""

    def __init__(self, geo: GeoOrigin | None, workers: int | None = None) -> None:
        self.geo = geo
        # the threads a build takes (a run's compiles' by default): whoever waits for it,
        # the tick or a round's compile, waits for less of it (36 ms on two against 60 at
        # 510 SAMs)
        self.workers = workers if workers is not None else compile_workers()
        self._built: tuple[int, Disks, SamField] | None = None
        self._building: tuple[int, Disks, Future[SamField]] | None = None
        self._read: tuple[int, Disks] | None = None  # the disks of the version last asked
        # fields asked of field_of, here or in a worker (one per set of SAMs asked for): a
        # build, or the one a planning round's compile made of the same SAMs
        self.builds = 0
        self.in_worker = 0  # of those, built in a worker thread

    def get(self, world: World) -> SamField:
        """The field of the SAMs ``world`` knows now: the one built for them, the one a
        worker is building (waiting for the rest of it), or a new one built here."""
        field = self._done(world)
        if field is not None:
            return field
        version, disks = world.environment_version, self._disks(world)
        building = self._building
        if building is not None and building[1] == disks:
            field = building[2].result()
            self._building = None
        else:
            field = field_of(disks, self.workers)
            self.builds += 1
        self._built = (version, disks, field)
        return field

    def ready(self, world: World) -> bool:
        """Whether ``get`` would answer at once (built, or its worker done)."""
        if self._done(world) is not None:
            return True
        building = self._building
        return building is not None and building[2].done() and building[1] == self._disks(world)

    def prefetch(self, world: World) -> None:
        """Start building the field of what ``world`` knows now in a worker thread, unless it
        is built or being built, or a worker still builds another (one build at a time: an
        edit storm does not pile builds up; whoever needs this one builds it). The SAMs are
        read here, on the tick; the worker sees only their disks."""
        if self.ready(world):
            return
        building = self._building
        if building is not None and not building[2].done():
            return
        version, disks = world.environment_version, self._disks(world)
        future: Future[SamField] = Future()

        def build() -> None:
            try:
                future.set_result(field_of(disks, self.workers))
            except BaseException as exc:  # handed to whoever asks for the field
                future.set_exception(exc)

        self._building = (version, disks, future)
        self.builds += 1
        self.in_worker += 1
        # a thread per build (a SAM change is rare), gone once the field is built
        threading.Thread(target=build, name="safety-field", daemon=True).start()

    def later(self, world: World) -> Callable[[], SamField]:
        """The field of what ``world`` knows now, for a worker to wait for: the one built,
        the one being built (started here if no other build runs), or else one the worker
        builds itself from the disks read now, on the tick."""
        field = self._done(world)
        if field is not None:
            return lambda: field
        self.prefetch(world)
        disks = self._disks(world)
        building = self._building
        if building is not None and building[1] == disks:
            return building[2].result
        self.builds += 1  # built by the worker that asks, beside the other build
        self.in_worker += 1
        return lambda: field_of(disks, self.workers)

    def _disks(self, world: World) -> Disks:
        version = world.environment_version
        read = self._read
        if read is None or read[0] != version:
            read = self._read = (version, planning_disks(world.known_environment.sams, self.geo))
        return read[1]

    def _done(self, world: World) -> SamField | None:
        """The field built (here, or by a finished worker) for the SAMs known now, kept for
        this version from then on."""
        version = world.environment_version
        built = self._built
        if built is not None and built[0] == version:
            return built[2]
        disks = self._disks(world)
        building = self._building
        if building is not None and building[2].done() and building[1] == disks:
            field = building[2].result()
            self._built, self._building = (version, disks, field), None
            return field
        if built is not None and built[1] == disks:
            self._built = (version, disks, built[2])
            return built[2]
        return None
