"""Tests of points and segments against many open disks, through a uniform grid (numba,
``nogil``: a thread running them never holds the GIL).

The grid registers every disk in each cell its bounding box (padded by ``PAD``) overlaps.
A segment walks the cells it crosses from its start (so the nearest disks are tested first
and a blocked segment stops early) and tests each disk once, with the exact test of the
contract: the closest point of the segment to the centre is at least ``radius - tol`` away.
A point looks in its own cell only.
"""

from __future__ import annotations

import math

import numpy as np

from planner._jit import njit

__all__ = [
    "DiskGrid",
    "build_grid",
    "hits",
    "inside_any",
    "point_in_disk",
    "polyline_clearance",
    "segment_blocked",
    "segments_clear",
    "strictly_inside",
]

PAD = 1e-6  # km; far above the tolerances (1e-7) a test may add to a radius

# (x0, y0, cell, nx, ny, cell_ptr, cell_disks): the grid's arrays, as numba takes them.
DiskGrid = tuple[float, float, float, int, int, np.ndarray, np.ndarray]


@njit(cache=True, nogil=True)
def _cell_range(lo: float, hi: float, origin: float, cell: float, count: int) -> tuple[int, int]:
    a = math.floor((lo - origin) / cell)
    b = math.floor((hi - origin) / cell)
    return max(a, 0), min(b, count - 1)


@njit(cache=True, nogil=True)
def _build(
    centers: np.ndarray, radii: np.ndarray
) -> tuple[float, float, float, int, int, np.ndarray, np.ndarray]:
    m = centers.shape[0]
    if m == 0:
        return 0.0, 0.0, 1.0, 1, 1, np.zeros(2, np.int64), np.zeros(0, np.int32)
    x0 = np.inf
    y0 = np.inf
    x1 = -np.inf
    y1 = -np.inf
    for k in range(m):
        r = radii[k] + PAD
        x0 = min(x0, centers[k, 0] - r)
        y0 = min(y0, centers[k, 1] - r)
        x1 = max(x1, centers[k, 0] + r)
        y1 = max(y1, centers[k, 1] + r)
    side = max(x1 - x0, y1 - y0, 1e-9)
    per_axis = min(512, max(1, int(2.0 * math.sqrt(m))))
    cell = side / per_axis
    nx = max(1, min(per_axis, math.ceil((x1 - x0) / cell)))
    ny = max(1, min(per_axis, math.ceil((y1 - y0) / cell)))
    counts = np.zeros(nx * ny + 1, np.int64)
    for k in range(m):
        r = radii[k] + PAD
        ia, ib = _cell_range(centers[k, 0] - r, centers[k, 0] + r, x0, cell, nx)
        ja, jb = _cell_range(centers[k, 1] - r, centers[k, 1] + r, y0, cell, ny)
        for i in range(ia, ib + 1):
            for j in range(ja, jb + 1):
                counts[j * nx + i + 1] += 1
    ptr = np.cumsum(counts)
    fill = ptr[:-1].copy()
    disks = np.empty(ptr[-1], np.int32)
    for k in range(m):
        r = radii[k] + PAD
        ia, ib = _cell_range(centers[k, 0] - r, centers[k, 0] + r, x0, cell, nx)
        ja, jb = _cell_range(centers[k, 1] - r, centers[k, 1] + r, y0, cell, ny)
        for i in range(ia, ib + 1):
            for j in range(ja, jb + 1):
                c = j * nx + i
                disks[fill[c]] = k
                fill[c] += 1
    return x0, y0, cell, nx, ny, ptr, disks


def build_grid(centers: np.ndarray, radii: np.ndarray) -> DiskGrid:
    """The grid of disks ``(centers[k], radii[k])``; the radii given are the largest any test
    will use (a test may use smaller ones, e.g. the true radii inside the buffered ones)."""
    c = np.ascontiguousarray(centers, dtype=np.float64).reshape(-1, 2)
    r = np.ascontiguousarray(radii, dtype=np.float64).reshape(-1)
    x0, y0, cell, nx, ny, ptr, disks = _build(c, r)
    return float(x0), float(y0), float(cell), int(nx), int(ny), ptr, disks


@njit(cache=True, nogil=True, inline="always")
def hits(
    ax: float, ay: float, dx: float, dy: float, sdd: float, cx: float, cy: float, lim: float
) -> bool:
    """Does the segment a + t d (t in [0, 1]) come closer than ``lim`` to the centre?"""
    t = ((cx - ax) * dx + (cy - ay) * dy) / sdd
    if t < 0.0:
        t = 0.0
    elif t > 1.0:
        t = 1.0
    px = ax + t * dx - cx
    py = ay + t * dy - cy
    return px * px + py * py < lim * lim


