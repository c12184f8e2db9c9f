"""Numba kernels of the team orienteering search (see :mod:`planner.team_search`).

A solution is four arrays:

- ``seq`` (m, cap) int64: route ``k`` is ``seq[k, :L[k]]`` = start, frozen prefix...,
  free targets... . The end node is implicit: it is always the allowed end nearest to the
  last node (``endn[k, last]``, at distance ``endd[k, last]``), which is optimal since the
  end only touches the last leg.
- ``L`` (m,) int64: number of stored nodes of each route (start + prefix + targets).
- ``rlen`` (m,) float64: route lengths, end leg included.
- ``where`` (n,) int64: the vehicle visiting a node, -1 if none (targets only).

``fp[k]`` is the first free position of route ``k`` (1 + length of its prefix): positions
below it are frozen and never moved or removed.

Every kernel draws its random numbers from a xorshift64 state held in a uint64 array, so a
run is a pure function of its inputs and the number of iterations, however it is chunked.
"""

from __future__ import annotations

import numpy as np
from numba import njit

EPS = 1e-9
IMPROVE_EPS = 1e-10

# float state slots
F_CUR_SCORE = 0
F_CUR_LEN = 1
F_BEST_SCORE = 2
F_BEST_LEN = 3
F_T0 = 4
F_MEAN_SCORE = 5
N_FSTATE = 6
# int state slots
I_ITER = 0
I_LAST_BEST = 1
I_CYCLE_POS = 2
I_LAST_RESTART = 3
I_N_BEST_UPDATES = 4
N_ISTATE = 5


# --------------------------------------------------------------------------- random
@njit(cache=True, nogil=True)
def rng_next(st):
    x = st[0]
    x ^= x << np.uint64(13)
    x ^= x >> np.uint64(7)
    x ^= x << np.uint64(17)
    st[0] = x
    return x


@njit(cache=True, nogil=True)
def rng_float(st):
    return np.float64(rng_next(st) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True, nogil=True)
def rng_int(st, n):
    r = int(rng_float(st) * n)
    if r >= n:
        r = n - 1
    return r


# --------------------------------------------------------------------------- basics
@njit(cache=True, nogil=True)
def route_length(dist, endd, seq, L, k):
    s = 0.0
    for p in range(L[k] - 1):
        s += dist[seq[k, p], seq[k, p + 1]]
    s += endd[k, seq[k, L[k] - 1]]
    return s


@njit(cache=True, nogil=True)
def total_score(score, seq, L, fp):
    s = 0.0
    for k in range(L.shape[0]):
        for p in range(1, L[k]):
            s += score[seq[k, p]]
    return s


@njit(cache=True, nogil=True)
def copy_sol(seq, L, rlen, where, seq2, L2, rlen2, where2):
    m = L.shape[0]
    for k in range(m):
        L2[k] = L[k]
        rlen2[k] = rlen[k]
        for p in range(L[k]):
            seq2[k, p] = seq[k, p]
    for i in range(where.shape[0]):
        where2[i] = where[i]


@njit(cache=True, nogil=True)
def best_insertion(dist, endd, seq, L, fp, k, u):
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
def insert_at(seq, L, k, p, u):
    # insert u after position p
    n = L[k]
    for q in range(n, p + 1, -1):
        seq[k, q] = seq[k, q - 1]
    seq[k, p + 1] = u
    L[k] = n + 1


# --------------------------------------------------------------------------- repair
@njit(cache=True, nogil=True)
def _fill_row(dist, endd, elig, seq, L, fp, where, cand, k, ins_d, ins_p):
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
def repair(dist, score, endd, budget, elig, fp, cand, seq, L, rlen, where,
           forbid, alpha, noise, dscale, st, ins_d, ins_p):
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
                su = su ** alpha
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


# --------------------------------------------------------------------------- intra-route
@njit(cache=True, nogil=True)
def two_opt(dist, endd, seq, L, fp, k):
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
def or_opt(dist, endd, seq, L, fp, k, tmp):
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
                l = seq[k, j]
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
def optimise_route(dist, endd, seq, L, rlen, fp, k, tmp):
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


# --------------------------------------------------------------------------- inter-route
@njit(cache=True, nogil=True)
def relocate_inter(dist, endd, budget, elig, seq, L, rlen, where, fp):
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
def swap_inter(dist, endd, budget, elig, seq, L, rlen, where, fp):
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
                    if da + db < -IMPROVE_EPS and rlen[ka] + da <= budget[ka] + EPS \
                            and rlen[kb] + db <= budget[kb] + EPS:
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
def replace_move(dist, score, endd, budget, elig, fp, cand, seq, L, rlen, where):
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


# --------------------------------------------------------------------------- destroy
@njit(cache=True, nogil=True)
def fix_over_budget(dist, endd, budget, seq, L, rlen, where, fp):
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
def _remove_marked(dist, endd, seq, L, rlen, where, fp, mark):
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
def destroy(dist, score, endd, seq, L, rlen, where, fp, op, q, st, mark, buf, keyb):
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


