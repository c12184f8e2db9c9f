"""The first plan of a swarm-sized problem, and the windows its search improves.

When drones x candidates is large (``planner.team_search.LARGE_PAIRS``), scanning every
route for every candidate at every insertion (``repair``) takes seconds. The first plan
here restricts each candidate to its ``K`` nearest routes: the ones it would join most
cheaply while they are empty (ties spread over co-located drones, so that twenty drones at
one airport all get work), then inserts greedily like ``repair`` does, best
``score / extra length`` first, keeping each candidate's best place between insertions.

The search then improves the plan window by window (``planner.team_search``): a few drones
whose routes lie close together, their targets and the unrouted ones nearest to them, solved
as a small problem from the current routes and kept when better. ``window`` picks them round
a route, half the time the one nearest to an unrouted target (``nearest_route``): where a
gain is to be had.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from planner._team.solution import EPS, best_insertion, insert_at, route_length

__all__ = ["greedy_nearest", "nearest_route", "window"]


@njit(cache=True, nogil=True)
def _spread(k: int, i: int) -> int:
    """A tie-break that differs per candidate, so equal routes share the candidates."""
    return ((k * 2654435761) ^ (i * 40503)) & 0xFFFFFFFF


@njit(cache=True, nogil=True, inline="always")
def _before(ka: float, ia: int, kb: float, ib: int) -> bool:
    """Heap order: the higher value first, then the lower candidate index."""
    return ka > kb or (ka == kb and ia < ib)


@njit(cache=True, nogil=True)
def _push(keys: np.ndarray, vals: np.ndarray, size: int, key: float, val: int) -> int:
    i = size
    while i > 0:
        parent = (i - 1) >> 1
        if not _before(key, val, keys[parent], vals[parent]):
            break
        keys[i] = keys[parent]
        vals[i] = vals[parent]
        i = parent
    keys[i] = key
    vals[i] = val
    return size + 1


@njit(cache=True, nogil=True)
def _pop(keys: np.ndarray, vals: np.ndarray, size: int) -> int:
    size -= 1
    key = keys[size]
    val = vals[size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and _before(keys[c + 1], vals[c + 1], keys[c], vals[c]):
            c += 1
        if not _before(keys[c], vals[c], key, val):
            break
        keys[i] = keys[c]
        vals[i] = vals[c]
        i = c
    keys[i] = key
    vals[i] = val
    return size


@njit(cache=True, nogil=True)
def greedy_nearest(
    dist: np.ndarray,
    score: np.ndarray,
    endd: np.ndarray,
    budget: np.ndarray,
    elig: np.ndarray,
    fp: np.ndarray,
    cand: np.ndarray,
    dscale: float,
    near: int,
    seq: np.ndarray,
    L: np.ndarray,
    rlen: np.ndarray,
    where: np.ndarray,
) -> int:
    """Insert unrouted candidates, best ``score / extra length`` first, each into one of its
    ``near`` nearest feasible routes, until nothing fits. Returns the number inserted."""
    m = L.shape[0]
    nc = cand.shape[0]
    K = min(near, m)
    # Each candidate's K cheapest feasible routes, kept sorted by (cost, spread) as the
    # routes come (route-major: every array is read along its rows).
    routes = np.full((nc, K), -1, np.int64)
    top_key = np.full((nc, K), np.inf)
    top_tie = np.zeros((nc, K), np.int64)
    count = np.zeros(nc, np.int64)
    for k in range(m):
        for i in range(nc):
            u = cand[i]
            if where[u] >= 0 or not elig[k, u]:
                continue
            d, _ = best_insertion(dist, endd, seq, L, fp, k, u)
            if not rlen[k] + d <= budget[k] + EPS:
                continue
            tie = _spread(k, i)
            c = count[i]
            if c == K and (
                d > top_key[i, K - 1] or (d == top_key[i, K - 1] and tie >= top_tie[i, K - 1])
            ):
                continue
            at = min(c, K - 1)
            while at > 0 and (
                top_key[i, at - 1] > d or (top_key[i, at - 1] == d and top_tie[i, at - 1] > tie)
            ):
                top_key[i, at] = top_key[i, at - 1]
                top_tie[i, at] = top_tie[i, at - 1]
                routes[i, at] = routes[i, at - 1]
                at -= 1
            top_key[i, at] = d
            top_tie[i, at] = tie
            routes[i, at] = k
            count[i] = min(c + 1, K)
    # The candidates of each route (the inverse lists), to refresh after an insertion.
    count_r = np.zeros(m + 1, np.int64)
    for i in range(nc):
        for t in range(K):
            if routes[i, t] >= 0:
                count_r[routes[i, t] + 1] += 1
    ptr = np.cumsum(count_r)
    fill = ptr[:-1].copy()
    members = np.empty(ptr[-1], np.int64)
    slot_of = np.empty(ptr[-1], np.int64)
    for i in range(nc):
        for t in range(K):
            k = routes[i, t]
            if k >= 0:
                members[fill[k]] = i
                slot_of[fill[k]] = t
                fill[k] += 1
    ins_d = np.full((nc, K), np.inf)
    ins_p = np.full((nc, K), -1, np.int64)
    bv = np.full(nc, -1.0)
    bt = np.full(nc, -1, np.int64)
    alive = np.zeros(nc, np.bool_)
    for i in range(nc):
        u = cand[i]
        if where[u] >= 0:
            continue
        alive[i] = True
        for t in range(K):
            k = routes[i, t]
            if k < 0:
                break
            d, p = best_insertion(dist, endd, seq, L, fp, k, u)
            ins_d[i, t] = d
            ins_p[i, t] = p
            if rlen[k] + d <= budget[k] + EPS:
                v = score[u] / (max(d, 0.0) + dscale)
                if v > bv[i]:
                    bv[i] = v
                    bt[i] = t
    # The best candidate: a heap of (value, candidate), stale entries skipped when popped.
    cap = nc + 16
    hkeys = np.empty(cap)
    hvals = np.empty(cap, np.int64)
    size = 0
    for i in range(nc):
        if alive[i] and bv[i] > -1.0:
            size = _push(hkeys, hvals, size, bv[i], i)
    inserted = 0
    while size > 0:
        bestv = hkeys[0]
        bi = hvals[0]
        size = _pop(hkeys, hvals, size)
        if not alive[bi] or bv[bi] != bestv:
            continue
        t = bt[bi]
        b = routes[bi, t]
        u = cand[bi]
        insert_at(seq, L, b, ins_p[bi, t], u)
        where[u] = b
        rlen[b] = route_length(dist, endd, seq, L, b)
        inserted += 1
        alive[bi] = False
        # Route b changed: its candidates' costs there, then their best places.
        for s in range(ptr[b], ptr[b + 1]):
            i = members[s]
            if not alive[i]:
                continue
            ts = slot_of[s]
            d, p = best_insertion(dist, endd, seq, L, fp, b, cand[i])
            ins_d[i, ts] = d
            ins_p[i, ts] = p
            was = bv[i]
            v = -1.0
            if rlen[b] + d <= budget[b] + EPS:
                v = score[cand[i]] / (max(d, 0.0) + dscale)
            if bt[i] != ts:
                if v > was or (v == was and v > -1.0 and ts < bt[i]):
                    bv[i] = v  # route b is now its best place
                    bt[i] = ts
                    size = _push(hkeys, hvals, size, v, i)
                    hkeys, hvals = _heap_room(hkeys, hvals, size)
                continue
            if v >= was:  # still its best place (the others did not change)
                bv[i] = v
                if v != was:
                    size = _push(hkeys, hvals, size, v, i)
                    hkeys, hvals = _heap_room(hkeys, hvals, size)
                continue
            bv[i] = -1.0
            bt[i] = -1
            for tt in range(K):
                k = routes[i, tt]
                if k < 0:
                    break
                if rlen[k] + ins_d[i, tt] <= budget[k] + EPS:
                    v = score[cand[i]] / (max(ins_d[i, tt], 0.0) + dscale)
                    if v > bv[i]:
                        bv[i] = v
                        bt[i] = tt
            if bv[i] > -1.0:
                size = _push(hkeys, hvals, size, bv[i], i)
                hkeys, hvals = _heap_room(hkeys, hvals, size)
    return inserted


@njit(cache=True, nogil=True)
def _heap_room(keys: np.ndarray, vals: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The heap's arrays, doubled when full."""
    if size < keys.shape[0]:
        return keys, vals
    return _grow_f(keys), _grow_i(vals)


