"""Team orienteering search: feasibility, reproducibility, anytime behaviour, optimality on
tiny instances (against brute force) and a known benchmark instance."""

from __future__ import annotations

import dataclasses
import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from planner.errors import InfeasibleError, PlannerError
from planner.team_search import (
    LARGE_PAIRS,
    StopCriterion,
    TeamProblem,
    TeamSolution,
    solve_team,
    verify_solution,
)

# Chao, Golden & Wasil sets 4 and 5, kept in the repository (see tests/data/top/README.md).
DATA = Path(__file__).resolve().parents[1] / "data" / "top"


# --------------------------------------------------------------------------- helpers
def euclid(pts: np.ndarray) -> np.ndarray:
    d = pts[:, None, :] - pts[None, :, :]
    return np.sqrt((d * d).sum(-1))


def check_feasible(p: TeamProblem, s: TeamSolution) -> None:
    """Independent check of every hard constraint (does not trust the engine's helper)."""
    m = len(p.starts)
    assert len(s.routes) == m
    prefixes = p.prefixes or tuple(() for _ in range(m))
    visited: list[int] = []
    total = 0.0
    for k, r in enumerate(s.routes):
        assert r[0] == p.starts[k]
        assert p.end_options[k, r[-1]], (k, r)
        pf = list(prefixes[k])
        assert r[1 : 1 + len(pf)] == pf
        length = sum(p.dist[a, b] for a, b in zip(r[:-1], r[1:]))
        assert length <= p.budget[k] + 1e-9, (k, length, p.budget[k])
        assert math.isclose(length, s.lengths[k], rel_tol=1e-9, abs_tol=1e-9)
        for u in r[1 + len(pf) : -1]:
            assert p.eligible[k, u], (k, u)
        visited += r[1:-1]
        total += sum(p.score[u] for u in r[1:-1])
    assert len(visited) == len(set(visited)), visited
    assert math.isclose(total, s.score, abs_tol=1e-9)
    assert verify_solution(p, s) == []


def random_problem(
    rng: np.random.Generator,
    n_targets: int,
    m: int,
    *,
    prefixes=False,
    budget_scale=1.0,
    sams=False,
) -> TeamProblem:
    n_air = 3
    n = n_air + n_targets
    pts = rng.uniform(0, 100, size=(n, 2))
    dist = euclid(pts)
    if sams:  # make some pairs unreachable, keeping the matrix symmetric
        cut = rng.random((n, n)) < 0.05
        cut = cut | cut.T
        np.fill_diagonal(cut, False)
        cut[:n_air, :n_air] = False
        dist[cut] = np.inf
    score = np.zeros(n)
    score[n_air:] = rng.integers(1, 10, size=n_targets)
    starts = rng.integers(0, n_air, size=m)
    ends = np.zeros((m, n), dtype=bool)
    for k in range(m):
        mode = k % 3
        if mode == 0:  # return
            ends[k, starts[k]] = True
        elif mode == 1:  # end at another airport
            ends[k, (starts[k] + 1) % n_air] = True
        else:  # best_end
            ends[k, :n_air] = True
    elig = rng.random((m, n)) < 0.8
    elig[:, :n_air] = False
    budget = rng.uniform(120, 260, size=m) * budget_scale
    pfx: tuple[tuple[int, ...], ...] = ()
    if prefixes:
        order = rng.permutation(np.arange(n_air, n))
        pfx = tuple(tuple(int(x) for x in order[2 * k : 2 * k + (k % 2) + 1]) for k in range(m))
        # make the prefixes flyable and affordable
        for k in range(m):
            head = [int(starts[k]), *pfx[k]]
            legs = list(zip(head[:-1], head[1:]))
            legs += [(head[-1], int(e)) for e in np.flatnonzero(ends[k])]
            for a, b in legs:
                dist[a, b] = dist[b, a] = float(np.hypot(*(pts[a] - pts[b])))
            hl = sum(dist[a, b] for a, b in zip(head[:-1], head[1:]))
            back = min(dist[head[-1], e] for e in np.flatnonzero(ends[k]))
            budget[k] = max(budget[k], hl + back + 20.0)
    return TeamProblem(
        dist=dist,
        score=score,
        starts=starts,
        end_options=ends,
        budget=budget,
        eligible=elig,
        prefixes=pfx,
    )


