"""The query-independent part of the tangent visibility graph (numba, ``nogil``).

Nodes are the endpoints of the clear bitangents between buffered circles; each node has
exactly one line edge (its bitangent's other end) and arc edges to its neighbours on its
circle. Each circle keeps its *boundaries* sorted by angle: its nodes, and the midpoints of
the arcs other disks cover ("blocked" marks, node -1). An arc joins two consecutive
boundaries that are both nodes; an arc never crosses a blocked mark. Every node and every
query entry is a free point (never inside another disk), so a covered arc lies wholly between
two consecutive free points or not at all between them: its midpoint stands for all of it.
A circle entirely inside another disk is *full*: it has no boundaries and takes no entries.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from planner._jit import njit
from planner.geometry._disks import DiskGrid, point_in_disk, segment_blocked
from planner.geometry.margins import TOL, TWO_PI
from planner.geometry.shares import in_shares, triangle_cuts

__all__ = ["THREADED_DISKS", "StaticGraph", "build_static", "count_static_nodes"]

THREADED_DISKS = 128  # the fewest circles a thread's share of the bitangents is worth


class StaticGraph(NamedTuple):
    """The static graph's arrays (see the module's docstring)."""

    full: np.ndarray  # (m,) bool: circle inside another disk
    circ_ptr: np.ndarray  # (m+1,) boundaries of circle k: circ_ptr[k]:circ_ptr[k+1]
    bnd_ang: np.ndarray  # (B,) angle in [0, 2pi), ascending within a circle
    bnd_node: np.ndarray  # (B,) node id, or -1 for a blocked mark
    node_pos: np.ndarray  # (V, 2)
    node_circ: np.ndarray  # (V,)
    node_bpos: np.ndarray  # (V,) its index in bnd_*
    adj: np.ndarray  # (V, 3): the other end of its bitangent, the next node CCW, CW (or -1)
    adj_w: np.ndarray  # (V, 3): the lengths of those edges


@njit(cache=True, nogil=True)
def _norm_angle(a: float) -> float:
    a = a % TWO_PI
    return 0.0 if a >= TWO_PI else a


@njit(cache=True, nogil=True)
def _blocked_marks(
    centers: np.ndarray, radii: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per circle, the midpoint angles of the arcs other disks cover (CSR), and ``full``."""
    m = centers.shape[0]
    full = np.zeros(m, np.bool_)
    count = np.zeros(m + 1, np.int64)
    for k in range(m):
        for j in range(m):
            if j == k:
                continue
            d = math.hypot(centers[j, 0] - centers[k, 0], centers[j, 1] - centers[k, 1])
            if d >= radii[k] + radii[j]:
                continue  # disjoint or externally tangent
            if d + radii[k] <= radii[j]:
                if j > k and d + radii[j] <= radii[k]:
                    # each inside the other: one circle to rounding (centres 1e-19 km apart
                    # are not deduplicated), of which the first keeps its arcs (both full
                    # left no way round them at all)
                    continue
                full[k] = True  # circle k inside disk j
                break
            if d + radii[j] <= radii[k]:
                continue  # disk j inside circle k: never touches circle k
            count[k + 1] += 1
        if full[k]:
            count[k + 1] = 0
    ptr = np.cumsum(count)
    mids = np.empty(ptr[-1], np.float64)
    for k in range(m):
        if full[k]:
            continue
        at = ptr[k]
        for j in range(m):
            if j == k:
                continue
            dx = centers[j, 0] - centers[k, 0]
            dy = centers[j, 1] - centers[k, 1]
            d = math.hypot(dx, dy)
            if d >= radii[k] + radii[j] or d + radii[j] <= radii[k]:
                continue
            mids[at] = _norm_angle(math.atan2(dy, dx))
            at += 1
    return ptr, mids, full


@njit(cache=True, nogil=True)
def _grow(a: np.ndarray, size: int) -> np.ndarray:
    if size < a.shape[0]:
        return a
    out = np.empty((2 * a.shape[0] + 16,) + a.shape[1:], a.dtype)
    out[: a.shape[0]] = a
    return out