@njit(cache=True, nogil=True)
def all_within_budget(budget, rlen):
    for k in range(rlen.shape[0]):
        if not rlen[k] <= budget[k] + EPS:
            return False
    return True


# --------------------------------------------------------------------------- driver
@njit(cache=True, nogil=True)
def improve(dist, score, endd, budget, elig, fp, cand, seq, L, rlen, where, forbid,
            alpha, noise, dscale, st, ins_d, ins_p, tmp, nofb):
    """Repair (without the forbidden nodes), then alternate route optimisation,
    inter-route moves, replacement and repair until nothing changes."""
    m = L.shape[0]
    repair(dist, score, endd, budget, elig, fp, cand, seq, L, rlen, where,
           forbid, alpha, noise, dscale, st, ins_d, ins_p)
    for _ in range(8):
        for k in range(m):
            optimise_route(dist, endd, seq, L, rlen, fp, k, tmp)
        ch = False
        if m > 1:
            ch = relocate_inter(dist, endd, budget, elig, seq, L, rlen, where, fp)
            ch = swap_inter(dist, endd, budget, elig, seq, L, rlen, where, fp) or ch
            if ch:
                for k in range(m):
                    optimise_route(dist, endd, seq, L, rlen, fp, k, tmp)
        ins = repair(dist, score, endd, budget, elig, fp, cand, seq, L, rlen, where,
                     nofb, alpha, 0.0, dscale, st, ins_d, ins_p)
        rep = replace_move(dist, score, endd, budget, elig, fp, cand, seq, L, rlen, where)
        if ins == 0 and not rep and not ch:
            break


@njit(cache=True, nogil=True)
def total_len(rlen):
    s = 0.0
    for k in range(rlen.shape[0]):
        s += rlen[k]
    return s


@njit(cache=True, nogil=True)
def construct(dist, score, endd, budget, elig, fp, cand, dscale, st,
              seq, L, rlen, where, fstate, istate, ins_d, ins_p, tmp):
    n = where.shape[0]
    nofb = np.zeros(n, dtype=np.bool_)
    improve(dist, score, endd, budget, elig, fp, cand, seq, L, rlen, where, nofb,
            1.0, 0.0, dscale, st, ins_d, ins_p, tmp, nofb)
    fstate[F_CUR_SCORE] = total_score(score, seq, L, fp)
    fstate[F_CUR_LEN] = total_len(rlen)


@njit(cache=True, nogil=True)
def run_chunk(dist, score, endd, budget, elig, fp, cand, dscale, st, n_iter,
              cseq, cL, crlen, cwhere,
              bseq, bL, brlen, bwhere,
              xseq, xL, xrlen, xwhere,
              fstate, istate, params, ins_d, ins_p, tmp):
    """``n_iter`` iterations of the ruin-and-recreate search from the current solution
    ``c*``; the best is kept in ``b*``; ``x*`` is scratch. Returns True when the best
    improved in this chunk."""
    n = cwhere.shape[0]
    m = cL.shape[0]
    nc = cand.shape[0]
    mark = np.zeros(n, dtype=np.bool_)
    nofb = np.zeros(n, dtype=np.bool_)
    buf = np.empty(nc + 1, dtype=np.int64)
    keyb = np.empty(nc + 1, dtype=np.float64)
    cycle = int(params[0])
    qfrac = params[1]
    temp_frac = params[2]
    any_best = False
    for _ in range(n_iter):
        it = istate[I_ITER]
        istate[I_ITER] = it + 1
        # restart from the best at the start of each cooling cycle
        pos = istate[I_CYCLE_POS]
        if pos >= cycle:
            copy_sol(bseq, bL, brlen, bwhere, cseq, cL, crlen, cwhere)
            fstate[F_CUR_SCORE] = fstate[F_BEST_SCORE]
            fstate[F_CUR_LEN] = fstate[F_BEST_LEN]
            pos = 0
        istate[I_CYCLE_POS] = pos + 1
        temp = fstate[F_T0] * (1.0 - pos / cycle)

        copy_sol(cseq, cL, crlen, cwhere, xseq, xL, xrlen, xwhere)
        nr = 0
        for k in range(m):
            nr += xL[k] - fp[k]
        qmax = int(qfrac * nr) + 2
        q = 1 + rng_int(st, qmax)
        r = rng_float(st)
        if r < 0.30:
            op = 0
        elif r < 0.55:
            op = 1
        elif r < 0.80:
            op = 2
        elif r < 0.97:
            op = 3
        else:
            op = 4
        if m == 1 and op == 4:
            op = 1
        for i in range(n):
            mark[i] = False
        destroy(dist, score, endd, xseq, xL, xrlen, xwhere, fp, op, q, st, mark, buf, keyb)
        fix_over_budget(dist, endd, budget, xseq, xL, xrlen, xwhere, fp)
        ra = rng_float(st)
        alpha = 1.0
        if ra < 0.25:
            alpha = 2.0
        elif ra < 0.4:
            alpha = 0.5
        noise = 0.0
        if rng_float(st) < 0.5:
            noise = 0.6 * rng_float(st)
        improve(dist, score, endd, budget, elig, fp, cand, xseq, xL, xrlen, xwhere, mark,
                alpha, noise, dscale, st, ins_d, ins_p, tmp, nofb)
        sc = total_score(score, xseq, xL, fp)
        tl = total_len(xrlen)
        cs = fstate[F_CUR_SCORE]
        accept = False
        if not all_within_budget(budget, xrlen):
            pass
        elif sc > cs + EPS or (sc > cs - EPS and tl < fstate[F_CUR_LEN] - 1e-9):
            accept = True
        elif temp > 0.0:
            delta = sc - cs
            if delta > 0.0:
                delta = 0.0
            if rng_float(st) < np.exp(delta / temp):
                accept = True
        if accept:
            copy_sol(xseq, xL, xrlen, xwhere, cseq, cL, crlen, cwhere)
            fstate[F_CUR_SCORE] = sc
            fstate[F_CUR_LEN] = tl
            bs = fstate[F_BEST_SCORE]
            if sc > bs + EPS or (sc > bs - EPS and tl < fstate[F_BEST_LEN] - 1e-9):
                copy_sol(xseq, xL, xrlen, xwhere, bseq, bL, brlen, bwhere)
                if sc > bs + EPS:
                    any_best = True
                    istate[I_LAST_BEST] = it
                fstate[F_BEST_SCORE] = sc
                fstate[F_BEST_LEN] = tl
                istate[I_N_BEST_UPDATES] += 1
    return any_best


