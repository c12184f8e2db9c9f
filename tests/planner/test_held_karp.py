"""The Held-Karp subset core both exact solvers share (planner/_held_karp.py), against
brute force over every order of every subset."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from planner._held_karp import subset_order, subset_paths


def random_case(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    """``k`` candidates with symmetric legs (some missing), start legs, end legs, a head
    length already flown and a limit that some subsets fit and others do not."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 7))
    pts = rng.uniform(0, 10, size=(k, 2))
    into = np.sqrt(((pts[:, None, :] - pts[None, :, :]) ** 2).sum(-1))
    if seed % 3 == 0:
        cut = np.triu(rng.random((k, k)) < 0.3, 1)
        into[cut | cut.T] = np.inf
    d0 = rng.uniform(0.5, 8, size=k)
    endd = rng.uniform(0.5, 8, size=k)
    base = float(rng.uniform(0, 3))
    limit = float(rng.uniform(5, 40))
    return into, d0, endd, base, limit


def brute(
    into: np.ndarray, d0: np.ndarray, endd: np.ndarray, base: float, limit: float, mask: int
) -> tuple[float, int]:
    """Shortest complete route through exactly ``mask`` that fits ``limit`` (and its last
    candidate, the lowest on ties), or ``(inf, -1)``."""
    members = [i for i in range(d0.shape[0]) if mask >> i & 1]
    best, best_last = math.inf, -1
    for perm in itertools.permutations(members):
        length = base + d0[perm[0]]
        for a, b in itertools.pairwise(perm):
            length += into[b, a]
        length += endd[perm[-1]]
        if length <= limit and (
            best_last < 0 or length < best or (length == best and perm[-1] < best_last)
        ):
            best, best_last = length, perm[-1]
    return best, best_last


@pytest.mark.parametrize("seed", range(40))
def test_each_subset_keeps_its_shortest_fitting_route(seed: int) -> None:
    into, d0, endd, base, limit = random_case(seed)
    k = d0.shape[0]
    no_bound = np.zeros(k)
    best, done, done_last = subset_paths(into, d0, endd, no_bound, base, limit, limit, (1 << k) - 1)
    assert done_last[0] == -1
    for mask in range(1, 1 << k):
        length, last = brute(into, d0, endd, base, limit, mask)
        assert done_last[mask] == last, mask
        if last < 0:
            continue
        assert done[mask] == pytest.approx(length, rel=1e-12)
        ok, order = subset_order(best, into, mask, last)
        assert ok and sorted(order) == [i for i in range(k) if mask >> i & 1]
        # the rebuilt route, summed left to right, gives the table's float exactly
        again = base + d0[order[0]]
        for a, b in itertools.pairwise(order):
            again += into[b, a]
        assert again + endd[order[-1]] == done[mask]


@pytest.mark.parametrize("seed", range(10))
def test_subsets_outside_the_allowed_mask_stay_empty(seed: int) -> None:
    into, d0, endd, base, _limit = random_case(seed)
    k = d0.shape[0]
    allowed = int(np.random.default_rng(seed).integers(0, 1 << k))
    _best, done, done_last = subset_paths(
        into, d0, endd, np.zeros(k), base, math.inf, math.inf, allowed
    )
    for mask in range(1, 1 << k):
        if mask & ~allowed:
            assert done_last[mask] == -1 and done[mask] == math.inf
