"""Kernels for ``DistanceTable``'s updates (numba, ``nogil``): which pairs a SAM edit may
change, and gathering a sub-table.

A pair's shortest path, of length D, lies inside the ellipse of points x with
``f(x) = |p x| + |x q| <= D``. A disk (centre c, radius R) meets that ellipse only if the
least ``f`` over the disk is at most D; otherwise no path of length D comes near it. So a
disk added leaves the pair's path clear (and its distance: obstacles only lengthen paths),
and a disk removed cannot shorten it (a shorter path would cross where the disk was).

That least ``f`` is bounded from below, as ``f`` is convex, by its tangent plane at any
point y: ``f(y) + grad f(y) . (c - y) - R |grad f(y)|`` (``_may_meet``). At y = c that is
tighter than the triangle inequality's ``|p c| + |c q| - 2 R``, which for a disk beside the
middle of a pair L km long lets through centres up to ``sqrt(R L)`` from it (55 km for a
3 km disk on a 1,000 km pair; the tangent bound: about 2 R); at the disk's point nearest
downhill it is nearly exact.

Both are straight-line bounds, and a way that winds round SAMs has an ellipse far wider than
the disk: in the door's largest world (500 SAMs of 100-1,000 km), ten 3 km pop-ups let 2.5
million pairs through. For a disk added there is a bound in the table's own distances: if a
point a (the disk's anchor) sees every point of the disk along a clear segment, at most
``w = |a c| + R`` away, then any way through the disk is at least ``D(p, a) - w`` from p,
so a pair is kept only if ``D(p, a) + D(a, q) - 2 w <= D`` (``way_bounds``): the pairs whose
ways pass near the disk, 15 times fewer there.
"""

from __future__ import annotations

import math

import numpy as np

from planner._jit import njit
from planner.geometry._disks import hits
from planner.geometry.margins import TOL

__all__ = [
    "affected_rows",
    "bound_pairs",
    "centre_distances",
    "fewer_sources",
    "gather",
    "gather_rows",
    "matrix_flags",
    "new_rows",
    "row_flags",
    "splice_index",
    "touch",
    "way_bounds",
    "write_pairs",
]

# Slack on the test above: distances carry rounding, and a path may touch a disk within TOL.
_REL = 1e-9
_ABS = 1e-6


@njit(cache=True, nogil=True)
def _joined(i: int, j: int, eff: np.ndarray, labels: np.ndarray, removed: np.ndarray) -> bool:
    """May two points that were apart be joined now that the disks ``removed`` (k, 3) are
    gone: does the graph join them, or did their segment cross one of them?"""
    if labels[i] == labels[j]:
        return True
    ax, ay = eff[i, 0], eff[i, 1]
    dx, dy = eff[j, 0] - ax, eff[j, 1] - ay
    dd = dx * dx + dy * dy
    for k in range(removed.shape[0]):
        lim = removed[k, 2] - TOL
        if lim > 0.0 and hits(
            ax, ay, dx, dy, dd if dd > 0.0 else 1.0, removed[k, 0], removed[k, 1], lim
        ):
            return True
    return False


@njit(cache=True, nogil=True)
def centre_distances(slots: np.ndarray, pts: np.ndarray, disks: np.ndarray) -> np.ndarray:
    out = np.zeros((disks.shape[0], pts.shape[0]))
    for k in range(disks.shape[0]):
        for i in slots:
            out[k, i] = math.hypot(pts[i, 0] - disks[k, 0], pts[i, 1] - disks[k, 1])
    return out