@njit(cache=True, nogil=True)
def _grow_f(a: np.ndarray) -> np.ndarray:
    out = np.empty(2 * a.shape[0])
    out[: a.shape[0]] = a
    return out


@njit(cache=True, nogil=True)
def _grow_i(a: np.ndarray) -> np.ndarray:
    out = np.empty(2 * a.shape[0], np.int64)
    out[: a.shape[0]] = a
    return out


@njit(cache=True, nogil=True)
def window(
    dist: np.ndarray,
    seq: np.ndarray,
    L: np.ndarray,
    seed_route: int,
    size: int,
) -> np.ndarray:
    """The ``size`` routes closest to route ``seed_route`` (itself first): by the shortest
    distance between a node of theirs and a node of its."""
    m = L.shape[0]
    gap = np.full(m, np.inf)
    for k in range(m):
        if k == seed_route:
            gap[k] = -1.0
            continue
        best = np.inf
        for a in range(L[seed_route]):
            row = dist[seq[seed_route, a]]
            for b in range(L[k]):
                d = row[seq[k, b]]
                if d < best:
                    best = d
        gap[k] = best
    order = np.argsort(gap, kind="mergesort")
    return order[: min(size, m)].copy()


@njit(cache=True, nogil=True)
def nearest_route(dist: np.ndarray, seq: np.ndarray, L: np.ndarray, u: int) -> int:
    """The route with a node nearest to node ``u``."""
    best = np.inf
    best_k = 0
    for k in range(L.shape[0]):
        for a in range(L[k]):
            d = dist[seq[k, a], u]
            if d < best:
                best = d
                best_k = k
    return best_k
