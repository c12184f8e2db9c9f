"""The clairvoyant reference: a plan made knowing every timeline event *and its time*, and
a relaxation bound above anything any policy can collect.

What the clairvoyant knows and models
-------------------------------------
* **Targets in time.** Each target's life is split into versions, one per place it is at
  (a node ``T5`` where it starts, ``T5_v1`` where a ``move_target`` puts it), each with the
  windows ``[from, to)`` it is there and the priority it has in each window. A target that
  appears at ``t_a`` has no window before ``t_a``; a removed one none after its removal. A
  visit counts only inside a window, at that window's priority, and each target once.
* **Drones in time.** Every drone flies from t = 0 at its speed without waiting, so the
  distance flown fixes the time. A drone lost at ``t_L`` counts what it reaches before
  ``t_L`` (its route may end anywhere: it never lands). A fuel change at ``t`` (``set_fuel``)
  caps the whole route at ``speed * t + fuel`` if it flies past ``t``.
* **SAMs.** Hidden ones are known from t = 0.

How it searches (``clairvoyant_candidates``)
--------------------------------------------
The team search (``planner.team_search``) plans the versioned mission several times (seeds
and a budget above the live tier's), with each drone's budget its fuel cap, and a drone that
will be lost budgeted to ``speed * t_L`` and allowed to end at any target; it also starts
from the first plan and from the full-knowledge-at-t0 plan, each carried onto the versioned
mission and repaired in time (and kept as candidates themselves). Every plan is then
evaluated **time-expanded** (``evaluate``: arrival times along the SAM-aware legs against the
windows, the loss times and the caps), visits that do not count are dropped, and targets are
inserted greedily where they count (``repair``). The candidates are ranked by that value.
The reference itself is the best **flown** score (``mission.evaluation.reference``) of the
best candidates, of the first plan flown without replanning and of the plan made with full
knowledge at t = 0 (``planner.oracle``): by construction at least as good as either.

Approximations that remain
--------------------------
* SAMs are avoided at every place they are ever at, all the time (a moved SAM's old and new
  disks are both avoided from t = 0; a target inside a disk a SAM moves to later is not
  planned). Conservative: the plan is safe, possibly longer than needed.
* No waiting and no late take-off: a drone that would be better launched later is not.
* The search is a heuristic on a static relaxation of the windows, corrected by the
  time-expanded evaluation and repair: the reference is not proven optimal; the gap to the
  bound (``planner.bound.upper_bound``) says how far it might be.
* The sim collects targets in passing; the evaluation counts only planned visits, so a
  flown score may exceed the planned one.

The bound (``planner.bound.upper_bound``) is a module of its own.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import assert_never

import numpy as np

from planner.edits import (
    AddSam,
    AddTarget,
    DisableDrone,
    Edit,
    MoveSam,
    MoveTarget,
    RemoveSam,
    RemoveTarget,
    RevealSam,
    SetFuel,
    SetPriority,
)
from planner.errors import PlannerError
from planner.mission import Mission, compile_mission
from planner.model import Sam, Scenario, Solution, Target
from planner.solution import build_solution
from planner.validation import ensure_valid

__all__ = [
    "Candidate",
    "Knowledge",
    "Version",
    "clairvoyant_candidates",
    "clairvoyant_plan",
    "evaluate",
    "knowledge",
]

INFINITY = math.inf


@dataclass
class Version:
    """One place a target is at: its node id in the clairvoyant mission, and the windows
    ``(from, to, priority)`` it is there."""

    node: str
    target: str
    x: float
    y: float
    type: str
    windows: list[tuple[float, float, float]] = field(default_factory=list)

    def value_at(self, t: float) -> float:
        """Its points for a visit at ``t`` (0 outside every window)."""
        for start, end, priority in self.windows:
            if start <= t < end:
                return priority
        return 0.0

    @property
    def best(self) -> float:
        """The most it is ever worth."""
        return max((p for _, _, p in self.windows), default=0.0)


@dataclass
class Knowledge:
    """The whole timeline, with its times, as the clairvoyant knows it."""

    versions: dict[str, Version]  # by node id
    sams: list[Sam]  # every disk a SAM is ever at (hidden ones too)
    lost_at: dict[str, float]  # drone -> when it is lost
    cap: dict[str, float]  # drone -> the most it can fly, fuel changes included
    speed: dict[str, float]  # drone -> km/s


def _when(edit: Edit, tick_hz: float) -> float:
    if edit.t is not None:
        return float(edit.t)
    return float(edit.tick or 0) / tick_hz


def knowledge(scenario: Scenario) -> Knowledge:
    """The timeline of ``scenario`` as versions, SAM disks, loss times and fuel caps."""
    sim = scenario.sim
    drones = scenario.enabled_drones()
    speed = {d: sim.speed_of(d) for d in drones}
    cap = {d: float(c.fuel_budget) for d, c in drones.items()}
    if sim.max_duration is not None:
        cap = {d: min(f, speed[d] * sim.max_duration) for d, f in cap.items()}
    lost_at: dict[str, float] = {}
    versions: dict[str, Version] = {}
    current: dict[str, Version] = {}  # target id -> the version it is at now (alive)
    count: dict[str, int] = {}

    def open_version(t: float, target: Target | AddTarget, x: float, y: float, p: float) -> None:
        k = count.get(target.id, 0)
        count[target.id] = k + 1
        node = target.id if k == 0 else f"{target.id}_v{k}"
        same = next(
            (v for v in versions.values() if v.target == target.id and (v.x, v.y) == (x, y)),
            None,
        )
        version = same or Version(node, target.id, x, y, target.type)
        version.windows.append((t, INFINITY, p))
        versions.setdefault(version.node, version)
        current[target.id] = version

    def close(t: float, target_id: str) -> Version | None:
        version = current.pop(target_id, None)
        if version is not None:
            start, _, p = version.windows[-1]
            version.windows[-1] = (start, t, p)
        return version

    for target in scenario.environment.targets:
        open_version(0.0, target, target.x, target.y, float(target.priority))
    sams = {s.id: s for s in scenario.environment.sams}
    disks = list(sams.values())
    types = {t.id: t for t in scenario.environment.targets}
    for edit in sorted(scenario.timeline, key=lambda e: _when(e, sim.tick_hz)):
        t = _when(edit, sim.tick_hz)
        match edit:
            case AddTarget():
                close(t, edit.id)
                types[edit.id] = Target(
                    id=edit.id, x=edit.x, y=edit.y, priority=edit.priority, type=edit.type
                )
                open_version(t, edit, edit.x, edit.y, float(edit.priority))
            case RemoveTarget():
                close(t, edit.id)
            case MoveTarget():
                old = close(t, edit.id)
                if old is not None:
                    moved = types[edit.id]
                    open_version(t, moved, edit.x, edit.y, old.windows[-1][2])
            case SetPriority():
                old = close(t, edit.id)
                if old is not None:
                    open_version(t, types[edit.id], old.x, old.y, float(edit.priority))
            case AddSam():
                sams[edit.id] = Sam(id=edit.id, pos=edit.pos, range=edit.range)
                disks.append(sams[edit.id])
            case MoveSam():
                was = sams.get(edit.id)
                if was is not None:
                    moved_sam = Sam(id=edit.id, pos=edit.pos, range=edit.range or was.range)
                    sams[edit.id] = moved_sam
                    disks.append(moved_sam)
            case RemoveSam() | RevealSam():
                pass  # avoided all along (conservative); hidden ones are known anyway
            case DisableDrone():
                if edit.drone in drones:
                    lost_at[edit.drone] = min(lost_at.get(edit.drone, INFINITY), t)
            case SetFuel():
                d = edit.drone
                if d in drones:  # past t only if it still flies then; then it has `fuel` left
                    flown = speed[d] * t
                    cap[d] = flown + float(edit.fuel) if cap[d] >= flown else cap[d]
            case _:  # pragma: no cover - the union is closed
                assert_never(edit)
    unique = [Sam(id=f"K{i + 1}", pos=s.pos, range=s.range) for i, s in enumerate(disks)]
    return Knowledge(versions, unique, lost_at, cap, speed)


def clairvoyant_scenario(scenario: Scenario, known: Knowledge) -> Scenario:
    """The static scenario the search plans on: every target version a node (worth the most
    it is ever worth), every SAM disk ever, each drone's budget its fuel cap, no timeline."""
    env = scenario.environment
    targets = [
        Target(id=v.node, x=v.x, y=v.y, priority=v.best, type=v.type)
        for v in known.versions.values()
        if v.best > 0
    ]
    configs = {
        d: c.model_copy(update={"fuel_budget": min(float(c.fuel_budget), known.cap[d])})
        for d, c in scenario.drone_configs.items()
    }
    return scenario.model_copy(
        update={
            "environment": env.model_copy(update={"targets": targets, "sams": known.sams}),
            "drone_configs": configs,
            "timeline": [],
        }
    )


