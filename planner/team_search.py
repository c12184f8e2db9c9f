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

from planner._team.checks import keep_reachable
from planner._team.exact import exact_team
from planner._team.large import greedy_nearest, nearest_route, window
from planner._team.moves import optimise_route
from planner._team.repair import repair
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
from planner.geometry._incremental import matrix_flags
from planner.scratch import ScratchPool

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
LARGE_PAIRS = 100_000
"""Above this many vehicle x usable-target pairs, one search iteration over the whole team
costs too much: the search goes window by window (``_solve_large``)."""
LARGE_NODES = 2_000
"""Above this many nodes, the mean finite distance is summed in one pass, not copied out."""
# the search's large arrays (nearest ends, routes) in memory used before: a round's need no
# page faults of their own. A round holds four (the nearest ends; the current, best and
# scratch routes): with fewer kept spare, the first replan made two of its routes afresh
_SCRATCH = ScratchPool(spare=4)
NEAR_ROUTES = 16
"""In a large problem's first plan, each target may join one of its this many nearest routes."""
WINDOW_VEHICLES = 8
WINDOW_UNROUTED = 48
"""A window: this many vehicles with routes close together, and up to this many unrouted
targets nearest to them."""
WINDOW_SECONDS = 0.02
WINDOW_ITERATIONS = 100
"""The most one window's search may take: seconds, and iterations (only iterations when the
whole search is stopped by iterations alone, so that a seed reproduces it)."""


