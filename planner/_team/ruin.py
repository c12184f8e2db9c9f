"""Ruin: the perturbation of each search iteration, which removes some free targets.

Five operators (``op``): random targets, a string of consecutive targets of one route,
the targets nearest to a random routed one, the worst score-per-length targets (randomised),
or the free part of a whole route. :func:`fix_over_budget` then trims any route a removal
left over budget (possible when ``dist`` is not metric).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from planner._team.rng import rng_float, rng_int
from planner._team.solution import EPS, route_length

__all__ = ["destroy", "fix_over_budget"]


@njit(cache=True, nogil=True)
def fix_over_budget(
    dist: np.ndarray,
    endd: np.ndarray,
    budget: np.ndarray,
    seq: np.ndarray,
    L: np.ndarray,
    rlen: np.ndarray,
    where: np.ndarray,
    fp: np.ndarray,
) -> None:
    """Drop targets from any route over budget (possible after a removal when ``dist`` is
    not metric, e.g. holds ``inf``) until it fits: the removal that shortens it most
    first. Terminates: the head alone fits (checked before the search)."""
    m = L.shape[0]
    for k in range(m):
        while rlen[k] > budget[k] + EPS and L[k] > fp[k]:
            n = L[k]
            bi = -1
            bl = np.inf
            for i in range(fp[k], n):
                # length without position i
                s = 0.0
                prev = seq[k, 0]
                for p in range(1, n):
                    if p == i:
                        continue
                    s += dist[prev, seq[k, p]]
                    prev = seq[k, p]
                s += endd[k, prev]
                if bi < 0 or s < bl:
                    bl = s
                    bi = i
            where[seq[k, bi]] = -1
            for q in range(bi, n - 1):
                seq[k, q] = seq[k, q + 1]
            L[k] = n - 1
            rlen[k] = route_length(dist, endd, seq, L, k)


@njit(cache=True, nogil=True)
def _remove_marked(
    dist: np.ndarray,
    endd: np.ndarray,
    seq: np.ndarray,
    L: np.ndarray,
    rlen: np.ndarray,
    where: np.ndarray,
    fp: np.ndarray,
    mark: np.ndarray,
) -> None:
    """Take every marked free target out of its route and recompute the routes that changed."""
    m = L.shape[0]
    for k in range(m):
        w = fp[k]
        n = L[k]
        for p in range(fp[k], n):
            u = seq[k, p]
            if mark[u]:
                where[u] = -1
            else:
                seq[k, w] = u
                w += 1
        if w != n:
            L[k] = w
            rlen[k] = route_length(dist, endd, seq, L, k)


@njit(cache=True, nogil=True)
def destroy(
    dist: np.ndarray,
    score: np.ndarray,
    endd: np.ndarray,
    seq: np.ndarray,
    L: np.ndarray,
    rlen: np.ndarray,
    where: np.ndarray,
    fp: np.ndarray,
    op: int,
    q: int,
    st: np.ndarray,
    mark: np.ndarray,
    buf: np.ndarray,
    keyb: np.ndarray,
) -> int:
    """Remove about ``q`` free targets; marks them in ``mark``. Returns the count."""
    m = L.shape[0]
    nr = 0
    for k in range(m):
        for p in range(fp[k], L[k]):
            buf[nr] = seq[k, p]
            nr += 1
    if nr == 0:
        return 0
    if q > nr:
        q = nr
    if q < 1:
        q = 1
    removed = 0
    if op == 0:
        # random nodes
        for t in range(q):
            r = t + rng_int(st, nr - t)
            x = buf[t]
            buf[t] = buf[r]
            buf[r] = x
            mark[buf[t]] = True
        removed = q
    elif op == 1:
        # a string of consecutive targets in one route (per route for m>1 sometimes)
        start_k = rng_int(st, m)
        for kk in range(m):
            k = (start_k + kk) % m
            nf = L[k] - fp[k]
            if nf > 0:
                ln = q
                if ln > nf:
                    ln = nf
                s0 = fp[k] + rng_int(st, nf - ln + 1)
                for p in range(s0, s0 + ln):
                    mark[seq[k, p]] = True
                removed = ln
                break
    elif op == 2:
        # related: the q targets nearest to a random routed target
        c = buf[rng_int(st, nr)]
        for t in range(nr):
            keyb[t] = dist[c, buf[t]]
        idx = np.argsort(keyb[:nr])
        for t in range(q):
            mark[buf[idx[t]]] = True
        removed = q
    elif op == 3:
        # worst: lowest score per saved length, randomised
        t = 0
        for k in range(m):
            n = L[k]
            for p in range(fp[k], n):
                u = seq[k, p]
                a = seq[k, p - 1]
                if p == n - 1:
                    g = dist[a, u] + endd[k, u] - endd[k, a]
                else:
                    g = dist[a, u] + dist[u, seq[k, p + 1]] - dist[a, seq[k, p + 1]]
                if g < 1e-12:
                    g = 1e-12
                keyb[t] = (score[u] / g) * (0.5 + rng_float(st))
                buf[t] = u
                t += 1
        idx = np.argsort(keyb[:nr])
        for t in range(q):
            mark[buf[idx[t]]] = True
        removed = q
    else:
        # a whole route (the free part)
        start_k = rng_int(st, m)
        for kk in range(m):
            k = (start_k + kk) % m
            if L[k] > fp[k]:
                for p in range(fp[k], L[k]):
                    mark[seq[k, p]] = True
                removed = L[k] - fp[k]
                break
    _remove_marked(dist, endd, seq, L, rlen, where, fp, mark)
    return removed
