"""A divert's way round the known SAMs, and, in a paced run, worked out in a worker from
where the drone will be a few ticks on.

A divert keeps the drone's remaining waypoints, in order, to the same end, on SAM-avoiding
legs (``divert_route``). Its legs are shortest paths on the known SAMs' field: 11-39 ms a
divert at 500 SAMs, on the tick that acted. Paced, a drone with room before its contact is
given a checkpoint (where it will be at the start of a tick a little ahead, flying on as it
does) and the legs from there are worked out in a worker thread (``DivertJobs``); on the
checkpoint's tick the safety layer sends the divert, if the drone is still on the flight the
job started from and the known SAMs are the same, else it acts on the tick as before.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from planner.geometry import Path, SamField
from planner.geometry.contact import Disk, first_contact
from sim import Flight

__all__ = ["DivertJobs", "Job", "Route", "divert_route"]

Stop = tuple[str, tuple[float, float]]  # a waypoint's target and where it is


@dataclass(frozen=True)
class Route:
    """A divert: the path, its waypoints' arc lengths, the targets skipped and why."""

    path: Path
    waypoints: tuple[tuple[str, float], ...]
    skipped: dict[str, str]


def divert_route(
    field: SamField,
    here: tuple[float, float],
    stops: Sequence[Stop],
    end: tuple[float, float],
    disks: Sequence[Disk],
    fuel: float,
    reserve: float,
    skipped: dict[str, str] | None = None,
) -> Route | None:
    """The stops in order, then the end, on SAM-avoiding legs from ``here``; stops inside a
    SAM or that no path reaches are skipped (and named). None when the end cannot be
    reached, the fuel does not cover it with the reserve, or the path meets a SAM."""
    skipped = dict(skipped or {})
    points: list[tuple[str | None, tuple[float, float]]] = []
    for target_id, at in stops:
        if field.inside_true(at):
            skipped[target_id] = "inside a SAM"
        else:
            points.append((target_id, at))
    points.append((None, end))
    legs: list[Path] = []
    waypoints: list[tuple[str, float]] = []
    length = 0.0
    for stop, at in points:
        leg = field.shortest_path(here, at)
        if leg is None:
            if stop is None:
                return None  # the end cannot be reached: not a divert
            skipped[stop] = "no path to it avoids the known SAMs"
            continue
        legs.append(leg)
        length += leg.length
        if stop is not None:
            waypoints.append((stop, length))
        here = at
    if length + reserve > fuel:
        return None
    path = Path.concat(legs)
    if path.length <= 0.0 or first_contact(path, disks) is not None:
        return None
    return Route(path, tuple(waypoints), skipped)


@dataclass(frozen=True)
class Job:
    """A divert being worked out from a checkpoint: where the drone will be at the start of
    ``tick`` on ``flight`` (its arc length ``s``), round the SAMs ``disks`` then known."""

    drone: str
    flight: Flight
    tick: int
    s: float
    sam: str
    disks: tuple[Disk, ...]
    future: Future[Route | None]


class DivertJobs:
    """Divert jobs in one worker thread, in order; how long one takes, measured."""

    def __init__(self) -> None:
        self.jobs: dict[str, Job] = {}
        self._pool: ThreadPoolExecutor | None = None
        self.took_s = 0.05  # a job's wall time, the longest of the last few (a first guess)
        self._took: list[float] = []
        self.started = 0  # jobs started, sent, and too late or stale (then acted on the tick)
        self.sent = 0
        self.dropped = 0
        self.failed = 0  # of those dropped, jobs whose work raised (logged)

    def lead_s(self) -> float:
        """Wall seconds a new job may wait for: the jobs queued before it, and its own."""
        queued = sum(not j.future.done() for j in self.jobs.values())
        return (queued + 1) * self.took_s

    def start(
        self,
        drone: str,
        flight: Flight,
        at: tuple[int, float],
        sam: str,
        disks: tuple[Disk, ...],
        field: Callable[[], SamField],
        work: Callable[[SamField], Route | None],
    ) -> Job:
        """Queue ``work`` on the field (``field`` waits for it, in the worker) for the
        checkpoint ``at`` (its tick, its arc length on ``flight``)."""
        future: Future[Route | None] = Future()

        def run() -> None:
            began = time.perf_counter()
            try:
                future.set_result(work(field()))
            except BaseException as exc:  # the tick that takes it acts there instead
                future.set_exception(exc)
            self._took = [*self._took[-3:], time.perf_counter() - began]
            self.took_s = max(0.01, *self._took)

        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="safety-divert")
        job = self.jobs[drone] = Job(drone, flight, at[0], at[1], sam, disks, future)
        self.started += 1
        self._pool.submit(run)
        return job
