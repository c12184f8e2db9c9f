"""The tangent visibility graph of a SAM field: its nodes and edges while it is built, and
the final deduplicated edge list (lines, and arcs between consecutive nodes of a circle)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import DTypeLike

from planner.geometry.margins import TWO_PI

__all__ = ["Edges", "TangentGraph", "build_edges", "concat_blocks"]


class TangentGraph:
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
        """Add points (k, 2) as nodes; returns their ids."""
        ids = np.arange(self.n_nodes, self.n_nodes + pts.shape[0])
        self.pos.append(np.asarray(pts, dtype=float).reshape(-1, 2))
        self.n_nodes += pts.shape[0]
        return ids

    def add_members(self, nodes: np.ndarray, circ: np.ndarray, ang: np.ndarray) -> None:
        """Record that ``nodes`` lie on circles ``circ`` at angles ``ang`` (arcs join them later)."""
        self.m_node.append(np.asarray(nodes, dtype=np.int64))
        self.m_circ.append(np.asarray(circ, dtype=np.int64))
        # Normalise to [0, 2pi): arcs are built from the sorted order of these angles.
        a = np.mod(np.asarray(ang, dtype=float), TWO_PI)
        self.m_ang.append(np.where(a >= TWO_PI, 0.0, a))

    def add_lines(self, u: np.ndarray, v: np.ndarray) -> None:
        """Add straight edges ``u[i] - v[i]`` (already checked clear of every disk)."""
        self.l_u.append(np.asarray(u, dtype=np.int64))
        self.l_v.append(np.asarray(v, dtype=np.int64))


def concat_blocks(
    blocks: list[np.ndarray], dtype: DTypeLike, shape_tail: tuple[int, ...] = ()
) -> np.ndarray:
    """The blocks concatenated as one array of ``dtype`` (an empty ``(0, *shape_tail)`` if none)."""
    if not blocks:
        return np.zeros((0, *shape_tail), dtype=dtype)
    return np.concatenate(blocks).astype(dtype, copy=False)


@dataclass
class Edges:
    """Deduplicated undirected edges (u < v) with their geometry, for reconstruction."""

    u: np.ndarray
    v: np.ndarray
    w: np.ndarray
    circle: np.ndarray  # -1 for a line
    start_angle: np.ndarray  # arcs: angle at node u
    sweep: np.ndarray  # arcs: signed sweep from u to v


def build_edges(
    g: TangentGraph, node_pos: np.ndarray, radii: np.ndarray, blocked: list[np.ndarray]
) -> Edges:
    """Line edges (already clearance-checked) plus arcs between consecutive circle nodes.

    ``radii`` are the buffered radii of the circles and ``blocked`` their blocked-interval
    midpoints (see ``SamField``); an arc is kept only if no blocked interval lies on it.
    """
    lu, lv = concat_blocks(g.l_u, np.int64), concat_blocks(g.l_v, np.int64)
    lw = np.hypot(*(node_pos[lv] - node_pos[lu]).T) if lu.size else np.zeros(0)
    mn, mc, ma = (
        concat_blocks(g.m_node, np.int64),
        concat_blocks(g.m_circ, np.int64),
        concat_blocks(g.m_ang, float),
    )
    au: list[np.ndarray] = []
    av: list[np.ndarray] = []
    ac: list[np.ndarray] = []
    a0: list[np.ndarray] = []
    asw: list[np.ndarray] = []
    order = np.lexsort((ma, mc))
    mn, mc, ma = mn[order], mc[order], ma[order]
    bounds = np.searchsorted(mc, np.arange(radii.shape[0] + 1))
    for k in range(radii.shape[0]):
        lo, hi = bounds[k], bounds[k + 1]
        if hi - lo < 2:
            continue
        blocked_k = blocked[k]
        if blocked_k.size == 1 and np.isnan(blocked_k[0]):
            continue
        nodes, angs = mn[lo:hi], ma[lo:hi]
        # Consecutive pairs in CCW order, including the wrap-around from last to first.
        nxt = np.roll(np.arange(hi - lo), -1)
        sweep = angs[nxt] - angs
        sweep[-1] += TWO_PI
        ok = np.ones(hi - lo, dtype=bool)
        for mid in blocked_k:
            # Is the blocked interval's midpoint strictly within the CCW arc?
            off = np.mod(mid - angs, TWO_PI)
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
    w[arc_mask] = radii[circ[arc_mask]] * np.abs(sweep[arc_mask])
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
    return Edges(u2[first], v2[first], w[first], circ[first], start[first], sweep[first])
