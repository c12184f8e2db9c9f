"""An upper bound on the points any policy can collect on a mission, timeline included.

The clairvoyant reference (``planner.clairvoyant``) is a heuristic: the bound says how far
from the best possible it might be. ``upper_bound`` is the smaller of two relaxations of
the same facts, each valid on its own:

* **A multiple knapsack** (``scipy.optimize.milp``): each collection costs a drone at least
  the straight line from the nearest place it could come from.
* **A path relaxation with subtour cuts** (``scipy.optimize.linprog``, HiGHS): each drone
  flies one path from its start through the versions it collects, each leg at least the
  straight line between them; generalised subtour elimination constraints are added for
  every set of versions that the fractional solution links into a loop away from the
  start, until none is violated or the time is up.

The facts both use: each target collected at most once, at the highest priority of a window
of one of its versions still open when the drone could first be there (straight line from
its start) and opened before the drone is lost; a version out of the drone's straight-line reach is out; each drone's capacity
the most it can fly while it can still collect (fuel cap, ``speed * t_L`` if lost,
``speed * max_duration``). A drone collects within the capture radius, so a leg from its
start is at least the straight line less one radius, a leg between two collections the
straight line less two. Valid because every flown path is such a path (time windows, SAMs
and the way home only make it longer, and nothing forces it home), and a relaxation of a
valid model only grows.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from planner.clairvoyant import Version, knowledge
from planner.errors import PlannerError
from planner.model import Scenario

__all__ = ["knapsack_bound", "path_bound", "upper_bound"]

_EPS = 1e-6
_MAX_ROUNDS = 15  # rounds of cuts at most ...
_STALL = 3  # ... and none after this many rounds that tightened the bound by < _GAIN points
_GAIN = 0.5


@dataclass
class _Drone:
    capacity: float
    options: np.ndarray  # the version indices it may collect
    worth: np.ndarray  # per version: the most it can get there (0 where not an option)
    from_start: np.ndarray  # per version: the shortest first leg
    home: np.ndarray  # per version: the shortest last leg (to an airport; 0 if it need not land)


@dataclass
class _Facts:
    versions: list[Version]
    targets: list[str]
    leg: np.ndarray  # version x version: the shortest leg between two collections
    same: np.ndarray  # version x version: the same target
    drones: list[_Drone]


def _facts(scenario: Scenario) -> _Facts | None:
    known = knowledge(scenario)
    drones = scenario.enabled_drones()
    env = scenario.environment
    sim = scenario.sim
    capture = float(sim.capture_radius)
    speed = known.speed
    air = np.array([(a.x, a.y) for a in env.airports], dtype=float).reshape(-1, 2)
    versions = [v for v in known.versions.values() if v.best > 0]
    if not versions or not drones:
        return None
    xy = np.array([(v.x, v.y) for v in versions], dtype=float)
    pair = np.hypot(xy[:, None, 0] - xy[None, :, 0], xy[:, None, 1] - xy[None, :, 1])
    same = np.array([[a.target == b.target for b in versions] for a in versions])
    found: list[_Drone] = []
    for d, config in drones.items():
        start = env.airport(config.start or "")
        budget = known.cap[d]
        if d in known.lost_at:
            budget = min(budget, known.speed[d] * known.lost_at[d])
        can = np.array([config.can_sense(v.type) for v in versions])
        reach = np.zeros(len(versions))
        if start is not None:
            reach = np.maximum(np.hypot(xy[:, 0] - start.x, xy[:, 1] - start.y) - capture, 0.0)
        # the windows still open when it can first be there, and opened before it is lost
        lost = known.lost_at.get(d, math.inf)
        worth = np.array(
            [
                max(
                    (
                        p
                        for begin, end, p in v.windows
                        if end * speed[d] > reach[i] and begin < lost
                    ),
                    default=0.0,
                )
                for i, v in enumerate(versions)
            ]
        )
        can &= (reach <= budget) & (worth > 0)
        # it must land within its fuel unless it is lost, or the mission's time ends first
        duration = sim.max_duration
        lands = d not in known.lost_at and (duration is None or budget < speed[d] * duration)
        home = (
            np.maximum(
                np.min(
                    np.hypot(xy[:, 0, None] - air[None, :, 0], xy[:, 1, None] - air[None, :, 1]),
                    axis=1,
                )
                - capture,
                0.0,
            )
            if lands and len(air)
            else np.zeros(len(versions))
        )
        can &= reach + home <= budget
        found.append(_Drone(budget, np.flatnonzero(can), np.where(can, worth, 0.0), reach, home))
    leg = np.maximum(pair - 2 * capture, 0.0)
    targets = sorted({v.target for v in versions})
    return _Facts(versions, targets, leg, same, found)


def upper_bound(scenario: Scenario, *, seconds: float = 20.0) -> float:
    """A relaxation bound on the points any policy can collect on ``scenario``: the smaller
    of the knapsack and the path relaxation (see the module), ``seconds`` for each."""
    facts = _facts(scenario)
    if facts is None:
        return 0.0
    return min(_knapsack(facts, seconds), _paths(facts, seconds))


def knapsack_bound(scenario: Scenario, *, seconds: float = 20.0) -> float:
    """The knapsack relaxation alone (see the module)."""
    facts = _facts(scenario)
    return 0.0 if facts is None else _knapsack(facts, seconds)


def path_bound(scenario: Scenario, *, seconds: float = 20.0) -> float:
    """The path relaxation with subtour cuts alone (see the module)."""
    facts = _facts(scenario)
    return 0.0 if facts is None else _paths(facts, seconds)


def _knapsack(facts: _Facts, seconds: float) -> float:
    """Each collection costs its drone the shortest leg from anywhere it could come from
    (its start or another version it may collect); a MILP, its LP if not proven in time."""
    from scipy.optimize import Bounds, LinearConstraint, linprog, milp

    columns: list[tuple[int, int, float, float]] = []  # (drone k, version i, cost, value)
    for k, drone in enumerate(facts.drones):
        can = np.zeros(len(facts.versions), dtype=bool)
        can[drone.options] = True
        others = np.where(can[None, :] & ~facts.same, facts.leg, math.inf)
        cost = np.minimum(others.min(axis=1), drone.from_start)
        for i in drone.options:
            if cost[i] <= drone.capacity:
                columns.append((k, int(i), float(cost[i]), float(drone.worth[i])))
    if not columns:
        return 0.0
    n = len(columns)
    value = np.array([c[3] for c in columns])
    by_drone = np.zeros((len(facts.drones), n))
    by_target = np.zeros((len(facts.targets), n))
    index = {t: j for j, t in enumerate(facts.targets)}
    for col, (row, version, cost, _) in enumerate(columns):
        by_drone[row, col] = cost
        by_target[index[facts.versions[version].target], col] = 1.0
    capacity = np.array([d.capacity for d in facts.drones])
    result = milp(
        -value,
        constraints=[
            LinearConstraint(by_drone, -np.inf, capacity),
            LinearConstraint(by_target, -np.inf, 1.0),
        ],
        integrality=np.ones(n),
        bounds=Bounds(0, 1),
        options={"time_limit": seconds},
    )
    if result.status == 0 and result.fun is not None:
        return float(-result.fun)
    relaxed = linprog(
        -value,
        A_ub=np.vstack([by_drone, by_target]),
        b_ub=np.concatenate([capacity, np.ones(len(facts.targets))]),
        bounds=(0, 1),
        method="highs",
    )
    if relaxed.status != 0:
        raise PlannerError(f"the relaxation bound failed: {relaxed.message}")
    return float(-relaxed.fun)


@dataclass
class _Arcs:
    """Every drone's arcs as columns: drone, tail and head (-1: its start; -2: the end)."""

    drone: np.ndarray
    tail: np.ndarray
    head: np.ndarray
    cost: np.ndarray
    value: np.ndarray


