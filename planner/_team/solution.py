"""The four arrays of a solution and the small operations on them every move uses.

- ``seq`` (m, cap) int64: route ``k`` is ``seq[k, :L[k]]`` = start, frozen prefix...,
  free targets... . The end node is implicit: it is always the allowed end nearest to the
  last node (``endn[k, last]``, at distance ``endd[k, last]``), which is optimal since the
  end only touches the last leg.
- ``L`` (m,) int64: number of stored nodes of each route (start + prefix + targets).
- ``rlen`` (m,) float64: route lengths, end leg included.
- ``where`` (n,) int64: the vehicle visiting a node, -1 if none (targets only).

``fp[k]`` is the first free position of route ``k`` (1 + length of its prefix): positions
below it are frozen and never moved or removed.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "EPS",
    "IMPROVE_EPS",
    "all_within_budget",
    "best_insertion",
    "copy_sol",
    "insert_at",
    "route_length",
    "total_len",
    "total_score",
]

EPS = 1e-9
"""Budget tolerance: a route fits when ``rlen <= budget + EPS``; scores closer are equal."""
IMPROVE_EPS = 1e-10
"""A local-search move must shorten a route by more than this to be applied."""


@njit(cache=True, nogil=True)
def route_length(
    dist: np.ndarray, endd: np.ndarray, seq: np.ndarray, L: np.ndarray, k: int
) -> float:
    """Length of route ``k``, its implicit end leg included, summed left to right."""
    s: float = 0.0
    for p in range(L[k] - 1):
        s += dist[seq[k, p], seq[k, p + 1]]
    s += endd[k, seq[k, L[k] - 1]]
    return s


@njit(cache=True, nogil=True)
def total_score(score: np.ndarray, seq: np.ndarray, L: np.ndarray, fp: np.ndarray) -> float:
    """Score of every routed target (prefix targets included; ``fp`` is unused)."""
    s = 0.0
    for k in range(L.shape[0]):
        for p in range(1, L[k]):
            s += score[seq[k, p]]
    return s


@njit(cache=True, nogil=True)
def total_len(rlen: np.ndarray) -> float:
    """Sum of the route lengths."""
    s = 0.0
    for k in range(rlen.shape[0]):
        s += rlen[k]
    return s


@njit(cache=True, nogil=True)
def all_within_budget(budget: np.ndarray, rlen: np.ndarray) -> bool:
    """Whether every route fits its budget (``rlen <= budget + EPS``)."""
    for k in range(rlen.shape[0]):  # noqa: SIM110 - numba compiles loops, not all(generator)
        if not rlen[k] <= budget[k] + EPS:
            return False
    return True


@njit(cache=True, nogil=True)
def copy_sol(
    seq: np.ndarray,
    L: np.ndarray,
    rlen: np.ndarray,
    where: np.ndarray,
    seq2: np.ndarray,
    L2: np.ndarray,
    rlen2: np.ndarray,
    where2: np.ndarray,
) -> None:
    """Copy the solution ``seq, L, rlen, where`` into ``seq2, L2, rlen2, where2``."""
    m = L.shape[0]
    for k in range(m):
        L2[k] = L[k]
        rlen2[k] = rlen[k]
        for p in range(L[k]):
            seq2[k, p] = seq[k, p]
    for i in range(where.shape[0]):
        where2[i] = where[i]


@njit(cache=True, nogil=True)
def best_insertion(
    dist: np.ndarray,
    endd: np.ndarray,
    seq: np.ndarray,
    L: np.ndarray,
    fp: np.ndarray,
    k: int,
    u: int,
) -> tuple[float, int]:
    """``(extra length, position)`` of the cheapest place for node ``u`` in route ``k``
    (inserted after that position, never inside the frozen head); ``(inf, -1)`` if none.
    """
    best = np.inf
    bp = -1
    n = L[k]
    for p in range(fp[k] - 1, n):
        a = seq[k, p]
        if p == n - 1:
            d = dist[a, u] + endd[k, u] - endd[k, a]
        else:
            b = seq[k, p + 1]
            d = dist[a, u] + dist[u, b] - dist[a, b]
        if d < best:
            best = d
            bp = p
    return best, bp


@njit(cache=True, nogil=True)
def insert_at(seq: np.ndarray, L: np.ndarray, k: int, p: int, u: int) -> None:
    """Insert node ``u`` into route ``k`` after position ``p`` (``rlen`` is not updated)."""
    # insert u after position p
    n = L[k]
    for q in range(n, p + 1, -1):
        seq[k, q] = seq[k, q - 1]
    seq[k, p + 1] = u
    L[k] = n + 1
