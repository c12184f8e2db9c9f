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

from sim._kernels import FloatArray, IntArray
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

    def place(self, i: int, flights: Sequence[Flight | None], t_index: Mapping[str, int]) -> None:
        """Append drone ``i``'s new flight ``flights[i]`` (compact the buffers if full).
        Its waypoints must name targets of ``t_index``."""
        flight = flights[i]
        assert flight is not None
        pieces = flight.pieces
        k, w = pieces.shape[1], len(flight.waypoints)
        if self.p_used + k > self.P.shape[1] or self.w_used + w > self.wp_s.size:
            self.cur[i] = self.wp_cur[i] = -1  # laid out fresh
            self._compact(flights, t_index)
            return
        lo, wlo = self.p_used, self.w_used
        self.P[:, lo : lo + k] = pieces
        self.p_lo[i], self.p_hi[i], self.cur[i] = lo, lo + k, lo
        for n, (target_id, s) in enumerate(flight.waypoints):
            self.wp_s[wlo + n] = s
            self.wp_t[wlo + n] = t_index[target_id]
        self.wp_lo[i], self.wp_hi[i], self.wp_cur[i] = wlo, wlo + w, wlo
        self.p_used += k
        self.w_used += w

    def _compact(self, flights: Sequence[Flight | None], t_index: Mapping[str, int]) -> None:
        """Lay every live flight out afresh, with room to grow, keeping the cursors."""
        n = len(flights)
        live_p = sum(f.pieces.shape[1] for f in flights if f is not None)
        live_w = sum(len(f.waypoints) for f in flights if f is not None)
        P = np.zeros((N_PIECE_ROWS, max(64, 2 * live_p)))
        wp_s = np.zeros(max(64, 2 * live_w))
        wp_t = np.zeros(wp_s.size, dtype=np.int64)
        p_lo, p_hi, cur = (np.zeros(n, dtype=np.int64) for _ in range(3))
        wp_lo, wp_hi, wp_cur = (np.zeros(n, dtype=np.int64) for _ in range(3))
        p = w = 0
        for i, flight in enumerate(flights):
            p_lo[i], wp_lo[i] = p, w
            if flight is not None:
                k = flight.pieces.shape[1]
                P[:, p : p + k] = flight.pieces
                for m, (target_id, s) in enumerate(flight.waypoints):
                    wp_s[w + m] = s
                    wp_t[w + m] = t_index[target_id]
                p += k
                w += len(flight.waypoints)
            p_hi[i], wp_hi[i] = p, w
            old = self.cur[i]
            cur[i] = (
                p_lo[i] if old < 0 else min(p_lo[i] + old - self.p_lo[i], max(p_lo[i], p_hi[i] - 1))
            )
            old = self.wp_cur[i]
            wp_cur[i] = wp_lo[i] if old < 0 else min(wp_lo[i] + old - self.wp_lo[i], wp_hi[i])
        self.P, self.p_lo, self.p_hi, self.cur, self.p_used = P, p_lo, p_hi, cur, p
        self.wp_s, self.wp_t, self.w_used = wp_s, wp_t, w
        self.wp_lo, self.wp_hi, self.wp_cur = wp_lo, wp_hi, wp_cur
