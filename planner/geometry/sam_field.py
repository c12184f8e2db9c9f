"""``SamField``: the SAMs as obstacles, and the exact shortest paths around them.

The query-independent part of the tangent visibility graph (bitangents between the buffered
circles, the arcs of each circle other disks cover: ``_static``) is built once per field.
A set of query points gets its ``Queries``: each point's escape and its entries onto the
circles (``_search.query_entries``). Then one Dijkstra over the static nodes per source
gives a row of the distance table (``_search``). Every kernel is numba ``nogil``, so a
thread computing a table never blocks the others; ``workers`` threads share the rows.
"""

from __future__ import annotations

import functools
import math
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from planner.errors import PlannerError
from planner.geometry._disks import build_grid, inside_any, segments_clear, strictly_inside
from planner.geometry._search import (
    components,
    entry_links,
    finish,
    leg,
    pair_rows,
    query_entries,
    upper_rows,
)
from planner.geometry._static import build_static, count_static_nodes
from planner.geometry.margins import TOL, TRUE_TOL, TWO_PI, planning_radius
from planner.geometry.path import Path
from planner.geometry.pieces import Arc, Line, Piece
from planner.geometry.shares import even_cuts, in_shares
from planner.geometry.table import PathTable

__all__ = [
    "NO_DISK",
    "STORED_COUNT_NODES",
    "EntryDelta",
    "FieldLegs",
    "Queries",
    "SamField",
    "field_of",
    "static_nodes",
]

# Fewer pairs than this are computed on one thread whatever ``workers`` says: a pool of two
# costs ~0.4 ms, and this many pairs about 12 ms (a swarm's replan: 450,000 at 200 drones)
THREADED_PAIRS = 50_000
THREADED_POINTS = 512  # the fewest points a thread's share of the entries is worth


@dataclass(frozen=True)
class Queries:
    """Query points as the graph sees them: where each joins it (``eff``: itself, or its
    radial escape point ``esc``, NaN when none, ``esc_len`` long), whether it can
    (``reachable``), and its entries onto the circles (``ent``, the tuple ``_search``
    describes)."""

    pts: np.ndarray
    eff: np.ndarray
    esc: np.ndarray
    esc_len: np.ndarray
    reachable: np.ndarray
    ent: tuple[np.ndarray, ...]
    side: np.ndarray  # per entry: 0 the tangent at +alpha (or the point on the circle), 1 -alpha
    labels: np.ndarray  # per point: equal when the graph joins two points (``components``)

    def __len__(self) -> int:
        return int(self.pts.shape[0])

    @property
    def entry_count(self) -> int:
        """How many entries all the points have together."""
        return int(self.ent[0][-1])


NO_DISK = np.zeros((0, 3))
"""``EntryDelta.added`` / ``removed`` when no disk was."""


@dataclass(frozen=True)
class EntryDelta:
    """What changed since points had their entries ``old_*`` (CSR by point, circles in the
    old numbering): ``new_to_old`` maps each circle to its old index (-1: new), ``was_full``
    marks circles that were inside another disk (or new), ``added`` / ``removed`` are the
    buffered disks that came and went ((k, 3) of ``(x, y, r)``, ``NO_DISK`` for none), and ``redo`` the
    points to test in full (their escape changed). ``old_ang`` and ``old_len`` are the old
    entries' angles and lengths: an entry no disk added can meet is kept as it was."""

    redo: np.ndarray
    old_ptr: np.ndarray
    old_circ: np.ndarray
    old_ang: np.ndarray
    old_len: np.ndarray
    old_side: np.ndarray
    new_to_old: np.ndarray
    was_full: np.ndarray
    added: np.ndarray
    removed: np.ndarray


def _disks(sams: Sequence[tuple[float, float, float]]) -> tuple[np.ndarray, ...]:
    """Centres, true radii and buffered radii of ``sams``, exact duplicates dropped."""
    arr = np.asarray(list(sams), dtype=float).reshape(-1, 3)
    if arr.size and (not np.all(np.isfinite(arr)) or np.any(arr[:, 2] < 0.0)):
        raise PlannerError("SAMs need finite coordinates and non-negative radii")
    # Exact duplicates would each look "contained" in the other and lose all their arcs.
    arr = np.unique(arr, axis=0) if arr.shape[0] > 1 else arr
    radii = np.array([planning_radius(r) for r in arr[:, 2]])
    return np.ascontiguousarray(arr[:, :2]), np.ascontiguousarray(arr[:, 2]), radii


