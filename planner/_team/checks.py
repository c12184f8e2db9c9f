"""One pass over a distance matrix for what the search must know about it (numba, nogil):
a swarm's matrix is 25 million entries, and each numpy test of it makes a temporary."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["keep_reachable", "matrix_flags"]


@njit(cache=True, nogil=True)
def matrix_flags(dist: np.ndarray) -> tuple[bool, bool, bool, float]:
    """``(has_nan, has_negative, all_finite, finite_mean)`` of ``dist``: the mean of its
    finite entries, each row summed in order, then the rows' sums in order (1.0 if none),
    as ``planner.geometry`` sums a table it copies (``gather_rows``)."""
    has_nan = False
    has_neg = False
    finite = True
    total = 0.0
    count = 0
    for i in range(dist.shape[0]):
        row = dist[i]
        row_total = 0.0
        for j in range(row.shape[0]):
            x = row[j]
            if x != x:
                has_nan = True
            elif x < 0.0:
                has_neg = True
            elif x == np.inf:
                finite = False
            else:
                row_total += x
                count += 1
        total += row_total
    return has_nan, has_neg, finite and not has_nan, total / count if count else 1.0


@njit(cache=True, nogil=True)
def keep_reachable(
    el: np.ndarray,
    head_len: np.ndarray,
    last: np.ndarray,
    lb: np.ndarray,
    lb_end: np.ndarray,
    budget: np.ndarray,
    tol: float,
) -> None:
    """Clear ``el[k, u]`` unless vehicle ``k`` could go from the end of its head
    (``last[k]``, ``head_len[k]`` long) to ``u`` and on to an end within its budget, by the
    lower bounds ``lb`` and ``lb_end`` (in place: no vehicles x nodes temporaries)."""
    for k in range(el.shape[0]):
        row = lb[last[k]]
        for u in range(el.shape[1]):
            if el[k, u]:
                el[k, u] = head_len[k] + row[u] + lb_end[k, u] <= budget[k] + tol