def brute_force(p: TeamProblem) -> float:
    """Optimal total score: best route per vehicle and subset, then disjoint subsets."""
    m = len(p.starts)
    n = len(p.score)
    prefixes = p.prefixes or tuple(() for _ in range(m))
    targets = [
        u for u in range(n) if p.eligible[:, u].any() and not any(u in pf for pf in prefixes)
    ]
    fixed_score = sum(p.score[u] for pf in prefixes for u in pf)
    best_by_vehicle: list[dict[frozenset, float]] = []
    for k in range(m):
        head = [int(p.starts[k]), *prefixes[k]]
        hl = sum(p.dist[a, b] for a, b in zip(head[:-1], head[1:]))
        ends = np.flatnonzero(p.end_options[k])
        feas: dict[frozenset, float] = {}
        mine = [u for u in targets if p.eligible[k, u]]
        for r in range(len(mine) + 1):
            for sub in itertools.combinations(mine, r):
                ok = False
                for perm in itertools.permutations(sub):
                    seq = [head[-1], *perm]
                    ln = hl + sum(p.dist[a, b] for a, b in zip(seq[:-1], seq[1:]))
                    ln += min(p.dist[seq[-1], e] for e in ends)
                    if ln <= p.budget[k] + 1e-9:
                        ok = True
                        break
                if ok:
                    feas[frozenset(sub)] = float(sum(p.score[u] for u in sub))
        best_by_vehicle.append(feas)
    best = -1.0

    def rec(k: int, used: frozenset, acc: float) -> None:
        nonlocal best
        if k == m:
            best = max(best, acc)
            return
        for sub, sc in best_by_vehicle[k].items():
            if not (sub & used):
                rec(k + 1, used | sub, acc + sc)

    rec(0, frozenset(), 0.0)
    return best + fixed_score


def load_top(name: str) -> tuple[TeamProblem, float]:
    lines = (DATA / name).read_text().split("\n")
    n = int(lines[0].split()[1])
    m = int(lines[1].split()[1])
    tmax = float(lines[2].split()[1])
    a = np.array([[float(v) for v in ln.split()] for ln in lines[3 : 3 + n]])
    ends = np.zeros((m, n), dtype=bool)
    ends[:, n - 1] = True
    elig = np.ones((m, n), dtype=bool)
    elig[:, [0, n - 1]] = False
    best = {
        ln.split()[0]: float(ln.split()[1])
        for ln in (DATA / "best_known.txt").read_text().splitlines()
        if ln.strip()
    }
    return TeamProblem(
        dist=euclid(a[:, :2]),
        score=a[:, 2],
        starts=np.zeros(m, dtype=np.int64),
        end_options=ends,
        budget=np.full(m, tmax),
        eligible=elig,
    ), best[name]


