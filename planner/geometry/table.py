"""``PathTable``: all-pairs shortest SAM-avoiding distances between query points, with each
leg's geometry found when it is first asked for (one search from the leg's start, cached).

A table may be lazy: its ``dist`` is computed when first read, and ``rows(nodes)`` gives the
distances from a few points without computing the rest (what a feasibility check needs).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
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


# (has NaN, has a negative, all finite, mean of the finite entries summed row by row): what
# the team search checks of a distance matrix (planner.geometry._incremental.matrix_flags)
DistFlags = tuple[bool, bool, bool, float]


class PathTable:
    """All-pairs shortest SAM-avoiding paths between a fixed set of query points.

    ``dist`` (n, n) is symmetric; ``path(i, j)`` asks ``legs`` for the leg from the smaller
    index to the larger (a straight line when ``legs`` is None: no SAMs) and reverses it for
    the other direction, so both directions are the same curve. A lazy table is given no
    ``dist`` but ``fill`` (computes it, once, when first read) and ``rows`` (the distances
    from some points to all, without the rest).
    """

    def __init__(
        self,
        points: np.ndarray,
        dist: np.ndarray | None,
        legs: LegSource | None,
        *,
        fill: Callable[[], np.ndarray] | None = None,
        rows: Callable[[np.ndarray], np.ndarray] | None = None,
        flags: DistFlags | None = None,
    ) -> None:
        if dist is None and (fill is None or rows is None):
            raise PlannerError("a lazy PathTable needs fill and rows")
        self.points = points
        # what the team search checks of ``dist`` before it starts (``DistFlags``), when
        # the table was made with them (None: the search reads ``dist`` for them)
        self.flags = flags
        self._dist = dist
        self._fill = fill
        self._rows = rows
        self._filling = threading.Lock()
        self._legs = legs
        self._cache: dict[tuple[int, int], Path] = {}

    @property
    def dist(self) -> np.ndarray:
        """(n, n) shortest distances (km, ``inf`` where no way exists); computed on first
        read for a lazy table."""
        if self._dist is None:
            with self._filling:
                if self._dist is None:
                    assert self._fill is not None
                    self._dist = self._fill()
        return self._dist

    @property
    def filled(self) -> bool:
        """Whether ``dist`` has been computed (always, for a table that is not lazy)."""
        return self._dist is not None

    def rows(self, nodes: Sequence[int] | np.ndarray) -> np.ndarray:
        """(len(nodes), n): the distances from ``nodes`` to every point; a lazy table that
        has not filled ``dist`` computes just these rows."""
        index = np.asarray(nodes, dtype=np.int64).reshape(-1)
        if self._dist is not None or self._rows is None:
            return np.asarray(self.dist[index])
        return self._rows(index)

    def __len__(self) -> int:
        return int(self.points.shape[0])

    def path(self, i: int, j: int) -> Path:
        """Geometry of the leg i -> j. Raises PlannerError if j is unreachable from i."""
        cached = self._cache.get((i, j))
        if cached is not None:  # a swarm's round reads 10,000s of legs, most of them twice
            return cached
        n = self.points.shape[0]
        if not (0 <= i < n and 0 <= j < n):
            raise IndexError(f"path({i}, {j}) outside a table of {n} points")
        x_i, y_i = float(self.points[i, 0]), float(self.points[i, 1])
        if i == j or (x_i == self.points[j, 0] and y_i == self.points[j, 1]):
            return Path.point((x_i, y_i))
        if not math.isfinite(self.dist[i, j]):
            raise PlannerError(f"point {j} is unreachable from point {i}")
        a, b = (i, j) if i < j else (j, i)
        forward = self._cache.get((a, b))
        if forward is None:
            forward = self._cache[(a, b)] = self._build(a, b)
        if (i, j) == (a, b):
            return forward
        backward = self._cache[(i, j)] = forward.reversed()
        return backward

    def _build(self, i: int, j: int) -> Path:
        p_i = (float(self.points[i, 0]), float(self.points[i, 1]))
        p_j = (float(self.points[j, 0]), float(self.points[j, 1]))
        if self._legs is None:  # no SAMs: straight line
            return Path((Line(p_i, p_j),), float(self.dist[i, j]))
        path = self._legs.leg(i, j)
        if path is None:
            raise PlannerError(f"no path found for {i} -> {j} though the table has one")
        return path
