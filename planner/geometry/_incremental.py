"""Kernels for ``DistanceTable``'s updates (numba, ``nogil``): which pairs a SAM edit may
change, and gathering a sub-table.

A pair's shortest path, of length D, lies inside the ellipse of points x with
``|p x| + |x q| <= D``. A disk (centre c, radius R) meets that ellipse only if
``|p c| + |c q| - 2 R <= D``; otherwise no path of length D comes near it. So a disk added
leaves the pair's path clear (and its distance: obstacles only lengthen paths), and a disk
removed cannot shorten it (a shorter path would cross where the disk was).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from planner.geometry._disks import hits
from planner.geometry.margins import TOL

__all__ = ["affected_pairs", "gather"]

# Slack on the test above: distances carry rounding, and a path may touch a disk within TOL.
_REL = 1e-9
_ABS = 1e-6


@njit(cache=True, nogil=True, inline="always")
def _near(px: float, py: float, qx: float, qy: float, disk: np.ndarray, d: float) -> bool:
    r = disk[2]
    if r < 0.0:
        return False
    around = math.hypot(px - disk[0], py - disk[1]) + math.hypot(qx - disk[0], qy - disk[1])
    return bool(around - 2.0 * r <= d * (1.0 + _REL) + _ABS)


@njit(cache=True, nogil=True, inline="always")
def _hit(
    i: int,
    j: int,
    dist: np.ndarray,
    pts: np.ndarray,
    eff: np.ndarray,
    reachable: np.ndarray,
    redo: np.ndarray,
    labels: np.ndarray,
    added: np.ndarray,
    removed: np.ndarray,
) -> bool:
    if redo[i] or redo[j]:
        return True
    if not (reachable[i] and reachable[j]):
        return False  # unreachable before and after: still apart
    d = dist[i, j]
    if d < np.inf:
        return _near(pts[i, 0], pts[i, 1], pts[j, 0], pts[j, 1], added, d) or _near(
            pts[i, 0], pts[i, 1], pts[j, 0], pts[j, 1], removed, d
        )
    if removed[2] < 0.0:
        return False  # apart, and an added disk joins nothing
    if labels[i] == labels[j]:
        return True
    lim = removed[2] - TOL
    if lim <= 0.0:
        return False
    ax, ay = eff[i, 0], eff[i, 1]
    dx, dy = eff[j, 0] - ax, eff[j, 1] - ay
    dd = dx * dx + dy * dy
    return hits(ax, ay, dx, dy, dd if dd > 0.0 else 1.0, removed[0], removed[1], lim)


@njit(cache=True, nogil=True)
def affected_pairs(
    slots: np.ndarray,
    dist: np.ndarray,
    pts: np.ndarray,
    eff: np.ndarray,
    reachable: np.ndarray,
    redo: np.ndarray,
    labels: np.ndarray,
    added: np.ndarray,
    removed: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs of ``slots`` (each once: the earlier slot in the list is the source) whose
    distance a SAM edit may change, as CSR ``(sources, dests_ptr, dests)``.

    A pair is affected when a point of it was redone (its escape or reachability changed);
    or, both reachable, when its path may meet the disk ``added`` or could now cross where
    ``removed`` was (the ellipse test above, on the old distance); or, unreachable before,
    when after the removal the graph joins them (``labels``) or their segment crossed the
    disk removed. Disks are ``(x, y, r)``, r < 0 for none.
    """
    n = slots.shape[0]
    count = np.zeros(n, np.int64)
    total = 0
    mark = np.zeros(n, np.bool_)
    for a in range(n):
        i = slots[a]
        for b in range(a + 1, n):
            j = slots[b]
            hit = _hit(i, j, dist, pts, eff, reachable, redo, labels, added, removed)
            if hit:
                count[a] += 1
                total += 1
        mark[a] = count[a] > 0
    sources = np.empty(int(mark.sum()), np.int64)
    dests_ptr = np.zeros(sources.shape[0] + 1, np.int64)
    dests = np.empty(total, np.int64)
    s = 0
    t = 0
    for a in range(n):
        if not mark[a]:
            continue
        i = slots[a]
        sources[s] = i
        for b in range(a + 1, n):
            j = slots[b]
            hit = _hit(i, j, dist, pts, eff, reachable, redo, labels, added, removed)
            if hit:
                dests[t] = j
                t += 1
        s += 1
        dests_ptr[s] = t
    return sources, dests_ptr, dests


@njit(cache=True, nogil=True)
def gather(dist: np.ndarray, slots: np.ndarray) -> np.ndarray:
    """``dist[slots][:, slots]`` as a new contiguous array."""
    n = slots.shape[0]
    out = np.empty((n, n), np.float64)
    for a in range(n):
        row = dist[slots[a]]
        for b in range(n):
            out[a, b] = row[slots[b]]
    return out