def _arcs(facts: _Facts) -> _Arcs:
    drone, tail, head, cost, value = [], [], [], [], []
    for k, d in enumerate(facts.drones):
        opts = d.options
        if not len(opts):
            continue
        # start -> version, version -> version (another target), version -> end
        a, b = np.meshgrid(opts, opts, indexing="ij")
        keep = ~facts.same[a, b]
        a, b = a[keep], b[keep]
        c = facts.leg[a, b]
        fits = d.from_start[a] + c + d.home[b] <= d.capacity  # a leg it could fly between
        a, b, c = a[fits], b[fits], c[fits]
        first = opts[d.from_start[opts] <= d.capacity]
        tails = np.concatenate([np.full(len(first), -1), a, opts])
        heads = np.concatenate([first, b, np.full(len(opts), -2)])
        costs = np.concatenate([d.from_start[first], c, d.home[opts]])
        drone.append(np.full(len(tails), k))
        tail.append(tails)
        head.append(heads)
        cost.append(costs)
        value.append(np.where(heads >= 0, d.worth[np.maximum(heads, 0)], 0.0))
    if not drone:
        empty = np.zeros(0)
        return _Arcs(empty.astype(int), empty.astype(int), empty.astype(int), empty, empty)
    return _Arcs(*(np.concatenate(x) for x in (drone, tail, head, cost, value)))


