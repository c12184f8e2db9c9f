"""Tests for the exact Held-Karp orienteering solver (planner/orienteering.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.errors import InfeasibleError, PlannerError
from planner.orienteering import (
    MAX_EXACT_TARGETS,
    OrienteeringResult,
    route_length,
    solve_orienteering,
)

TOL = 1e-9


# ----------------------------------------------------------------------------- helpers


def euclid(pts: np.ndarray) -> np.ndarray:
    return np.sqrt(((pts[:, None, :] - pts[None, :, :]) ** 2).sum(-1))


def brute_force(dist, scores, start, candidates, ends, budget, prefix=()):
    """Best (score, length) by enumerating every ordered subset of the candidates.

    Independent of the solver: a depth-first walk over all simple paths from the last
    prefix node through the candidates, closed at every allowed end. Lengths are summed
    left to right from the start. A path already longer than the budget is not walked on:
    every leg is >= 0, so nothing it leads to fits (the same answer, a tenth of the time).
    Returns None when no route fits the budget.
    """
    head = [start, *prefix]
    length0 = 0.0
    for a, b in zip(head[:-1], head[1:]):
        length0 += dist[a, b]
    score0 = sum(scores[p] for p in prefix)
    cands = [c for c in dict.fromkeys(candidates) if c not in set(prefix)]
    best = None  # (score, -length) maximised

    def close(node, length, score):
        nonlocal best
        for e in ends:
            total = length + dist[node, e]
            if total <= budget + TOL:
                key = (score, -total)
                if best is None or key > best:
                    best = key

    def walk(node, length, score, remaining):
        if length > budget + TOL:  # every extension and closing leg only adds (>= 0)
            return
        close(node, length, score)
        for c in remaining:
            walk(c, length + dist[node, c], score + scores[c], remaining - {c})

    walk(head[-1], length0, score0, frozenset(cands))
    if best is None:
        return None
    return best[0], -best[1]


def check_route(res: OrienteeringResult, dist, scores, start, candidates, ends, budget, prefix):
    route = res.route
    assert route[: 1 + len(prefix)] == [start, *prefix]
    assert route[-1] in set(ends)
    middle = route[1 + len(prefix) : -1]
    assert set(middle) <= set(candidates)
    inner = route[1:-1]
    assert len(set(inner)) == len(inner), f"repeated node in {route}"
    assert start not in inner and route[-1] not in inner
    if route[-1] == start:
        assert set(ends) >= {start}
    recomputed = route_length(dist, route)
    assert recomputed <= budget + TOL
    assert math.isclose(res.length, recomputed, rel_tol=0, abs_tol=1e-12)
    assert res.score == pytest.approx(sum(scores[v] for v in route[1:-1]), abs=1e-9)


# ------------------------------------------------------------------- random instances


@st.composite
def instances(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    mode = draw(st.sampled_from(["return", "end", "best_end"]))
    n_air = {"return": 1, "end": 2, "best_end": draw(st.sampled_from([2, 3]))}[mode]
    # sampled_from rather than integers(): hypothesis biases integers() to small values
    n_cand = draw(st.sampled_from(range(9)))
    n_pref = draw(st.sampled_from(range(3)))
    n = n_air + n_pref + n_cand
    metric = draw(st.booleans())
    if metric:
        dist = euclid(rng.uniform(0, 10, size=(n, 2)))
    else:  # arbitrary symmetric non-negative matrix (triangle inequality may fail)
        m = rng.uniform(0.5, 10, size=(n, n))
        dist = np.triu(m, 1) + np.triu(m, 1).T
    p_inf = draw(st.sampled_from([0.0, 0.0, 0.15, 0.4]))
    if p_inf:
        mask = np.triu(rng.random((n, n)) < p_inf, 1)
        dist[mask | mask.T] = np.inf
    np.fill_diagonal(dist, 0.0)
    # integer or half-integer scores (exact in binary); airports score 0
    scores = rng.integers(0, 10, size=n).astype(float) / draw(st.sampled_from([1.0, 2.0]))
    scores[:n_air] = 0.0

    nodes = list(rng.permutation(n))
    airports, rest = nodes[:n_air], nodes[n_air:]
    prefix = [int(v) for v in rest[:n_pref]]
    candidates = [int(v) for v in rest[n_pref:]]
    start = int(airports[0])
    if mode == "return":
        ends = [start]
    elif mode == "end":
        ends = [int(airports[1])]
    else:
        ends = [int(a) for a in airports if a != start or draw(st.booleans())]

    # budget from tight to loose; "exact" = the length of a random full route, so the
    # best route may sit right on the budget
    finite = dist[np.isfinite(dist)]
    scale = float(finite.max()) if finite.size else 1.0
    kind = draw(
        st.sampled_from(["zero", "tight", "tight", "mid", "mid", "loose", "exact", "exact"])
    )
    if kind == "zero":
        budget = 0.0
    elif kind == "exact":
        sub = [int(c) for c in rng.permutation(candidates)[: rng.integers(0, n_cand + 1)]]
        budget = route_length(dist, [start, *prefix, *sub, int(rng.choice(ends))])
        if not math.isfinite(budget):
            budget = scale * (n_pref + 2)
    else:
        factor = {"tight": 0.7, "mid": 2.0, "loose": 4.0 + n}[kind]
        budget = float(rng.uniform(0.3, 1.0)) * factor * scale
    # shuffle the candidate order: the answer must not depend on it
    candidates = [int(c) for c in rng.permutation(candidates)] if candidates else []
    return dist, scores, start, candidates, ends, budget, prefix


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_matches_brute_force(inst):
    dist, scores, start, candidates, ends, budget, prefix = inst
    expected = brute_force(dist, scores, start, candidates, ends, budget, prefix)
    if expected is None:
        with pytest.raises(InfeasibleError):
            solve_orienteering(dist, scores, start, candidates, ends, budget, prefix)
        return
    res = solve_orienteering(dist, scores, start, candidates, ends, budget, prefix)
    check_route(res, dist, scores, start, candidates, ends, budget, prefix)
    best_score, best_len = expected
    assert res.score == pytest.approx(best_score, abs=1e-9)
    assert abs(res.length - best_len) <= 1e-9
    # deterministic
    again = solve_orienteering(
        dist, scores, start, list(reversed(candidates)), ends, budget, prefix
    )
    assert again == res


# ------------------------------------------------------------------------- edge cases


def _square():
    # 0: airport A at origin, 1: airport B at (10, 0), targets 2..5
    pts = np.array([[0, 0], [10, 0], [1, 1], [2, 2], [8, 1], [5, 6]], dtype=float)
    return euclid(pts), np.array([0, 0, 1, 2, 3, 4], dtype=float)


def test_prefix_over_budget_raises_infeasible():
    dist, scores = _square()
    with pytest.raises(InfeasibleError):
        solve_orienteering(dist, scores, 0, [2, 3], [0], budget=5.0, prefix=[5])


def test_prefix_with_unflyable_leg_raises_infeasible():
    dist, scores = _square()
    dist[0, 4] = dist[4, 0] = np.inf
    with pytest.raises(InfeasibleError):
        solve_orienteering(dist, scores, 0, [2, 3], [0], budget=1e6, prefix=[4])


def test_unreachable_end_raises_infeasible():
    dist, scores = _square()
    dist[1, :] = dist[:, 1] = np.inf
    dist[1, 1] = 0.0
    with pytest.raises(InfeasibleError):
        solve_orienteering(dist, scores, 0, [2, 3, 4, 5], [1], budget=1e6)


def test_too_many_candidates_raises_planner_error():
    rng = np.random.default_rng(1)
    n = MAX_EXACT_TARGETS + 2
    dist = euclid(rng.uniform(0, 10, size=(n, 2)))
    scores = np.ones(n)
    with pytest.raises(PlannerError) as info:
        solve_orienteering(dist, scores, 0, range(1, n), [0], budget=1e6)
    assert not isinstance(info.value, InfeasibleError)


def test_unreachable_candidates_do_not_count_against_the_limit():
    rng = np.random.default_rng(2)
    n = MAX_EXACT_TARGETS + 6
    dist = euclid(rng.uniform(0, 10, size=(n, 2)))
    far = list(range(6, n))  # cut off from everything
    dist[far, :] = np.inf
    dist[:, far] = np.inf
    np.fill_diagonal(dist, 0.0)
    scores = np.ones(n)
    res = solve_orienteering(dist, scores, 0, range(1, n), [0], budget=1e6)
    assert sorted(res.route[1:-1]) == [1, 2, 3, 4, 5]
    assert res.score == 5.0


def test_zero_candidates_goes_to_best_end():
    dist, scores = _square()
    res = solve_orienteering(dist, scores, 0, [], [0, 1], budget=100.0, prefix=[4])
    # from target 4 at (8, 1), airport 1 at (10, 0) is nearer than 0
    assert res.route == [0, 4, 1]
    assert res.length == pytest.approx(dist[0, 4] + dist[4, 1])
    assert res.score == 3.0
    res = solve_orienteering(dist, scores, 0, [], [0], budget=100.0)
    assert res.route == [0, 0] and res.length == 0.0 and res.score == 0.0


def test_zero_budget_return_mode_stays_home():
    dist, scores = _square()
    res = solve_orienteering(dist, scores, 0, [2, 3, 4, 5], [0], budget=0.0)
    assert res == OrienteeringResult(route=[0, 0], length=0.0, score=0.0)
    # start among several allowed ends
    res = solve_orienteering(dist, scores, 0, [2, 3, 4, 5], [1, 0], budget=0.0)
    assert res.route == [0, 0]


def test_negative_budget_is_infeasible():
    dist, scores = _square()
    with pytest.raises(InfeasibleError):
        solve_orienteering(dist, scores, 0, [2, 3], [0], budget=-1.0)


def test_bad_input_raises_planner_error():
    dist, scores = _square()
    with pytest.raises(PlannerError):  # an airport as a candidate
        solve_orienteering(dist, scores, 0, [1, 2], [0, 1], budget=100.0)
    with pytest.raises(PlannerError):  # the start as a candidate
        solve_orienteering(dist, scores, 0, [0, 2], [1], budget=100.0)
    with pytest.raises(PlannerError):  # no end
        solve_orienteering(dist, scores, 0, [2], [], budget=100.0)
    with pytest.raises(PlannerError):  # prefix repeats
        solve_orienteering(dist, scores, 0, [2], [0], budget=100.0, prefix=[3, 3])
    with pytest.raises(PlannerError):  # node out of range
        solve_orienteering(dist, scores, 0, [17], [0], budget=100.0)
    bad = dist.copy()
    bad[2, 3] = bad[3, 2] = -1.0
    with pytest.raises(PlannerError):
        solve_orienteering(bad, scores, 0, [2, 3], [0], budget=100.0)


def test_prefix_nodes_listed_as_candidates_are_ignored():
    dist, scores = _square()
    a = solve_orienteering(dist, scores, 0, [2, 3, 4, 5], [0, 1], budget=25.0, prefix=[3])
    b = solve_orienteering(dist, scores, 0, [2, 4, 5], [0, 1], budget=25.0, prefix=[3])
    assert a == b
    assert a.route.count(3) == 1


def test_route_length_helper():
    dist, _ = _square()
    assert route_length(dist, [0]) == 0.0
    assert route_length(dist, [0, 1]) == pytest.approx(10.0)
    assert route_length(dist, [0, 1, 0]) == pytest.approx(20.0)


def test_polygon_tour_is_found_with_many_targets():
    # start on a circle with 15 targets: the optimal full tour is the polygon
    k = 15
    ang = np.linspace(0, 2 * np.pi, k + 1, endpoint=False)
    pts = np.c_[np.cos(ang), np.sin(ang)] * 10
    perm = np.random.default_rng(3).permutation(np.arange(1, k + 1))
    order = np.r_[0, perm]  # node order[i] sits at angle ang[i]
    placed = np.empty_like(pts)
    placed[order] = pts
    dist = euclid(placed)
    scores = np.r_[0.0, np.ones(k)]
    side = 2 * 10 * np.sin(np.pi / (k + 1))
    res = solve_orienteering(dist, scores, 0, range(1, k + 1), [0], budget=(k + 1) * side + 1)
    assert res.score == k
    assert res.length == pytest.approx((k + 1) * side, rel=1e-12)
    visited = list(res.route[1:-1])
    expected = list(order[1:])
    assert visited in (expected, expected[::-1])
    # one side short of the full tour: one target must be skipped
    res = solve_orienteering(dist, scores, 0, range(1, k + 1), [0], budget=(k + 1) * side - 1e-6)
    assert res.score == k - 1


def test_budget_boundary_tolerance():
    dist, scores = _square()
    full = route_length(dist, [0, 2, 4, 0])
    res = solve_orienteering(dist, scores, 0, [2, 4], [0], budget=full - 0.5e-9)
    assert res.route in ([0, 2, 4, 0], [0, 4, 2, 0]) and res.score == 4.0
    res = solve_orienteering(dist, scores, 0, [2, 4], [0], budget=full - 2e-9)
    assert res.score == 3.0 and res.route == [0, 4, 0]


def test_non_metric_detour_is_preferred_when_shorter():
    # direct 0 -> 1 costs 10, but 0 -> 2 -> 1 costs 2: the zero-score detour is shorter
    dist = np.array([[0, 10, 1], [10, 0, 1], [1, 1, 0]], dtype=float)
    scores = np.zeros(3)
    res = solve_orienteering(dist, scores, 0, [2], [1], budget=100.0)
    assert res.route == [0, 2, 1] and res.length == 2.0


@pytest.mark.parametrize("seed", [0, 1])
def test_relabelling_invariance_with_17_targets(seed):
    # metamorphic check at a size brute force cannot reach: renaming the nodes (which
    # reorders the DP's bits) must not change the optimum score or length
    rng = np.random.default_rng(seed)
    k = 17
    n = k + 2
    pts = rng.uniform(0, 100, size=(n, 2))
    dist = euclid(pts)
    scores = np.r_[0.0, 0.0, rng.integers(1, 6, size=k).astype(float)]
    budget = 180.0  # about half the targets fit
    res = solve_orienteering(dist, scores, 0, range(2, n), [0, 1], budget, prefix=[2])
    check_route(res, dist, scores, 0, list(range(3, n)), [0, 1], budget, [2])
    perm = np.r_[0, 1, 2, 3 + rng.permutation(k - 1)]  # new label of old node i: perm[i]
    inv = np.argsort(perm)
    d2 = dist[np.ix_(inv, inv)]
    s2 = scores[inv]
    res2 = solve_orienteering(d2, s2, 0, range(2, n), [0, 1], budget, prefix=[2])
    check_route(res2, d2, s2, 0, list(range(3, n)), [0, 1], budget, [2])
    assert res2.score == res.score
    assert res2.length == pytest.approx(res.length, abs=1e-9)
    assert 3 < len(res.route) < n + 1  # the budget really binds
