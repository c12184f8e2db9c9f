"""Where a path first comes too close to a disk: exact, piece by piece (lines and arcs).

The safety layer asks this of every airborne drone's flight against the known SAMs: the
answer is the arc length along the path of the first point closer to a disk's centre than
its radius, or None. Exact geometry (a quadratic per line, a circle intersection per arc)
costs a few microseconds a piece and misses nothing, where sampling would either miss a
clipped corner or cost thousands of points on a long flight.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from planner.geometry.path import Path
from planner.geometry.pieces import Arc, Line, Piece

__all__ = ["Disk", "first_contact", "may_meet", "path_box", "piece_boxes"]

Disk = tuple[float, float, float]  # x, y, radius (km)

_EPS = 1e-12


def first_contact(
    path: Path,
    disks: Sequence[Disk],
    *,
    start: float = 0.0,
    boxes: np.ndarray | None = None,
) -> tuple[float, int] | None:
    """The first arc length ``s >= start`` at which ``path`` is strictly inside one of
    ``disks``, and that disk's index; None if it never is. A path that only touches a
    circle (tangent, or running along it) is not inside. ``boxes``: the path's
    ``piece_boxes``, when the caller has them."""
    if not disks:
        return None
    # Only the disks whose box meets a piece's box can contain a point of it: at swarm
    # sizes (hundreds of SAMs, a thousand flights) testing every disk against every piece
    # exactly is seconds of Python; the boxes are one numpy test per piece.
    lo_x, hi_x, lo_y, hi_y = _boxes(disks)
    pieces = path.pieces
    if not pieces:
        return None
    # every piece's box against every disk's in one test (a swarm's plan: 1,000 paths of a
    # dozen pieces, a numpy call per piece was 30 ms of the round), pieces near none skipped
    box = piece_boxes(path).T if boxes is None else boxes.T
    near_all = (
        (lo_x[None, :] < box[1][:, None])
        & (hi_x[None, :] > box[0][:, None])
        & (lo_y[None, :] < box[3][:, None])
        & (hi_y[None, :] > box[2][:, None])
    )
    some = near_all.any(axis=1).tolist()
    offset = 0.0
    for i, piece in enumerate(pieces):
        length = piece.length
        if not some[i] or offset + length < start - _EPS:
            offset += length
            continue
        local_start = max(0.0, start - offset)
        best: tuple[float, int] | None = None
        near = np.flatnonzero(near_all[i])
        for k in near.tolist():  # ascending: ties go to the first disk, as before
            cx, cy, r = disks[k]
            u = _entry(piece, cx, cy, r, local_start)
            if u is not None and (best is None or u < best[0]):
                best = (u, k)
        if best is not None:
            return offset + best[0], best[1]
        offset += length
    return None


def piece_boxes(path: Path) -> np.ndarray:
    """(pieces, 4): a box round each piece (x min, x max, y min, y max), a little wide: an
    arc's is its whole circle's. What ``first_contact`` and ``path_box`` are made from."""
    return np.array([_box(piece) for piece in path.pieces], dtype=np.float64).reshape(-1, 4)


def path_box(path: Path, boxes: np.ndarray | None = None) -> tuple[float, float, float, float]:
    """A box round the whole path (x min, x max, y min, y max), a little wide; from its
    ``piece_boxes`` when the caller has them (a plan's 1,000 flights: made once for both)."""
    boxes = piece_boxes(path) if boxes is None else boxes
    if not boxes.shape[0]:
        return math.inf, -math.inf, math.inf, -math.inf
    lo = boxes.min(axis=0).tolist()
    hi = boxes.max(axis=0).tolist()
    return lo[0], hi[1], lo[2], hi[3]


def may_meet(box: tuple[float, float, float, float], disks: Sequence[Disk]) -> bool:
    """Whether a path in ``box`` (``path_box``) may enter one of ``disks``: False means
    ``first_contact`` is None, at the cost of four comparisons a disk."""
    x0, x1, y0, y1 = box
    return any(cx - r < x1 and cx + r > x0 and cy - r < y1 and cy + r > y0 for cx, cy, r in disks)


# The disks' boxes of the last tuple of disks asked about, with that tuple: the safety
# layer asks about the same tuple for every drone of a check (500 SAMs: 0.2 ms a call to
# make them). Only a tuple is kept: it cannot change behind the cache's back.
_last: tuple[tuple[Disk, ...], tuple[np.ndarray, ...]] | None = None


def _boxes(disks: Sequence[Disk]) -> tuple[np.ndarray, ...]:
    """(x min, x max, y min, y max) of each disk."""
    global _last
    last = _last  # one read: another thread may replace it meanwhile
    if last is not None and last[0] is disks:
        return last[1]
    d = np.asarray(disks, dtype=np.float64).reshape(-1, 3)
    boxes = (d[:, 0] - d[:, 2], d[:, 0] + d[:, 2], d[:, 1] - d[:, 2], d[:, 1] + d[:, 2])
    if isinstance(disks, tuple):
        _last = (disks, boxes)
    return boxes


def _box(piece: Piece) -> tuple[float, float, float, float]:
    """A box round the piece (x min, x max, y min, y max), a little wide: an arc's is its
    whole circle's."""
    if isinstance(piece, Line):
        (ax, ay), (bx, by) = piece.start, piece.end
        return min(ax, bx) - _PAD, max(ax, bx) + _PAD, min(ay, by) - _PAD, max(ay, by) + _PAD
    (cx, cy), r = piece.center, piece.radius + _PAD
    return cx - r, cx + r, cy - r, cy + r


_PAD = 1e-6  # km: the boxes are compared strictly; a touch within rounding stays in


def _entry(piece: Piece, cx: float, cy: float, r: float, u0: float) -> float | None:
    if isinstance(piece, Line):
        return _line_entry(piece, cx, cy, r, u0)
    return _arc_entry(piece, cx, cy, r, u0)


def _line_entry(line: Line, cx: float, cy: float, r: float, u0: float) -> float | None:
    """The first u in [u0, length] with |p(u) - c| < r on the segment."""
    (x0, y0), (x1, y1) = line.start, line.end
    length = math.hypot(x1 - x0, y1 - y0)
    if length <= 0.0:
        return u0 if math.hypot(x0 - cx, y0 - cy) < r else None
    dx, dy = (x1 - x0) / length, (y1 - y0) / length
    fx, fy = x0 - cx, y0 - cy
    # |f + u d|^2 = r^2  ->  u^2 + 2 (f.d) u + (|f|^2 - r^2) = 0
    b = fx * dx + fy * dy
    c = fx * fx + fy * fy - r * r
    disc = b * b - c
    if disc <= 0.0:
        return None  # misses the circle or only touches it
    root = math.sqrt(disc)
    lo, hi = -b - root, -b + root  # inside strictly between the two roots
    if hi <= u0 or lo >= length:
        return None
    return max(lo, u0)


def _arc_entry(arc: Arc, cx: float, cy: float, r: float, u0: float) -> float | None:
    """The first u in [u0, length] along the arc strictly inside the disk."""
    rho = arc.radius
    length = arc.length
    if rho <= 0.0 or length <= 0.0:
        x, y = arc.start
        return u0 if math.hypot(x - cx, y - cy) < r else None
    ax, ay = arc.center
    d = math.hypot(ax - cx, ay - cy)
    if d >= rho + r:
        return None  # the arc's circle lies outside the disk (or touches it)
    if d + rho < r:
        return u0  # the arc's whole circle is inside the disk
    if d + r <= rho:
        return None  # the disk lies inside the arc's circle without reaching it
    # The two circles cross: points of the arc's circle at angle t from its centre are
    # inside the disk for |t - t_c| < half, with t_c pointing at the disk's centre.
    t_c = math.atan2(cy - ay, cx - ax)
    cos_half = (rho * rho + d * d - r * r) / (2.0 * rho * d)
    half = math.acos(min(1.0, max(-1.0, cos_half)))
    if half <= 0.0:
        return None
    sign = 1.0 if arc.sweep >= 0.0 else -1.0
    # Walk the sweep: the angle travelled from the start, phi in [phi0, |sweep|].
    phi0 = u0 / rho
    phi_end = abs(arc.sweep)

    def inside(phi: float) -> bool:
        t = arc.start_angle + sign * phi
        return abs(_wrap(t - t_c)) < half

    if inside(phi0):
        return u0
    # First crossing into the window: the window's near edge as seen along the sweep.
    delta = _wrap(sign * (t_c - (arc.start_angle + sign * phi0)))  # centre, ahead of phi0
    enter = (delta - half) % (2.0 * math.pi)
    phi = phi0 + enter
    if phi >= phi_end:
        return None
    return phi * rho


def _wrap(a: float) -> float:
    return math.atan2(math.sin(a), math.cos(a))
