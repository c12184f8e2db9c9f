"""Local-search moves, each applied while it shortens a route (or raises the score).

Inside one route: 2-opt and or-opt (segments of 1-3, both orientations), combined by
:func:`optimise_route`. Between routes: relocation and exchange of single targets that
shorten the total length, and :func:`replace_move`, which swaps a routed target for an
unrouted one of higher score. Frozen positions (below ``fp[k]``) are never touched.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from planner._team.solution import EPS, IMPROVE_EPS, best_insertion, insert_at, route_length

__all__ = [
    "optimise_route",
    "or_opt",
    "relocate_inter",
    "replace_move",
    "swap_inter",
    "two_opt",
]


@njit(cache=True, nogil=True)
def two_opt(
    dist: np.ndarray, endd: np.ndarray, seq: np.ndarray, L: np.ndarray, fp: np.ndarray, k: int
) -> bool:
    """Reverse segments of the free part of route ``k`` while one shortens it (first
    improvement). Returns True if the route changed; ``rlen`` is not updated.
    """
    n = L[k]
    changed = False
    improved = True
    while improved:
        improved = False
        for i in range(fp[k], n - 1):
            a = seq[k, i - 1]
            for j in range(i + 1, n):
                b = seq[k, i]
                c = seq[k, j]
                if j == n - 1:
                    before = dist[a, b] + endd[k, c]
                    after = dist[a, c] + endd[k, b]
                else:
                    e = seq[k, j + 1]
                    before = dist[a, b] + dist[c, e]
                    after = dist[a, c] + dist[b, e]
                if after < before - IMPROVE_EPS:
                    lo = i
                    hi = j
                    while lo < hi:
                        t = seq[k, lo]
                        seq[k, lo] = seq[k, hi]
                        seq[k, hi] = t
                        lo += 1
                        hi -= 1
                    improved = True
                    changed = True
    return changed


@njit(cache=True, nogil=True)
def or_opt(
    dist: np.ndarray,
    endd: np.ndarray,
    seq: np.ndarray,
    L: np.ndarray,
    fp: np.ndarray,
    k: int,
    tmp: np.ndarray,
) -> bool:
    """Move segments of 1-3 free targets of route ``k`` elsewhere in it, either way round,
    while one move shortens it (``tmp``: scratch of the route's capacity). Returns True if the
    route changed; ``rlen`` is not updated.
    """
    n = L[k]
    changed = False
    improved = True
    while improved:
        improved = False
        for s in range(1, 4):
            for i in range(fp[k], n - s + 1):
                j = i + s - 1
                a = seq[k, i - 1]
                f = seq[k, i]
                l = seq[k, j]  # noqa: E741 - the last of the moved segment
                if j == n - 1:
                    gain = dist[a, f] + endd[k, l] - endd[k, a]
                else:
                    b = seq[k, j + 1]
                    gain = dist[a, f] + dist[l, b] - dist[a, b]
                if gain <= IMPROVE_EPS:
                    continue
                bestc = gain - IMPROVE_EPS
                bp = -2
                brev = False
                for p in range(fp[k] - 1, n):
                    if p >= i - 1 and p <= j:
                        continue
                    x = seq[k, p]
                    if p == n - 1:
                        c1 = dist[x, f] + endd[k, l] - endd[k, x]
                        c2 = dist[x, l] + endd[k, f] - endd[k, x]
                    else:
                        y = seq[k, p + 1]
                        c1 = dist[x, f] + dist[l, y] - dist[x, y]
                        c2 = dist[x, l] + dist[f, y] - dist[x, y]
                    if c1 < bestc:
                        bestc = c1
                        bp = p
                        brev = False
                    if s > 1 and c2 < bestc:
                        bestc = c2
                        bp = p
                        brev = True
                if bp >= -1:
                    # rebuild: nodes outside the segment, the segment after position bp
                    w = 0
                    for q in range(n):
                        if q >= i and q <= j:
                            continue
                        tmp[w] = seq[k, q]
                        w += 1
                        if q == bp:
                            if brev:
                                for r in range(j, i - 1, -1):
                                    tmp[w] = seq[k, r]
                                    w += 1
                            else:
                                for r in range(i, j + 1):
                                    tmp[w] = seq[k, r]
                                    w += 1
                    for q in range(n):
                        seq[k, q] = tmp[q]
                    improved = True
                    changed = True
                    break
            if improved:
                break
    return changed


@njit(cache=True, nogil=True)
def optimise_route(
    dist: np.ndarray,
    endd: np.ndarray,
    seq: np.ndarray,
    L: np.ndarray,
    rlen: np.ndarray,
    fp: np.ndarray,
    k: int,
    tmp: np.ndarray,
) -> None:
    """2-opt then or-opt on route ``k``, again while or-opt still moves something (10
    rounds at most); then its length is recomputed into ``rlen[k]``.
    """
    if L[k] - fp[k] < 2:
        rlen[k] = route_length(dist, endd, seq, L, k)
        return
    for _ in range(10):
        c1 = two_opt(dist, endd, seq, L, fp, k)
        c2 = or_opt(dist, endd, seq, L, fp, k, tmp)
        if not (c1 or c2):
            break
        if not c2:
            break
    rlen[k] = route_length(dist, endd, seq, L, k)


@njit(cache=True, nogil=True)
def relocate_inter(
    dist: np.ndarray,
    endd: np.ndarray,
    budget: np.ndarray,
    elig: np.ndarray,
    seq: np.ndarray,
    L: np.ndarray,
    rlen: np.ndarray,
    where: np.ndarray,
    fp: np.ndarray,
) -> bool:
    """Move single targets between routes when it shortens the total length."""
    m = L.shape[0]
    changed = False
    for ka in range(m):
        i = fp[ka]
        while i < L[ka]:
            u = seq[ka, i]
            n = L[ka]
            a = seq[ka, i - 1]
            if i == n - 1:
                gain = dist[a, u] + endd[ka, u] - endd[ka, a]
            else:
                b = seq[ka, i + 1]
                gain = dist[a, u] + dist[u, b] - dist[a, b]
            bestc = gain - IMPROVE_EPS
            bk = -1
            bp = -1
            for kb in range(m):
                if kb == ka or not elig[kb, u]:
                    continue
                d, p = best_insertion(dist, endd, seq, L, fp, kb, u)
                if d < bestc and rlen[kb] + d <= budget[kb] + EPS:
                    bestc = d
                    bk = kb
                    bp = p
            if bk >= 0:
                for q in range(i, n - 1):
                    seq[ka, q] = seq[ka, q + 1]
                L[ka] = n - 1
                insert_at(seq, L, bk, bp, u)
                where[u] = bk
                rlen[ka] = route_length(dist, endd, seq, L, ka)
                rlen[bk] = route_length(dist, endd, seq, L, bk)
                changed = True
            else:
                i += 1
    return changed


@njit(cache=True, nogil=True)
def swap_inter(
    dist: np.ndarray,
    endd: np.ndarray,
    budget: np.ndarray,
    elig: np.ndarray,
    seq: np.ndarray,
    L: np.ndarray,
    rlen: np.ndarray,
    where: np.ndarray,
    fp: np.ndarray,
) -> bool:
    """Exchange two targets of different routes when it shortens the total length and
    both routes stay within budget (each node takes the other's place)."""
    m = L.shape[0]
    changed = False
    for ka in range(m):
        for kb in range(ka + 1, m):
            for i in range(fp[ka], L[ka]):
                u = seq[ka, i]
                if not elig[kb, u]:
                    continue
                a0 = seq[ka, i - 1]
                if i == L[ka] - 1:
                    ua = dist[a0, u] + endd[ka, u]
                else:
                    a1 = seq[ka, i + 1]
                    ua = dist[a0, u] + dist[u, a1]
                for j in range(fp[kb], L[kb]):
                    v = seq[kb, j]
                    if not elig[ka, v]:
                        continue
                    b0 = seq[kb, j - 1]
                    if j == L[kb] - 1:
                        vb = dist[b0, v] + endd[kb, v]
                        ub = dist[b0, u] + endd[kb, u]
                    else:
                        b1 = seq[kb, j + 1]
                        vb = dist[b0, v] + dist[v, b1]
                        ub = dist[b0, u] + dist[u, b1]
                    if i == L[ka] - 1:
                        va = dist[a0, v] + endd[ka, v]
                    else:
                        va = dist[a0, v] + dist[v, seq[ka, i + 1]]
                    da = va - ua
                    db = ub - vb
                    if (
                        da + db < -IMPROVE_EPS
                        and rlen[ka] + da <= budget[ka] + EPS
                        and rlen[kb] + db <= budget[kb] + EPS
                    ):
                        seq[ka, i] = v
                        seq[kb, j] = u
                        where[u] = kb
                        where[v] = ka
                        rlen[ka] = route_length(dist, endd, seq, L, ka)
                        rlen[kb] = route_length(dist, endd, seq, L, kb)
                        changed = True
                        break
    return changed


@njit(cache=True, nogil=True)
def replace_move(
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
) -> bool:
    """Swap a routed target for an unrouted one of higher score (or equal score and a
    shorter route), each taking the best place in the route. First improvement."""
    m = L.shape[0]
    changed = False
    for k in range(m):
        i = fp[k]
        while i < L[k]:
            v = seq[k, i]
            n = L[k]
            a = seq[k, i - 1]
            if i == n - 1:
                gain = dist[a, v] + endd[k, v] - endd[k, a]
            else:
                b = seq[k, i + 1]
                gain = dist[a, v] + dist[v, b] - dist[a, b]
            if not np.isfinite(gain):  # the shortcut a -> b does not exist
                i += 1
                continue
            slack = budget[k] + EPS - (rlen[k] - gain)
            # route without v
            for q in range(i, n - 1):
                seq[k, q] = seq[k, q + 1]
            L[k] = n - 1
            bu = -1
            bd = 0.0
            bpos = -1
            bs = score[v]
            for c in range(cand.shape[0]):
                u = cand[c]
                su = score[u]
                if where[u] >= 0 or not elig[k, u] or su < score[v]:
                    continue
                if bu >= 0 and su < bs:
                    continue
                d, p = best_insertion(dist, endd, seq, L, fp, k, u)
                if d > slack:
                    continue
                if su <= score[v] and d >= gain - IMPROVE_EPS:
                    continue
                if bu < 0 or su > bs or d < bd:
                    bu = u
                    bd = d
                    bpos = p
                    bs = su
            if bu >= 0:
                insert_at(seq, L, k, bpos, bu)
                where[bu] = k
                where[v] = -1
                rlen[k] = route_length(dist, endd, seq, L, k)
                changed = True
                i = fp[k]
            else:
                # put v back
                insert_at(seq, L, k, i - 1, v)
                i += 1
    return changed