@dataclass(frozen=True)
class TeamProblem:
    """A heterogeneous team orienteering problem on ``n`` nodes and ``m`` vehicles.

    ``dist`` (n, n) symmetric, ``np.inf`` = unreachable; ``score`` (n,), 0 for airports and
    starts; ``starts`` (m,) start node of each vehicle; ``end_options`` (m, n) allowed end
    nodes; ``budget`` (m,) full fuel budget from ``starts[k]`` (the prefix consumes part of
    it); ``eligible`` (m, n) targets each vehicle may visit; ``prefixes`` per vehicle the
    frozen targets its route must begin with, in order (empty tuple or missing = none);
    ``metric`` says ``dist`` already obeys the triangle inequality (shortest paths, ``inf``
    between parts that never meet), so the search need not close it (O(n^3) with ``inf``).
    """

    dist: np.ndarray
    score: np.ndarray
    starts: np.ndarray
    end_options: np.ndarray
    budget: np.ndarray
    eligible: np.ndarray
    prefixes: tuple[tuple[int, ...], ...] = ()
    metric: bool = False
    # ``matrix_flags(dist)`` of this ``dist`` when known already (a compiled mission's table
    # made them as it copied it; a problem given another ``dist`` drops them); None: the
    # search reads ``dist`` for them
    flags: tuple[bool, bool, bool, float] | None = None


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
        flags = p.flags if p.flags is not None else matrix_flags(dist)
        has_nan, has_negative, all_finite, summed_mean = flags
        if has_nan or has_negative:
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

        # nearest allowed end of every node, per vehicle (vehicles often share their ends)
        end_set: dict[bytes, int] = {}
        set_of = np.empty(m, dtype=np.int64)
        rows_d: list[np.ndarray] = []
        rows_n: list[np.ndarray | int] = []  # an int: the set's one end, for every node
        for k in range(m):
            key = np.packbits(ends[k]).tobytes()
            if key not in end_set:
                cols = np.flatnonzero(ends[k])
                if cols.size == 0:
                    raise InfeasibleError(f"vehicle {k} has no allowed end")
                end_set[key] = len(rows_d)
                # the ends' rows, not their columns (``dist`` is symmetric): a row is read
                # in one pass, a column an entry a cache line (0.5-0.9 s of a 1,000-drone
                # round with an airport each, every drone an end set of its own)
                if cols.size == 1:
                    rows_d.append(dist[cols[0]])
                    rows_n.append(int(cols[0]))
                else:
                    sub = dist[cols]
                    a = sub.argmin(axis=0)
                    rows_d.append(sub[a, np.arange(n)])
                    rows_n.append(cols[a])
            set_of[k] = end_set[key]
        # into memory used before (``scratch``): 42 MB at 1,000 drones, ~100 ms a round in
        # fresh memory on a VM; row by row, not stacked first (another 42 MB)
        endd = _SCRATCH.take((m, n), np.float64)
        for k in range(m):
            endd[k] = rows_d[set_of[k]]
        # The nearest end's node, per end set (the kernels need only its distance, endd).
        self._end_node = rows_n
        self._end_set = set_of

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
        if not (all_finite or p.metric):
            lb = dist.copy()
            for v in range(n):
                np.minimum(lb, lb[:, v : v + 1] + lb[v : v + 1, :], out=lb)
        if lb is dist:
            lb_end = endd  # the nearest end is the bound itself
        else:
            lb_end = np.full((m, n), np.inf)
            for k in range(m):
                lb_end[k] = lb[:, ends[k]].min(axis=1)
        last = np.array(
            [pf[-1] if pf else int(starts[k]) for k, pf in enumerate(prefixes)], dtype=np.int64
        )
        keep_reachable(el, head_len, last, lb, lb_end, budget, LENGTH_TOL)
        cand = np.flatnonzero(el.any(axis=0)).astype(np.int64)

        self.n, self.m = n, m
        self.dist, self.score, self.starts, self.budget = dist, score, starts, budget
        self.endd, self.elig, self.fp = endd, np.ascontiguousarray(el), fp
        self.cand = cand
        self.ends = ends
        self.prefixes = prefixes
        self.cap = cap_pf + len(cand) + 2
        if all_finite:
            mean_d = float(dist.ravel().mean()) if dist.size else 1.0
        elif n <= LARGE_NODES:
            fin = dist[np.isfinite(dist)]
            mean_d = float(fin.mean()) if fin.size else 1.0
        else:  # a swarm's matrix: no copy of its finite part (the same mean, summed in order)
            mean_d = summed_mean
        self.dscale = 1e-6 * max(mean_d, 1e-12)
        self.mean_score = float(score[cand].mean()) if cand.size else 1.0

    def end_node(self, k: int, last: int) -> int:
        """The allowed end of vehicle ``k`` nearest to node ``last``."""
        node = self._end_node[self._end_set[k]]
        return node if isinstance(node, int) else int(node[last])

    def new_solution(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """A solution holding only the frozen heads: ``(seq, L, rlen, where)``."""
        seq = _SCRATCH.take((self.m, self.cap), np.int64)  # 33 MB at 1,000 drones
        seq.fill(0)
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

    def load(
        self,
        sol: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
        routes: Sequence[Sequence[int]],
        *,
        trim: bool = False,
    ) -> None:
        """Put ``routes`` (start, prefix, targets, end per vehicle) into the fresh solution
        ``sol`` (its heads only). PlannerError if a route does not fit its vehicle; with
        ``trim`` what does not fit is left out instead: a target not eligible for its
        vehicle or already routed, then the route's last targets while it is over budget
        (the distances are a metric: leaving a target out never lengthens a route)."""
        seq, L, rlen, where = sol
        if len(routes) != self.m:
            raise PlannerError(f"{len(routes)} initial routes for {self.m} vehicles")
        for k, route in enumerate(routes):
            body = [int(u) for u in route[self.fp[k] : -1]]
            if list(route[: self.fp[k]]) != [int(x) for x in seq[k, : self.fp[k]]]:
                raise PlannerError(f"initial route {k} does not begin with its start and prefix")
            if trim:
                free = {u for u in body if 0 <= u < self.n and self.elig[k, u] and where[u] < 0}
                body = [u for u in dict.fromkeys(body) if u in free]
            for u in body:
                if not (0 <= u < self.n and self.elig[k, u]) or where[u] >= 0:
                    raise PlannerError(f"initial route {k}: node {u} is not free for it")
                where[u] = k
            while True:
                seq[k, self.fp[k] : self.fp[k] + len(body)] = body
                L[k] = self.fp[k] + len(body)
                rlen[k] = route_length(self.dist, self.endd, seq, L, k)
                if rlen[k] <= self.budget[k] + LENGTH_TOL:
                    break
                if not (trim and body):
                    raise PlannerError(f"initial route {k} is over its budget")
                where[body.pop()] = -1

    def to_solution(
        self, seq: np.ndarray, L: np.ndarray, rlen: np.ndarray, iterations: int, seconds: float
    ) -> TeamSolution:
        """The solution arrays as routes (each with its nearest end) and recomputed lengths."""
        routes, lengths = [], []
        sc = 0.0
        for k in range(self.m):
            r = [int(x) for x in seq[k, : L[k]]]
            r.append(self.end_node(k, r[-1]))
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
    initial: Sequence[Sequence[int]] | None = None,
    warm: Sequence[Sequence[int]] | None = None,
) -> TeamSolution:
    """Plan all vehicles together; anytime until ``stop(iterations, seconds)``.

    With ``exact`` (the default), a problem with at most ``EXACT_TEAM_MAX`` usable targets,
    or a single vehicle with at most ``EXACT_SINGLE_MAX``, is solved to optimality (flag
    ``optimal``) instead of searched. Returns the best solution found. Raises :class:`InfeasibleError` when some vehicle has
    no feasible route at all (its prefix, or the way to any allowed end, exceeds its
    budget). Deterministic for a given ``seed`` when stopped by an iteration limit.

    The first valid plan is reported (``on_improvement``) as soon as the greedy insertion
    has made it, before any local search. ``initial`` routes (one per vehicle, as
    ``TeamSolution.routes``: start, prefix, targets, end; all feasible) are the search's
    starting point instead of empty routes, so its result is never worse than them. With
    more than ``LARGE_PAIRS`` vehicle x candidate pairs the search works window by window
    (see ``_solve_large``). ``warm`` routes (as ``initial``; a plan made before, on a world
    that has changed since) are a starting point too, trimmed to fit (``_Prepared.load``),
    at every size; ``initial`` wins when both are given.
    """
    t0 = time.perf_counter()
    stop_fn = _as_stop(stop)
    pr = _Prepared(problem)
    prm = {"cycle": 2000, "qfrac": 0.25, "temp": 2.0}
    if params:
        prm.update(params)

    n_usable = int(pr.cand.size)
    if exact and initial is None and pr.m * n_usable > LARGE_PAIRS:
        return _solve_large(pr, problem, stop_fn, seed, on_improvement, t0, warm)
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
    if initial is not None:
        pr.load(cur, initial)
    elif warm is not None:
        pr.load(cur, warm, trim=True)
    best = pr.new_solution()
    scratch = pr.new_solution()
    fstate = np.zeros(N_FSTATE)
    istate = np.zeros(N_ISTATE, dtype=np.int64)
    ins_d = np.zeros((max(n_usable, 1), pr.m))
    ins_p = np.zeros((max(n_usable, 1), pr.m), dtype=np.int64)
    tmp = np.zeros(pr.cap, dtype=np.int64)
    args = (pr.dist, pr.score, pr.endd, pr.budget, pr.elig, pr.fp, pr.cand, pr.dscale, st)

    history: list[tuple[float, float]] = []
    # The first valid plan: the greedy insertion alone (construct's first step), reported
    # before the local search polishes it.
    nofb = np.zeros(pr.n, dtype=np.bool_)
    repair(*args[:7], *cur, nofb, 1.0, 0.0, pr.dscale, st, ins_d, ins_p)
    greedy_plan = pr.to_solution(*cur[:3], 0, time.perf_counter() - t0)
    history.append((greedy_plan.seconds, greedy_plan.score))
    if on_improvement is not None:
        on_improvement(greedy_plan)
    construct(*args, *cur, fstate, istate, ins_d, ins_p, tmp)
    copy_sol(*cur, *best)
    fstate[F_BEST_SCORE] = fstate[F_CUR_SCORE]
    fstate[F_BEST_LEN] = fstate[F_CUR_LEN]
    fstate[F_MEAN_SCORE] = pr.mean_score
    fstate[F_T0] = prm["temp"] * pr.mean_score
    istate[I_CYCLE_POS] = 0
    params_arr = np.array([float(prm["cycle"]), float(prm["qfrac"]), float(prm["temp"])])

    def snapshot() -> TeamSolution:
        el = time.perf_counter() - t0
        s = pr.to_solution(*best[:3], int(istate[I_ITER]), el)
        return s

    first = snapshot()
    if first.score > greedy_plan.score + 1e-9:
        history.append((first.seconds, first.score))
        if on_improvement is not None:
            on_improvement(first)
    last_reported = max(first.score, greedy_plan.score)

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


