"""Exact SAM-avoiding shortest paths in the plane.

Contract
--------
* SAMs are disks ``(x, y, true_radius)`` in km. A drone must never enter an open TRUE disk;
  touching a circle is allowed.
* Planning uses buffered disks, ``planning_radius(r) = r + max(MARGIN_ABS, MARGIN_REL * r)``,
  so that a drone following a plan keeps at least that margin away from every true disk.
  Overlapping buffered disks form one obstacle: no path squeezes between them.
* ``SamField.shortest_path(p, q)`` / ``SamField.all_pairs(points)`` return the exact shortest
  path avoiding the open buffered disks: straight tangent segments and arcs of the buffered
  circles, found on a tangent visibility graph with Dijkstra.
* A query point strictly inside a TRUE disk is unreachable (distance ``inf``, except 0 to
  itself). A query point inside a buffer ring but outside every true disk first escapes
  radially to the buffered circle (moving radially away from the centre never enters the
  true disk); if that escape point is inside another buffered disk the point is unreachable.
* ``Path.sample()`` returns a polyline whose points AND chords stay outside every true disk
  (arc chords have sagitta at most half the smallest margin).
* Lengths agree with ``PathTable.dist`` to floating-point rounding (~1e-12 relative), not
  bit for bit: Dijkstra and ``Path`` sum the same pieces in different groupings.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra

from planner.errors import PlannerError

MARGIN_ABS = 0.05  # km: minimum clearance between a planned path and a true SAM disk
MARGIN_REL = 0.01  # fraction of the true radius, for large SAMs

# Geometric tolerance (km). It decides when a segment "touches" a buffered circle rather than
# entering it, and when a node lies on a circle. It is ~1e5 times smaller than MARGIN_ABS,
# so nothing it lets through can reach a true disk.
_TOL = 1e-7
# Tolerance against TRUE disks (inside_true, escape segments): a point computed to lie on a
# true circle is not "inside" it.
_TRUE_TOL = 1e-9
_TWO_PI = 2.0 * math.pi
_DEFAULT_SAGITTA = 0.5 * MARGIN_ABS  # every margin is >= MARGIN_ABS


def planning_radius(true_radius: float) -> float:
    """The buffered radius the planner avoids, for a SAM of ``true_radius`` km."""
    return float(true_radius) + max(MARGIN_ABS, MARGIN_REL * float(true_radius))


Point = tuple[float, float]


# --------------------------------------------------------------------------------------
# Pieces and paths
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Line:
    """A straight piece from ``start`` to ``end``."""

    start: Point
    end: Point

    @property
    def length(self) -> float:
        return math.hypot(self.end[0] - self.start[0], self.end[1] - self.start[1])

    def reversed(self) -> Line:
        return Line(self.end, self.start)

    def locate(self, s: float) -> tuple[float, float, float]:
        (x0, y0), (x1, y1) = self.start, self.end
        dx, dy = x1 - x0, y1 - y0
        length = math.hypot(dx, dy)
        if length <= 0.0:
            return x0, y0, 0.0
        t = min(max(s / length, 0.0), 1.0)
        return x0 + t * dx, y0 + t * dy, math.atan2(dy, dx)


@dataclass(frozen=True, slots=True)
class Arc:
    """A piece of the circle ``center``/``radius`` from ``start_angle`` turning by ``sweep``.

    Angles in radians; ``sweep > 0`` is counter-clockwise.
    """

    center: Point
    radius: float
    start_angle: float
    sweep: float

    def _point(self, angle: float) -> Point:
        return (
            self.center[0] + self.radius * math.cos(angle),
            self.center[1] + self.radius * math.sin(angle),
        )

    @property
    def start(self) -> Point:
        return self._point(self.start_angle)

    @property
    def end(self) -> Point:
        return self._point(self.start_angle + self.sweep)

    @property
    def end_angle(self) -> float:
        return self.start_angle + self.sweep

    @property
    def length(self) -> float:
        return self.radius * abs(self.sweep)

    def reversed(self) -> Arc:
        return Arc(self.center, self.radius, self.start_angle + self.sweep, -self.sweep)

    def locate(self, s: float) -> tuple[float, float, float]:
        sign = 1.0 if self.sweep >= 0.0 else -1.0
        span = min(max(s, 0.0), self.length)
        a = self.start_angle + sign * (span / self.radius if self.radius > 0 else 0.0)
        x, y = self._point(a)
        # Tangent direction: +90 degrees from the radius when turning CCW, -90 when CW.
        return x, y, _wrap(a + sign * 0.5 * math.pi)

    def sample_angles(self, max_sagitta: float) -> np.ndarray:
        """Angles from start to end such that every chord's sagitta is <= max_sagitta."""
        if self.radius <= 0.0 or self.sweep == 0.0:
            return np.array([self.start_angle, self.end_angle])
        ratio = min(max_sagitta / self.radius, 1.0)
        # sagitta of a chord spanning angle d is R * (1 - cos(d / 2))
        max_step = 2.0 * math.acos(1.0 - ratio)
        k = max(1, math.ceil(abs(self.sweep) / max_step - 1e-12))
        return self.start_angle + self.sweep * np.linspace(0.0, 1.0, k + 1)