def static_nodes(sams: Sequence[tuple[float, float, float]], workers: int = 1) -> int:
    """The nodes of the tangent graph ``SamField(sams)`` would build, worked out on
    ``workers`` threads. Remembered for the last few SAM sets: every replan's compile checks
    the budgets with it, and the SAMs seldom change between two (60-80 ms of CPU a round at
    500 SAMs). A graph that cannot be large (``STORED_COUNT_NODES``) is counted by building
    it, and the compile that follows the count takes that field (``field_of``): a swarm's
    pop-ups were counted (28 ms) and then built (36 ms)."""
    key = _key(sams)
    m = len(key)
    if 4 * m * max(m - 1, 0) <= STORED_COUNT_NODES:
        return field_of(key, workers).static_nodes
    return _static_nodes(key, workers)


def field_of(sams: Sequence[tuple[float, float, float]], workers: int = 1) -> SamField:
    """The field of ``sams`` (in any order), built on ``workers`` threads, or the one built
    for the same SAMs just before or being built in another thread now (waited for): a
    pop-up's new SAMs were counted and built twice at the same moment on two cores (the
    round's budget check, the table's sync, the safety layer's known field). A field is not
    changed once built."""
    key = _key(sams)
    with _fields_lock:
        building = _fields.get(key)
        mine = building is None
        if building is None:
            building = _fields[key] = Future()
            while len(_fields) > _FIELDS_KEPT:  # the oldest first (one being built stays)
                del _fields[next(iter(_fields))]
        else:
            _fields.move_to_end(key)
    if mine:
        try:
            building.set_result(SamField(key, workers))
        except BaseException as exc:  # whoever waits for it gets it too; the next tries again
            building.set_exception(exc)
            with _fields_lock:
                if _fields.get(key) is building:
                    del _fields[key]
            raise
    return building.result()


# The most nodes a graph counted by building it may have at worst (four bitangents per pair
# of SAMs, two ends each): 700 SAMs; a larger one is counted in O(1) memory.
STORED_COUNT_NODES = 2_000_000
_FIELDS_KEPT = 3  # the fields of the last few SAM sets (the known ones, a what-if's, ...)
_fields: OrderedDict[tuple[tuple[float, float, float], ...], Future[SamField]] = OrderedDict()
_fields_lock = threading.Lock()


def _key(sams: Sequence[tuple[float, float, float]]) -> tuple[tuple[float, float, float], ...]:
    return tuple(sorted((float(x), float(y), float(r)) for x, y, r in sams))


@functools.lru_cache(maxsize=8)
def _static_nodes(sams: tuple[tuple[float, float, float], ...], workers: int) -> int:
    centers, _, radii = _disks(sams)
    return count_static_nodes(centers, radii, build_grid(centers, radii), workers)