def _solve_large(
    pr: _Prepared,
    problem: TeamProblem,
    stop_fn: Callable[[int, float], bool],
    seed: int,
    on_improvement: Callable[[TeamSolution], None] | None,
    t0: float,
    warm: Sequence[Sequence[int]] | None = None,
) -> TeamSolution:
    """A swarm-sized problem: a first plan from ``greedy_nearest`` (each target among its
    nearest routes; with ``warm``, those routes trimmed to fit, then each target not on them
    among its nearest routes), every route polished alone (2-opt, or-opt), then windows until the
    stop: a few vehicles with routes close together and the unrouted targets nearest them,
    searched as a small problem from their current routes (``solve_team`` with
    ``initial``), kept when the score rises or the length falls at equal score. The
    iterations counted are the windows' own."""
    arrays = pr.new_solution()
    seq, L, rlen, where = arrays
    if warm is not None:
        pr.load(arrays, warm, trim=True)
    greedy_nearest(
        pr.dist, pr.score, pr.endd, pr.budget, pr.elig, pr.fp, pr.cand, pr.dscale,
        NEAR_ROUTES, seq, L, rlen, where,
    )  # fmt: skip
    history: list[tuple[float, float]] = []

    def report(iterations: int) -> TeamSolution:
        sol = pr.to_solution(seq, L, rlen, iterations, time.perf_counter() - t0)
        history.append((sol.seconds, sol.score))
        if on_improvement is not None:
            on_improvement(sol)
        return sol

    report(0)
    tmp = np.zeros(pr.cap, dtype=np.int64)
    for k in range(pr.m):
        if optimise_route(pr.dist, pr.endd, seq, L, rlen, pr.fp, k, tmp):
            rlen[k] = route_length(pr.dist, pr.endd, seq, L, k)
    rng = np.random.default_rng(seed)
    limit = stop_fn.max_iterations if isinstance(stop_fn, StopCriterion) else None
    iterations = 0
    while not stop_fn(iterations, time.perf_counter() - t0):
        free = pr.cand[where[pr.cand] < 0]
        if free.size and rng.random() < 0.5:  # round an unrouted target: a gain may be there
            seed_route = nearest_route(pr.dist, seq, L, int(free[rng.integers(free.size)]))
        else:
            seed_route = int(rng.integers(pr.m))
        vehicles = window(pr.dist, seq, L, seed_route, WINDOW_VEHICLES)
        sub, nodes, init, score, length = _window_problem(pr, problem, seq, L, where, vehicles)
        seconds: float | None = WINDOW_SECONDS
        if isinstance(stop_fn, StopCriterion):
            if stop_fn.max_seconds is None:
                seconds = None
            else:
                left_s = stop_fn.max_seconds - (time.perf_counter() - t0)
                seconds = min(WINDOW_SECONDS, max(left_s, 1e-3))
        left = (
            WINDOW_ITERATIONS
            if limit is None
            else max(min(limit - iterations, WINDOW_ITERATIONS), 1)
        )
        try:
            found = solve_team(
                sub,
                StopCriterion(max_seconds=seconds, max_iterations=left),
                seed=int(rng.integers(2**31)),
                initial=init,
            )
        except PlannerError:  # a dist that is not a metric may prune a routed target
            iterations += 1
            continue
        iterations += max(found.iterations, 1)
        gained = found.score > score + 1e-9
        if gained or (found.score > score - 1e-9 and sum(found.lengths) < length - 1e-9):
            for k in vehicles:
                where[seq[k, pr.fp[k] : L[k]]] = -1
            for k, route in zip(vehicles, found.routes):
                body = nodes[np.asarray(route[pr.fp[k] : -1], dtype=np.int64)]
                where[body] = k
                seq[k, pr.fp[k] : pr.fp[k] + body.size] = body
                L[k] = pr.fp[k] + body.size
                rlen[k] = route_length(pr.dist, pr.endd, seq, L, k)
            if gained:
                report(iterations)
    sol = pr.to_solution(seq, L, rlen, iterations, time.perf_counter() - t0)
    sol.history = history
    return sol