@njit(cache=True, nogil=True, inline="always")
def _may_meet(
    pts: np.ndarray, i: int, j: int, disk: np.ndarray, ci: float, cj: float, s: float
) -> bool:
    """May the disk ``(x, y, R)`` meet the ellipse ``|i x| + |x j| <= s`` of points ``i`` and
    ``j``, whose distances to its centre are ``ci`` and ``cj``? False only when a lower
    bound of ``f(x) = |i x| + |x j|`` over the disk is above ``s`` (the module's docstring):
    the triangle inequality's first (cheap, and most pairs are far), then the tangent planes
    at the centre and at the disk's point nearest downhill from it."""
    r: float = disk[2]
    if ci + cj - 2.0 * r > s:
        return False
    if ci <= r or cj <= r:  # an end in the disk: f is not smooth there; keep the pair
        return True
    cx: float = disk[0]
    cy: float = disk[1]
    ix: float = pts[i, 0]
    iy: float = pts[i, 1]
    jx: float = pts[j, 0]
    jy: float = pts[j, 1]
    gx = (cx - ix) / ci + (cx - jx) / cj
    gy = (cy - iy) / ci + (cy - jy) / cj
    g = math.hypot(gx, gy)
    if ci + cj - r * g > s:  # the tangent plane at the centre
        return False
    if g == 0.0:
        return True
    yx, yy = cx - r * gx / g, cy - r * gy / g  # downhill on the circle
    yi, yj = math.hypot(yx - ix, yy - iy), math.hypot(yx - jx, yy - jy)
    if yi == 0.0 or yj == 0.0:
        return True
    hx = (yx - ix) / yi + (yx - jx) / yj
    hy = (yy - iy) / yi + (yy - jy) / yj
    return yi + yj + hx * (cx - yx) + hy * (cy - yy) - r * math.hypot(hx, hy) <= s


@njit(cache=True, nogil=True, inline="always")
def _within(i: int, j: int, pts: np.ndarray, reach: np.ndarray) -> bool:
    """Is the pair exact: the straight km between points ``i`` and ``j`` within the smaller
    of their reaches (a point's reach is inf unless it was given one)? Squared: a million
    pairs a replan at 1,000 drones."""
    r: float = min(reach[i], reach[j])
    if r == math.inf:
        return True
    dx: float = pts[j, 0] - pts[i, 0]
    dy: float = pts[j, 1] - pts[i, 1]
    return dx * dx + dy * dy <= r * r


@njit(cache=True, nogil=True)
def way_bounds(
    slots: np.ndarray,
    dist: np.ndarray,
    pts: np.ndarray,
    reach: np.ndarray,
    disks: np.ndarray,
    to_disks: np.ndarray,
    anchors: np.ndarray,
    widths: np.ndarray,
) -> np.ndarray:
    """(k, points): a lower bound of the way from each of ``slots`` to any point of each
    disk, in the table's old distances ``dist``: its straight km, ``|p c| - R``, and, where
    the disk has an anchor a whose every point of the disk is within a clear ``w`` of it,
    ``D(p, a) - w`` (the triangle inequality: ``D(p, a) <= D(p, x) + |x a|``). ``D(p, a)``
    only where the table holds it exactly (at most the smaller reach: a value beyond a reach
    is a bound of either side); an exact inf (no way to the anchor) is no way to the disk."""
    out = np.zeros((disks.shape[0], pts.shape[0]))
    for k in range(disks.shape[0]):
        a = anchors[k]
        for i in slots:
            low = to_disks[k, i] - disks[k, 2]
            if a >= 0:
                v = dist[a, i]  # the table is symmetric: the anchor's row is contiguous
                if v <= min(reach[i], reach[a]):
                    low = max(low, v - widths[k])
            out[k, i] = low
    return out


