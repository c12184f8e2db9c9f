"""Exact single-drone orienteering by Held-Karp dynamic programming (numba kernel).

One drone leaves ``start``, flies a frozen ``prefix`` of targets in the given order, then
any subset of ``candidates`` in any order, and lands at one of the allowed ``ends``. The
route must be no longer than ``budget`` (tolerance ``LENGTH_TOL``). Among feasible routes
we maximise the total score of the visited targets (prefix targets count), then minimise
the length. The modes of the seed map onto ``ends``: ``return`` -> ``[start]``, ``end`` ->
``[end_airport]``, ``best_end`` -> every allowed airport.

The dynamic programme is the Held-Karp core shared with the team solver
(:mod:`planner._held_karp`): ``best[mask, j]`` is the length of the shortest route start ->
prefix -> exactly the candidates of ``mask`` ending at candidate ``j`` (the prefix length is
included, and every length is summed left to right exactly like :func:`route_length`,
so the reported length and a recomputation agree bit for bit). States that cannot reach
an end within the budget -- by a shortest-path lower bound, valid even when ``dist`` is
not metric or holds ``inf`` -- are stored as ``inf`` and never expand. Each subset keeps its
shortest route that fits; the best subset is chosen from those. The route is reconstructed
by recomputing the minimising predecessor, so no parent table is kept.

``dist`` is taken as symmetric: the leg from candidate ``a`` to candidate ``b`` is read as
``dist[b, a]`` (every distance matrix of the planner is symmetric; with an asymmetric one
the reported length may differ from :func:`route_length`).

Memory is one float64 table of ``2**k * k`` entries for ``k`` usable candidates, plus 10
bytes per subset: 178 MB for 20, 373 MB for 21, 780 MB for 22 (``MAX_EXACT_TARGETS``).

Determinism and ties: the answer depends only on the inputs, not on the order of
``candidates`` or ``ends`` (both are sorted by node id). Scores within ``SCORE_RTOL``
(relative to the total of absolute scores) count as equal; among equal scores the shorter
route wins. Exact length ties keep the first found: the subset whose bitmask over the
sorted candidates is numerically smallest, then the lowest last target; reconstruction
takes the predecessor with the lowest node id; for each last target the end with the
shortest leg (then the lowest node id) is chosen. This is deterministic but is not the
lexicographically smallest route.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

from planner._held_karp import subset_order, subset_paths
from planner.errors import InfeasibleError, PlannerError

__all__ = [
    "LENGTH_TOL",
    "MAX_EXACT_TARGETS",
    "OrienteeringResult",
    "route_length",
    "solve_orienteering",
    "warmup",
]

MAX_EXACT_TARGETS: int = 22
"""Most candidates (after dropping the unreachable ones) the exact solver accepts."""

LENGTH_TOL: float = 1e-9
"""A route is within budget when ``length <= budget + LENGTH_TOL``."""

SCORE_RTOL: float = 1e-12
"""Scores closer than this (relative to the total of absolute scores) count as equal."""


@dataclass(frozen=True)
class OrienteeringResult:
    """The best route: its node sequence, its length (summed left to right) and its score."""

    route: list[int]  # full node sequence: start, prefix..., chosen targets..., end
    length: float
    score: float


def route_length(dist: np.ndarray, route: Sequence[int]) -> float:
    """Length of ``route`` under ``dist``, summed left to right (``inf`` if a leg is)."""
    total = 0.0
    for a, b in zip(route[:-1], route[1:]):
        total += float(dist[a, b])
    return total


# ----------------------------------------------------------------------------- kernel


@njit(cache=True, nogil=True)
def _best_route(
    dmat: np.ndarray,
    d0: np.ndarray,
    endd: np.ndarray,
    endi: np.ndarray,
    scores: np.ndarray,
    lb: np.ndarray,
    base: float,
    base_score: float,
    base_end_d: float,
    base_end_i: int,
    limit: float,
    prune_limit: float,
    score_eps: float,
) -> tuple[bool, int, int, float, float, int, np.ndarray]:
    """The best route over ``k`` candidates: Held-Karp (:func:`subset_paths`), then the
    subset of the best score (ties within ``score_eps``: the shorter route).

    dmat[i, j]  distance between candidates i and j (k x k)
    d0[j]       distance effective start -> candidate j
    endd[j]     shortest leg candidate j -> an allowed end; endi[j] that end's node id
    scores[j]   score of candidate j
    lb[j]       lower bound on the length of any completion from candidate j to an end
    base        length of start -> prefix (the effective start is the last prefix node)
    base_score  score of the prefix
    base_end_d / base_end_i  best leg effective start -> an end (inf / -1 if none)
    limit       budget + tolerance: a full route is feasible when its length <= limit
    prune_limit a slightly looser limit for pruning partial routes by ``cost + lb``

    Returns (found, best_mask, best_last, best_len, best_score, best_end, order) where
    ``order`` lists candidate indices in visiting order (length popcount(best_mask)).
    """
    k = d0.shape[0]
    nmask = 1 << k
    best, done, done_last = subset_paths(dmat, d0, endd, lb, base, limit, prune_limit, nmask - 1)

    found = False
    b_mask = 0
    b_last = -1
    b_len = np.inf
    b_score = -np.inf
    b_end = -1
    if base_end_i >= 0:
        length = base + base_end_d
        if length <= limit:
            found = True
            b_len = length
            b_score = base_score
            b_end = base_end_i

    # Subsets in ascending order, each with its shortest fitting route from the DP. A
    # subset's score is summed in ascending bit order: the sum of its lower bits (a smaller
    # subset, seen before) plus the score of its top bit. The sums are kept in ``done``, over
    # entries already read, so they cost no memory.
    done[0] = base_score
    top = 0
    for mask in range(1, nmask):
        if mask == 2 << top:
            top += 1
        s = done[mask ^ (1 << top)] + scores[top]
        length = done[mask]
        done[mask] = s
        last = done_last[mask]
        if last < 0:
            continue
        if not found or s > b_score + score_eps or (s >= b_score - score_eps and length < b_len):
            found = True
            b_mask = mask
            b_last = last
            b_len = length
            b_score = s
            b_end = endi[last]

    ok, order = subset_order(best, dmat, b_mask, b_last)
    if not ok:  # cannot happen: the same float sums are recomputed
        found = False
    return found, b_mask, b_last, b_len, b_score, b_end, order


# ----------------------------------------------------------------------------- wrapper


def _as_node_list(nodes: Iterable[int], n: int, what: str) -> list[int]:
    out = []
    for v in nodes:
        iv = int(v)
        if iv != v or not 0 <= iv < n:
            raise PlannerError(f"{what}: node {v!r} is not an index of the {n}-node matrix")
        out.append(iv)
    return out


def _closure(sub: np.ndarray) -> np.ndarray:
    """All-pairs shortest paths (Floyd-Warshall) of a small non-negative matrix."""
    sp = sub.copy()
    for m in range(sp.shape[0]):
        np.minimum(sp, sp[:, m : m + 1] + sp[m : m + 1, :], out=sp)
    return sp


def solve_orienteering(
    dist: np.ndarray,
    scores: np.ndarray,
    start: int,
    candidates: Iterable[int],
    ends: Iterable[int],
    budget: float,
    prefix: Sequence[int] = (),
) -> OrienteeringResult:
    """Best route ``start -> prefix... -> subset of candidates -> one of ends``.

    Maximises the total score of the visited targets (prefix included), then minimises the
    length, subject to ``length <= budget + LENGTH_TOL``. ``dist`` is a square matrix of
    non-negative float distances (``inf`` = no way), ``scores`` one value per node.
    Candidates that are also prefix nodes are ignored (already visited); duplicates are
    ignored. Candidates that no feasible route can visit are dropped before the DP.

    Raises :class:`PlannerError` on malformed input or when more than
    ``MAX_EXACT_TARGETS`` usable candidates remain, and :class:`InfeasibleError` when the
    frozen prefix alone is over budget or unflyable, or no allowed end can be reached
    within the budget.
    """
    dist = np.asarray(dist, dtype=np.float64)
    if dist.ndim != 2 or dist.shape[0] != dist.shape[1]:
        raise PlannerError(f"dist must be a square matrix, got shape {dist.shape}")
    n = dist.shape[0]
    scores = np.asarray(scores, dtype=np.float64)
    if scores.shape != (n,):
        raise PlannerError(f"scores must have shape ({n},), got {scores.shape}")
    budget = float(budget)
    if math.isnan(budget):
        raise PlannerError("budget is NaN")

    (start,) = _as_node_list([start], n, "start")
    prefix_l = _as_node_list(prefix, n, "prefix")
    ends_l = sorted(set(_as_node_list(ends, n, "ends")))
    if not ends_l:
        raise PlannerError("no allowed end node")
    if len(set(prefix_l)) != len(prefix_l):
        raise PlannerError(f"prefix visits a node twice: {prefix_l}")
    airports = set(ends_l) | {start}
    if airports & set(prefix_l):
        raise PlannerError(f"prefix {prefix_l} contains the start or an end node")
    prefix_set = set(prefix_l)
    cands = sorted(set(_as_node_list(candidates, n, "candidates")) - prefix_set)
    if airports & set(cands):
        raise PlannerError("the start or an end node is listed as a candidate target")

    used = [start, *prefix_l, *cands, *ends_l]
    sub = dist[np.ix_(used, used)]
    if np.isnan(sub).any() or (sub < 0).any():
        raise PlannerError("dist holds NaN or negative distances")
    if not np.isfinite(scores[prefix_l + cands]).all():
        raise PlannerError("scores of targets must be finite")

    # start -> prefix, summed left to right like route_length
    head = [start, *prefix_l]
    base = route_length(dist, head)
    limit = budget + LENGTH_TOL
    if not base <= limit:
        raise InfeasibleError(
            f"frozen prefix {prefix_l} from {start} has length {base} > budget {budget}"
        )
    eff = head[-1]
    base_score = float(np.sum(scores[prefix_l])) if prefix_l else 0.0

    # lower bounds on what is still to fly, on the nodes a route may use from here on
    nodes = [eff, *cands, *ends_l]
    sp = _closure(dist[np.ix_(nodes, nodes)])
    n_c = len(cands)
    end_cols = np.arange(1 + n_c, len(nodes))
    lb_all = sp[:, end_cols].min(axis=1)  # shortest way from each node to some end
    # a partial route is pruned only if it is clearly over: keep rounding well inside
    prune_limit = limit + 1e-9 * (1.0 + abs(budget))
    if not base + lb_all[0] <= prune_limit:
        raise InfeasibleError(
            f"no allowed end {ends_l} is reachable from {eff} within budget {budget}"
        )
    keep = [i for i in range(n_c) if base + sp[0, 1 + i] + lb_all[1 + i] <= prune_limit]
    cands = [cands[i] for i in keep]
    lb = np.ascontiguousarray(lb_all[[1 + i for i in keep]], dtype=np.float64)
    k = len(cands)
    if k > MAX_EXACT_TARGETS:
        raise PlannerError(
            f"{k} usable candidate targets exceed MAX_EXACT_TARGETS={MAX_EXACT_TARGETS}"
        )

    ends_arr = np.asarray(ends_l, dtype=np.int64)
    dmat = np.ascontiguousarray(dist[np.ix_(cands, cands)])
    d0 = np.ascontiguousarray(dist[eff, cands])
    ce = dist[np.ix_(cands, ends_l)].reshape(k, len(ends_l))
    arg = ce.argmin(axis=1) if k else np.zeros(0, dtype=np.int64)
    endd = np.ascontiguousarray(ce[np.arange(k), arg])
    endi = np.ascontiguousarray(ends_arr[arg])
    e_row = dist[eff, ends_l]
    e_arg = int(e_row.argmin())
    base_end_d = float(e_row[e_arg])
    base_end_i = int(ends_l[e_arg]) if np.isfinite(base_end_d) else -1
    cscores = np.ascontiguousarray(scores[cands])
    scale = 1.0 + float(np.abs(cscores).sum()) + abs(base_score)
    score_eps = SCORE_RTOL * scale

    found, _mask, _last, length, _s, end, order = _best_route(
        dmat,
        d0,
        endd,
        endi,
        cscores,
        lb,
        base,
        base_score,
        base_end_d,
        base_end_i,
        limit,
        prune_limit,
        score_eps,
    )
    if not found:
        raise InfeasibleError(
            f"no route from {start} via prefix {prefix_l} to an end {ends_l} fits budget {budget}"
        )
    route = [*head, *(cands[i] for i in order), int(end)]
    score = base_score + float(sum(float(cscores[i]) for i in order))
    return OrienteeringResult(route=route, length=float(length), score=score)


def warmup() -> None:
    """Compile (or load from the on-disk cache) the kernel on a tiny instance."""
    pts = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    d = np.sqrt(((pts[:, None, :] - pts[None, :, :]) ** 2).sum(-1))
    solve_orienteering(d, np.array([0.0, 1.0, 1.0, 1.0]), 0, [1, 2, 3], [0], 10.0)
