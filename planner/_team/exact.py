"""The exact team solution when few targets are usable: Held-Karp per vehicle (the shared
core of :mod:`planner._held_karp`), then a dynamic programme over vehicles and subsets."""

from __future__ import annotations

import numpy as np
from numba import njit

from planner._held_karp import subset_order, subset_paths
from planner._team.solution import EPS

__all__ = ["exact_team"]


@njit(cache=True, nogil=True)
def exact_team(
    dist: np.ndarray,
    score: np.ndarray,
    endd: np.ndarray,
    budget: np.ndarray,
    elig: np.ndarray,
    heads_last: np.ndarray,
    head_len: np.ndarray,
    cand: np.ndarray,
) -> tuple[bool, np.ndarray, np.ndarray]:
    """Optimal solution when there are few usable targets (``t = len(cand)`` <= ~12).

    Held-Karp per vehicle gives the shortest route through every subset (from the end of
    its frozen head to its nearest allowed end); a DP over vehicles then combines disjoint
    feasible subsets for the best total score (ties: shorter total length). Returns the
    chosen subset of every vehicle and, per vehicle, its order (``orders[k, :cnt[k]]``,
    indices into ``cand``)."""
    m = budget.shape[0]
    t = cand.shape[0]
    nm = 1 << t
    INF = np.inf
    # into[q, j]: the leg cand[j] -> cand[q]
    into = np.empty((t, t))
    for q in range(t):
        for j in range(t):
            into[q, j] = dist[cand[j], cand[q]]
    no_bound = np.zeros(t)
    tables = np.empty((m, nm, t))  # per vehicle: the Held-Karp table, to rebuild orders
    sublen = np.full((m, nm), INF)  # best full route length per subset
    sublast = np.full((m, nm), -1, dtype=np.int64)
    for k in range(m):
        h = heads_last[k]
        emask = 0
        for i in range(t):
            if elig[k, cand[i]]:
                emask |= 1 << i
        d0 = np.empty(t)
        ends = np.empty(t)
        for j in range(t):
            d0[j] = dist[h, cand[j]]
            ends[j] = endd[k, cand[j]]
        lim = budget[k] + EPS
        # no lower bound: a partial route is dropped only once it is itself over budget
        best, done, done_last = subset_paths(into, d0, ends, no_bound, head_len[k], lim, lim, emask)
        tables[k] = best
        base = head_len[k] + endd[k, h]
        if base <= lim:
            sublen[k, 0] = base
        for s in range(1, nm):
            if done_last[s] >= 0 and done[s] < INF:
                sublen[k, s] = done[s]
                sublast[k, s] = done_last[s]
    val = np.zeros(nm)
    for s in range(nm):
        v = 0.0
        for i in range(t):
            if s & (1 << i):
                v += score[cand[i]]
        val[s] = v
    # G[k, U]: best (score, -length) with vehicles 0..k using exactly U
    G = np.full((m, nm), -INF)
    GL = np.full((m, nm), INF)
    ch = np.full((m, nm), -1, dtype=np.int64)
    for U in range(nm):
        if sublen[0, U] < INF:
            G[0, U] = val[U]
            GL[0, U] = sublen[0, U]
            ch[0, U] = U
    for k in range(1, m):
        for U in range(nm):
            S = U
            while True:
                if sublen[k, S] < INF and G[k - 1, U ^ S] > -INF:
                    sc = G[k - 1, U ^ S] + val[S]
                    ln = GL[k - 1, U ^ S] + sublen[k, S]
                    if sc > G[k, U] + EPS or (sc > G[k, U] - EPS and ln < GL[k, U]):
                        G[k, U] = sc
                        GL[k, U] = ln
                        ch[k, U] = S
                if S == 0:
                    break
                S = (S - 1) & U
    bestU = -1
    for U in range(nm):
        if G[m - 1, U] > -INF:  # noqa: SIM102 - kept as the recurrence reads
            if (
                bestU < 0
                or G[m - 1, U] > G[m - 1, bestU] + EPS
                or (G[m - 1, U] > G[m - 1, bestU] - EPS and GL[m - 1, U] < GL[m - 1, bestU])
            ):
                bestU = U
    orders = np.full((m, max(t, 1)), -1, dtype=np.int64)
    cnt = np.zeros(m, dtype=np.int64)
    if bestU < 0:
        return False, orders, cnt
    U = bestU
    for k in range(m - 1, -1, -1):
        S = ch[k, U]
        U = U ^ S
        if S == 0:
            continue
        # the order of S for vehicle k, from its Held-Karp table
        ok, order = subset_order(tables[k], into, S, sublast[k, S])
        if not ok:  # cannot happen: the same float sums are recomputed
            return False, orders, cnt
        cnt[k] = order.shape[0]
        for i in range(order.shape[0]):
            orders[k, i] = order[i]
    return True, orders, cnt
