"""Routing an allocation: each drone's allocated targets through the exact orienteering solver.

Seed 000 §4.3: the route optimizer computes, per drone, the best route over the targets the
allocator gave it (Held-Karp), with the drone's allowed ends, fuel budget and frozen prefix.
The solver maximises points then minimises length, so a drone visits every allocated target
its budget allows; targets that do not fit are left out of its route.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from planner.errors import InfeasibleError, PlannerError
from planner.orienteering import LENGTH_TOL, MAX_EXACT_TARGETS, solve_orienteering

if TYPE_CHECKING:
    from planner.mission import DroneSpec, Mission

__all__ = ["route_allocation", "shortlist"]

_MIN_DETOUR = 1e-9


def shortlist(
    mission: Mission, spec: DroneSpec, targets: list[int], limit: int = MAX_EXACT_TARGETS
) -> list[int]:
    """The targets of ``targets`` a route of ``spec`` can reach, at most ``limit`` of them.

    Targets no route within budget can visit alone are dropped; if more than ``limit``
    remain, the best by ``priority / detour`` (detour from the direct way between the end
    of the frozen prefix and the nearest end) are kept, in the order given.
    """
    d = np.asarray(mission.dist, dtype=np.float64)
    scores = mission.scores
    head = [spec.start, *spec.prefix]
    base = 0.0
    for a, b in zip(head[:-1], head[1:]):
        base += float(d[a, b])
    prefix = set(spec.prefix)
    cands: list[int] = []
    for t in targets:
        t = int(t)
        if t not in prefix and t not in cands:
            cands.append(t)
    ends = list(spec.ends)
    if not cands or not ends:
        return []
    # shortest ways through the candidates (the matrix need not be metric; inf = no leg),
    # so a target reachable only via another target is not dropped
    nodes = [head[-1], *cands, *ends]
    sp = _closure(d[np.ix_(nodes, nodes)])
    k = len(cands)
    to_end = sp[:, 1 + k :].min(axis=1)
    direct = float(to_end[0])
    usable: list[tuple[int, float]] = []
    for i, t in enumerate(cands):
        via = float(sp[0, 1 + i] + to_end[1 + i])
        if base + via <= spec.budget + LENGTH_TOL:
            usable.append((t, via - direct))
    if len(usable) <= limit:
        return [t for t, _ in usable]
    ranked = sorted(
        usable,
        key=lambda td: (-scores[td[0]] / max(td[1], _MIN_DETOUR), -scores[td[0]], td[0]),
    )
    keep = {t for t, _ in ranked[:limit]}
    return [t for t, _ in usable if t in keep]


def _closure(sub: np.ndarray) -> np.ndarray:
    """All-pairs shortest paths (Floyd-Warshall) of a small non-negative matrix."""
    sp = sub.copy()
    for m in range(sp.shape[0]):
        np.minimum(sp, sp[:, m : m + 1] + sp[m : m + 1, :], out=sp)
    return sp


def _check_allocation(mission: Mission, allocation: dict[str, list[int]]) -> None:
    drones = {spec.id: spec for spec in mission.drones}
    unknown = sorted(set(allocation) - set(drones))
    if unknown:
        raise PlannerError(f"allocation names unknown or disabled drones {unknown}")
    frozen_owner = {int(t): spec.id for spec in mission.drones for t in spec.prefix}
    owner: dict[int, str] = {}
    for drone_id, targets in allocation.items():
        spec = drones[drone_id]
        eligible = {int(t) for t in spec.eligible}
        for t in targets:
            t = int(t)
            name = mission.node_ids[t] if 0 <= t < len(mission.node_ids) else repr(t)
            if frozen_owner.get(t, drone_id) != drone_id:
                raise PlannerError(f"drone {drone_id}: {name} is frozen on drone {frozen_owner[t]}")
            if t in frozen_owner:
                continue  # its own frozen target: already on its route
            if t not in eligible:
                raise PlannerError(f"drone {drone_id}: {name} is not an eligible target")
            if owner.get(t, drone_id) != drone_id:
                raise PlannerError(
                    f"{name} is allocated to both drone {owner[t]} and drone {drone_id}"
                )
            owner[t] = drone_id


def route_allocation(
    mission: Mission,
    allocation: dict[str, list[int]],
    max_exact: int = MAX_EXACT_TARGETS,
) -> dict[str, list[int]]:
    """Drone id -> exact best route ``[start, *prefix, *targets, end]`` over its allocation.

    Every enabled drone gets a route (a drone absent from ``allocation`` flies its prefix
    and lands). Raises :class:`PlannerError` for an allocation that names an unknown drone,
    gives a target twice, gives an ineligible target or another drone's frozen target, and
    :class:`InfeasibleError` (naming the drone) when a drone's frozen prefix or its way to
    an allowed end does not fit its budget.
    """
    _check_allocation(mission, allocation)
    dist = np.asarray(mission.dist, dtype=np.float64)
    scores = np.asarray(mission.scores, dtype=np.float64)
    routes: dict[str, list[int]] = {}
    for spec in mission.drones:
        cands = shortlist(mission, spec, list(allocation.get(spec.id, [])), max_exact)
        try:
            found = solve_orienteering(
                dist, scores, spec.start, cands, spec.ends, spec.budget, spec.prefix
            )
        except InfeasibleError as exc:
            raise InfeasibleError(f"drone {spec.id}: {exc}") from exc
        routes[spec.id] = [int(n) for n in found.route]
    return routes
