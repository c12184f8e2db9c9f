"""Recreate: greedy insertion of unrouted targets into the cheapest feasible places."""

from __future__ import annotations

import numpy as np
from numba import njit

from planner._team.rng import rng_float
from planner._team.solution import EPS, best_insertion, insert_at, route_length

__all__ = ["repair"]


@njit(cache=True, nogil=True)
def _fill_row(
    dist: np.ndarray,
    endd: np.ndarray,
    elig: np.ndarray,
    seq: np.ndarray,
    L: np.ndarray,
    fp: np.ndarray,
    where: np.ndarray,
    cand: np.ndarray,
    k: int,
    ins_d: np.ndarray,
    ins_p: np.ndarray,
) -> None:
    """Best insertion cost and place of every candidate in route ``k`` (``inf`` where the
    candidate is routed already or not eligible for ``k``).
    """
    for i in range(cand.shape[0]):
        u = cand[i]
        if where[u] >= 0 or not elig[k, u]:
            ins_d[k, i] = np.inf
            ins_p[k, i] = -1
        else:
            d, p = best_insertion(dist, endd, seq, L, fp, k, u)
            ins_d[k, i] = d
            ins_p[k, i] = p


@njit(cache=True, nogil=True)
def repair(
    dist: np.ndarray,
    score: np.ndarray,
    endd: np.ndarray,
    budget: np.ndarray,
    elig: np.ndarray,
    fp: np.ndarray,
    cand: np.ndarray,
    seq: np.ndarray,
    L: np.ndarray,
    rlen: np.ndarray,
    where: np.ndarray,
    forbid: np.ndarray,
    alpha: float,
    noise: float,
    dscale: float,
    st: np.ndarray,
    ins_d: np.ndarray,
    ins_p: np.ndarray,
) -> int:
    """Greedy insertion of unrouted candidates, best ``score**alpha / extra length``
    first (randomised by ``noise``), until nothing fits. Returns the number inserted."""
    m = L.shape[0]
    nc = cand.shape[0]
    for k in range(m):
        _fill_row(dist, endd, elig, seq, L, fp, where, cand, k, ins_d, ins_p)
    inserted = 0
    while True:
        bestv = -1.0
        bk = -1
        bi = -1
        for i in range(nc):
            u = cand[i]
            if where[u] >= 0 or forbid[u]:
                continue
            su = score[u]
            if alpha != 1.0:
                su = su**alpha
            for k in range(m):
                d = ins_d[k, i]
                if d == np.inf:
                    continue
                if rlen[k] + d <= budget[k] + EPS:
                    dd = d
                    if dd < 0.0:
                        dd = 0.0
                    v = su / (dd + dscale)
                    if noise > 0.0:
                        v *= 1.0 + noise * (rng_float(st) - 0.5)
                    if v > bestv:
                        bestv = v
                        bk = k
                        bi = i
        if bk < 0:
            break
        u = cand[bi]
        insert_at(seq, L, bk, ins_p[bk, bi], u)
        where[u] = bk
        rlen[bk] = route_length(dist, endd, seq, L, bk)
        inserted += 1
        _fill_row(dist, endd, elig, seq, L, fp, where, cand, bk, ins_d, ins_p)
    return inserted
