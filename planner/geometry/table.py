"""``PathTable``: all-pairs shortest SAM-avoiding distances between query points, with each
leg's geometry found when it is first asked for (one search from the leg's start, cached)."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from planner.errors import PlannerError
from planner.geometry.path import Path
from planner.geometry.pieces import Line

__all__ = ["LegSource", "PathTable"]


class LegSource(Protocol):
    """Where a table's legs come from: the shortest path between two of its points."""

    def leg(self, i: int, j: int) -> Path | None:
        """The shortest path from point ``i`` to point ``j`` (None if there is none)."""
        ...


class PathTable:
    """All-pairs shortest SAM-avoiding paths between a fixed set of query points.

    ``dist`` (n, n) is symmetric; ``path(i, j)`` asks ``legs`` for the leg from the smaller
    index to the larger (a straight line when ``legs`` is None: no SAMs) and reverses it for
    the other direction, so both directions are the same curve.
    """

    def __init__(self, points: np.ndarray, dist: np.ndarray, legs: LegSource | None) -> None:
        self.points = points
        self.dist = dist
        self._legs = legs
        self._cache: dict[tuple[int, int], Path] = {}

    def __len__(self) -> int:
        return int(self.points.shape[0])

    def path(self, i: int, j: int) -> Path:
        """Geometry of the leg i -> j. Raises PlannerError if j is unreachable from i."""
        n = self.points.shape[0]
        if not (0 <= i < n and 0 <= j < n):
            raise IndexError(f"path({i}, {j}) outside a table of {n} points")
        if i == j or np.array_equal(self.points[i], self.points[j]):
            return Path.point(tuple(self.points[i]))
        if not np.isfinite(self.dist[i, j]):
            raise PlannerError(f"point {j} is unreachable from point {i}")
        a, b = (i, j) if i < j else (j, i)
        key = (a, b)
        if key not in self._cache:
            self._cache[key] = self._build(a, b)
        p = self._cache[key]
        return p if (i, j) == key else p.reversed()

    def _build(self, i: int, j: int) -> Path:
        p_i = (float(self.points[i, 0]), float(self.points[i, 1]))
        p_j = (float(self.points[j, 0]), float(self.points[j, 1]))
        if self._legs is None:  # no SAMs: straight line
            return Path((Line(p_i, p_j),), float(self.dist[i, j]))
        path = self._legs.leg(i, j)
        if path is None:
            raise PlannerError(f"no path found for {i} -> {j} though the table has one")
        return path
