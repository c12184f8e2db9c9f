"""The seed's five target-allocation strategies (seed 000 §4.2 and Appendix E.1, seed 001).

An allocation gives each drone a set of targets to be routed exactly afterwards
(:func:`planner.routing.route_allocation`). Every strategy builds, for every drone, an
insertion tour ``start -> prefix... -> assigned targets -> best end`` and gives a target to
a drone only if the cheapest insertion keeps that tour within the drone's budget. The tour is
a real route, so an exact router can always visit every allocated target.

* ``efficient`` -- auction: repeatedly the (target, drone) pair with the best
  ``priority / marginal distance`` (cheapest insertion into the drone's current tour).
* ``greedy`` -- targets by descending priority, each to the nearest capable drone (smallest
  insertion cost into its current tour) that still fits.
* ``balanced`` -- the drone with the fewest targets (then the lowest fuel load) picks its
  best target next, so counts stay even.
* ``geographic`` -- angular sectors around the fleet's centroid (seed 001): the targets are
  split into one contiguous sector per drone, each drone gets the sector facing its
  start/end corridor and takes from it first; what its owner cannot take goes by the
  efficient rule.
* ``exclusive`` -- first the targets only one drone can visit go to that drone, then the
  rest by the efficient rule.

All strategies respect eligibility (only ``DroneSpec.eligible``; excluded targets are not
nodes), never give a target twice, never give away a frozen (prefix) target, skip targets a
drone cannot reach (``inf``) and cap each drone at ``max_per_drone`` targets (the exact
router's comfort zone, seed §4.2). A target nobody can take is simply not assigned.
Everything is deterministic: ties go to the higher priority, the cheaper insertion, the
lower node index and the drone listed first.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from planner.errors import PlannerError
from planner.strategies import ALLOCATION_STRATEGIES as STRATEGIES

if TYPE_CHECKING:
    from planner.mission import DroneSpec, Mission

__all__ = ["STRATEGIES", "allocate"]

_LENGTH_TOL = 1e-9  # same tolerance as the exact router (orienteering.LENGTH_TOL)
_MIN_COST = 1e-9  # a marginal below this counts as this much, so the ratio stays finite

_Key = tuple[float, float, float, int, int]
"""A candidate's sort key: -ratio, -score, cost, target, drone (smaller is better)."""