@njit(cache=True, nogil=True)
def segment_blocked(
    ax: float,
    ay: float,
    bx: float,
    by: float,
    centers: np.ndarray,
    radii: np.ndarray,
    tol: float,
    skip: int,
    x0: float,
    y0: float,
    cell: float,
    nx: int,
    ny: int,
    ptr: np.ndarray,
    disks: np.ndarray,
    stamp: np.ndarray,
    mark: int,
) -> bool:
    """Does segment a-b enter some open disk (closest point nearer than ``radius - tol``)?

    ``skip`` names a disk not to test (-1 for none). ``stamp`` (one int64 per disk) and a
    ``mark`` unique to this call keep a disk met in several cells to one test.
    """
    dx = bx - ax
    dy = by - ay
    dd = dx * dx + dy * dy
    sdd = dd if dd > 0.0 else 1.0
    # Clip the segment to the grid's box (Liang-Barsky): outside it there is no disk.
    t0 = 0.0
    t1 = 1.0
    gx1 = x0 + nx * cell
    gy1 = y0 + ny * cell
    for p, q in ((-dx, ax - x0), (dx, gx1 - ax), (-dy, ay - y0), (dy, gy1 - ay)):
        if p == 0.0:
            if q < 0.0:
                return False
        else:
            r = q / p
            if p < 0.0:
                t0 = max(t0, r)
            else:
                t1 = min(t1, r)
    if t0 > t1:
        return False
    sx = ax + t0 * dx
    sy = ay + t0 * dy
    i = min(max(math.floor((sx - x0) / cell), 0), nx - 1)
    j = min(max(math.floor((sy - y0) / cell), 0), ny - 1)
    ex = ax + t1 * dx
    ey = ay + t1 * dy
    ie = min(max(math.floor((ex - x0) / cell), 0), nx - 1)
    je = min(max(math.floor((ey - y0) / cell), 0), ny - 1)
    step_i = 1 if dx > 0.0 else -1
    step_j = 1 if dy > 0.0 else -1
    # Parameter t at which the walk crosses the next vertical / horizontal cell line.
    if dx != 0.0:
        nxt_x = x0 + (i + (1 if dx > 0.0 else 0)) * cell
        tmax_x = (nxt_x - ax) / dx
        tdelta_x = cell / abs(dx)
    else:
        tmax_x = np.inf
        tdelta_x = np.inf
    if dy != 0.0:
        nxt_y = y0 + (j + (1 if dy > 0.0 else 0)) * cell
        tmax_y = (nxt_y - ay) / dy
        tdelta_y = cell / abs(dy)
    else:
        tmax_y = np.inf
        tdelta_y = np.inf
    budget = abs(ie - i) + abs(je - j) + 4  # cells to visit, with slack for rounding
    while True:
        c = j * nx + i
        for s in range(ptr[c], ptr[c + 1]):
            k = disks[s]
            if k == skip or stamp[k] == mark:
                continue
            stamp[k] = mark
            lim = radii[k] - tol
            if lim > 0.0 and hits(ax, ay, dx, dy, sdd, centers[k, 0], centers[k, 1], lim):
                return True
        if (i == ie and j == je) or budget == 0:
            return False
        budget -= 1
        if tmax_x < tmax_y:
            i += step_i
            tmax_x += tdelta_x
        else:
            j += step_j
            tmax_y += tdelta_y
        if i < 0 or i >= nx or j < 0 or j >= ny:
            return False


@njit(cache=True, nogil=True)
def point_in_disk(
    px: float,
    py: float,
    centers: np.ndarray,
    radii: np.ndarray,
    tol: float,
    skip: int,
    x0: float,
    y0: float,
    cell: float,
    nx: int,
    ny: int,
    ptr: np.ndarray,
    disks: np.ndarray,
) -> int:
    """The first disk (other than ``skip``) holding p more than ``tol`` inside, or -1."""
    i = math.floor((px - x0) / cell)
    j = math.floor((py - y0) / cell)
    if i < 0 or i >= nx or j < 0 or j >= ny:
        return -1
    c = j * nx + i
    for s in range(ptr[c], ptr[c + 1]):
        k = disks[s]
        if k != skip and math.hypot(px - centers[k, 0], py - centers[k, 1]) < radii[k] - tol:
            return int(k)
    return -1


@njit(cache=True, nogil=True)
def _inside_any(
    pts: np.ndarray, centers: np.ndarray, radii: np.ndarray, tol: float, grid: DiskGrid
) -> np.ndarray:
    x0, y0, cell, nx, ny, ptr, disks = grid
    out = np.zeros(pts.shape[0], np.bool_)
    for i in range(pts.shape[0]):
        hit = point_in_disk(
            pts[i, 0], pts[i, 1], centers, radii, tol, -1, x0, y0, cell, nx, ny, ptr, disks
        )
        out[i] = hit >= 0
    return out


def inside_any(
    points: np.ndarray,
    centers: np.ndarray,
    radii: np.ndarray,
    tol: float,
    grid: DiskGrid | None = None,
) -> np.ndarray:
    """Bool (n,): point i is inside some open disk by more than ``tol`` (``strictly_inside``
    reduced over the disks, through the grid: a point looks in its own cell only).

    ``grid`` must cover disks at least as large as ``radii - tol`` (``PAD`` allows a
    negative ``tol`` down to -1e-6; built here when not given)."""
    p = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 2)
    c = np.ascontiguousarray(centers, dtype=np.float64).reshape(-1, 2)
    r = np.ascontiguousarray(radii, dtype=np.float64).reshape(-1)
    if p.shape[0] == 0 or c.shape[0] == 0:
        return np.zeros(p.shape[0], dtype=bool)
    g = grid if grid is not None else build_grid(c, r)
    return np.asarray(_inside_any(p, c, r, tol, g))