# ----- time-expanded evaluation --------------------------------------------------------


def evaluate(
    mission: Mission, known: Knowledge, routes: dict[str, list[int]]
) -> tuple[float, dict[str, list[bool]]]:
    """The points ``routes`` (drone -> node route, start to end) collect in time: each visit
    at its arrival time (distance flown / speed), inside a window of its version, before
    the drone is lost and within its fuel cap; each target once (the first visit in time).
    Returns the total and, per drone, whether each target visit of its route counts."""
    firsts: dict[str, tuple[float, str, int, float]] = {}  # target -> (t, drone, pos, value)
    counts: dict[str, list[bool]] = {}
    dist = mission.dist
    for drone, route in routes.items():
        counts[drone] = [False] * max(0, len(route) - 2)
        flown = 0.0
        lost = known.lost_at.get(drone, INFINITY)
        for pos in range(1, len(route) - 1):
            flown += float(dist[route[pos - 1], route[pos]])
            t = flown / known.speed[drone]
            if t >= lost or flown > known.cap[drone] + 1e-6:
                break
            version = known.versions.get(mission.node_ids[route[pos]])
            if version is None:
                continue
            value = version.value_at(t)
            if value <= 0:
                continue
            seen = firsts.get(version.target)
            if seen is None or t < seen[0]:
                firsts[version.target] = (t, drone, pos, value)
    for _, drone, pos, _ in firsts.values():
        counts[drone][pos - 1] = True
    return sum(v for *_, v in firsts.values()), counts


