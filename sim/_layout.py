"""Every drone's flight laid out in flat buffers for the kernel.

Per drone ``i``: its path's pieces are columns ``p_lo[i]:p_hi[i]`` of ``P`` (the rows of
``sim.flight``) with ``cur[i]`` the piece it is on, and its waypoints are ``wp_lo[i]:wp_hi[i]``
of ``wp_s`` (arc lengths) and ``wp_t`` (target slots) with ``wp_cur[i]`` the next one to
collect. A new flight is appended (O(its pieces)); the buffers are compacted when full, so a
command costs the same with 10 drones or 1000.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from sim._kernels import FloatArray, IntArray, put_columns
from sim.flight import N_PIECE_ROWS, Flight

__all__ = ["FlightLayout"]


class FlightLayout:
    """The kernel's view of ``n`` drones' flights; see the module's docstring."""

    def __init__(self, n: int) -> None:
        self.cur: IntArray = np.zeros(n, dtype=np.int64)
        self.p_lo: IntArray = np.zeros(n, dtype=np.int64)
        self.p_hi: IntArray = np.zeros(n, dtype=np.int64)
        self.P: FloatArray = np.zeros((N_PIECE_ROWS, 0))
        self.p_used = 0
        self.wp_s: FloatArray = np.zeros(0)
        self.wp_t: IntArray = np.zeros(0, dtype=np.int64)
        self.w_used = 0
        self.wp_cur: IntArray = np.zeros(n, dtype=np.int64)
        self.wp_lo: IntArray = np.zeros(n, dtype=np.int64)
        self.wp_hi: IntArray = np.zeros(n, dtype=np.int64)

    def clear(self, i: int) -> None:
        """Drone ``i`` has no flight: nothing left to fly or collect."""
        self.p_hi[i] = self.cur[i] = self.p_lo[i]
        self.wp_hi[i] = self.wp_cur[i] = self.wp_lo[i]

    def place(
        self, ids: Sequence[int], flights: Sequence[Flight | None], t_index: Mapping[str, int]
    ) -> None:
        """Append the new flights ``flights[i]`` of the drones ``ids`` (each once), all at
        once; compact the buffers if they are full. Waypoints must name targets of
        ``t_index``."""
        laid = [flights[i] for i in ids]
        assert all(flight is not None for flight in laid)
        tables = [flight.pieces for flight in laid if flight is not None]
        ks = np.array([table.shape[1] for table in tables], dtype=np.int64)
        points = [point for flight in laid if flight is not None for point in flight.waypoints]
        ws = np.array([len(flight.waypoints) for flight in laid if flight is not None])
        k, w = int(ks.sum()), len(points)
        at = np.array(ids, dtype=np.int64)
        if self.p_used + k > self.P.shape[1] or self.w_used + w > self.wp_s.size:
            self.cur[at] = self.wp_cur[at] = -1  # laid out fresh
            self._compact(flights, t_index)
            return
        lo, wlo = self.p_used, self.w_used
        columns = tables[0] if len(tables) == 1 else np.concatenate(tables, axis=1)
        put_columns(self.P, lo, columns)  # holds the GIL: see ``put_columns``
        p_hi = lo + np.cumsum(ks)
        self.p_lo[at] = self.cur[at] = p_hi - ks
        self.p_hi[at] = p_hi
        if w:
            self.wp_s[wlo : wlo + w] = [s for _, s in points]
            self.wp_t[wlo : wlo + w] = [t_index[target_id] for target_id, _ in points]
        wp_hi = wlo + np.cumsum(ws, dtype=np.int64)
        self.wp_lo[at] = self.wp_cur[at] = wp_hi - ws
        self.wp_hi[at] = wp_hi
        self.p_used += k
        self.w_used += w

    def _compact(self, flights: Sequence[Flight | None], t_index: Mapping[str, int]) -> None:
        """Lay every live flight out afresh, with room to grow, keeping the cursors (whole
        arrays at once: a re-tasked swarm of 1,000 drones compacts on the tick)."""
        live = [f for f in flights if f is not None]
        ks = np.array([0 if f is None else f.pieces.shape[1] for f in flights], dtype=np.int64)
        ws = np.array([0 if f is None else len(f.waypoints) for f in flights], dtype=np.int64)
        live_p, live_w = int(ks.sum()), int(ws.sum())
        P = np.zeros((N_PIECE_ROWS, max(64, 2 * live_p)))
        wp_s = np.zeros(max(64, 2 * live_w))
        wp_t = np.zeros(wp_s.size, dtype=np.int64)
        if live_p:
            P[:, :live_p] = np.concatenate([f.pieces for f in live], axis=1)
        if live_w:
            wp_s[:live_w] = [s for f in live for _, s in f.waypoints]
            wp_t[:live_w] = [t_index[t] for f in live for t, _ in f.waypoints]
        p_hi, wp_hi = np.cumsum(ks), np.cumsum(ws)
        p_lo, wp_lo = p_hi - ks, wp_hi - ws
        old = self.cur
        cur = np.where(
            old < 0, p_lo, np.minimum(p_lo + old - self.p_lo, np.maximum(p_lo, p_hi - 1))
        )
        old = self.wp_cur
        wp_cur = np.where(old < 0, wp_lo, np.minimum(wp_lo + old - self.wp_lo, wp_hi))
        self.P, self.p_lo, self.p_hi, self.cur, self.p_used = P, p_lo, p_hi, cur, live_p
        self.wp_s, self.wp_t, self.w_used = wp_s, wp_t, live_w
        self.wp_lo, self.wp_hi, self.wp_cur = wp_lo, wp_hi, wp_cur
