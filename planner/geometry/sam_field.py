"""``SamField``: the SAMs as obstacles, and the exact shortest paths around them.

The query-independent part of the tangent visibility graph (bitangents between the buffered
circles, the arcs of each circle blocked by other disks) is built once per field; each
query adds its points, their tangents to every circle and the direct segments, then one
Dijkstra call from every query point gives the whole distance table.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra

from planner.errors import PlannerError
from planner.geometry._disks import segments_clear, strictly_inside
from planner.geometry._graph import TangentGraph, build_edges, concat_blocks
from planner.geometry.margins import TOL, TRUE_TOL, planning_radius
from planner.geometry.path import Path
from planner.geometry.pieces import Line
from planner.geometry.table import PathTable

__all__ = ["SamField"]


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
        self._bitan = (
            self._bitangents()
            if m > 1
            else (np.zeros((0, 2)), np.zeros((0, 2)), np.zeros(0, int), np.zeros(0, int))
        )

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
        inside = np.asarray(strictly_inside(pts, c, r, TOL).any(axis=1))
        keep = ~inside[: a.shape[0]] & ~inside[a.shape[0] :]
        keep &= segments_clear(a, b, c, r)
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
        return np.asarray(strictly_inside(pts, self.centers, self.true_radii, TRUE_TOL).any(axis=1))

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
        # Points within TOL outside a circle are "escaped" too (a tiny projection), so that
        # every graph node on a circle sits exactly on it and pieces join exactly.
        in_buf = strictly_inside(pts, c, r, -TOL)
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

    def _all_pairs_graph(self, pts: np.ndarray, euclid: np.ndarray) -> PathTable:
        c, r = self.centers, self.radii
        eff, esc, reachable = self._escape_points(pts)
        g = TangentGraph()
        qnode = g.add_nodes(eff)
        ridx = np.nonzero(reachable)[0]
        q_eff = eff[ridx]

        # Query nodes that sit on a buffered circle (escaped, or given on it) join its arcs.
        dq = np.hypot(q_eff[:, None, 0] - c[None, :, 0], q_eff[:, None, 1] - c[None, :, 1])
        on = np.abs(dq - r[None, :]) <= TOL
        qi, ki = np.nonzero(on)
        if qi.size:
            ang = np.arctan2(q_eff[qi, 1] - c[ki, 1], q_eff[qi, 0] - c[ki, 0])
            g.add_members(qnode[ridx[qi]], ki, ang)

        # Point-to-point segments between reachable queries.
        if ridx.size > 1:
            a_i, b_i = np.triu_indices(ridx.size, 1)
            ok = segments_clear(q_eff[a_i], q_eff[b_i], c, r)
            g.add_lines(qnode[ridx[a_i[ok]]], qnode[ridx[b_i[ok]]])

        # Tangents from each reachable query to each circle it lies outside of.
        qi, ki = np.nonzero(dq > r[None, :] + TOL)
        if qi.size:
            base = np.arctan2(q_eff[qi, 1] - c[ki, 1], q_eff[qi, 0] - c[ki, 0])
            alpha = np.arccos(np.clip(r[ki] / dq[qi, ki], -1.0, 1.0))
            ang = np.concatenate((base + alpha, base - alpha))
            kk = np.concatenate((ki, ki))
            qq = np.concatenate((qi, qi))
            tp = c[kk] + r[kk, None] * np.column_stack((np.cos(ang), np.sin(ang)))
            keep = ~strictly_inside(tp, c, r, TOL).any(axis=1)
            keep &= segments_clear(q_eff[qq], tp, c, r)
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

        node_pos = concat_blocks(g.pos, float, (2,))
        edges = build_edges(g, node_pos, self.radii, self._blocked)
        N = node_pos.shape[0]
        graph = csr_matrix(
            (
                np.concatenate((edges.w, edges.w)),
                (np.concatenate((edges.u, edges.v)), np.concatenate((edges.v, edges.u))),
            ),
            shape=(N, N),
        )
        # One Dijkstra call for all sources (explicit zero weights count as edges in csgraph).
        gd, pred = dijkstra(graph, directed=True, indices=qnode, return_predecessors=True)
        dist = gd[:, qnode]
        # Add the radial escape legs at both ends.
        esc_len = np.where(
            np.isnan(esc[:, 0]), 0.0, np.hypot(esc[:, 0] - pts[:, 0], esc[:, 1] - pts[:, 1])
        )
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
