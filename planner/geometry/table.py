"""``PathTable``: all-pairs shortest SAM-avoiding distances between query points, with each
leg's geometry rebuilt lazily from Dijkstra's predecessors when it is first asked for."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from planner.errors import PlannerError
from planner.geometry._graph import Edges
from planner.geometry.path import Path
from planner.geometry.pieces import Arc, Line, Piece

__all__ = ["PathTable"]


class Disks(Protocol):
    """What a table reads of the field it was built over (``SamField`` is one; naming the
    protocol, not the class, keeps ``sam_field -> table`` the only import between them)."""

    centers: np.ndarray  # (m, 2)
    radii: np.ndarray  # (m,) the planning radii


class PathTable:
    """All-pairs shortest SAM-avoiding paths between a fixed set of query points."""

    def __init__(
        self,
        points: np.ndarray,
        dist: np.ndarray,
        field: Disks,
        *,
        pred: np.ndarray | None = None,
        node_pos: np.ndarray | None = None,
        query_node: np.ndarray | None = None,
        escape: np.ndarray | None = None,
        edges: Edges | None = None,
    ) -> None:
        self.points = points
        self.dist = dist
        self._field = field
        self._pred = pred
        self._node_pos = node_pos
        self._query_node = query_node
        self._escape = escape  # (n, 2) escape point per query, NaN if none
        self._edges = edges
        self._edge_index: dict[tuple[int, int], int] | None = None
        self._cache: dict[tuple[int, int], Path | None] = {}

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
        # One direction is computed, the other is its reverse, so path(i,j) and path(j,i)
        # are the same curve and have the same length as the (symmetric) dist entry.
        a, b = (i, j) if i < j else (j, i)
        key = (a, b)
        if key not in self._cache:
            self._cache[key] = self._build(a, b)
        p = self._cache[key]
        assert p is not None
        return p if (i, j) == key else p.reversed()

    def _build(self, i: int, j: int) -> Path:
        p_i = (float(self.points[i, 0]), float(self.points[i, 1]))
        p_j = (float(self.points[j, 0]), float(self.points[j, 1]))
        if self._pred is None:  # no SAMs: straight line
            return Path((Line(p_i, p_j),), float(self.dist[i, j]))
        assert self._node_pos is not None and self._query_node is not None
        assert self._escape is not None and self._edges is not None
        if self._edge_index is None:
            e = self._edges
            self._edge_index = {(int(u), int(v)): k for k, (u, v) in enumerate(zip(e.u, e.v))}
        src, dst = int(self._query_node[i]), int(self._query_node[j])
        # Walk predecessors back from the target (row i of pred belongs to source i).
        nodes = [dst]
        pred_row = self._pred[i]
        while nodes[-1] != src:
            nxt = int(pred_row[nodes[-1]])
            if nxt < 0:
                raise PlannerError(f"broken predecessor chain for {i} -> {j}")
            nodes.append(nxt)
        nodes.reverse()
        pieces: list[Piece] = []
        esc_i = self._escape[i]
        if not np.isnan(esc_i[0]):
            pieces.append(Line(p_i, (float(esc_i[0]), float(esc_i[1]))))
        centers, radii = self._field.centers, self._field.radii
        for u, v in zip(nodes[:-1], nodes[1:]):
            k = self._edge_index[(u, v) if u < v else (v, u)]
            c = int(self._edges.circle[k])
            if c < 0:
                a = self._node_pos[u]
                b = self._node_pos[v]
                pieces.append(Line((float(a[0]), float(a[1])), (float(b[0]), float(b[1]))))
            else:
                start, sweep = float(self._edges.start_angle[k]), float(self._edges.sweep[k])
                if u > v:  # stored from the smaller id: traverse backwards
                    start, sweep = start + sweep, -sweep
                center = (float(centers[c, 0]), float(centers[c, 1]))
                pieces.append(Arc(center, float(radii[c]), start, sweep))
        esc_j = self._escape[j]
        if not np.isnan(esc_j[0]):
            pieces.append(Line((float(esc_j[0]), float(esc_j[1])), p_j))
        pieces = _tidy(pieces)
        return Path(tuple(pieces), float(sum(p.length for p in pieces)))


def _tidy(pieces: list[Piece]) -> list[Piece]:
    """Drop zero-length pieces and merge consecutive same-direction arcs of one circle."""
    out: list[Piece] = []
    for p in pieces:
        if p.length <= 0.0:
            continue
        if (
            out
            and isinstance(p, Arc)
            and isinstance(out[-1], Arc)
            and out[-1].center == p.center
            and out[-1].radius == p.radius
            and (out[-1].sweep > 0) == (p.sweep > 0)
        ):
            prev = out[-1]
            out[-1] = Arc(prev.center, prev.radius, prev.start_angle, prev.sweep + p.sweep)
            continue
        out.append(p)
    if not out and pieces:
        out = [Line(pieces[0].start, pieces[-1].end)]
    return out