def _length(mission: Mission, route: Sequence[int]) -> float:
    return float(sum(mission.dist[a, b] for a, b in zip(route, route[1:])))


def _end(mission: Mission, drone: str, last: int) -> int:
    spec = mission.drone(drone)
    return min(spec.ends, key=lambda e: float(mission.dist[last, e]))


def _close(mission: Mission, known: Knowledge, drone: str, body: list[int]) -> list[int]:
    """``body`` (start, targets) closed at the nearest allowed end, its tail dropped until
    the whole route fits the drone's real budget (a drone that is lost later still takes
    off with a plan it could fly home)."""
    spec = mission.drone(drone)
    while True:
        route = [*body, _end(mission, drone, body[-1])]
        if _length(mission, route) <= spec.budget + 1e-6 or len(body) <= 1 + len(spec.prefix):
            return route
        body = body[:-1]


def repair(
    mission: Mission, known: Knowledge, routes: dict[str, list[int]], *, rounds: int = 2
) -> dict[str, list[int]]:
    """``routes`` with the visits that do not count dropped, then targets inserted one at a
    time where they add the most points in time (best gain per added km first)."""
    value, counts = evaluate(mission, known, routes)
    out = {}
    for drone, route in routes.items():
        keep = [u for u, ok in zip(route[1:-1], counts[drone]) if ok]
        out[drone] = _close(mission, known, drone, [route[0], *keep])
    value, _ = evaluate(mission, known, out)
    for _ in range(rounds):
        improved = False
        taken = {
            known.versions[mission.node_ids[u]].target
            for r in out.values()
            for u in r[1:-1]
            if mission.node_ids[u] in known.versions
        }
        free = [
            u
            for u in mission.target_nodes
            if known.versions[mission.node_ids[u]].target not in taken
        ]
        order = sorted(free, key=lambda u: -float(mission.scores[u]))
        for u in order:
            target = known.versions[mission.node_ids[u]].target
            if target in taken:
                continue
            best: tuple[float, str, list[int], float] | None = None
            for drone, route in out.items():
                spec = mission.drone(drone)
                if u not in spec.can_visit:
                    continue
                base = _length(mission, route)
                for pos in range(1 + len(spec.prefix), len(route)):
                    body = [*route[:pos], u, *route[pos:-1]]
                    trial_route = [*body, _end(mission, drone, body[-1])]
                    added = _length(mission, trial_route) - base
                    if _length(mission, trial_route) > spec.budget + 1e-6:
                        continue
                    gain = evaluate(mission, known, {**out, drone: trial_route})[0] - value
                    if gain > 1e-9:
                        ratio = gain / max(added, 1e-3)
                        if best is None or ratio > best[0]:
                            best = (ratio, drone, trial_route, gain)
            if best is not None:
                out[best[1]] = best[2]
                value += best[3]
                taken.add(target)
                improved = True
        if not improved:
            break
    return out


# ----- the search -----------------------------------------------------------------------


@dataclass
class Candidate:
    """A clairvoyant plan: its routes, its time-expanded value, and how it was found."""

    solution: Solution
    mission: Mission
    value: float
    seed: int
    lost_open: bool  # drones to be lost planned to end anywhere
    origin: str = "search"  # a search from scratch, from a carried plan, or a carried plan