class SamField:
    """The SAMs as obstacles: build once, query many.

    The query-independent part of the tangent graph (bitangents between circles and the
    arcs of each circle blocked by other disks) is computed once here.
    """

    def __init__(self, sams: Sequence[tuple[float, float, float]], workers: int = 1) -> None:
        """``workers``: the threads its static graph is built on (the kernels hold no GIL)."""
        self.centers, self.true_radii, self.radii = _disks(sams)
        self.grid = build_grid(self.centers, self.radii)
        self.static = build_static(self.centers, self.radii, self.grid, workers)
        # the last points ``inside_true_many`` was asked about, and its answer: a run's
        # compiles ask about the same targets round after round (12 ms at 5,000 x 500 SAMs)
        self._inside_last: tuple[bytes, np.ndarray] | None = None

    @property
    def static_nodes(self) -> int:
        """Nodes of the static tangent graph (two per clear bitangent): what one row costs."""
        return int(self.static.node_pos.shape[0])

    def geometry(self) -> tuple[np.ndarray, ...]:
        """The disks and the static graph, as the kernels of ``_search`` take them."""
        st = self.static
        return (
            self.centers,
            self.radii,
            st.circ_ptr,
            st.bnd_ang,
            st.bnd_node,
            st.node_pos,
            st.adj,
            st.adj_w,
        )

    # ----- queries --------------------------------------------------------------------

    def inside_true(self, point: Sequence[float]) -> bool:
        """True if ``point`` is strictly inside some TRUE disk (such a target is excluded)."""
        if self.centers.shape[0] == 0:
            return False
        p = np.asarray(point, dtype=float).reshape(1, 2)
        return bool(self._inside_true(p)[0])

    def inside_true_many(self, points: np.ndarray) -> np.ndarray:
        """Bool (n,): each point strictly inside some TRUE disk."""
        pts = np.asarray(points, dtype=float).reshape(-1, 2)
        if self.centers.shape[0] == 0:
            return np.zeros(pts.shape[0], dtype=bool)
        key = pts.tobytes()
        last = self._inside_last
        if last is not None and last[0] == key:
            return last[1].copy()
        inside = self._inside_true(pts)
        self._inside_last = (key, inside.copy())
        return inside

    def _inside_true(self, pts: np.ndarray) -> np.ndarray:
        # A hair of tolerance so a point computed to lie on the true circle is not excluded.
        # Through the grid of the buffered disks, which cover the true ones: a point tests
        # the disks of its own cell (5,000 targets x 500 SAMs all-against-all: 30 ms of a
        # replan's compile, each round's targets being a few fewer than the last's).
        return inside_any(pts, self.centers, self.true_radii, TRUE_TOL, self.grid)

    def shortest_path(self, p: Sequence[float], q: Sequence[float]) -> Path | None:
        """Shortest SAM-avoiding path from p to q, or None if q is unreachable from p."""
        pts = np.array([p, q], dtype=float).reshape(2, 2)
        pp, qq = (float(pts[0, 0]), float(pts[0, 1])), (float(pts[1, 0]), float(pts[1, 1]))
        if pp == qq:
            return Path.point(pp)
        if self.centers.shape[0] == 0:
            return Path((Line(pp, qq),), math.hypot(qq[0] - pp[0], qq[1] - pp[1]))
        queries = self.queries(pts)
        return self.leg(queries, 0, 1)

    def all_pairs(self, points: np.ndarray, workers: int = 1, *, lazy: bool = False) -> PathTable:
        """Shortest SAM-avoiding distances between all ``points`` (n, 2); paths are lazy.

        ``workers`` threads compute the rows together (the kernels release the GIL). With
        ``lazy``, the table is computed when its ``dist`` is first read, and ``rows`` gives
        the distances from a few points without it."""
        pts = np.asarray(points, dtype=float).reshape(-1, 2)
        n = pts.shape[0]
        if n and not np.all(np.isfinite(pts)):
            raise PlannerError("query points must be finite")
        if self.centers.shape[0] == 0 or n == 0:
            diff = pts[:, None, :] - pts[None, :, :]
            return PathTable(pts, np.hypot(diff[..., 0], diff[..., 1]), None)
        queries = self.queries(pts, workers)

        def fill() -> np.ndarray:
            dist = np.empty((n, n), dtype=np.float64)
            self.fill_upper(queries, dist, np.arange(n, dtype=np.int64), workers)
            finish(dist, queries.pts, queries.esc_len, queries.reachable)
            return dist

        legs = FieldLegs(self, queries)
        if not lazy:
            return PathTable(pts, fill(), legs)
        return PathTable(pts, None, legs, fill=fill, rows=lambda nodes: self.rows(queries, nodes))

    def rows(self, queries: Queries, nodes: np.ndarray) -> np.ndarray:
        """(len(nodes), n): the distances from ``nodes`` to every point of ``queries``, as
        ``all_pairs`` would give them (escapes added, inf where unreachable, 0 between
        identical points)."""
        n = len(queries)
        k = nodes.shape[0]
        dests = np.tile(np.arange(n, dtype=np.int64), k)
        graph = self.pairs(queries, nodes, np.arange(0, (k + 1) * n, n, dtype=np.int64), dests)
        out = graph.reshape(k, n)
        both = queries.reachable[nodes][:, None] & queries.reachable[None, :]
        out = np.where(
            both, out + queries.esc_len[nodes][:, None] + queries.esc_len[None, :], np.inf
        )
        same = np.all(queries.pts[nodes][:, None, :] == queries.pts[None, :, :], axis=2)
        out[same] = 0.0
        return out

    def fill_upper(
        self,
        queries: Queries,
        mat: np.ndarray,
        sources: np.ndarray,
        workers: int = 1,
        limits: np.ndarray | None = None,
    ) -> None:
        """``mat[s, s+1:]`` for each of ``sources``: graph distances (escapes not added; the
        shortest up to ``limits[s]``, km, a way's length or inf beyond: ``_search._row``)."""
        common = (
            queries.eff,
            queries.reachable,
            queries.labels,
            queries.ent,
            self.geometry(),
            self.grid,
            _limits(limits, len(queries)),
        )
        pairs = int((mat.shape[0] - 1 - sources).sum()) if sources.size else 0
        if workers <= 1 or sources.size < 2 or pairs < THREADED_PAIRS:
            upper_rows(sources, mat, *common)
            return
        # Interleaved shares: early sources have long rows, late ones short.
        shares = [sources[w::workers] for w in range(workers)]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for done in [pool.submit(upper_rows, share, mat, *common) for share in shares]:
                done.result()

    def pairs(
        self,
        queries: Queries,
        sources: np.ndarray,
        dests_ptr: np.ndarray,
        dests: np.ndarray,
        workers: int = 1,
        limits: np.ndarray | None = None,
    ) -> np.ndarray:
        """Graph distances from ``sources[i]`` to ``dests[dests_ptr[i]:dests_ptr[i+1]]``
        (flat, like ``dests``; escapes not added; the shortest up to the source's
        ``limits``, as ``fill_upper``); ``workers`` threads share the sources."""
        out = np.empty(dests.shape[0], dtype=np.float64)
        if not dests.shape[0]:
            return out
        common = (queries.eff, queries.reachable, queries.labels, queries.ent)
        geometry = (self.geometry(), self.grid, _limits(limits, len(queries)))

        def run(lo: int, hi: int) -> None:
            ptr = dests_ptr[lo : hi + 1]
            part = slice(int(ptr[0]), int(ptr[-1]))
            pair_rows(sources[lo:hi], ptr - ptr[0], dests[part], out[part], *common, *geometry)

        if workers <= 1 or sources.size < 2 or dests.shape[0] < THREADED_PAIRS:
            run(0, sources.size)
            return out
        # Contiguous shares of about equal pairs (each source costs a search, then its pairs).
        weight = np.diff(dests_ptr) + max(1, dests.shape[0] // max(sources.size, 1))
        cuts = np.searchsorted(np.cumsum(weight), np.linspace(0, weight.sum(), workers + 1)[1:-1])
        bounds = [0, *(int(c) for c in cuts), sources.size]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            jobs = [pool.submit(run, a, b) for a, b in zip(bounds, bounds[1:]) if b > a]
            for job in jobs:
                job.result()
        return out

    def queries(self, points: np.ndarray, workers: int = 1) -> Queries:
        """Escapes, reachability and entries of ``points`` (n, 2), the entries on
        ``workers`` threads."""
        pts = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 2)
        eff, esc, reachable = self.escape_points(pts)
        esc_len = np.where(
            np.isnan(esc[:, 0]), 0.0, np.hypot(esc[:, 0] - pts[:, 0], esc[:, 1] - pts[:, 1])
        )
        ent, side = self.entries(eff, reachable, workers=workers)
        return Queries(pts, eff, esc, esc_len, reachable, ent, side, self.labels(ent))

    def labels(self, ent: tuple[np.ndarray, ...]) -> np.ndarray:
        """Per query point of ``ent``, the label of the part of the graph it joins."""
        st = self.static
        return np.asarray(components(ent[0], ent[1], ent[4], ent[5], st.circ_ptr, st.adj))

    def entries(
        self,
        eff: np.ndarray,
        reachable: np.ndarray,
        delta: EntryDelta | None = None,
        limits: np.ndarray | None = None,
        workers: int = 1,
    ) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
        """The entries of the effective points ``eff`` that are ``reachable`` (the tuple
        ``_search`` describes) and each one's side; with ``delta``, from the entries the same
        points had in the field before SAMs changed (see ``EntryDelta``: those entries had
        the same ``limits``); none longer than its point's ``limits`` (km; None: any).
        ``workers`` threads share the points."""
        st = self.static
        n = eff.shape[0]
        if delta is None:
            none_i = np.zeros(0, dtype=np.int64)
            delta = EntryDelta(
                redo=np.ones(n, dtype=bool),
                old_ptr=np.zeros(n + 1, dtype=np.int64),
                old_circ=none_i,
                old_ang=np.zeros(0),
                old_len=np.zeros(0),
                old_side=none_i,
                new_to_old=np.full(self.centers.shape[0], -1, dtype=np.int64),
                was_full=np.ones(self.centers.shape[0], dtype=bool),
                added=NO_DISK,
                removed=NO_DISK,
            )
        limit = _limits(limits, n)

        def share(lo: int, hi: int) -> tuple[np.ndarray, ...]:
            # a point's entries are its own: a share of the points, with its old entries
            # where they are in the pool (``old_ptr`` from the share's first point on)
            return query_entries(
                eff[lo:hi],
                reachable[lo:hi],
                self.centers,
                self.radii,
                st.full,
                self.grid,
                delta.redo[lo:hi],
                delta.old_ptr[lo : hi + 1],
                delta.old_circ,
                delta.old_ang,
                delta.old_len,
                delta.old_side,
                delta.new_to_old,
                delta.was_full,
                delta.added,
                delta.removed,
                limit[lo:hi],
            )

        # each point tests every circle: a swarm's 7,000 points x 500 SAMs, 80 ms on one thread
        parts = max(1, min(workers, n // THREADED_POINTS))
        pieces = in_shares(share, even_cuts(n, parts))
        if len(pieces) == 1:
            ptr, circ, ang, length, side = pieces[0]
        else:
            shift = np.cumsum([0] + [p[0][-1] for p in pieces[:-1]])
            ptr = np.concatenate(
                [np.zeros(1, np.int64), *(p[0][1:] + k for p, k in zip(pieces, shift))]
            )
            circ, ang, length, side = (np.concatenate([p[c] for p in pieces]) for c in range(1, 5))
        hi, link, link_w, off = entry_links(
            circ, ang, self.radii, st.circ_ptr, st.bnd_ang, st.bnd_node
        )
        return (ptr, circ, ang, length, hi, link, link_w, off), side

    def escape_points(self, pts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Effective graph position per query, its escape point (NaN if none), reachability."""
        c, r = self.centers, self.radii
        n = pts.shape[0]
        eff = pts.copy()
        esc = np.full((n, 2), np.nan)
        if c.shape[0] == 0:
            return eff, esc, np.ones(n, dtype=bool)
        # through the grid (it covers the buffered disks, so the true ones and a TOL beyond
        # the buffered): the dense points x disks tests took 60 ms at 5,000 points x 500 SAMs
        reachable = ~inside_any(pts, c, self.true_radii, TRUE_TOL, self.grid)
        # Points within TOL outside a circle are "escaped" too (a tiny projection), so that
        # every graph node on a circle sits exactly on it and pieces join exactly.
        near = inside_any(pts, c, r, -TOL, self.grid)
        for i in np.nonzero(reachable & near)[0]:
            best: np.ndarray | None = None
            best_len = math.inf
            for k in np.nonzero(strictly_inside(pts[i : i + 1], c, r, -TOL)[0])[0]:
                v = pts[i] - c[k]
                d = math.hypot(v[0], v[1])
                if d == 0.0:  # only possible for a zero-radius SAM: any direction is radial
                    v, d = np.array([1.0, 0.0]), 1.0
                e = c[k] + v * (r[k] / d)
                others = np.arange(c.shape[0]) != k
                # The escape point must be free and the way out must not enter a true disk.
                if strictly_inside(e[None, :], c[others], r[others], TOL).any():
                    continue
                tol = TRUE_TOL
                if not segments_clear(pts[i : i + 1], e[None, :], c, self.true_radii, tol)[0]:
                    continue
                if r[k] - d < best_len:
                    best, best_len = e, r[k] - d
            if best is None:
                reachable[i] = False
            else:
                eff[i] = best
                esc[i] = best
        return eff, esc, reachable

    # ----- one leg's geometry ---------------------------------------------------------

    def leg(self, queries: Queries, i: int, j: int) -> Path | None:
        """The shortest path from query ``i`` to query ``j`` of ``queries`` (None if none)."""
        p_i = (float(queries.pts[i, 0]), float(queries.pts[i, 1]))
        p_j = (float(queries.pts[j, 0]), float(queries.pts[j, 1]))
        if p_i == p_j:
            return Path.point(p_i)
        if not (queries.reachable[i] and queries.reachable[j]):
            return None
        if self.centers.shape[0] == 0:
            return Path((Line(p_i, p_j),), math.hypot(p_j[0] - p_i[0], p_j[1] - p_i[1]))
        kind, e, f, side, nodes, dirs = leg(
            i, j, queries.eff, queries.ent, self.geometry(), self.grid
        )
        if kind < 0:
            return None
        pieces: list[Piece] = []
        if not np.isnan(queries.esc[i, 0]):
            pieces.append(Line(p_i, _xy(queries.esc[i])))
        a, b = _xy(queries.eff[i]), _xy(queries.eff[j])
        if kind == 0:
            pieces.append(Line(a, b))
        else:
            circ, ang = queries.ent[1], queries.ent[2]
            pieces.append(Line(a, self._on_circle(int(circ[e]), float(ang[e]))))
            if kind == 1:
                pieces.append(self._direct_arc(queries, e, f))
            else:
                pieces.extend(self._through(queries, e, f, side, nodes, dirs))
            pieces.append(Line(self._on_circle(int(circ[f]), float(ang[f])), b))
        if not np.isnan(queries.esc[j, 0]):
            pieces.append(Line(_xy(queries.esc[j]), p_j))
        pieces = _tidy(pieces)
        return Path(tuple(pieces), float(sum(p.length for p in pieces)))

    def _on_circle(self, k: int, angle: float) -> tuple[float, float]:
        r = float(self.radii[k])
        return (
            float(self.centers[k, 0]) + r * math.cos(angle),
            float(self.centers[k, 1]) + r * math.sin(angle),
        )

    def _arc(self, k: int, start: float, sweep: float) -> Arc:
        return Arc(
            (float(self.centers[k, 0]), float(self.centers[k, 1])),
            float(self.radii[k]),
            start,
            sweep,
        )

    def _direct_arc(self, queries: Queries, e: int, f: int) -> Arc:
        """Along one circle from entry ``e`` to entry ``f``, as ``_search`` measured it."""
        _, circ, ang, _, hi, _, _, off = queries.ent
        k = int(circ[e])
        ea = float(ang[e])
        if hi[f] < 0:  # a circle without boundaries: the shorter way round
            d = abs(float(off[e]) - float(off[f]))
            if d <= TWO_PI - d:
                return self._arc(k, ea, float(off[f]) - float(off[e]))
            return self._arc(k, ea, -(TWO_PI - d) if off[f] > off[e] else TWO_PI - d)
        return self._arc(k, ea, float(off[f]) - float(off[e]))

    def _through(
        self, queries: Queries, e: int, f: int, side: int, nodes: np.ndarray, dirs: np.ndarray
    ) -> list[Piece]:
        """From entry ``e`` through the static ``nodes`` to entry ``f`` (see ``_search.leg``)."""
        st = self.static
        _, circ, ang, _, _, _, _, _ = queries.ent
        node_ang = st.bnd_ang[st.node_bpos[nodes]]
        out: list[Piece] = []
        ea = float(ang[e])
        first = float(node_ang[0])
        sweep = (first - ea) % TWO_PI if dirs[0] > 0 else -((ea - first) % TWO_PI)
        out.append(self._arc(int(circ[e]), ea, sweep))
        for t in range(1, len(nodes)):
            u, w = int(nodes[t - 1]), int(nodes[t])
            au, aw = float(node_ang[t - 1]), float(node_ang[t])
            if dirs[t] == 0:
                out.append(Line(_xy(st.node_pos[u]), _xy(st.node_pos[w])))
            else:
                sweep = (aw - au) % TWO_PI if dirs[t] > 0 else -((au - aw) % TWO_PI)
                out.append(self._arc(int(st.node_circ[u]), au, sweep))
        last = float(node_ang[-1])
        fa = float(ang[f])
        # The last node is f's high boundary (back round to f clockwise) or its low one.
        sweep = -((last - fa) % TWO_PI) if side == 0 else (fa - last) % TWO_PI
        out.append(self._arc(int(st.node_circ[nodes[-1]]), last, sweep))
        return out


@dataclass(frozen=True)
class FieldLegs:
    """The legs between the points of ``queries`` in ``field`` (a table's ``LegSource``)."""

    field: SamField
    queries: Queries

    def leg(self, i: int, j: int) -> Path | None:
        """The shortest path from point ``i`` to point ``j``."""
        return self.field.leg(self.queries, i, j)


def _xy(p: np.ndarray) -> tuple[float, float]:
    return (float(p[0]), float(p[1]))


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


def _limits(limits: np.ndarray | None, n: int) -> np.ndarray:
    """Per point, the km its ways are searched to (inf: all the way)."""
    if limits is None:
        return np.full(n, np.inf)
    return np.ascontiguousarray(limits, dtype=np.float64)