# --------------------------------------------------------------------------- tests
@pytest.mark.parametrize("seed", range(6))
def test_random_problems_are_feasible(seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = random_problem(
        rng, n_targets=25 + 5 * seed, m=1 + seed % 4, prefixes=seed % 2 == 1, sams=seed >= 3
    )
    s = solve_team(p, StopCriterion(max_iterations=300), seed=seed)
    check_feasible(p, s)
    assert s.iterations <= 300


def test_reproducible_with_seed_and_iteration_limit() -> None:
    p = random_problem(np.random.default_rng(42), n_targets=40, m=3, prefixes=True)
    a = solve_team(p, StopCriterion(max_iterations=400), seed=7)
    b = solve_team(p, StopCriterion(max_iterations=400), seed=7)
    assert a.routes == b.routes and a.score == b.score and a.iterations == b.iterations == 400
    check_feasible(p, a)


def test_anytime_callback_sees_non_decreasing_feasible_scores() -> None:
    p, _ = load_top("p4.3.k.txt")
    seen: list[TeamSolution] = []
    s = solve_team(p, StopCriterion(max_seconds=1.0), seed=3, on_improvement=seen.append)
    assert seen, "no callback"
    scores = [x.score for x in seen]
    assert scores == sorted(scores)
    for x in seen:
        check_feasible(p, x)
    assert s.score == scores[-1]
    assert seen[0].seconds < 0.5  # a valid plan almost at once


def test_lambda_stop_criterion() -> None:
    p = random_problem(np.random.default_rng(5), n_targets=30, m=2)
    s = solve_team(p, lambda it, sec: it >= 50 or sec > 5.0, seed=1)
    check_feasible(p, s)
    assert s.iterations >= 50


@pytest.mark.parametrize("seed", range(8))
def test_tiny_instances_match_brute_force(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    p = random_problem(
        rng, n_targets=7, m=2, prefixes=seed % 3 == 2, budget_scale=0.7, sams=seed % 2 == 1
    )
    s = solve_team(p, StopCriterion(max_iterations=300), seed=seed)
    check_feasible(p, s)
    assert s.score == pytest.approx(brute_force(p))


@pytest.mark.parametrize("seed", [0, 2, 4, 6])
def test_tiny_instances_heuristic_alone_matches_brute_force(seed: int) -> None:
    # metric instances (no holes): the search itself, without the exact shortcut
    rng = np.random.default_rng(100 + seed)
    p = random_problem(rng, n_targets=7, m=2, prefixes=seed % 3 == 2, budget_scale=0.7)
    s = solve_team(p, StopCriterion(max_iterations=500), seed=seed, exact=False)
    check_feasible(p, s)
    assert not s.optimal
    assert s.score == pytest.approx(brute_force(p))


@pytest.mark.parametrize("seed", range(3))
def test_single_vehicle_small_is_exact(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    p = random_problem(rng, n_targets=7, m=1, budget_scale=0.6)
    s = solve_team(p, StopCriterion(max_iterations=10), seed=0)
    check_feasible(p, s)
    assert s.optimal
    assert s.score == pytest.approx(brute_force(p))


@pytest.mark.parametrize("name", ["p4.2.a.txt", "p5.2.h.txt", "p5.3.m.txt"])
def test_top_instance_reaches_best_known(name: str) -> None:
    p, best = load_top(name)
    s = solve_team(p, StopCriterion(max_iterations=3000), seed=0)
    check_feasible(p, s)
    assert s.score >= best


def test_frozen_prefix_over_budget_is_infeasible() -> None:
    p = random_problem(np.random.default_rng(9), n_targets=10, m=2, prefixes=True)
    budget = p.budget.copy()
    budget[1] = 1.0  # the prefix of vehicle 1 cannot be flown
    bad = TeamProblem(
        dist=p.dist,
        score=p.score,
        starts=p.starts,
        end_options=p.end_options,
        budget=budget,
        eligible=p.eligible,
        prefixes=p.prefixes,
    )
    with pytest.raises(InfeasibleError):
        solve_team(bad, StopCriterion(max_iterations=10))


def test_vehicle_that_cannot_move_gets_start_end() -> None:
    pts = np.array([[0.0, 0.0], [10.0, 0.0], [5.0, 1.0], [5.0, -1.0], [50.0, 50.0]])
    d = euclid(pts)
    n = len(pts)
    ends = np.zeros((2, n), dtype=bool)
    ends[:, 1] = True
    elig = np.zeros((2, n), dtype=bool)
    elig[:, 2:] = True
    p = TeamProblem(
        dist=d,
        score=np.array([0, 0, 3.0, 4.0, 9.0]),
        starts=np.array([0, 0]),
        end_options=ends,
        budget=np.array([10.0, 10.5]),
        eligible=elig,
    )
    s = solve_team(p, StopCriterion(max_iterations=50), seed=0)
    check_feasible(p, s)
    assert s.routes[0] == [0, 1]  # budget 10 = straight line only
    assert s.score == 4.0  # vehicle 1 picks the better of the two close targets


def test_single_vehicle_mid_size_uses_held_karp() -> None:
    # 16 usable targets: above the team DP, within the exact single-drone solver
    p = random_problem(np.random.default_rng(77), n_targets=16, m=1, budget_scale=0.8)
    s = solve_team(p, StopCriterion(max_iterations=10), seed=0)
    check_feasible(p, s)
    assert s.optimal
    h = solve_team(p, StopCriterion(max_iterations=2000), seed=0, exact=False)
    check_feasible(p, h)
    assert s.score >= h.score - 1e-9


# --------------------------------------------------------------------------- swarms
def swarm_problem(seed: int, m: int, n_targets: int, *, prefixes: bool = False) -> TeamProblem:
    """A problem past ``LARGE_PAIRS``: drones crowded at a few airports (co-located twins),
    mixed ends, fuel for part of the targets."""
    rng = np.random.default_rng(seed)
    n_air = 5
    n = n_air + n_targets
    pts = rng.uniform(0, 1000, size=(n, 2))
    dist = euclid(pts)
    score = np.zeros(n)
    score[n_air:] = rng.integers(1, 10, size=n_targets)
    starts = np.arange(m) % n_air
    ends = np.zeros((m, n), dtype=bool)
    for k in range(m):
        if k % 2:
            ends[k, starts[k]] = True
        else:
            ends[k, :n_air] = True
    elig = rng.random((m, n)) < 0.9
    elig[:, :n_air] = False
    pfx: tuple[tuple[int, ...], ...] = ()
    if prefixes:  # every seventh drone has begun with the free target nearest its base
        taken: set[int] = set()
        heads = []
        for k in range(m):
            if k % 7:
                heads.append(())
                continue
            order = np.argsort(dist[starts[k], n_air:]) + n_air
            u = next(int(t) for t in order if int(t) not in taken)
            taken.add(u)
            heads.append((u,))
        pfx = tuple(heads)
    budget = np.full(m, 600.0)
    return TeamProblem(
        dist=dist,
        score=score,
        starts=starts,
        end_options=ends,
        budget=budget,
        eligible=elig,
        prefixes=pfx,
        metric=True,
    )


@pytest.mark.parametrize("prefixes", [False, True])
def test_a_swarm_gets_a_valid_first_plan_then_better_ones(prefixes: bool) -> None:
    p = swarm_problem(11, m=120, n_targets=1500, prefixes=prefixes)
    assert len(p.starts) * 1500 > LARGE_PAIRS  # the window-by-window search
    seen: list[TeamSolution] = []
    s = solve_team(p, StopCriterion(max_iterations=3000), seed=2, on_improvement=seen.append)
    assert seen and seen[0].score > 0
    for x in seen:
        check_feasible(p, x)
    check_feasible(p, s)
    scores = [x.score for x in seen]
    assert scores == sorted(scores) and s.score == scores[-1]
    assert s.score > seen[0].score  # the windows found something the greedy missed
    again = solve_team(p, StopCriterion(max_iterations=3000), seed=2)
    assert again.routes == s.routes  # reproducible with a seed and an iteration limit


def test_a_search_from_initial_routes_is_never_worse_than_them() -> None:
    p = random_problem(np.random.default_rng(8), n_targets=60, m=3, prefixes=True)
    start = solve_team(p, StopCriterion(max_iterations=30), seed=0)
    longer = solve_team(p, StopCriterion(max_iterations=30), seed=5, initial=start.routes)
    check_feasible(p, longer)
    assert longer.score >= start.score


def test_initial_routes_must_fit() -> None:
    p = random_problem(np.random.default_rng(8), n_targets=30, m=2)
    good = solve_team(p, StopCriterion(max_iterations=10), seed=0).routes
    twice = [good[0], [good[1][0], *good[0][1:-1], good[1][-1]]]
    if good[0][1:-1]:
        with pytest.raises(PlannerError):
            solve_team(p, StopCriterion(max_iterations=10), initial=twice)
    with pytest.raises(PlannerError):
        solve_team(p, StopCriterion(max_iterations=10), initial=good[:1])


def _score(p: TeamProblem, routes) -> float:
    return float(sum(p.score[u] for r in routes for u in r[1:-1]))


def _spoilt(pr, routes: list[list[int]]) -> tuple[list[list[int]], list[list[int]]]:
    """``routes`` as a plan made on another world would be: each vehicle's route with a
    target another vehicle routes and its own first target twice. Returns them and what
    trimming them for ``pr`` (``_Prepared.load``) must keep: the targets free and usable
    by the vehicle, in order, less the last ones while the route is over its budget."""
    spoilt, kept = [], []
    taken: set[int] = set()
    for k, r in enumerate(routes):
        head, body, end = r[: pr.fp[k]], list(r[pr.fp[k] : -1]), r[-1]
        bad = [u for q in routes[k + 1 :] for u in q[pr.fp[k] : -1]][:1]
        spoilt.append([*head, *body[:1], *bad, *body, *body[:1], end])
        free = [u for u in dict.fromkeys([*body[:1], *bad, *body]) if pr.elig[k, u]]
        free = [u for u in free if u not in taken]
        while free:
            seq = [*head, *free]
            length = sum(pr.dist[a, b] for a, b in zip(seq, seq[1:])) + pr.endd[k, seq[-1]]
            if length <= pr.budget[k] + 1e-6:
                break
            free.pop()
        taken |= set(free)
        kept.append(free)
    return spoilt, kept


@pytest.mark.parametrize("size", ["small", "swarm"])
def test_a_warm_start_is_trimmed_to_fit_and_never_lost(size: str) -> None:
    """A plan made before the world changed (``warm``): targets taken twice or by another
    vehicle are left out, and the last ones while a route is over its (now a fifth shorter) budget;
    the search starts from what is left, at every size, so its plan is worth at least that."""
    from planner.team_search import _Prepared

    if size == "small":
        p = random_problem(np.random.default_rng(3), n_targets=60, m=3)
    else:
        p = swarm_problem(5, m=120, n_targets=1500)
        assert len(p.starts) * 1500 > LARGE_PAIRS
    before = solve_team(p, StopCriterion(max_iterations=200), seed=1).routes
    short = dataclasses.replace(p, budget=p.budget * 0.8)
    pr = _Prepared(short)
    spoilt, kept = _spoilt(pr, before)
    assert sum(map(len, kept)) < sum(len(r) - pr.fp[k] - 1 for k, r in enumerate(before))
    arrays = pr.new_solution()
    with pytest.raises(PlannerError):
        pr.load(arrays, spoilt)  # not trimmed: refused, as an ``initial`` would be
    arrays = pr.new_solution()
    pr.load(arrays, spoilt, trim=True)
    seq, L = arrays[0], arrays[1]
    loaded = [[int(u) for u in seq[k, pr.fp[k] : L[k]]] for k in range(pr.m)]
    assert loaded == kept
    floor = float(sum(short.score[u] for r in kept for u in r))
    assert floor > 0
    found = solve_team(short, StopCriterion(max_iterations=20), seed=4, warm=spoilt)
    check_feasible(short, found)
    assert found.score >= floor - 1e-9
    cold = solve_team(short, StopCriterion(max_iterations=0), seed=4)
    first = solve_team(short, StopCriterion(max_iterations=0), seed=4, warm=spoilt)
    assert first.score >= floor - 1e-9 and _score(short, first.routes) == first.score
    assert first.routes != cold.routes  # it did start from the warm routes


@pytest.mark.parametrize("seed", range(6))
def test_the_greedy_that_keeps_each_best_route_makes_the_scans_choices(seed: int) -> None:
    """``_repair_greedy`` (large problems) against ``_repair_scan``, which tries every
    candidate in every route at each insertion: the same routes, insertion by insertion."""
    from planner._team.repair import SCAN_PAIRS, _repair_greedy, _repair_scan
    from planner.team_search import _Prepared

    rng = np.random.default_rng(seed)
    if seed % 2:  # co-located twins: many equal values, where the first of equals must win
        p = swarm_problem(seed, m=24, n_targets=400)
    else:
        p = random_problem(rng, n_targets=400, m=24, prefixes=True, budget_scale=0.6)
    pr = _Prepared(p)
    assert pr.m * pr.cand.size > SCAN_PAIRS
    alpha = (1.0, 2.0, 0.5)[seed % 3]
    forbid = rng.random(pr.n) < 0.05
    results = []
    for kernel in (_repair_greedy, _repair_scan):
        seq, L, rlen, where = pr.new_solution()
        ins_d = np.zeros((pr.cand.size, pr.m))
        ins_p = np.zeros((pr.cand.size, pr.m), dtype=np.int64)
        args = (pr.dist, pr.score, pr.endd, pr.budget, pr.elig, pr.fp, pr.cand)
        state = (seq, L, rlen, where, forbid, alpha)
        if kernel is _repair_scan:
            st = np.array([7], dtype=np.uint64)
            count = kernel(*args, *state, 0.0, pr.dscale, st, ins_d, ins_p)
        else:
            count = kernel(*args, *state, pr.dscale, ins_d, ins_p)
        results.append((count, seq.copy(), L.copy(), where.copy()))
    (n1, seq1, L1, w1), (n2, seq2, L2, w2) = results
    assert n1 == n2 > 0
    assert np.array_equal(L1, L2) and np.array_equal(w1, w2)
    for k in range(pr.m):
        assert list(seq1[k, : L1[k]]) == list(seq2[k, : L2[k]])


def test_the_checks_a_compiled_mission_made_are_not_made_again(monkeypatch) -> None:
    from planner import team_search
    from planner.mission import MissionCompiler
    from planner.planning import team_problem
    from planner.scenario import load_scenario
    from tests.conftest import SCENARIOS

    problem = team_problem(MissionCompiler()(load_scenario(SCENARIOS / "demo.json")))
    assert problem.flags is not None
    unknown = dataclasses.replace(problem, flags=None)
    want = solve_team(unknown, StopCriterion(max_iterations=50), seed=3)

    def refused(dist: np.ndarray) -> None:
        raise AssertionError("the matrix was read again for its checks")

    monkeypatch.setattr(team_search, "matrix_flags", refused)
    got = solve_team(problem, StopCriterion(max_iterations=50), seed=3)
    assert got.routes == want.routes and got.score == want.score
    with pytest.raises(AssertionError, match="read again"):
        solve_team(unknown, StopCriterion(max_iterations=50), seed=3)