@njit(cache=True, nogil=True)
def _segments_clear(
    a: np.ndarray,
    b: np.ndarray,
    centers: np.ndarray,
    radii: np.ndarray,
    tol: float,
    x0: float,
    y0: float,
    cell: float,
    nx: int,
    ny: int,
    ptr: np.ndarray,
    disks: np.ndarray,
) -> np.ndarray:
    e = a.shape[0]
    out = np.ones(e, np.bool_)
    stamp = np.zeros(centers.shape[0], np.int64)
    for s in range(e):
        out[s] = not segment_blocked(
            a[s, 0],
            a[s, 1],
            b[s, 0],
            b[s, 1],
            centers,
            radii,
            tol,
            -1,
            x0,
            y0,
            cell,
            nx,
            ny,
            ptr,
            disks,
            stamp,
            s + 1,
        )
    return out


@njit(cache=True, nogil=True)
def _strictly_inside(
    points: np.ndarray, centers: np.ndarray, radii: np.ndarray, tol: float
) -> np.ndarray:
    n = points.shape[0]
    m = centers.shape[0]
    out = np.zeros((n, m), np.bool_)
    for i in range(n):
        for k in range(m):
            d = math.hypot(points[i, 0] - centers[k, 0], points[i, 1] - centers[k, 1])
            out[i, k] = d < radii[k] - tol
    return out


def segments_clear(
    a: np.ndarray,
    b: np.ndarray,
    centers: np.ndarray,
    radii: np.ndarray,
    tol: float,
    grid: DiskGrid | None = None,
) -> np.ndarray:
    """Bool (E,): segment a[e]-b[e] does not enter any open disk (touching within tol is ok).

    ``grid`` must cover disks at least as large as ``radii`` (built here when not given).
    """
    a = np.ascontiguousarray(a, dtype=np.float64).reshape(-1, 2)
    b = np.ascontiguousarray(b, dtype=np.float64).reshape(-1, 2)
    c = np.ascontiguousarray(centers, dtype=np.float64).reshape(-1, 2)
    r = np.ascontiguousarray(radii, dtype=np.float64).reshape(-1)
    if a.shape[0] == 0 or c.shape[0] == 0:
        return np.ones(a.shape[0], dtype=bool)
    g = grid if grid is not None else build_grid(c, r)
    return np.asarray(_segments_clear(a, b, c, r, tol, *g))


def strictly_inside(
    points: np.ndarray, centers: np.ndarray, radii: np.ndarray, tol: float
) -> np.ndarray:
    """Bool (n, m): point i is inside open disk j by more than ``tol``."""
    p = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 2)
    c = np.ascontiguousarray(centers, dtype=np.float64).reshape(-1, 2)
    r = np.ascontiguousarray(radii, dtype=np.float64).reshape(-1)
    return np.asarray(_strictly_inside(p, c, r, tol))


@njit(cache=True, nogil=True)
def polyline_clearance(
    a: np.ndarray, b: np.ndarray, centres: np.ndarray, ranges: np.ndarray
) -> tuple[float, int]:
    """The smallest (distance from a disk's centre to the nearest chord - its radius) over
    the chords ``a[i] -> b[i]`` and every disk, and that disk's index (the first of equals):
    negative means inside. Every pair, no grid: the value is reported, not only tested;
    a disk whose distance to the chords' bounding box already leaves it no nearer than the
    best so far is skipped (it could not be smaller, and equals keep the first)."""
    best, worst = math.inf, -1
    if a.shape[0] == 0:
        return best, worst
    x0, x1 = min(a[:, 0].min(), b[:, 0].min()), max(a[:, 0].max(), b[:, 0].max())
    y0, y1 = min(a[:, 1].min(), b[:, 1].min()), max(a[:, 1].max(), b[:, 1].max())
    for j in range(centres.shape[0]):
        cx, cy = centres[j, 0], centres[j, 1]
        out_x = max(x0 - cx, 0.0, cx - x1)
        out_y = max(y0 - cy, 0.0, cy - y1)
        if math.hypot(out_x, out_y) - ranges[j] >= best:
            continue
        near = math.inf
        for i in range(a.shape[0]):
            ax, ay = a[i, 0], a[i, 1]
            abx, aby = b[i, 0] - ax, b[i, 1] - ay
            denom = abx * abx + aby * aby
            t = 0.0
            if denom > 0:
                t = ((cx - ax) * abx + (cy - ay) * aby) / denom
                t = min(max(t, 0.0), 1.0)
            d = math.hypot(ax + t * abx - cx, ay + t * aby - cy)
            near = min(near, d)
        gap = near - ranges[j]
        if gap < best:
            best, worst = gap, j
    return best, worst