Piece = Line | Arc


def _wrap(a: float) -> float:
    """Angle into (-pi, pi]."""
    return math.atan2(math.sin(a), math.cos(a))


@dataclass(frozen=True)
class Path:
    """A continuous chain of pieces; ``length`` is the sum of the piece lengths."""

    pieces: tuple[Piece, ...]
    length: float
    _cum: tuple[float, ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.pieces:
            raise PlannerError("a Path needs at least one piece")
        if not self._cum:
            # Cumulative start offsets so locate() is a bisect, not a scan.
            cum = [0.0]
            for piece in self.pieces[:-1]:
                cum.append(cum[-1] + piece.length)
            object.__setattr__(self, "_cum", tuple(cum))

    @staticmethod
    def from_pieces(pieces: Iterable[Piece]) -> Path:
        pieces = tuple(pieces)
        return Path(pieces, float(sum(p.length for p in pieces)))

    @staticmethod
    def point(p: Point) -> Path:
        """The zero-length path that stays at ``p``."""
        p = (float(p[0]), float(p[1]))
        return Path((Line(p, p),), 0.0)

    @property
    def start(self) -> Point:
        return self.pieces[0].start

    @property
    def end(self) -> Point:
        return self.pieces[-1].end

    def reversed(self) -> Path:
        return Path(tuple(p.reversed() for p in reversed(self.pieces)), self.length)

    def locate(self, s: float) -> tuple[float, float, float]:
        """(x, y, heading) at arc length ``s`` from the start, clamped to [0, length]."""
        if s <= 0.0:
            return self.pieces[0].locate(0.0)
        if s >= self.length:
            last = self.pieces[-1]
            return last.locate(last.length)
        i = bisect_right(self._cum, s) - 1
        return self.pieces[i].locate(s - self._cum[i])

    def sample(self, max_sagitta: float | None = None) -> np.ndarray:
        """(k, 2) polyline from start to end.

        Arcs are subdivided so every chord's sagitta is <= ``max_sagitta`` (default half of
        MARGIN_ABS, which is at most half of any SAM's margin): the chords cut at most that
        deep into a buffered disk and so stay outside the true one.
        """
        sag = _DEFAULT_SAGITTA if max_sagitta is None else float(max_sagitta)
        if sag <= 0.0:
            raise PlannerError("max_sagitta must be positive")
        out: list[np.ndarray] = [np.asarray([self.start], dtype=float)]
        for piece in self.pieces:
            if isinstance(piece, Line):
                out.append(np.asarray([piece.end], dtype=float))
            else:
                a = piece.sample_angles(sag)[1:]
                cx, cy = piece.center
                out.append(
                    np.column_stack((cx + piece.radius * np.cos(a), cy + piece.radius * np.sin(a)))
                )
        return np.concatenate(out, axis=0)

    @staticmethod
    def concat(paths: Sequence[Path]) -> Path:
        """Join legs end to start into one path (the caller guarantees they connect)."""
        if not paths:
            raise PlannerError("cannot concatenate zero paths")
        pieces: list[Piece] = []
        for path in paths:
            pieces.extend(p for p in path.pieces if p.length > 0.0)
        if not pieces:
            return Path.point(paths[0].start)
        return Path(tuple(pieces), float(sum(p.length for p in paths)))


# --------------------------------------------------------------------------------------
# Vectorised geometry helpers
# --------------------------------------------------------------------------------------


def _segments_clear(
    a: np.ndarray, b: np.ndarray, centers: np.ndarray, radii: np.ndarray, tol: float = _TOL
) -> np.ndarray:
    """Bool (E,): segment a[e]-b[e] does not enter any open disk (touching within tol is ok)."""
    e = a.shape[0]
    ok = np.ones(e, dtype=bool)
    if e == 0 or centers.shape[0] == 0:
        return ok
    lim2 = np.maximum(radii - tol, 0.0) ** 2
    d = b - a
    dd = np.einsum("ij,ij->i", d, d)
    safe_dd = np.where(dd > 0.0, dd, 1.0)
    # Chunk over segments so memory stays bounded (E x m temporaries).
    step = max(1, 2_000_000 // max(1, centers.shape[0]))
    for lo in range(0, e, step):
        hi = min(e, lo + step)
        ac = centers[None, :, :] - a[lo:hi, None, :]  # (E, m, 2)
        t = np.einsum("emk,ek->em", ac, d[lo:hi]) / safe_dd[lo:hi, None]
        t = np.clip(t, 0.0, 1.0)
        closest = a[lo:hi, None, :] + t[..., None] * d[lo:hi, None, :]
        diff = closest - centers[None, :, :]
        dist2 = np.einsum("emk,emk->em", diff, diff)
        ok[lo:hi] = ~np.any(dist2 < lim2[None, :], axis=1)
    return ok


def _strictly_inside(points: np.ndarray, centers: np.ndarray, radii: np.ndarray, tol: float) -> np.ndarray:
    """Bool (n, m): point i is inside open disk j by more than ``tol``."""
    d = np.hypot(points[:, None, 0] - centers[None, :, 0], points[:, None, 1] - centers[None, :, 1])
    return d < radii[None, :] - tol


class _Graph:
    """Accumulates nodes, circle memberships and edges of the tangent visibility graph."""

    def __init__(self) -> None:
        self.pos: list[np.ndarray] = []  # blocks of (k, 2)
        self.n_nodes = 0
        # memberships: node id, circle id, angle on that circle
        self.m_node: list[np.ndarray] = []
        self.m_circ: list[np.ndarray] = []
        self.m_ang: list[np.ndarray] = []
        # line edges between node ids
        self.l_u: list[np.ndarray] = []
        self.l_v: list[np.ndarray] = []

    def add_nodes(self, pts: np.ndarray) -> np.ndarray:
        ids = np.arange(self.n_nodes, self.n_nodes + pts.shape[0])
        self.pos.append(np.asarray(pts, dtype=float).reshape(-1, 2))
        self.n_nodes += pts.shape[0]
        return ids

    def add_members(self, nodes: np.ndarray, circ: np.ndarray, ang: np.ndarray) -> None:
        self.m_node.append(np.asarray(nodes, dtype=np.int64))
        self.m_circ.append(np.asarray(circ, dtype=np.int64))
        # Normalise to [0, 2pi): arcs are built from the sorted order of these angles.
        a = np.mod(np.asarray(ang, dtype=float), _TWO_PI)
        self.m_ang.append(np.where(a >= _TWO_PI, 0.0, a))

    def add_lines(self, u: np.ndarray, v: np.ndarray) -> None:
        self.l_u.append(np.asarray(u, dtype=np.int64))
        self.l_v.append(np.asarray(v, dtype=np.int64))


def _cat(blocks: list[np.ndarray], dtype, shape_tail: tuple[int, ...] = ()) -> np.ndarray:
    if not blocks:
        return np.zeros((0, *shape_tail), dtype=dtype)
    return np.concatenate(blocks).astype(dtype, copy=False)


# --------------------------------------------------------------------------------------
# The SAM field
# --------------------------------------------------------------------------------------


@dataclass
class _Edges:
    """Deduplicated undirected edges (u < v) with their geometry, for reconstruction."""

    u: np.ndarray
    v: np.ndarray
    w: np.ndarray
    circle: np.ndarray  # -1 for a line
    start_angle: np.ndarray  # arcs: angle at node u
    sweep: np.ndarray  # arcs: signed sweep from u to v


class PathTable:
    """All-pairs shortest SAM-avoiding paths between a fixed set of query points."""

    def __init__(
        self,
        points: np.ndarray,
        dist: np.ndarray,
        field: SamField,
        *,
        pred: np.ndarray | None = None,
        node_pos: np.ndarray | None = None,
        query_node: np.ndarray | None = None,
        escape: np.ndarray | None = None,
        edges: _Edges | None = None,
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
        return self.points.shape[0]

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
        p_i = tuple(float(x) for x in self.points[i])
        p_j = tuple(float(x) for x in self.points[j])
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


class SamField:
    """The SAMs as obstacles: build once, query many.

    The query-independent part of the tangent graph (bitangents between circles and the
    arcs of each circle blocked by other disks) is computed once here.
    """

    def __init__(self, sams: Sequence[tuple[float, float, float]]) -> None:
        arr = np.asarray(list(sams), dtype=float).reshape(-1, 3)
        if arr.size and (not np.all(np.isfinite(arr)) or np.any(arr[:, 2] < 0.0)):
            raise PlannerError("SAMs need finite coordinates and non-negative radii")
        # Exact duplicates would each look "contained" in the other and lose all their arcs.
        arr = np.unique(arr, axis=0) if arr.shape[0] > 1 else arr
        self.centers: np.ndarray = arr[:, :2].copy()
        self.true_radii: np.ndarray = arr[:, 2].copy()
        self.radii: np.ndarray = np.array([planning_radius(r) for r in self.true_radii])
        m = self.centers.shape[0]
        # Circles entirely inside another buffered disk contribute nothing (no nodes survive).
        self._blocked = self._blocked_intervals()
        self._bitan = self._bitangents() if m > 1 else (np.zeros((0, 2)), np.zeros((0, 2)), np.zeros(0, int), np.zeros(0, int))

    # ----- static part ---------------------------------------------------------------

    def _blocked_intervals(self) -> list[np.ndarray]:
        """Per circle, midpoint angles of the open arcs covered by other buffered disks.

        Graph nodes inside another disk are dropped, so a blocked interval is either wholly
        inside an arc between consecutive nodes or disjoint from it: testing its midpoint is
        enough. A circle fully inside another disk gets the marker ``[nan]`` (all blocked).
        """
        c, r = self.centers, self.radii
        m = c.shape[0]
        out: list[np.ndarray] = []
        for k in range(m):
            mids: list[float] = []
            full = False
            for j in range(m):
                if j == k:
                    continue
                dx, dy = c[j, 0] - c[k, 0], c[j, 1] - c[k, 1]
                d = math.hypot(dx, dy)
                if d >= r[k] + r[j]:
                    continue  # disjoint or externally tangent
                if d + r[k] <= r[j]:
                    full = True  # circle k inside disk j
                    break
                if d + r[j] <= r[k]:
                    continue  # disk j inside circle k: never touches circle k
                mids.append(math.atan2(dy, dx))
            out.append(np.array([np.nan]) if full else np.array(mids, dtype=float))
        return out

    def _bitangents(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Clear bitangent segments: endpoints (E,2), (E,2) and their circles (E,), (E,)."""
        c, r = self.centers, self.radii
        m = c.shape[0]
        ii, jj = np.triu_indices(m, 1)
        d_vec = c[jj] - c[ii]
        d = np.hypot(d_vec[:, 0], d_vec[:, 1])
        base = np.arctan2(d_vec[:, 1], d_vec[:, 0])
        A: list[np.ndarray] = []
        B: list[np.ndarray] = []
        CI: list[np.ndarray] = []
        CJ: list[np.ndarray] = []
        safe_d = np.where(d > 0.0, d, 1.0)
        # Outer tangents: t_i = c_i + r_i m, t_j = c_j + r_j m with m.(c_j - c_i) = r_i - r_j.
        # Inner tangents: t_j = c_j - r_j m with m.(c_j - c_i) = r_i + r_j.
        for sign_j, cosv in ((1.0, (r[ii] - r[jj]) / safe_d), (-1.0, (r[ii] + r[jj]) / safe_d)):
            ok = (d > 0.0) & (np.abs(cosv) <= 1.0)
            if sign_j > 0:
                ok &= np.abs(r[ii] - r[jj]) < d  # neither contains the other
            else:
                ok &= d >= r[ii] + r[jj]  # disjoint (touching gives a degenerate pair; fine)
            if not np.any(ok):
                continue
            alpha = np.arccos(np.clip(cosv[ok], -1.0, 1.0))
            for s in (1.0, -1.0):
                ang = base[ok] + s * alpha
                mv = np.column_stack((np.cos(ang), np.sin(ang)))
                a = c[ii[ok]] + r[ii[ok], None] * mv
                b = c[jj[ok]] + sign_j * r[jj[ok], None] * mv
                A.append(a)
                B.append(b)
                CI.append(ii[ok])
                CJ.append(jj[ok])
        if not A:
            return np.zeros((0, 2)), np.zeros((0, 2)), np.zeros(0, int), np.zeros(0, int)
        a, b = np.concatenate(A), np.concatenate(B)
        ci, cj = np.concatenate(CI), np.concatenate(CJ)
        # Endpoints inside another disk are useless (and unsafe); the segment must be clear.
        pts = np.concatenate((a, b))
        inside = _strictly_inside(pts, c, r, _TOL).any(axis=1)
        keep = ~inside[: a.shape[0]] & ~inside[a.shape[0]:]
        keep &= _segments_clear(a, b, c, r)
        return a[keep], b[keep], ci[keep], cj[keep]

    # ----- queries --------------------------------------------------------------------

    def inside_true(self, point: Sequence[float]) -> bool:
        """True if ``point`` is strictly inside some TRUE disk (such a target is excluded)."""
        if self.centers.shape[0] == 0:
            return False
        p = np.asarray(point, dtype=float).reshape(1, 2)
        return bool(self._inside_true(p)[0])

    def _inside_true(self, pts: np.ndarray) -> np.ndarray:
        # A hair of tolerance so a point computed to lie on the true circle is not excluded.
        return _strictly_inside(pts, self.centers, self.true_radii, _TRUE_TOL).any(axis=1)

    def shortest_path(self, p: Sequence[float], q: Sequence[float]) -> Path | None:
        """Shortest SAM-avoiding path from p to q, or None if q is unreachable from p."""
        pts = np.array([p, q], dtype=float).reshape(2, 2)
        pp, qq = (float(pts[0, 0]), float(pts[0, 1])), (float(pts[1, 0]), float(pts[1, 1]))
        if pp == qq:
            return Path.point(pp)
        if self.centers.shape[0] == 0:
            return Path((Line(pp, qq),), math.hypot(qq[0] - pp[0], qq[1] - pp[1]))
        table = self.all_pairs(pts)
        if not np.isfinite(table.dist[0, 1]):
            return None
        return table.path(0, 1)

    def all_pairs(self, points: np.ndarray) -> PathTable:
        """Shortest SAM-avoiding distances between all ``points`` (n, 2); paths are lazy."""
        pts = np.asarray(points, dtype=float).reshape(-1, 2)
        n = pts.shape[0]
        if n and not np.all(np.isfinite(pts)):
            raise PlannerError("query points must be finite")
        diff = pts[:, None, :] - pts[None, :, :]
        euclid = np.hypot(diff[..., 0], diff[..., 1])
        if self.centers.shape[0] == 0 or n == 0:
            return PathTable(pts, euclid, self)
        return self._all_pairs_graph(pts, euclid)

    def _escape_points(self, pts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Effective graph position per query, its escape point (NaN if none), reachability."""
        c, r = self.centers, self.radii
        n = pts.shape[0]
        eff = pts.copy()
        esc = np.full((n, 2), np.nan)
        reachable = ~self._inside_true(pts)
        # Points within _TOL outside a circle are "escaped" too (a tiny projection), so that
        # every graph node on a circle sits exactly on it and pieces join exactly.
        in_buf = _strictly_inside(pts, c, r, -_TOL)
        for i in np.nonzero(reachable & in_buf.any(axis=1))[0]:
            best: np.ndarray | None = None
            best_len = math.inf
            for k in np.nonzero(in_buf[i])[0]:
                v = pts[i] - c[k]
                d = math.hypot(v[0], v[1])
                if d == 0.0:  # only possible for a zero-radius SAM: any direction is radial
                    v, d = np.array([1.0, 0.0]), 1.0
                e = c[k] + v * (r[k] / d)
                others = np.arange(c.shape[0]) != k
                # The escape point must be free and the way out must not enter a true disk.
                if _strictly_inside(e[None, :], c[others], r[others], _TOL).any():
                    continue
                tol = _TRUE_TOL
                if not _segments_clear(pts[i : i + 1], e[None, :], c, self.true_radii, tol)[0]:
                    continue
                if r[k] - d < best_len:
                    best, best_len = e, r[k] - d
            if best is None:
                reachable[i] = False
            else:
                eff[i] = best
                esc[i] = best
        return eff, esc, reachable

    def _all_pairs_graph(self, pts: np.ndarray, euclid: np.ndarray) -> PathTable:
        c, r = self.centers, self.radii
        m = c.shape[0]
        n = pts.shape[0]
        eff, esc, reachable = self._escape_points(pts)
        g = _Graph()
        qnode = g.add_nodes(eff)
        ridx = np.nonzero(reachable)[0]
        q_eff = eff[ridx]

        # Query nodes that sit on a buffered circle (escaped, or given on it) join its arcs.
        dq = np.hypot(q_eff[:, None, 0] - c[None, :, 0], q_eff[:, None, 1] - c[None, :, 1])
        on = np.abs(dq - r[None, :]) <= _TOL
        qi, ki = np.nonzero(on)
        if qi.size:
            ang = np.arctan2(q_eff[qi, 1] - c[ki, 1], q_eff[qi, 0] - c[ki, 0])
            g.add_members(qnode[ridx[qi]], ki, ang)

        # Point-to-point segments between reachable queries.
        if ridx.size > 1:
            a_i, b_i = np.triu_indices(ridx.size, 1)
            ok = _segments_clear(q_eff[a_i], q_eff[b_i], c, r)
            g.add_lines(qnode[ridx[a_i[ok]]], qnode[ridx[b_i[ok]]])

        # Tangents from each reachable query to each circle it lies outside of.
        qi, ki = np.nonzero(dq > r[None, :] + _TOL)
        if qi.size:
            base = np.arctan2(q_eff[qi, 1] - c[ki, 1], q_eff[qi, 0] - c[ki, 0])
            alpha = np.arccos(np.clip(r[ki] / dq[qi, ki], -1.0, 1.0))
            ang = np.concatenate((base + alpha, base - alpha))
            kk = np.concatenate((ki, ki))
            qq = np.concatenate((qi, qi))
            tp = c[kk] + r[kk, None] * np.column_stack((np.cos(ang), np.sin(ang)))
            keep = ~_strictly_inside(tp, c, r, _TOL).any(axis=1)
            keep &= _segments_clear(q_eff[qq], tp, c, r)
            tp, kk, qq, ang = tp[keep], kk[keep], qq[keep], ang[keep]
            tnode = g.add_nodes(tp)
            g.add_members(tnode, kk, ang)
            g.add_lines(qnode[ridx[qq]], tnode)

        # Static bitangents.
        ba, bb, bci, bcj = self._bitan
        if ba.shape[0]:
            na = g.add_nodes(ba)
            nb = g.add_nodes(bb)
            g.add_members(na, bci, np.arctan2(ba[:, 1] - c[bci, 1], ba[:, 0] - c[bci, 0]))
            g.add_members(nb, bcj, np.arctan2(bb[:, 1] - c[bcj, 1], bb[:, 0] - c[bcj, 0]))
            g.add_lines(na, nb)

        node_pos = _cat(g.pos, float, (2,))
        edges = self._edges(g, node_pos)
        N = node_pos.shape[0]
        graph = csr_matrix(
            (np.concatenate((edges.w, edges.w)), (np.concatenate((edges.u, edges.v)), np.concatenate((edges.v, edges.u)))),
            shape=(N, N),
        )
        # One Dijkstra call for all sources (explicit zero weights count as edges in csgraph).
        gd, pred = dijkstra(graph, directed=True, indices=qnode, return_predecessors=True)
        dist = gd[:, qnode]
        # Add the radial escape legs at both ends.
        esc_len = np.where(np.isnan(esc[:, 0]), 0.0, np.hypot(esc[:, 0] - pts[:, 0], esc[:, 1] - pts[:, 1]))
        dist = dist + esc_len[:, None] + esc_len[None, :]
        dist[~reachable, :] = np.inf
        dist[:, ~reachable] = np.inf
        # Symmetric by construction: the upper triangle (source i < j) is authoritative,
        # matching PathTable.path which builds from the smaller index and reverses.
        upper = np.triu(dist, 1)
        dist = upper + upper.T
        # Identical points are 0 apart, even if unreachable from everything else.
        same = euclid == 0.0
        dist[same] = 0.0
        np.fill_diagonal(dist, 0.0)
        return PathTable(
            pts,
            dist,
            self,
            pred=pred,
            node_pos=node_pos,
            query_node=qnode,
            escape=esc,
            edges=edges,
        )

    def _edges(self, g: _Graph, node_pos: np.ndarray) -> _Edges:
        """Line edges (already clearance-checked) plus arcs between consecutive circle nodes."""
        lu, lv = _cat(g.l_u, np.int64), _cat(g.l_v, np.int64)
        lw = np.hypot(*(node_pos[lv] - node_pos[lu]).T) if lu.size else np.zeros(0)
        mn, mc, ma = _cat(g.m_node, np.int64), _cat(g.m_circ, np.int64), _cat(g.m_ang, float)
        au: list[np.ndarray] = []
        av: list[np.ndarray] = []
        ac: list[np.ndarray] = []
        a0: list[np.ndarray] = []
        asw: list[np.ndarray] = []
        order = np.lexsort((ma, mc))
        mn, mc, ma = mn[order], mc[order], ma[order]
        bounds = np.searchsorted(mc, np.arange(self.centers.shape[0] + 1))
        for k in range(self.centers.shape[0]):
            lo, hi = bounds[k], bounds[k + 1]
            if hi - lo < 2:
                continue
            blocked = self._blocked[k]
            if blocked.size == 1 and np.isnan(blocked[0]):
                continue
            nodes, angs = mn[lo:hi], ma[lo:hi]
            # Consecutive pairs in CCW order, including the wrap-around from last to first.
            nxt = np.roll(np.arange(hi - lo), -1)
            sweep = angs[nxt] - angs
            sweep[-1] += _TWO_PI
            ok = np.ones(hi - lo, dtype=bool)
            for mid in blocked:
                # Is the blocked interval's midpoint strictly within the CCW arc?
                off = np.mod(mid - angs, _TWO_PI)
                ok &= ~((off > 0.0) & (off < sweep))
            ok &= nodes != nodes[nxt]
            au.append(nodes[ok])
            av.append(nodes[nxt][ok])
            ac.append(np.full(int(ok.sum()), k, dtype=np.int64))
            a0.append(angs[ok])
            asw.append(sweep[ok])
        u = np.concatenate([lu, *au])
        v = np.concatenate([lv, *av])
        circ = np.concatenate([np.full(lu.size, -1, dtype=np.int64), *ac])
        start = np.concatenate([np.zeros(lu.size), *a0])
        sweep = np.concatenate([np.zeros(lu.size), *asw])
        w = np.where(circ < 0, np.concatenate([lw, np.zeros(sweep.size - lw.size)]), 0.0)
        arc_mask = circ >= 0
        w[arc_mask] = self.radii[circ[arc_mask]] * np.abs(sweep[arc_mask])
        # Store every edge with u < v (reverse arcs accordingly), then keep the cheapest of
        # parallel edges: csr_matrix would otherwise sum duplicates.
        swap = u > v
        u2, v2 = np.where(swap, v, u), np.where(swap, u, v)
        start = np.where(swap & arc_mask, start + sweep, start)
        sweep = np.where(swap, -sweep, sweep)
        order = np.lexsort((w, v2, u2))
        u2, v2, w, circ, start, sweep = (x[order] for x in (u2, v2, w, circ, start, sweep))
        first = np.ones(u2.size, dtype=bool)
        first[1:] = (u2[1:] != u2[:-1]) | (v2[1:] != v2[:-1])
        first &= u2 != v2
        return _Edges(u2[first], v2[first], w[first], circ[first], start[first], sweep[first])