@njit(cache=True, nogil=True)
def affected_rows(
    lo: int,
    hi: int,
    slots: np.ndarray,
    dist: np.ndarray,
    pts: np.ndarray,
    eff: np.ndarray,
    reachable: np.ndarray,
    redo: np.ndarray,
    labels: np.ndarray,
    added: np.ndarray,
    removed: np.ndarray,
    reach: np.ndarray,
    esc_len: np.ndarray,
    low: np.ndarray,
    to_added: np.ndarray,
    to_removed: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs ``(slots[a], slots[b])``, ``lo <= a < hi``, ``b > a``, whose distance a SAM
    edit may change, as CSR ``(sources, dests_ptr, dests)`` (``dests_ptr`` from 0); none
    beyond a reach (``_within``: their straight km is written again, ``bound_pairs``, not
    searched). Rows apart share nothing, so threads may take a share of them each.

    A pair is affected when a point of it was redone (its escape or reachability changed);
    or, both reachable, when its path may meet a disk ``added`` or could now cross where one
    ``removed`` was (the ellipse tests above, on the old distance; a pair already as short as
    the straight way between its points' graph positions, ``eff``, plus their escapes,
    ``esc_len``, cannot get shorter, and is not tested against those); or, unreachable before,
    when after the removals the graph joins them (``labels``) or their segment crossed a
    disk removed. ``added`` and ``removed`` are (k, 3) arrays of ``(x, y, r)``; ``low`` is
    (points, k): each point's bound of the way to each added disk (``way_bounds``, its
    transpose), ``to_added`` and ``to_removed`` (points, k) its distances to their centres:
    a point's numbers side by side, as the pair loop reads them for every other point.
    """
    n = slots.shape[0]
    sources = np.empty(max(hi - lo, 0), np.int64)
    dests_ptr = np.zeros(max(hi - lo, 0) + 1, np.int64)
    dests = np.empty(max(n, 16), np.int64)
    has_removed = removed.shape[0] > 0
    s = 0
    t = 0
    for a in range(lo, hi):
        i = slots[a]
        row = dist[i]
        start = t
        if t + n > dests.shape[0]:  # room for a whole row
            grown = np.empty(2 * dests.shape[0] + n, np.int64)
            grown[:t] = dests[:t]
            dests = grown
        for b in range(a + 1, n):
            j = slots[b]
            if not _within(i, j, pts, reach):
                continue
            if redo[i] or redo[j]:
                hit = True
            elif not (reachable[i] and reachable[j]):
                hit = False  # unreachable before and after: still apart
            else:
                d = row[j]
                if d < np.inf:
                    slack = d * (1.0 + _REL) + _ABS
                    hit = False
                    for k in range(added.shape[0]):
                        if low[i, k] + low[j, k] <= slack and _may_meet(
                            pts, i, j, added[k], to_added[i, k], to_added[j, k], slack
                        ):
                            hit = True
                            break
                    if not hit and has_removed:
                        # a pair as short as the straight way between its graph points
                        # (with their escapes) cannot get shorter: no removal touches it
                        dx = eff[j, 0] - eff[i, 0]
                        dy = eff[j, 1] - eff[i, 1]
                        least = math.sqrt(dx * dx + dy * dy) + esc_len[i] + esc_len[j]
                        if d <= least * (1.0 + 1e-12):  # rounding only: a pair longer may shorten
                            continue
                        for k in range(removed.shape[0]):
                            if _may_meet(
                                pts, i, j, removed[k], to_removed[i, k], to_removed[j, k], slack
                            ):
                                hit = True
                                break
                elif not has_removed:
                    hit = False  # apart, and an added disk joins nothing
                else:
                    hit = _joined(i, j, eff, labels, removed)
            if hit:
                dests[t] = j
                t += 1
        if t > start:
            sources[s] = i
            s += 1
            dests_ptr[s] = t
    return sources[:s], dests_ptr[: s + 1], dests[:t]


@njit(cache=True, nogil=True)
def fewer_sources(
    sources: np.ndarray, dests_ptr: np.ndarray, dests: np.ndarray, size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The same pairs (CSR by source, each once) with each searched from whichever of its
    points has more pairs: every source costs a search, and a pop-up's pairs join the
    points on one side of it to those on the other (3,400 searches at 1,000 drones, each
    for a few points). The pairs as given when that would make more sources (it can: the
    choice is greedy). Points numbered below ``size``."""
    degree = np.zeros(size, np.int64)
    for a in range(sources.shape[0]):
        for t in range(dests_ptr[a], dests_ptr[a + 1]):
            degree[sources[a]] += 1
            degree[dests[t]] += 1
    frm = np.empty(dests.shape[0], np.int64)
    to = np.empty(dests.shape[0], np.int64)
    count = np.zeros(size + 1, np.int64)
    for a in range(sources.shape[0]):
        i = sources[a]
        for t in range(dests_ptr[a], dests_ptr[a + 1]):
            j = dests[t]
            if degree[j] > degree[i]:
                frm[t], to[t] = j, i
            else:
                frm[t], to[t] = i, j
            count[frm[t] + 1] += 1
    start = np.cumsum(count)
    order = np.empty(dests.shape[0], np.int64)
    fill = start[:-1].copy()
    for t in range(frm.shape[0]):
        order[fill[frm[t]]] = to[t]
        fill[frm[t]] += 1
    used = np.flatnonzero(count[1:] > 0)
    if used.shape[0] > sources.shape[0]:
        return sources.copy(), dests_ptr.copy(), dests.copy()
    ptr = np.zeros(used.shape[0] + 1, np.int64)
    for a in range(used.shape[0]):
        ptr[a + 1] = start[used[a] + 1]
    return used.astype(np.int64), ptr, order


