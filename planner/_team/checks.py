"""What the search keeps of its vehicles' eligibility (numba, nogil), in place: a swarm's is
5 million entries, and each numpy test of it makes a temporary. The checks of the distance
matrix itself are ``planner.geometry``'s (``matrix_flags``), made as a table is copied."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["keep_reachable"]


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
