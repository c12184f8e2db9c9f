"""The Held-Karp subset dynamic programme both exact solvers share (numba kernels).

One route leaves an effective start (the end of its frozen head, ``base`` km already flown),
visits a subset of ``k`` candidates in some order and lands at an end. :func:`subset_paths`
fills, for every subset ``mask`` of the candidates (bit ``i`` = candidate ``i``):

- ``best[mask, last]``: the length of the shortest path start -> exactly the candidates of
  ``mask`` -> ``last`` (``inf`` when pruned or impossible);
- ``done[mask]`` / ``done_last[mask]``: the shortest complete route through ``mask`` (its
  last leg to the candidate's nearest end included) that fits ``limit``, and the candidate
  it visits last (``-1`` when no route through ``mask`` fits).

The single-drone solver (:mod:`planner.orienteering`) picks the best subset by score; the
team solver (:mod:`planner._team.exact`) combines disjoint subsets over its vehicles. Both
rebuild a route with :func:`subset_order`.

Every length is summed left to right (``base + d0[first] + into[second, first] + ...``), so
a recomputation along the route gives the same float. A state whose length plus the lower
bound ``lb[last]`` on what remains exceeds ``prune_limit`` is stored as ``inf`` and never
expands. Ties: ``best`` keeps the minimum whatever the order; ``done_last`` is the lowest
candidate index among equally short completions; :func:`subset_order` takes the lowest
predecessor index. The result is a pure function of the inputs.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["bit_index", "subset_order", "subset_paths"]


@njit(cache=True, nogil=True, inline="always")
def bit_index(low: int) -> int:
    """Index of the single set bit of ``low`` (a power of two below 2**63)."""
    i = 0
    if low >= 1 << 32:
        low >>= 32
        i += 32
    if low >= 1 << 16:
        low >>= 16
        i += 16
    if low >= 1 << 8:
        low >>= 8
        i += 8
    if low >= 1 << 4:
        low >>= 4
        i += 4
    if low >= 1 << 2:
        low >>= 2
        i += 2
    if low >= 1 << 1:
        i += 1
    return i


@njit(cache=True, nogil=True)
def subset_paths(
    into: np.ndarray,
    d0: np.ndarray,
    endd: np.ndarray,
    lb: np.ndarray,
    base: float,
    limit: float,
    prune_limit: float,
    allowed: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Shortest paths through every subset of the ``k = len(d0)`` candidates.

    into[last, p]  length of the leg candidate p -> candidate last (k x k)
    d0[j]          length of the leg effective start -> candidate j
    endd[j]        length of the leg candidate j -> its nearest allowed end
    lb[j]          lower bound on any completion from candidate j to an end
    base           length already flown before the effective start
    limit          a complete route fits when its length <= limit
    prune_limit    a partial route is dropped when length + lb[last] > prune_limit
    allowed        bitmask of the candidates the route may use; other subsets stay empty

    Returns ``(best, done, done_last)`` as described in the module docstring; the empty
    subset (``mask = 0``) is left to the caller (``done[0] = inf``, ``done_last[0] = -1``).
    Memory: ``2**k * k`` float64 for ``best``, plus ``2**k * 10`` bytes.
    """
    k = d0.shape[0]
    nmask = 1 << k
    inf = np.inf
    best = np.full((nmask, k), inf)
    done = np.full(nmask, inf)
    done_last = np.full(nmask, -1, dtype=np.int8)
    alive = np.zeros(nmask, dtype=np.uint8)
    for mask in range(1, nmask):
        if mask & ~allowed:
            continue
        d_len = inf
        d_last = -1
        any_alive = False
        rest = mask
        while rest:
            low = rest & (-rest)
            last = bit_index(low)
            rest ^= low
            prev = mask ^ low
            if prev == 0:
                v = base + d0[last]
            else:
                if alive[prev] == 0:
                    continue
                row = best[prev]
                drow = into[last]
                v = inf
                for p in range(k):
                    c = row[p] + drow[p]
                    if c < v:
                        v = c
            if v + lb[last] > prune_limit:
                continue
            best[mask, last] = v
            any_alive = True
            # complete the route at the nearest end of ``last``
            length = v + endd[last]
            if length <= limit and (d_last < 0 or length < d_len):
                d_len = length
                d_last = last
        done[mask] = d_len
        done_last[mask] = d_last
        if any_alive:
            alive[mask] = 1
    return best, done, done_last


@njit(cache=True, nogil=True)
def subset_order(
    best: np.ndarray, into: np.ndarray, mask: int, last: int
) -> tuple[bool, np.ndarray]:
    """The visiting order (candidate indices) of the shortest path through ``mask`` ending
    at ``last``, rebuilt by recomputing each minimising predecessor (lowest index on ties).

    Returns ``(ok, order)``; ``ok`` is False only if the table is inconsistent, which cannot
    happen when ``best`` and ``into`` are the ones :func:`subset_paths` used.
    """
    k = best.shape[1]
    npop = 0
    rest = mask
    while rest:
        rest &= rest - 1
        npop += 1
    order = np.empty(npop, dtype=np.int64)
    if mask == 0:
        return True, order
    pos = npop - 1
    while True:
        order[pos] = last
        prev = mask ^ (1 << last)
        if prev == 0:
            break
        target = best[mask, last]
        nxt = -1
        for p in range(k):
            if (prev >> p) & 1 and best[prev, p] + into[last, p] == target:
                nxt = p
                break
        if nxt < 0:  # cannot happen: the same float sums are recomputed
            return False, order
        mask = prev
        last = nxt
        pos -= 1
    return True, order