class _Tour:
    """A drone's insertion tour: the open path ``start, prefix..., targets...`` plus best end."""

    def __init__(self, spec: DroneSpec, dist: np.ndarray):
        self.spec = spec
        self.dist = dist
        self.path = [spec.start, *spec.prefix]
        self.fixed = len(self.path)  # insertions happen after path[fixed - 1]
        self.ends = np.asarray(spec.ends, dtype=np.int64)
        self.count = 0
        self.length = self.measured()

    def measured(self) -> float:
        """The path's length plus its shortest way to an end (inf: no end)."""
        d = self.dist
        total = 0.0
        for a, b in zip(self.path[:-1], self.path[1:]):
            total += float(d[a, b])
        if len(self.ends) == 0:
            return math.inf
        return total + float(d[self.path[-1], self.ends].min())

    @property
    def alive(self) -> bool:
        return self.length <= self.spec.budget + _LENGTH_TOL

    def insertion(self, cands: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Cheapest insertion cost of each candidate and where (index in ``path``)."""
        d = self.dist
        path = np.asarray(self.path, dtype=np.int64)
        end_min = d[np.ix_(cands, self.ends)].min(axis=1)
        last = path[-1]
        tail = d[last, cands] + end_min - float(d[last, self.ends].min())
        rows = [tail]
        where = [len(path)]
        if len(path) > self.fixed:
            a = path[self.fixed - 1 : -1]
            b = path[self.fixed :]
            mid = d[np.ix_(a, cands)] + d[np.ix_(cands, b)].T - d[a, b][:, None]
            rows = [*mid, tail]
            where = [*range(self.fixed, len(path)), len(path)]
        with np.errstate(invalid="ignore"):
            costs = np.vstack(rows)
        costs = np.where(np.isnan(costs), np.inf, costs)
        best = costs.argmin(axis=0)
        return costs[best, np.arange(len(cands))], np.asarray(where, dtype=np.int64)[best]

    def targets(self) -> list[int]:
        return [int(t) for t in self.path[self.fixed :]]


class _Allocator:
    """Tours of every drone plus, per drone, the insertion cost of every target that fits."""

    def __init__(self, mission: Mission, max_per_drone: int):
        self.dist = np.asarray(mission.dist, dtype=np.float64)
        self.scores = np.asarray(mission.scores, dtype=np.float64)
        n = self.dist.shape[0]
        self.cap = max_per_drone
        self.drones = list(mission.drones)
        self.tours = [_Tour(spec, self.dist) for spec in self.drones]
        owned = {int(t) for spec in self.drones for t in spec.prefix}
        self.allowed = np.zeros((len(self.drones), n), dtype=bool)
        for k, spec in enumerate(self.drones):  # arrays: 1,000 drones x 5,000 targets
            self.allowed[k, np.asarray(spec.eligible, dtype=np.int64)] = True
        self.allowed[:, sorted(owned)] = False
        self.assigned = np.zeros(n, dtype=bool)
        self.cost = np.full((len(self.drones), n), np.inf)
        self.where = np.zeros((len(self.drones), n), dtype=np.int64)
        self.banned: set[tuple[int, int]] = set()
        for k in range(len(self.drones)):
            self.refresh(k)

    def refresh(self, k: int) -> None:
        """Recompute drone ``k``'s insertion costs; ``inf`` where a target does not fit."""
        tour = self.tours[k]
        self.cost[k] = np.inf
        if not tour.alive or tour.count >= self.cap:
            return
        cands = np.flatnonzero(self.allowed[k] & ~self.assigned)
        if len(cands) == 0:
            return
        costs, where = tour.insertion(cands)
        costs = np.maximum(costs, 0.0)
        fits = tour.length + costs <= tour.spec.budget + _LENGTH_TOL
        for t in cands[fits]:
            if (k, int(t)) in self.banned:
                fits[np.searchsorted(cands, t)] = False
        self.cost[k, cands[fits]] = costs[fits]
        self.where[k, cands[fits]] = where[fits]

    def assign(self, k: int, t: int) -> bool:
        tour = self.tours[k]
        before = (list(tour.path), tour.length)
        tour.path.insert(int(self.where[k, t]), int(t))
        tour.length = tour.measured()
        if not tour.alive:  # rounding pushed the exact length over: undo, never offer again
            tour.path, tour.length = before
            self.banned.add((k, int(t)))
            self.cost[k, t] = np.inf
            return False
        tour.count += 1
        self.assigned[t] = True
        self.cost[:, t] = np.inf
        self.refresh(k)
        return True

    def ratio(self, k: int, mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Targets drone ``k`` can take (within ``mask``) and their priority/marginal ratio."""
        ok = np.isfinite(self.cost[k])
        if mask is not None:
            ok &= mask
        cands = np.flatnonzero(ok)
        return cands, self.scores[cands] / np.maximum(self.cost[k, cands], _MIN_COST)

    def best_of(self, k: int, mask: np.ndarray | None = None) -> tuple[_Key, int] | None:
        """Drone ``k``'s best target by ratio, with its sort key (smaller key = better)."""
        cands, ratio = self.ratio(k, mask)
        if len(cands) == 0:
            return None
        # lexsort: last key is primary. ratio desc, score desc, cost asc, node asc
        order = np.lexsort((cands, self.cost[k, cands], -self.scores[cands], -ratio))
        i = order[0]
        t = int(cands[i])
        key = (-float(ratio[i]), -float(self.scores[t]), float(self.cost[k, t]), t, k)
        return key, t

    def auction(self, masks: np.ndarray | None = None) -> None:
        """Efficient rule: repeatedly assign the globally best (target, drone) pair."""
        while True:
            best = None
            for k in range(len(self.drones)):
                found = self.best_of(k, None if masks is None else masks[k])
                if found is not None and (best is None or found[0] < best[0]):
                    best = (found[0], k, found[1])
            if best is None:
                return
            self.assign(best[1], best[2])

    def result(self) -> dict[str, list[int]]:
        return {spec.id: tour.targets() for spec, tour in zip(self.drones, self.tours)}


# ----------------------------------------------------------------------------- strategies


def _efficient(state: _Allocator, mission: Mission) -> None:
    state.auction()


def _greedy(state: _Allocator, mission: Mission) -> None:
    pool = np.flatnonzero(state.allowed.any(axis=0))
    order = sorted(pool, key=lambda t: (-state.scores[t], t))
    for t in order:
        while True:
            costs = state.cost[:, t]
            if not np.isfinite(costs).any():
                break
            k = int(np.argmin(costs))  # first drone on ties
            if state.assign(k, int(t)):
                break


def _balanced(state: _Allocator, mission: Mission) -> None:
    while True:
        best = None
        for k, tour in enumerate(state.tours):
            found = state.best_of(k)
            if found is None:
                continue
            load = tour.length / tour.spec.budget if tour.spec.budget > 0 else math.inf
            key = (tour.count, load, k)
            if best is None or key < best[0]:
                best = (key, k, found[1])
        if best is None:
            return
        state.assign(best[1], best[2])


def _exclusive(state: _Allocator, mission: Mission) -> None:
    capable = np.isfinite(state.cost)  # could fit alone in the drone's empty tour
    only_one = capable.sum(axis=0) == 1
    state.auction(masks=capable & only_one[None, :])
    state.auction()


def _angle_gap(a: float, b: float) -> float:
    g = abs(a - b) % (2 * math.pi)
    return min(g, 2 * math.pi - g)


def _sectors(state: _Allocator, mission: Mission) -> np.ndarray:
    """Mask (drones x nodes): the angular sector of targets each drone owns."""
    m = len(state.drones)
    pos = np.asarray(mission.positions, dtype=np.float64)
    pool = np.flatnonzero(state.allowed.any(axis=0))
    masks = np.zeros_like(state.allowed)
    if m == 0 or len(pool) == 0:
        return masks
    corridor = np.array(
        [
            (pos[s.start] + pos[list(s.ends)].mean(axis=0)) / 2 if s.ends else pos[s.start]
            for s in state.drones
        ]
    )
    centre = corridor.mean(axis=0)
    rel = pos[pool] - centre
    theta = np.arctan2(rel[:, 1], rel[:, 0])
    order = np.lexsort((pool, theta))
    sorted_theta = theta[order]
    # cut the circle at its widest empty gap, then split into m runs of equal count
    gaps = np.diff(np.append(sorted_theta, sorted_theta[0] + 2 * math.pi))
    cut = (int(np.argmax(gaps)) + 1) % len(order)
    ring = np.roll(order, -cut)
    chunks = np.array_split(ring, m)
    centres: list[float | None] = []
    for chunk in chunks:
        if len(chunk) == 0:
            centres.append(None)
            continue
        ang = theta[chunk]
        centres.append(math.atan2(np.sin(ang).mean(), np.cos(ang).mean()))
    scale = max(1.0, float(np.abs(pos).max()))
    heading = []
    for c in corridor:
        v = c - centre
        heading.append(math.atan2(v[1], v[0]) if np.hypot(*v) > 1e-9 * scale else None)
    cost = np.zeros((m, m))
    for k, h in enumerate(heading):
        for s, c in enumerate(centres):
            if h is not None and c is not None:
                cost[k, s] = _angle_gap(h, c)
    # here, not at the top: scipy.optimize costs ~0.4 s to import, and most processes that
    # import the planner never allocate this way (an `isr run`, the viewers' process)
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(cost)
    for k, s in zip(rows, cols):
        masks[k, pool[chunks[s]]] = True
    return masks & state.allowed


def _geographic(state: _Allocator, mission: Mission) -> None:
    state.auction(masks=_sectors(state, mission))
    state.auction()


_RULES = {
    "efficient": _efficient,
    "greedy": _greedy,
    "balanced": _balanced,
    "geographic": _geographic,
    "exclusive": _exclusive,
}


def allocate(mission: Mission, strategy: str, max_per_drone: int = 12) -> dict[str, list[int]]:
    """Drone id -> target nodes (in insertion-tour order), prefix targets excluded.

    Every enabled drone has a key (possibly an empty list). Raises :class:`PlannerError`
    for an unknown strategy or a negative ``max_per_drone``.
    """
    rule = _RULES.get(strategy)
    if rule is None:
        raise PlannerError(
            f"unknown allocation strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}"
        )
    if max_per_drone < 0:
        raise PlannerError(f"max_per_drone must be >= 0, got {max_per_drone}")
    state = _Allocator(mission, int(max_per_drone))
    rule(state, mission)
    return state.result()
