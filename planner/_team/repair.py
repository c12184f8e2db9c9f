"""Recreate: greedy insertion of unrouted targets into the cheapest feasible places."""

from __future__ import annotations

import numpy as np
from numba import njit

from planner._team.rng import rng_float
from planner._team.solution import EPS, best_insertion, insert_at, route_length

__all__ = ["SCAN_PAIRS", "repair"]

SCAN_PAIRS = 4096
"""Up to this many vehicle x candidate pairs, ``repair`` scans them all at each insertion."""


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
    """Best insertion cost and place of every candidate in route ``k``, ``ins_d[i, k]`` and
    ``ins_p[i, k]`` (``inf`` where the candidate is routed already or not eligible for ``k``):
    candidate-major, so that one candidate's costs over all routes are contiguous.
    """
    for i in range(cand.shape[0]):
        u = cand[i]
        if where[u] >= 0 or not elig[k, u]:
            ins_d[i, k] = np.inf
            ins_p[i, k] = -1
        else:
            d, p = best_insertion(dist, endd, seq, L, fp, k, u)
            ins_d[i, k] = d
            ins_p[i, k] = p


@njit(cache=True, nogil=True)
def _value(su: float, d: float, rlen: float, budget: float, dscale: float) -> float:
    """The greedy's value of an insertion costing ``d`` into a route of length ``rlen``
    (-1 when it does not fit the budget)."""
    if d == np.inf or not rlen + d <= budget + EPS:
        return -1.0
    dd = d
    if dd < 0.0:
        dd = 0.0
    return su / (dd + dscale)


@njit(cache=True, nogil=True)
def _repair_greedy(
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
    dscale: float,
    ins_d: np.ndarray,
    ins_p: np.ndarray,
) -> int:
    """``repair`` without noise, with each candidate's best route kept between insertions.

    It makes the same choices as scanning every (candidate, route) pair at each step, the
    first of the best values in that order (candidates, then routes), but an insertion into
    route ``b`` only rescans the candidates whose best was ``b`` and whose value there fell:
    the other routes did not change. That keeps a swarm's construction (1,000 routes, 5,000
    candidates) within a fraction of a second."""
    m = L.shape[0]
    nc = cand.shape[0]
    for k in range(m):
        _fill_row(dist, endd, elig, seq, L, fp, where, cand, k, ins_d, ins_p)
    su = np.empty(nc)
    bv = np.full(nc, -1.0)  # best value over the routes (-1: fits nowhere yet)
    bk = np.full(nc, -1, np.int64)  # its route, the first of equals
    alive = np.zeros(nc, np.bool_)  # unrouted and not forbidden
    for i in range(nc):
        u = cand[i]
        if where[u] >= 0 or forbid[u]:
            continue
        alive[i] = True
        su[i] = score[u] ** alpha if alpha != 1.0 else score[u]
        for k in range(m):
            v = _value(su[i], ins_d[i, k], rlen[k], budget[k], dscale)
            if v > bv[i]:
                bv[i] = v
                bk[i] = k
    inserted = 0
    while True:
        bestv = -1.0
        bi = -1
        for i in range(nc):
            if bv[i] > bestv:
                bestv = bv[i]
                bi = i
        if bi < 0:
            break
        b = bk[bi]
        u = cand[bi]
        insert_at(seq, L, b, ins_p[bi, b], u)
        where[u] = b
        rlen[b] = route_length(dist, endd, seq, L, b)
        inserted += 1
        alive[bi] = False
        bv[bi] = -1.0
        bk[bi] = -1
        _fill_row(dist, endd, elig, seq, L, fp, where, cand, b, ins_d, ins_p)
        for i in range(nc):
            if not alive[i]:
                continue
            v = _value(su[i], ins_d[i, b], rlen[b], budget[b], dscale)
            if bk[i] == b:
                if v >= bv[i]:
                    bv[i] = (
                        v  # still the first best: earlier routes were below, later ones not above
                    )
                    continue
                bv[i] = -1.0
                bk[i] = -1
                for k in range(m):
                    w = _value(su[i], ins_d[i, k], rlen[k], budget[k], dscale)
                    if w > bv[i]:
                        bv[i] = w
                        bk[i] = k
            elif v > bv[i] or (v == bv[i] and v > -1.0 and b < bk[i]):  # b is now the first
                bv[i] = v
                bk[i] = b
    return inserted


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
    first (randomised by ``noise``), until nothing fits. Returns the number inserted.

    Without noise on a large problem, ``_repair_greedy`` makes the same choices faster; a
    small one is scanned whole (its bookkeeping would cost more than the scan)."""
    if noise == 0.0 and L.shape[0] * cand.shape[0] > SCAN_PAIRS:
        return _repair_greedy(
            dist, score, endd, budget, elig, fp, cand, seq, L, rlen, where, forbid, alpha,
            dscale, ins_d, ins_p,
        )  # fmt: skip
    return _repair_scan(
        dist, score, endd, budget, elig, fp, cand, seq, L, rlen, where, forbid, alpha, noise,
        dscale, st, ins_d, ins_p,
    )  # fmt: skip


@njit(cache=True, nogil=True)
def _repair_scan(
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
    """``repair`` scanning every (candidate, route) pair at each insertion."""
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
                d = ins_d[i, k]
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
        insert_at(seq, L, bk, ins_p[bi, bk], u)
        where[u] = bk
        rlen[bk] = route_length(dist, endd, seq, L, bk)
        inserted += 1
        _fill_row(dist, endd, elig, seq, L, fp, where, cand, bk, ins_d, ins_p)
    return inserted