@njit(cache=True, nogil=True)
def _bitangents(
    centers: np.ndarray,
    radii: np.ndarray,
    full: np.ndarray,
    lo: int,
    hi: int,
    x0: float,
    y0: float,
    cell: float,
    nx: int,
    ny: int,
    ptr: np.ndarray,
    disks: np.ndarray,
    store: bool,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Clear bitangents of the circles ``i`` in ``lo:hi`` with those after them: endpoints
    (E, 4) as (ax, ay, bx, by), circles (E, 2) and E, in the order of ``i``; with ``store``
    False only E (no arrays grow: what a graph would cost, before building it)."""
    m = centers.shape[0]
    seg = np.empty((64, 4), np.float64)
    circ = np.empty((64, 2), np.int64)
    e = 0
    stamp = np.zeros(m, np.int64)
    mark = 0
    for i in range(lo, hi):
        if full[i]:
            continue
        for j in range(i + 1, m):
            if full[j]:
                continue
            dx = centers[j, 0] - centers[i, 0]
            dy = centers[j, 1] - centers[i, 1]
            d = math.hypot(dx, dy)
            if d <= 0.0:
                continue
            base = math.atan2(dy, dx)
            # Outer tangents: t_i = c_i + r_i u, t_j = c_j + r_j u with u.(c_j - c_i) = r_i - r_j.
            # Inner tangents: t_j = c_j - r_j u with u.(c_j - c_i) = r_i + r_j.
            for kind in range(2):
                if kind == 0:
                    if not abs(radii[i] - radii[j]) < d:
                        continue  # one contains the other
                    cosv = (radii[i] - radii[j]) / d
                    sign_j = 1.0
                else:
                    if not d >= radii[i] + radii[j]:
                        continue  # overlapping: no inner tangent
                    cosv = (radii[i] + radii[j]) / d
                    sign_j = -1.0
                if abs(cosv) > 1.0:
                    continue
                alpha = math.acos(min(1.0, max(-1.0, cosv)))
                for s in (1.0, -1.0):
                    ang = base + s * alpha
                    ux = math.cos(ang)
                    uy = math.sin(ang)
                    ax = centers[i, 0] + radii[i] * ux
                    ay = centers[i, 1] + radii[i] * uy
                    bx = centers[j, 0] + sign_j * radii[j] * ux
                    by = centers[j, 1] + sign_j * radii[j] * uy
                    # Endpoints inside another disk are useless (and unsafe); the segment
                    # must be clear.
                    if (
                        point_in_disk(
                            ax, ay, centers, radii, TOL, -1, x0, y0, cell, nx, ny, ptr, disks
                        )
                        >= 0
                    ):
                        continue
                    if (
                        point_in_disk(
                            bx, by, centers, radii, TOL, -1, x0, y0, cell, nx, ny, ptr, disks
                        )
                        >= 0
                    ):
                        continue
                    mark += 1
                    if segment_blocked(
                        ax,
                        ay,
                        bx,
                        by,
                        centers,
                        radii,
                        TOL,
                        -1,
                        x0,
                        y0,
                        cell,
                        nx,
                        ny,
                        ptr,
                        disks,
                        stamp,
                        mark,
                    ):
                        continue
                    if store:
                        seg = _grow(seg, e)
                        circ = _grow(circ, e)
                        seg[e, 0] = ax
                        seg[e, 1] = ay
                        seg[e, 2] = bx
                        seg[e, 3] = by
                        circ[e, 0] = i
                        circ[e, 1] = j
                    e += 1
    if not store:
        return seg[:0].copy(), circ[:0].copy(), e
    return seg[:e].copy(), circ[:e].copy(), e


@njit(cache=True, nogil=True)
def _assemble(
    centers: np.ndarray,
    radii: np.ndarray,
    mark_ptr: np.ndarray,
    marks: np.ndarray,
    full: np.ndarray,
    seg: np.ndarray,
    circ: np.ndarray,
) -> tuple[
    np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray
]:
    m = centers.shape[0]
    e = seg.shape[0]
    v = 2 * e
    node_pos = np.empty((v, 2), np.float64)
    node_circ = np.empty(v, np.int64)
    node_ang = np.empty(v, np.float64)
    partner = np.empty(v, np.int64)
    line_len = np.empty(v, np.float64)
    for s in range(e):
        for end in range(2):
            u = 2 * s + end
            x = seg[s, 2 * end]
            y = seg[s, 2 * end + 1]
            k = circ[s, end]
            node_pos[u, 0] = x
            node_pos[u, 1] = y
            node_circ[u] = k
            node_ang[u] = _norm_angle(math.atan2(y - centers[k, 1], x - centers[k, 0]))
            partner[u] = 2 * s + 1 - end
            line_len[u] = math.hypot(seg[s, 2] - seg[s, 0], seg[s, 3] - seg[s, 1])
    count = np.zeros(m + 1, np.int64)
    for u in range(v):
        count[node_circ[u] + 1] += 1
    for k in range(m):
        if not full[k]:
            count[k + 1] += mark_ptr[k + 1] - mark_ptr[k]
    circ_ptr = np.cumsum(count)
    bnd_ang = np.empty(circ_ptr[-1], np.float64)
    bnd_node = np.empty(circ_ptr[-1], np.int64)
    fill = circ_ptr[:-1].copy()
    for u in range(v):
        k = node_circ[u]
        bnd_ang[fill[k]] = node_ang[u]
        bnd_node[fill[k]] = u
        fill[k] += 1
    for k in range(m):
        if full[k]:
            continue
        for t in range(mark_ptr[k], mark_ptr[k + 1]):
            bnd_ang[fill[k]] = marks[t]
            bnd_node[fill[k]] = -1
            fill[k] += 1
    node_bpos = np.empty(v, np.int64)
    for k in range(m):
        lo = circ_ptr[k]
        hi = circ_ptr[k + 1]
        if hi - lo > 1:
            order = np.argsort(bnd_ang[lo:hi], kind="mergesort")
            a = bnd_ang[lo:hi][order]
            b = bnd_node[lo:hi][order]
            bnd_ang[lo:hi] = a
            bnd_node[lo:hi] = b
        for p in range(lo, hi):
            if bnd_node[p] >= 0:
                node_bpos[bnd_node[p]] = p
    # Each node's three edges: its bitangent, and the arcs to the neighbouring boundaries
    # (CCW, CW) when those are nodes (never across a blocked mark).
    adj = np.full((v, 3), -1, np.int64)
    adj_w = np.zeros((v, 3), np.float64)
    for u in range(v):
        adj[u, 0] = partner[u]
        adj_w[u, 0] = line_len[u]
        k = node_circ[u]
        lo = circ_ptr[k]
        hi = circ_ptr[k + 1]
        if hi - lo < 2:
            continue
        p = node_bpos[u]
        nxt = p + 1 if p + 1 < hi else lo
        prv = p - 1 if p > lo else hi - 1
        if bnd_node[nxt] >= 0:
            adj[u, 1] = bnd_node[nxt]
            adj_w[u, 1] = radii[k] * ((bnd_ang[nxt] - bnd_ang[p]) % TWO_PI)
        if bnd_node[prv] >= 0:
            adj[u, 2] = bnd_node[prv]
            adj_w[u, 2] = radii[k] * ((bnd_ang[p] - bnd_ang[prv]) % TWO_PI)
    return circ_ptr, bnd_ang, bnd_node, node_pos, node_circ, node_bpos, adj, adj_w


def build_static(
    centers: np.ndarray, radii: np.ndarray, grid: DiskGrid, workers: int = 1
) -> StaticGraph:
    """The static graph of the buffered disks ``(centers, radii)`` (``grid`` built on them).
    ``workers`` threads share the bitangents' pairs (a swarm's 500 SAMs: 50 ms on one), the
    same graph as one thread's."""
    mark_ptr, marks, full = _blocked_marks(centers, radii)
    m = centers.shape[0]

    def share(lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, int]:
        return _bitangents(centers, radii, full, lo, hi, *grid, True)

    pieces = in_shares(share, triangle_cuts(m, max(1, min(workers, m // THREADED_DISKS))))
    seg = np.concatenate([p[0] for p in pieces])
    circ = np.concatenate([p[1] for p in pieces])
    parts = _assemble(centers, radii, mark_ptr, marks, full, seg, circ)
    return StaticGraph(full, *parts)


def count_static_nodes(
    centers: np.ndarray, radii: np.ndarray, grid: DiskGrid, workers: int = 1
) -> int:
    """The nodes ``build_static`` would make (two per clear bitangent), in O(1) memory, on
    ``workers`` threads."""
    _, _, full = _blocked_marks(centers, radii)
    m = centers.shape[0]

    def share(lo: int, hi: int) -> int:
        return _bitangents(centers, radii, full, lo, hi, *grid, False)[2]

    return 2 * sum(in_shares(share, triangle_cuts(m, max(1, min(workers, m // THREADED_DISKS)))))