def _paths(facts: _Facts, seconds: float) -> float:
    """Each drone one path from its start (see the module), as an LP over its arcs, with
    subtour cuts added round by round."""
    from scipy.optimize import linprog

    arcs = _arcs(facts)
    n = len(arcs.cost)
    if n == 0:
        return 0.0
    drones = len(facts.drones)
    versions = len(facts.versions)
    cols = np.arange(n)
    inner = (arcs.tail >= 0) & (arcs.head >= 0)
    # equalities: what flows into a version flows out, per drone
    node = arcs.drone * versions
    eq = sparse.coo_matrix(
        (
            np.concatenate(
                [np.ones(int((arcs.head >= 0).sum())), -np.ones(int((arcs.tail >= 0).sum()))]
            ),
            (
                np.concatenate(
                    [(node + arcs.head)[arcs.head >= 0], (node + arcs.tail)[arcs.tail >= 0]]
                ),
                np.concatenate([cols[arcs.head >= 0], cols[arcs.tail >= 0]]),
            ),
        ),
        shape=(drones * versions, n),
    ).tocsr()
    # inequalities: fuel per drone, one start per drone, each target collected once
    index = {t: j for j, t in enumerate(facts.targets)}
    target_of = np.array([index[v.target] for v in facts.versions])
    into = arcs.head >= 0
    rows = [
        sparse.coo_matrix((arcs.cost, (arcs.drone, cols)), shape=(drones, n)),
        sparse.coo_matrix(
            (
                np.ones(int((arcs.tail == -1).sum())),
                (arcs.drone[arcs.tail == -1], cols[arcs.tail == -1]),
            ),
            shape=(drones, n),
        ),
        sparse.coo_matrix(
            (np.ones(int(into.sum())), (target_of[arcs.head[into]], cols[into])),
            shape=(len(facts.targets), n),
        ),
    ]
    limits = [
        np.array([d.capacity for d in facts.drones]),
        np.ones(drones),
        np.ones(len(facts.targets)),
    ]
    cuts: list[sparse.csr_matrix] = []  # one row over the arcs each
    deadline = time.monotonic() + seconds
    best = math.inf
    history: list[float] = []
    for _ in range(_MAX_ROUNDS):
        a_ub = sparse.vstack(rows + cuts)
        b_ub = np.concatenate(limits + ([np.zeros(len(cuts))] if cuts else []))
        result = linprog(
            -arcs.value,
            A_ub=a_ub,
            b_ub=b_ub,
            A_eq=eq,
            b_eq=np.zeros(drones * versions),
            bounds=(0, 1),
            method="highs",
        )
        if result.status != 0:
            raise PlannerError(f"the path relaxation failed: {result.message}")
        best = min(best, float(-result.fun))  # every round's LP is a valid bound
        history.append(best)
        stalled = len(history) > _STALL and history[-_STALL - 1] - best < _GAIN
        found = _subtours(arcs, result.x, inner, versions)
        if not found or stalled or time.monotonic() > deadline:
            break
        cuts.extend(found)
    return best


def _subtours(
    arcs: _Arcs, x: np.ndarray, inner: np.ndarray, versions: int
) -> list[sparse.csr_matrix]:
    """Violated generalised subtour elimination cuts: for each drone, each set S of versions
    its fractional flow links together (apart from its start) with more flow inside S than
    a path through S can carry, sum x(S, S) <= sum y(S) - y(m) (m: S's most visited)."""
    from scipy.sparse.csgraph import connected_components

    cuts: list[sparse.csr_matrix] = []
    used = inner & (x > _EPS)
    for k in np.unique(arcs.drone[used]):
        mine = used & (arcs.drone == k)
        graph = sparse.coo_matrix(
            (x[mine], (arcs.tail[mine], arcs.head[mine])), shape=(versions, versions)
        )
        count, label = connected_components(graph, directed=False)
        visit = np.zeros(versions)
        heads = (arcs.drone == k) & (arcs.head >= 0)
        np.add.at(visit, arcs.head[heads], x[heads])
        for c in range(count):
            members = np.flatnonzero(label == c)
            if len(members) < 2:
                continue
            in_s = np.zeros(versions, dtype=bool)
            in_s[members] = True
            mask = (arcs.drone == k) & inner
            inside = mask & in_s[np.maximum(arcs.tail, 0)] & in_s[np.maximum(arcs.head, 0)]
            m = members[np.argmax(visit[members])]
            if x[inside].sum() <= visit[members].sum() - visit[m] + _EPS:
                continue
            # sum x(S,S) - sum over S\{m} of y <= 0, y(i) the flow into i (from anywhere)
            row = np.zeros(len(x))
            row[inside] += 1.0
            into = (arcs.drone == k) & (arcs.head >= 0)
            into &= in_s[np.maximum(arcs.head, 0)] & (arcs.head != m)
            row[into] -= 1.0
            cuts.append(sparse.csr_matrix(row))
    return cuts
