"""The tick kernel's grids (sim._kernels._grid, _near): every target or SAM a drone's swept
segment comes close enough to is among the candidates, once each, in ascending index, so
that the kernel writes the events a scan of them all would write."""

from __future__ import annotations

import numpy as np
import pytest

from sim._kernels import _grid, _near, _seg_dist2


@pytest.mark.parametrize("seed", range(6))
def test_the_grid_misses_nothing_a_full_scan_would_find(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    xs, ys = rng.uniform(-50, 50, n), rng.uniform(-50, 50, n)
    if seed % 2:  # clustered, with some far away
        xs[: n // 2] = rng.normal(0, 0.5, n // 2)
        xs[-1] = 1e4
    reach = rng.uniform(0, 8, n) if seed % 3 else np.zeros(n)
    keep = rng.random(n) < 0.8
    pad = float(rng.uniform(0, 3))
    grid = _grid(xs, ys, reach, keep, 2 * pad)
    stamp = np.full(n, -1, np.int64)
    out = np.empty(n, np.int64)
    for mark in range(200):
        a = rng.uniform(-60, 60, 2)
        b = a + rng.normal(0, 2 if mark % 2 else 30, 2)
        found = out[: _near(grid, a[0], a[1], b[0], b[1], pad, stamp, mark, out)].copy()
        assert np.all(np.diff(found) > 0), "ascending, each once"
        assert np.all(keep[found])
        for i in np.flatnonzero(keep):
            limit = reach[i] + pad
            if _seg_dist2(a[0], a[1], b[0], b[1], xs[i], ys[i]) <= limit * limit:
                assert i in found, (i, a, b)


def test_an_empty_grid_finds_nothing() -> None:
    grid = _grid(np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3, dtype=bool), 1.0)
    out = np.empty(3, np.int64)
    assert _near(grid, 0.0, 0.0, 1.0, 1.0, 5.0, np.full(3, -1, np.int64), 0, out) == 0
