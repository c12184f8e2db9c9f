"""The ruin-and-recreate driver: construction, local search to a fixed point, and chunks of
simulated-annealing iterations over the solution arrays (see :mod:`planner._team`).

The search's scalars live in two small arrays the Python loop keeps between chunks:
``fstate`` (float64, slots ``F_*``) and ``istate`` (int64, slots ``I_*``). The insertion
caches ``ins_d`` / ``ins_p`` are candidate-major, (candidates, vehicles): see ``repair``
(which scans small problems whole and keeps each candidate's best route on large ones).

(numba caches a kernel by its own file only: a change to a kernel this module calls, such
as ``repair``, must come with a change here, or a stale cached copy keeps the old one.)
"""

from __future__ import annotations

import numpy as np
from numba import njit

from planner._team.moves import optimise_route, relocate_inter, replace_move, swap_inter
from planner._team.repair import repair
from planner._team.rng import rng_float, rng_int
from planner._team.ruin import destroy, fix_over_budget
from planner._team.solution import EPS, all_within_budget, copy_sol, total_len, total_score

__all__ = [
    "F_BEST_LEN",
    "F_BEST_SCORE",
    "F_CUR_LEN",
    "F_CUR_SCORE",
    "F_MEAN_SCORE",
    "F_T0",
    "I_CYCLE_POS",
    "I_ITER",
    "I_LAST_BEST",
    "I_LAST_RESTART",
    "I_N_BEST_UPDATES",
    "N_FSTATE",
    "N_ISTATE",
    "construct",
    "improve",
    "run_chunk",
]

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


@njit(cache=True, nogil=True)
def improve(
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
    tmp: np.ndarray,
    nofb: np.ndarray,
) -> None:
    """Repair (without the forbidden nodes), then alternate route optimisation,
    inter-route moves, replacement and repair until nothing changes."""
    m = L.shape[0]
    repair(
        dist,
        score,
        endd,
        budget,
        elig,
        fp,
        cand,
        seq,
        L,
        rlen,
        where,
        forbid,
        alpha,
        noise,
        dscale,
        st,
        ins_d,
        ins_p,
    )
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
        ins = repair(
            dist,
            score,
            endd,
            budget,
            elig,
            fp,
            cand,
            seq,
            L,
            rlen,
            where,
            nofb,
            alpha,
            0.0,
            dscale,
            st,
            ins_d,
            ins_p,
        )
        rep = replace_move(dist, score, endd, budget, elig, fp, cand, seq, L, rlen, where)
        if ins == 0 and not rep and not ch:
            break


@njit(cache=True, nogil=True)
def construct(
    dist: np.ndarray,
    score: np.ndarray,
    endd: np.ndarray,
    budget: np.ndarray,
    elig: np.ndarray,
    fp: np.ndarray,
    cand: np.ndarray,
    dscale: float,
    st: np.ndarray,
    seq: np.ndarray,
    L: np.ndarray,
    rlen: np.ndarray,
    where: np.ndarray,
    fstate: np.ndarray,
    istate: np.ndarray,
    ins_d: np.ndarray,
    ins_p: np.ndarray,
    tmp: np.ndarray,
) -> None:
    """The first solution: greedy insertion and local search from the frozen heads; its score
    and length go to ``fstate``.
    """
    n = where.shape[0]
    nofb = np.zeros(n, dtype=np.bool_)
    improve(
        dist,
        score,
        endd,
        budget,
        elig,
        fp,
        cand,
        seq,
        L,
        rlen,
        where,
        nofb,
        1.0,
        0.0,
        dscale,
        st,
        ins_d,
        ins_p,
        tmp,
        nofb,
    )
    fstate[F_CUR_SCORE] = total_score(score, seq, L, fp)
    fstate[F_CUR_LEN] = total_len(rlen)


@njit(cache=True, nogil=True)
def run_chunk(
    dist: np.ndarray,
    score: np.ndarray,
    endd: np.ndarray,
    budget: np.ndarray,
    elig: np.ndarray,
    fp: np.ndarray,
    cand: np.ndarray,
    dscale: float,
    st: np.ndarray,
    n_iter: int,
    cseq: np.ndarray,
    cL: np.ndarray,
    crlen: np.ndarray,
    cwhere: np.ndarray,
    bseq: np.ndarray,
    bL: np.ndarray,
    brlen: np.ndarray,
    bwhere: np.ndarray,
    xseq: np.ndarray,
    xL: np.ndarray,
    xrlen: np.ndarray,
    xwhere: np.ndarray,
    fstate: np.ndarray,
    istate: np.ndarray,
    params: np.ndarray,
    ins_d: np.ndarray,
    ins_p: np.ndarray,
    tmp: np.ndarray,
) -> bool:
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
        improve(
            dist,
            score,
            endd,
            budget,
            elig,
            fp,
            cand,
            xseq,
            xL,
            xrlen,
            xwhere,
            mark,
            alpha,
            noise,
            dscale,
            st,
            ins_d,
            ins_p,
            tmp,
            nofb,
        )
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
