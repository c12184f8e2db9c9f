"""Vectorised tests of points and segments against many open disks at once (numpy)."""

from __future__ import annotations

import numpy as np

from planner.geometry.margins import TOL

__all__ = ["segments_clear", "strictly_inside"]


def segments_clear(
    a: np.ndarray, b: np.ndarray, centers: np.ndarray, radii: np.ndarray, tol: float = TOL
) -> np.ndarray:
    """Bool (E,): segment a[e]-b[e] does not enter any open disk (touching within tol is ok)."""
    e = a.shape[0]
    ok = np.ones(e, dtype=bool)
    if e == 0 or centers.shape[0] == 0:
        return ok
    lim2 = np.maximum(radii - tol, 0.0) ** 2
    d = b - a
    dd = np.einsum("ij,ij->i", d, d)
    safe_dd = np.where(dd > 0.0, dd, 1.0)
    # Chunk over segments so memory stays bounded (E x m temporaries).
    step = max(1, 2_000_000 // max(1, centers.shape[0]))
    for lo in range(0, e, step):
        hi = min(e, lo + step)
        ac = centers[None, :, :] - a[lo:hi, None, :]  # (E, m, 2)
        t = np.einsum("emk,ek->em", ac, d[lo:hi]) / safe_dd[lo:hi, None]
        t = np.clip(t, 0.0, 1.0)
        closest = a[lo:hi, None, :] + t[..., None] * d[lo:hi, None, :]
        diff = closest - centers[None, :, :]
        dist2 = np.einsum("emk,emk->em", diff, diff)
        ok[lo:hi] = ~np.any(dist2 < lim2[None, :], axis=1)
    return ok


def strictly_inside(
    points: np.ndarray, centers: np.ndarray, radii: np.ndarray, tol: float
) -> np.ndarray:
    """Bool (n, m): point i is inside open disk j by more than ``tol``."""
    d = np.hypot(points[:, None, 0] - centers[None, :, 0], points[:, None, 1] - centers[None, :, 1])
    inside: np.ndarray = d < radii[None, :] - tol
    return inside