# --------------------------------------------------------------------------- exact (tiny)
@njit(cache=True, nogil=True)
def exact_team(dist, score, endd, budget, elig, heads_last, head_len, cand):
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
    f = np.empty((nm, t))
    par = np.empty((nm, t), dtype=np.int64)
    sublen = np.full((m, nm), INF)  # best full route length per subset
    sublast = np.full((m, nm), -1, dtype=np.int64)
    pars = np.empty((m, nm, t), dtype=np.int64)
    for k in range(m):
        h = heads_last[k]
        emask = 0
        for i in range(t):
            if elig[k, cand[i]]:
                emask |= 1 << i
        for s in range(nm):
            for j in range(t):
                f[s, j] = INF
                par[s, j] = -1
        for j in range(t):
            if emask & (1 << j):
                f[1 << j, j] = head_len[k] + dist[h, cand[j]]
        lim = budget[k] + EPS
        for s in range(1, nm):
            if s & ~emask:
                continue
            for j in range(t):
                fj = f[s, j]
                if fj == INF or not (s & (1 << j)):
                    continue
                if fj > lim:
                    continue
                for q in range(t):
                    if (s & (1 << q)) or not (emask & (1 << q)):
                        continue
                    v = fj + dist[cand[j], cand[q]]
                    s2 = s | (1 << q)
                    if v < f[s2, q]:
                        f[s2, q] = v
                        par[s2, q] = j
        base = head_len[k] + endd[k, h]
        if base <= lim:
            sublen[k, 0] = base
        for s in range(1, nm):
            if s & ~emask:
                continue
            for j in range(t):
                if f[s, j] < INF:
                    v = f[s, j] + endd[k, cand[j]]
                    if v <= lim and v < sublen[k, s]:
                        sublen[k, s] = v
                        sublast[k, s] = j
        for s in range(nm):
            for j in range(t):
                pars[k, s, j] = par[s, j]
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
        if G[m - 1, U] > -INF:
            if bestU < 0 or G[m - 1, U] > G[m - 1, bestU] + EPS or \
                    (G[m - 1, U] > G[m - 1, bestU] - EPS and GL[m - 1, U] < GL[m - 1, bestU]):
                bestU = U
    orders = np.full((m, max(t, 1)), -1, dtype=np.int64)
    cnt = np.zeros(m, dtype=np.int64)
    if bestU < 0:
        return False, orders, cnt
    U = bestU
    for k in range(m - 1, -1, -1):
        S = ch[k, U]
        U = U ^ S
        # reconstruct the order of S for vehicle k
        c = 0
        for i in range(t):
            if S & (1 << i):
                c += 1
        cnt[k] = c
        if c == 0:
            continue
        j = sublast[k, S]
        s = S
        pos = c - 1
        while j >= 0:
            orders[k, pos] = j
            pos -= 1
            pj = pars[k, s, j]
            s = s ^ (1 << j)
            j = pj
    return True, orders, cnt