def _search(
    mission: Mission,
    known: Knowledge,
    *,
    seed: int,
    iterations: int,
    lost_open: bool,
    initial: dict[str, list[int]] | None = None,
) -> dict[str, list[int]]:
    from planner.planning import team_problem
    from planner.team_search import StopCriterion, solve_team

    problem = team_problem(mission)
    if lost_open and known.lost_at:
        ends = problem.end_options.copy()
        budget = problem.budget.copy()
        for k, spec in enumerate(mission.drones):
            t_lost = known.lost_at.get(spec.id)
            if t_lost is None:
                continue
            ends[k, np.asarray(spec.eligible, dtype=np.int64)] = True
            budget[k] = min(budget[k], known.speed[spec.id] * t_lost)
        problem = replace(problem, end_options=ends, budget=budget)
    stop = StopCriterion(max_iterations=iterations)
    start = None if initial is None else [initial[spec.id] for spec in mission.drones]
    try:
        found = solve_team(problem, stop, seed=seed, initial=start)
    except PlannerError:  # the warm start does not fit this problem: search from scratch
        found = solve_team(problem, stop, seed=seed)
    routes = {}
    for spec, route in zip(mission.drones, found.routes):
        # without its end: a drone to be lost ends at its last target, closed here as usual
        routes[spec.id] = _close(mission, known, spec.id, list(route[:-1]))
    return routes


def _carried(mission: Mission, known: Knowledge, solution: Solution) -> dict[str, list[int]]:
    """``solution`` (a plan of the scenario's own ids) on the clairvoyant mission: each
    drone's targets that are nodes here and that it may visit, in order, each once."""
    taken: set[int] = set()
    routes = {}
    for spec in mission.drones:
        route = solution.routes.get(spec.id)
        body = [spec.start, *spec.prefix]
        for node_id in route.route if route is not None else []:
            u = mission.index.get(node_id)
            if u is None or u in taken or u not in spec.can_visit or u in body:
                continue
            taken.add(u)
            body.append(u)
        routes[spec.id] = _close(mission, known, spec.id, body)
    return routes


def _warm_starts(scenario: Scenario, iterations: int) -> dict[str, Solution]:
    """The plans a clairvoyant search may start from: the first plan (the scenario at t0,
    as no-replan flies it) and the plan made with full knowledge at t0."""
    from planner.oracle import oracle_plan
    from planner.planning import plan_mission

    out = {}
    with contextlib.suppress(PlannerError):
        first = plan_mission(compile_mission(scenario), seconds=None, iterations=iterations)
        out["first plan"] = first.solution
    with contextlib.suppress(PlannerError):
        out["full knowledge"] = oracle_plan(scenario, iterations=iterations)[0]
    return out


def clairvoyant_candidates(
    scenario: Scenario,
    *,
    seeds: Sequence[int] = (0, 1, 2),
    iterations: int = 4000,
    warm: bool = True,
) -> list[Candidate]:
    """The clairvoyant plans of ``scenario``, best time-expanded value first: the team
    search on the versioned mission per seed (with drones to be lost planned to end
    anywhere, and as usual), and with ``warm`` the first plan and the full-knowledge plan
    carried over and repaired in time, each also the starting point of a search; every
    plan repaired in time (see the module)."""
    from planner.feasibility import plannable

    known = knowledge(scenario)
    mission = plannable(compile_mission(clairvoyant_scenario(scenario, known))).mission
    if not mission.drones:
        return []
    out: list[Candidate] = []

    def add(routes: dict[str, list[int]], seed: int, lost_open: bool, origin: str) -> None:
        routes = repair(mission, known, routes)
        value, _ = evaluate(mission, known, routes)
        try:
            solution = ensure_valid(mission, build_solution(mission, routes))
        except PlannerError:
            return  # not flyable as planned: not a candidate
        out.append(Candidate(solution, mission, value, seed, lost_open, origin))

    starts = _warm_starts(scenario, min(iterations, 1500)) if warm else {}
    for name, plan in starts.items():
        carried = repair(mission, known, _carried(mission, known, plan))
        add(carried, -1, False, f"{name}, repaired in time")
        for seed in seeds[:1]:
            routes = _search(
                mission, known, seed=seed, iterations=iterations, lost_open=False, initial=carried
            )
            add(routes, seed, False, f"search from the {name}")
    for seed in seeds:
        for lost_open in (True, False) if known.lost_at else (False,):
            routes = _search(mission, known, seed=seed, iterations=iterations, lost_open=lost_open)
            add(routes, seed, lost_open, "search")
    out.sort(key=lambda c: -c.value)
    seen: set[tuple[tuple[str, ...], ...]] = set()
    unique = []
    for c in out:  # the same routes found twice are one candidate (the first way found)
        key = tuple(tuple(r.route) for r in c.solution.routes.values())
        if key not in seen:
            seen.add(key)
            unique.append(c)
    return unique


def clairvoyant_plan(
    scenario: Scenario, *, seeds: Sequence[int] = (0, 1, 2), iterations: int = 4000
) -> tuple[Solution, Mission] | None:
    """(solution, mission): the clairvoyant candidate of the best time-expanded value, and
    the mission it was made on (flown by the executive with that mission's geometry); None
    when no drone can be planned."""
    found = clairvoyant_candidates(scenario, seeds=seeds, iterations=iterations)
    return (found[0].solution, found[0].mission) if found else None