def _window_problem(
    pr: _Prepared,
    problem: TeamProblem,
    seq: np.ndarray,
    L: np.ndarray,
    where: np.ndarray,
    vehicles: np.ndarray,
) -> tuple[TeamProblem, np.ndarray, list[list[int]], float, float]:
    """The small problem of ``vehicles``: their heads, their targets, the unrouted usable
    targets nearest to their routes, their ends. Returns it, its nodes (sub index -> node),
    the vehicles' current routes in it, and their score and length."""
    heads = [seq[k, : pr.fp[k]] for k in vehicles]
    own = [seq[k, pr.fp[k] : L[k]] for k in vehicles]
    on_routes = np.concatenate([seq[k, : L[k]] for k in vehicles])
    free = pr.cand[where[pr.cand] < 0]
    free = free[pr.elig[vehicles][:, free].any(axis=0)]
    if free.size > WINDOW_UNROUTED:
        gap = pr.dist[np.ix_(on_routes, free)].min(axis=0)
        free = free[np.argsort(gap, kind="stable")[:WINDOW_UNROUTED]]
    ends = np.flatnonzero(pr.ends[vehicles].any(axis=0))
    nodes = np.unique(np.concatenate([*heads, *own, free, ends]))
    index = np.full(pr.n, -1, dtype=np.int64)
    index[nodes] = np.arange(nodes.size)
    sub = TeamProblem(
        dist=pr.dist[np.ix_(nodes, nodes)],
        score=pr.score[nodes],
        starts=index[pr.starts[vehicles]],
        end_options=pr.ends[vehicles][:, nodes],
        budget=pr.budget[vehicles],
        eligible=pr.elig[vehicles][:, nodes],
        prefixes=tuple(tuple(int(index[u]) for u in pr.prefixes[k]) for k in vehicles),
        metric=problem.metric,
    )
    init = []
    score = length = 0.0
    for k in vehicles:
        route = [int(u) for u in seq[k, : L[k]]]
        route.append(pr.end_node(int(k), route[-1]))
        init.append([int(index[u]) for u in route])
        score += float(pr.score[route[1:-1]].sum())
        length += float(route_length(pr.dist, pr.endd, seq, L, int(k)))
    return sub, nodes, init, score, length


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
    # the swarm path's kernels (first plan, windows), on the same tiny problem
    _solve_large(
        _Prepared(prob), prob, StopCriterion(max_iterations=4), 1, None, time.perf_counter()
    )
