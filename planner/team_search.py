"""Joint search for the heterogeneous team orienteering problem (all drones at once).

The engine works on arrays only (no mission model): a distance matrix (SAM-aware or not),
node scores, per-vehicle starts, allowed ends, fuel budgets, eligibility and frozen
prefixes (:class:`TeamProblem`). :func:`solve_team` is anytime: a valid solution exists
after the greedy construction (first milliseconds), and a ruin-and-recreate iterated local
search improves it until the stop criterion says so.

Algorithm (kernels in :mod:`planner._team`, numba, ``nogil``):

- construction: greedy insertion of the best ``score / extra length`` target into the
  cheapest feasible place of any route, then the local search below;
- local search: 2-opt and or-opt (segments of 1-3, both orientations) inside each route,
  relocation and exchange of targets between routes to shorten them, insertion of
  unrouted targets, replacement of a routed target by an unrouted one of higher score;
- each iteration ruins a copy of the current solution (random targets, a string of
  consecutive targets, targets related by distance, the worst score-per-length targets, or
  a whole route), recreates it by randomised greedy insertion (the removed targets are
  forbidden in the first pass, so the search cannot simply undo the ruin), runs the local
  search, and accepts by simulated annealing on the score (ties broken by total length);
  the temperature cools over a cycle, and each cycle restarts from the best solution.

The state lives in numpy arrays inside the kernels; the Python loop calls them in chunks
of iterations to check the stop criterion and report improvements. Random numbers come
from a xorshift state carried across chunks, so a seed and an iteration limit reproduce a
run exactly. Where a single vehicle has few enough usable targets, the exact Held-Karp
solver of :mod:`planner.orienteering` is called instead, so the result is optimal; with
several vehicles, each route of the final solution is re-optimised exactly (selection among
its own and the unrouted targets, order) when the candidates are few enough.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from planner._team.exact import exact_team
from planner._team.rng import rng_next
from planner._team.search import (
    F_BEST_LEN,
    F_BEST_SCORE,
    F_CUR_LEN,
    F_CUR_SCORE,
    F_MEAN_SCORE,
    F_T0,
    I_CYCLE_POS,
    I_ITER,
    N_FSTATE,
    N_ISTATE,
    construct,
    run_chunk,
)
from planner._team.solution import copy_sol, route_length
from planner.errors import InfeasibleError, PlannerError

__all__ = [
    "LENGTH_TOL",
    "StopCriterion",
    "StopLike",
    "TeamProblem",
    "TeamSolution",
    "solve_team",
    "verify_solution",
    "warmup",
]

LENGTH_TOL = 1e-9
EXACT_SINGLE_MAX = 20
"""A single vehicle with at most this many usable targets is solved exactly."""
EXACT_TEAM_MAX = 12
"""With at most this many usable targets in total, the team is solved exactly (DP)."""
EXACT_ROUTE_MAX = 12
"""A route whose candidate set (own + unrouted usable targets) is this small is re-optimised
exactly at the end of a multi-vehicle search."""


@dataclass(frozen=True)
class TeamProblem:
    """A heterogeneous team orienteering problem on ``n`` nodes and ``m`` vehicles.

    ``dist`` (n, n) symmetric, ``np.inf`` = unreachable; ``score`` (n,), 0 for airports and
    starts; ``starts`` (m,) start node of each vehicle; ``end_options`` (m, n) allowed end
    nodes; ``budget`` (m,) full fuel budget from ``starts[k]`` (the prefix consumes part of
    it); ``eligible`` (m, n) targets each vehicle may visit; ``prefixes`` per vehicle the
    frozen targets its route must begin with, in order (empty tuple or missing = none).
    """

    dist: np.ndarray
    score: np.ndarray
    starts: np.ndarray
    end_options: np.ndarray
    budget: np.ndarray
    eligible: np.ndarray
    prefixes: tuple[tuple[int, ...], ...] = ()


@runtime_checkable
class StopLike(Protocol):
    """Anything that says when to stop: ``stop(iterations, seconds) -> True`` to stop."""

    def __call__(self, iterations: int, seconds: float) -> bool:
        """True to stop after ``iterations`` search iterations and ``seconds`` of wall time."""
        ...


@dataclass(frozen=True)
class StopCriterion:
    """Stop after ``max_seconds`` of wall time, ``max_iterations`` search iterations, or
    whichever comes first. At least one must be given. Any callable
    ``(iterations, seconds) -> bool`` (True = stop) is accepted in its place."""

    max_seconds: float | None = None
    max_iterations: int | None = None

    def __post_init__(self) -> None:
        if self.max_seconds is None and self.max_iterations is None:
            raise PlannerError("StopCriterion needs max_seconds, max_iterations or both")

    def __call__(self, iterations: int, seconds: float) -> bool:
        """True once either limit is reached."""
        if self.max_iterations is not None and iterations >= self.max_iterations:
            return True
        return bool(self.max_seconds is not None and seconds >= self.max_seconds)


@dataclass
class TeamSolution:
    """A team plan: per vehicle its route (start, prefix..., targets..., end) and length, the
    total score, the search effort, and the history of improvements ``(seconds, score)``.
    """

    routes: list[list[int]]  # per vehicle: start, prefix..., targets..., end
    lengths: list[float]
    score: float
    iterations: int
    seconds: float
    optimal: bool = False  # proven optimal (exact solver)
    history: list[tuple[float, float]] = field(default_factory=list)  # (seconds, score)


# --------------------------------------------------------------------------- helpers
def _route_length(dist: np.ndarray, route: list[int]) -> float:
    s = 0.0
    for a, b in zip(route[:-1], route[1:]):
        s += float(dist[a, b])
    return s


def verify_solution(problem: TeamProblem, sol: TeamSolution, tol: float = 1e-6) -> list[str]:
    """Every violated hard constraint of ``sol`` as a message (empty list = feasible)."""
    errs: list[str] = []
    m = len(problem.starts)
    if len(sol.routes) != m:
        return [f"{len(sol.routes)} routes for {m} vehicles"]
    prefixes = _norm_prefixes(problem.prefixes, m)
    seen: dict[int, int] = {}
    total = 0.0
    for k, r in enumerate(sol.routes):
        if len(r) < 2:
            errs.append(f"vehicle {k}: route {r} too short")
            continue
        if r[0] != int(problem.starts[k]):
            errs.append(f"vehicle {k}: starts at {r[0]}, not {problem.starts[k]}")
        if not problem.end_options[k, r[-1]]:
            errs.append(f"vehicle {k}: ends at {r[-1]}, not an allowed end")
        pf = list(prefixes[k])
        if r[1 : 1 + len(pf)] != pf:
            errs.append(f"vehicle {k}: route {r} does not begin with prefix {pf}")
        ln = _route_length(problem.dist, r)
        if not ln <= float(problem.budget[k]) + tol:
            errs.append(f"vehicle {k}: length {ln} > budget {problem.budget[k]}")
        for j, u in enumerate(r[1:-1]):
            if j >= len(pf) and not problem.eligible[k, u]:
                errs.append(f"vehicle {k}: node {u} not eligible")
            if u in seen:
                errs.append(f"node {u} visited by vehicles {seen[u]} and {k}")
            seen[u] = k
            total += float(problem.score[u])
    if abs(total - sol.score) > 1e-6 * (1.0 + abs(total)):
        errs.append(f"score {sol.score} != recomputed {total}")
    return errs


def _norm_prefixes(prefixes: Sequence[Sequence[int]], m: int) -> list[tuple[int, ...]]:
    if not prefixes:
        return [()] * m
    if len(prefixes) != m:
        raise PlannerError(f"{len(prefixes)} prefixes for {m} vehicles")
    return [tuple(int(x) for x in p) for p in prefixes]


def _as_stop(stop: StopCriterion | Callable[[int, float], bool]) -> Callable[[int, float], bool]:
    if isinstance(stop, StopCriterion) or callable(stop):
        return stop
    raise PlannerError(f"not a stop criterion: {stop!r}")


class _Prepared:
    """Arrays for the kernels, derived once from a :class:`TeamProblem`."""

    def __init__(self, p: TeamProblem) -> None:
        dist = np.ascontiguousarray(np.asarray(p.dist, dtype=np.float64))
        if dist.ndim != 2 or dist.shape[0] != dist.shape[1]:
            raise PlannerError(f"dist must be square, got {dist.shape}")
        n = dist.shape[0]
        if np.isnan(dist).any() or (dist < 0).any():
            raise PlannerError("dist holds NaN or negative values")
        score = np.ascontiguousarray(np.asarray(p.score, dtype=np.float64))
        starts = np.asarray(p.starts, dtype=np.int64).reshape(-1)
        m = starts.shape[0]
        if m == 0:
            raise PlannerError("no vehicle")
        ends = np.asarray(p.end_options, dtype=bool)
        budget = np.ascontiguousarray(np.asarray(p.budget, dtype=np.float64).reshape(-1))
        elig = np.asarray(p.eligible, dtype=bool)
        if (
            score.shape != (n,)
            or ends.shape != (m, n)
            or elig.shape != (m, n)
            or budget.shape != (m,)
        ):
            raise PlannerError("inconsistent shapes in TeamProblem")
        if ((starts < 0) | (starts >= n)).any():
            raise PlannerError("start node out of range")
        if not np.isfinite(score).all():
            raise PlannerError("scores must be finite")
        prefixes = _norm_prefixes(p.prefixes, m)
        allpf = [u for pf in prefixes for u in pf]
        if len(set(allpf)) != len(allpf):
            raise PlannerError("a node appears twice in the frozen prefixes")
        for u in allpf:
            if not 0 <= u < n:
                raise PlannerError(f"prefix node {u} out of range")

        # nearest allowed end of every node, per vehicle
        endd = np.full((m, n), np.inf)
        endn = np.full((m, n), -1, dtype=np.int64)
        for k in range(m):
            cols = np.flatnonzero(ends[k])
            if cols.size == 0:
                raise InfeasibleError(f"vehicle {k} has no allowed end")
            sub = dist[:, cols]
            a = sub.argmin(axis=1)
            endd[k] = sub[np.arange(n), a]
            endn[k] = cols[a]

        # frozen heads and what they cost
        fp = np.zeros(m, dtype=np.int64)
        head_len = np.zeros(m)
        cap_pf = 0
        for k in range(m):
            head = [int(starts[k]), *prefixes[k]]
            hl = _route_length(dist, head)
            if not (
                math.isfinite(hl + endd[k, head[-1]])
                and hl + endd[k, head[-1]] <= budget[k] + LENGTH_TOL
            ):
                raise InfeasibleError(
                    f"vehicle {k}: no feasible route (start {head[0]}, prefix "
                    f"{list(prefixes[k])}, length to an end {hl + endd[k, head[-1]]} > "
                    f"budget {budget[k]})"
                )
            fp[k] = len(head)
            head_len[k] = hl
            cap_pf = max(cap_pf, len(head))

        # usable targets: eligible, not frozen elsewhere, and reachable within budget
        el = elig.copy()
        for u in allpf:
            el[:, u] = False
        el[:, starts] = False
        el[:, ends.any(axis=0)] = False
        # lower bounds for the pruning: shortest paths (dist itself when all finite; a
        # matrix with holes is not metric, a detour may be shorter than a missing leg)
        lb = dist
        if not np.isfinite(dist).all():
            lb = dist.copy()
            for v in range(n):
                np.minimum(lb, lb[:, v : v + 1] + lb[v : v + 1, :], out=lb)
        lb_end = np.full((m, n), np.inf)
        for k in range(m):
            lb_end[k] = lb[:, ends[k]].min(axis=1)
        for k in range(m):
            last = prefixes[k][-1] if prefixes[k] else int(starts[k])
            reach = head_len[k] + lb[last] + lb_end[k] <= budget[k] + LENGTH_TOL
            el[k] &= reach
        cand = np.flatnonzero(el.any(axis=0)).astype(np.int64)

        self.n, self.m = n, m
        self.dist, self.score, self.starts, self.budget = dist, score, starts, budget
        self.endd, self.endn, self.elig, self.fp = endd, endn, np.ascontiguousarray(el), fp
        self.cand = cand
        self.ends = ends
        self.prefixes = prefixes
        self.cap = cap_pf + len(cand) + 2
        fin = dist[np.isfinite(dist)]
        mean_d = float(fin.mean()) if fin.size else 1.0
        self.dscale = 1e-6 * max(mean_d, 1e-12)
        self.mean_score = float(score[cand].mean()) if cand.size else 1.0

    def new_solution(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """A solution holding only the frozen heads: ``(seq, L, rlen, where)``."""
        seq = np.zeros((self.m, self.cap), dtype=np.int64)
        L = np.zeros(self.m, dtype=np.int64)
        rlen = np.zeros(self.m)
        where = np.full(self.n, -1, dtype=np.int64)
        for k in range(self.m):
            head = [int(self.starts[k]), *self.prefixes[k]]
            seq[k, : len(head)] = head
            L[k] = len(head)
            for u in self.prefixes[k]:
                where[u] = k
        K_len = np.array([route_length(self.dist, self.endd, seq, L, k) for k in range(self.m)])
        rlen[:] = K_len
        return seq, L, rlen, where

    def to_solution(
        self, seq: np.ndarray, L: np.ndarray, rlen: np.ndarray, iterations: int, seconds: float
    ) -> TeamSolution:
        """The solution arrays as routes (each with its nearest end) and recomputed lengths."""
        routes, lengths = [], []
        sc = 0.0
        for k in range(self.m):
            r = [int(x) for x in seq[k, : L[k]]]
            r.append(int(self.endn[k, r[-1]]))
            routes.append(r)
            lengths.append(_route_length(self.dist, r))
            sc += float(sum(self.score[u] for u in r[1:-1]))
        return TeamSolution(
            routes=routes, lengths=lengths, score=sc, iterations=iterations, seconds=seconds
        )


def _exact_single(pr: _Prepared, t0: float) -> TeamSolution | None:
    try:
        from planner.orienteering import solve_orienteering
    except ImportError:  # pragma: no cover - the exact solver is optional
        return None
    res = solve_orienteering(
        pr.dist,
        pr.score,
        int(pr.starts[0]),
        [int(u) for u in pr.cand if pr.elig[0, u]],
        [int(e) for e in np.flatnonzero(pr.ends[0])],
        float(pr.budget[0]),
        prefix=pr.prefixes[0],
    )
    route = list(res.route)
    sol = TeamSolution(
        routes=[route],
        lengths=[_route_length(pr.dist, route)],
        score=float(sum(pr.score[u] for u in route[1:-1])),
        iterations=0,
        seconds=time.perf_counter() - t0,
        optimal=True,
    )
    return sol


def _exact_team(pr: _Prepared, t0: float) -> TeamSolution:
    heads_last = np.array(
        [pf[-1] if pf else int(pr.starts[k]) for k, pf in enumerate(pr.prefixes)], dtype=np.int64
    )
    head_len = np.array(
        [_route_length(pr.dist, [int(pr.starts[k]), *pf]) for k, pf in enumerate(pr.prefixes)]
    )
    ok, orders, cnt = exact_team(
        pr.dist, pr.score, pr.endd, pr.budget, pr.elig, heads_last, head_len, pr.cand
    )
    if not ok:  # pragma: no cover - every head was checked feasible before
        raise InfeasibleError("no feasible team plan")
    seq, L, rlen, _where = pr.new_solution()
    for k in range(pr.m):
        for i in range(int(cnt[k])):
            seq[k, L[k]] = pr.cand[orders[k, i]]
            L[k] += 1
    sol = pr.to_solution(seq, L, rlen, 0, time.perf_counter() - t0)
    sol.optimal = True
    return sol


def _exact_polish(pr: _Prepared, problem: TeamProblem, sol: TeamSolution) -> TeamSolution:
    """Re-optimise each route exactly among its own and the unrouted targets, when few."""
    try:
        from planner.orienteering import solve_orienteering
    except ImportError:  # pragma: no cover
        return sol
    ends_all = np.asarray(problem.end_options, dtype=bool)
    routes = [list(r) for r in sol.routes]
    used = {u for r in routes for u in r[1:-1]}
    for k in range(pr.m):
        own = routes[k][pr.fp[k] : -1]
        free = [int(u) for u in pr.cand if pr.elig[k, u] and u not in used]
        cands = own + free
        if not free or len(cands) > EXACT_ROUTE_MAX:
            continue
        try:
            res = solve_orienteering(
                pr.dist,
                pr.score,
                int(pr.starts[k]),
                cands,
                [int(e) for e in np.flatnonzero(ends_all[k])],
                float(pr.budget[k]),
                prefix=pr.prefixes[k],
            )
        except Exception:
            continue
        new = list(res.route)
        new_sc = sum(pr.score[u] for u in new[1:-1])
        old_sc = sum(pr.score[u] for u in routes[k][1:-1])
        if new_sc > old_sc + 1e-9 and _route_length(pr.dist, new) <= pr.budget[k] + LENGTH_TOL:
            used -= set(routes[k][1:-1])
            used |= set(new[1:-1])
            routes[k] = new
    if routes != sol.routes:
        lengths = [_route_length(pr.dist, r) for r in routes]
        sc = float(sum(pr.score[u] for r in routes for u in r[1:-1]))
        return TeamSolution(
            routes=routes,
            lengths=lengths,
            score=sc,
            iterations=sol.iterations,
            seconds=sol.seconds,
            history=sol.history,
        )
    return sol


# --------------------------------------------------------------------------- solve
def solve_team(
    problem: TeamProblem,
    stop: StopCriterion | Callable[[int, float], bool],
    seed: int = 0,
    on_improvement: Callable[[TeamSolution], None] | None = None,
    *,
    params: dict[str, float] | None = None,
    exact: bool = True,
) -> TeamSolution:
    """Plan all vehicles together; anytime until ``stop(iterations, seconds)``.

    With ``exact`` (the default), a problem with at most ``EXACT_TEAM_MAX`` usable targets,
    or a single vehicle with at most ``EXACT_SINGLE_MAX``, is solved to optimality (flag
    ``optimal``) instead of searched. Returns the best solution found. Raises :class:`InfeasibleError` when some vehicle has
    no feasible route at all (its prefix, or the way to any allowed end, exceeds its
    budget). Deterministic for a given ``seed`` when stopped by an iteration limit.
    """
    t0 = time.perf_counter()
    stop_fn = _as_stop(stop)
    pr = _Prepared(problem)
    prm = {"cycle": 2000, "qfrac": 0.25, "temp": 2.0}
    if params:
        prm.update(params)

    n_usable = int(pr.cand.size)
    if exact and n_usable <= EXACT_TEAM_MAX:
        sol = _exact_team(pr, t0)
        sol.history.append((sol.seconds, sol.score))
        if on_improvement is not None:
            on_improvement(sol)
        return sol
    if exact and pr.m == 1 and n_usable <= EXACT_SINGLE_MAX:
        single = _exact_single(pr, t0)
        if single is not None:
            single.history.append((single.seconds, single.score))
            if on_improvement is not None:
                on_improvement(single)
            return single

    st = np.array(
        [np.uint64(0x9E3779B97F4A7C15) ^ np.uint64((seed * 2654435761 + 1) & 0xFFFFFFFFFFFFFFFF)],
        dtype=np.uint64,
    )
    if st[0] == 0:
        st[0] = np.uint64(88172645463325252)
    for _ in range(4):
        rng_next(st)
    cur = pr.new_solution()
    best = pr.new_solution()
    scratch = pr.new_solution()
    fstate = np.zeros(N_FSTATE)
    istate = np.zeros(N_ISTATE, dtype=np.int64)
    ins_d = np.zeros((pr.m, max(n_usable, 1)))
    ins_p = np.zeros((pr.m, max(n_usable, 1)), dtype=np.int64)
    tmp = np.zeros(pr.cap, dtype=np.int64)
    args = (pr.dist, pr.score, pr.endd, pr.budget, pr.elig, pr.fp, pr.cand, pr.dscale, st)

    construct(*args, *cur, fstate, istate, ins_d, ins_p, tmp)
    copy_sol(*cur, *best)
    fstate[F_BEST_SCORE] = fstate[F_CUR_SCORE]
    fstate[F_BEST_LEN] = fstate[F_CUR_LEN]
    fstate[F_MEAN_SCORE] = pr.mean_score
    fstate[F_T0] = prm["temp"] * pr.mean_score
    istate[I_CYCLE_POS] = 0
    params_arr = np.array([float(prm["cycle"]), float(prm["qfrac"]), float(prm["temp"])])

    history: list[tuple[float, float]] = []

    def snapshot() -> TeamSolution:
        el = time.perf_counter() - t0
        s = pr.to_solution(*best[:3], int(istate[I_ITER]), el)
        return s

    first = snapshot()
    history.append((first.seconds, first.score))
    if on_improvement is not None:
        on_improvement(first)
    last_reported = first.score

    chunk = 8
    if n_usable == 0:
        sol = snapshot()
        sol.history = history
        return sol
    while True:
        el = time.perf_counter() - t0
        done = int(istate[I_ITER])
        if stop_fn(done, el):
            break
        n_it = chunk
        if isinstance(stop_fn, StopCriterion) and stop_fn.max_iterations is not None:
            n_it = min(n_it, stop_fn.max_iterations - done)
        t1 = time.perf_counter()
        run_chunk(*args, n_it, *cur, *best, *scratch, fstate, istate, params_arr, ins_d, ins_p, tmp)
        dt = time.perf_counter() - t1
        per = dt / max(n_it, 1)
        # aim for chunks of ~5 ms, never overshooting a time limit by much
        target = 0.005
        if isinstance(stop_fn, StopCriterion) and stop_fn.max_seconds is not None:
            left = stop_fn.max_seconds - (time.perf_counter() - t0)
            target = max(min(target, left * 0.5), 1e-4)
        chunk = int(max(1, min(chunk * 4, target / max(per, 1e-7))))
        if fstate[F_BEST_SCORE] > last_reported + 1e-9:
            s = snapshot()
            last_reported = s.score
            history.append((s.seconds, s.score))
            if on_improvement is not None:
                on_improvement(s)
    sol = snapshot()
    if pr.m > 1:
        pol = _exact_polish(pr, problem, sol)
        if pol.score > sol.score + 1e-9:
            sol = pol
            history.append((time.perf_counter() - t0, sol.score))
            if on_improvement is not None:
                on_improvement(sol)
    sol.seconds = time.perf_counter() - t0
    sol.history = history
    return sol


def warmup() -> None:
    """Compile (or load from the on-disk numba cache) every kernel on a tiny instance."""
    pts = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 0.5], [0.5, 2.0]])
    d = np.sqrt(((pts[:, None, :] - pts[None, :, :]) ** 2).sum(-1))
    n = len(pts)
    ends = np.zeros((2, n), dtype=bool)
    ends[:, 0] = True
    el = np.ones((2, n), dtype=bool)
    el[:, 0] = False
    prob = TeamProblem(
        dist=d,
        score=np.array([0, 1, 2, 3, 4, 5.0]),
        starts=np.array([0, 0]),
        end_options=ends,
        budget=np.array([4.0, 4.0]),
        eligible=el,
    )
    solve_team(prob, StopCriterion(max_iterations=20), seed=1)  # the exact team kernel
    solve_team(prob, StopCriterion(max_iterations=20), seed=1, exact=False)  # the search's