@njit(cache=True, nogil=True)
def write_pairs(
    dist: np.ndarray,
    sources: np.ndarray,
    dests_ptr: np.ndarray,
    dests: np.ndarray,
    graph: np.ndarray,
    pts: np.ndarray,
    esc_len: np.ndarray,
    reachable: np.ndarray,
) -> None:
    """Store graph distances from ``sources[i]`` to ``dests[dests_ptr[i]:dests_ptr[i+1]]``
    as the table's, both ways: escape legs added, inf where either is unreachable, 0 between
    identical points."""
    for a in range(sources.shape[0]):
        i = sources[a]
        for t in range(dests_ptr[a], dests_ptr[a + 1]):
            j = dests[t]
            if not (reachable[i] and reachable[j]):
                d = np.inf
            else:
                d = graph[t] + esc_len[i] + esc_len[j]
            if pts[i, 0] == pts[j, 0] and pts[i, 1] == pts[j, 1]:
                d = 0.0
            dist[i, j] = d
            dist[j, i] = d


@njit(cache=True, nogil=True)
def new_rows(
    slots: np.ndarray, old: np.ndarray, pts: np.ndarray, reach: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The pairs to search for the new points ``slots`` (ascending), as CSR ``(ptr,
    dests)``: each new point's row holds every ``old`` point, then the new points after
    it, of those the pairs that are exact (``_within``; the others are ``bound_pairs``')."""
    m = slots.shape[0]
    ptr = np.zeros(m + 1, np.int64)
    dests = np.empty(m * old.shape[0] + m * (m - 1) // 2, np.int64)
    t = 0
    for a in range(m):
        i = slots[a]
        for j in old:
            if _within(i, j, pts, reach):
                dests[t] = j
                t += 1
        for b in range(a + 1, m):
            j = slots[b]
            if _within(i, j, pts, reach):
                dests[t] = j
                t += 1
        ptr[a + 1] = t
    return ptr, dests[:t]


_TILE = 64  # points a side of the blocks the columns are written in


@njit(cache=True, nogil=True)
def bound_pairs(
    dist: np.ndarray,
    slots: np.ndarray,
    used: np.ndarray,
    pts: np.ndarray,
    reach: np.ndarray,
    reachable: np.ndarray,
) -> None:
    """For each of ``slots`` and every used point: a pair beyond the smaller reach of the
    two holds their straight km, a lower bound of any way between them (inf when either
    is unreachable), both ways. A point with a reach is a drone's start with that much fuel:
    a way longer than the fuel is never flown, and only its length's lower bound is read.

    The rows are written first, then mirrored into the columns block by block (the table
    is symmetric: the other pairs of a row are the same both ways already); a column
    written point by point touched a cache line per entry, 0.2-0.34 s at 780 starts."""
    n = used.shape[0]
    for a in range(slots.shape[0]):
        i = slots[a]
        row = dist[i]
        for j in range(n):
            if j == i or not used[j]:
                continue
            r = min(reach[i], reach[j])
            dx = pts[j, 0] - pts[i, 0]
            dy = pts[j, 1] - pts[i, 1]
            d2 = dx * dx + dy * dy
            if d2 <= r * r:  # ``_within``
                continue
            # sqrt, not hypot (no overflow at the door's coordinates): a third of the time
            row[j] = math.sqrt(d2) if reachable[i] and reachable[j] else np.inf
    m = slots.shape[0]
    for jb in range(0, n, _TILE):
        for ab in range(0, m, _TILE):
            for j in range(jb, min(n, jb + _TILE)):
                if not used[j]:
                    continue
                out = dist[j]
                for a in range(ab, min(m, ab + _TILE)):
                    i = slots[a]
                    if i != j:
                        out[i] = dist[i, j]


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


@njit(cache=True, nogil=True)
def row_flags(row: np.ndarray, flags: np.ndarray) -> tuple[float, int]:
    """What the team search checks of a distance matrix, for one of its rows: the sum of
    its finite entries in order and how many they are; a NaN sets ``flags[0]``, a negative
    ``flags[1]``, an infinity clears ``flags[2]`` (all finite)."""
    total = 0.0
    count = 0
    nan = negative = infinite = False  # locals in the loop: the flags written once
    for x in row:
        if x != x:
            nan = True
        elif x < 0.0:
            negative = True
        elif x == np.inf:
            infinite = True
        else:
            total += x
            count += 1
    if nan:
        flags[0] = True
    if negative:
        flags[1] = True
    if infinite:
        flags[2] = False
    return total, count


@njit(cache=True, nogil=True)
def matrix_flags(dist: np.ndarray) -> tuple[bool, bool, bool, float]:
    """``(has_nan, has_negative, all_finite, finite_mean)`` of ``dist`` (``row_flags`` row
    by row): the mean of its finite entries, each row summed in order, then the rows' sums
    in order (1.0 if none). One pass, no temporaries: a swarm's matrix is 25 million
    entries, and each numpy test of it would make one."""
    flags = np.array([False, False, True])
    total = 0.0
    count = 0
    for i in range(dist.shape[0]):
        row_total, row_count = row_flags(dist[i], flags)
        total += row_total
        count += row_count
    return flags[0], flags[1], flags[2] and not flags[0], total / count if count else 1.0


@njit(cache=True, nogil=True)
def gather_rows(
    dist: np.ndarray,
    slots: np.ndarray,
    out: np.ndarray,
    lo: int,
    hi: int,
    row_sums: np.ndarray,
    flags: np.ndarray,
) -> int:
    """Rows ``lo:hi`` of ``gather(dist, slots)`` written to ``out``, with ``row_flags`` of
    each (its sum to ``row_sums``, ``flags`` as there; ``flags`` starts (False, False,
    True)); returns how many entries are finite. Rows apart are independent, so threads may
    share the work; ``out`` is the caller's (numpy's memory: a swarm's 290 MB allocated
    here took as long again in page faults)."""
    n = slots.shape[0]
    count = 0
    for a in range(lo, hi):
        row = dist[slots[a]]
        copied = out[a]
        for b in range(n):
            copied[b] = row[slots[b]]
        row_sums[a], finite = row_flags(copied, flags)
        count += finite
    return count


@njit(cache=True, nogil=True)
def touch(buf: np.ndarray) -> None:
    """Write every page of ``buf`` once, holding no GIL: its page faults are taken here, in
    the background, not by the copy that needs the memory on a round's critical path."""
    for i in range(0, buf.shape[0], 512):  # 512 float64 = one 4 KiB page
        buf[i] = 0.0


@njit(cache=True, nogil=True)
def splice_index(start: np.ndarray, ptr: np.ndarray) -> np.ndarray:
    """Where each entry of a spliced pool comes from: point ``i``'s entries
    ``ptr[i]:ptr[i + 1]`` are taken from ``start[i]`` on (``np.repeat(start - ptr[:-1],
    counts) + np.arange(ptr[-1])``, which holds the GIL: ~10 ms for a swarm's 7 M entries)."""
    take = np.empty(ptr[-1], np.int64)
    for i in range(ptr.shape[0] - 1):
        offset = start[i] - ptr[i]
        for k in range(ptr[i], ptr[i + 1]):
            take[k] = offset + k
    return take
