"""An allocator's proposal, checked against the mission: clamp, route exactly, validate.

The LLM proposes, the solver disposes, the validator guards. A proposal (drone id -> target
ids) is first *clamped*: entries that break a hard or operator constraint are dropped, each
drop listed as a clamp action (``"dropped T99 from D1: unknown target"``):

- an unknown (or disabled) drone: all its entries;
- an unknown target, an excluded target (inside a SAM zone), a target the drone cannot
  sense, a target frozen on another drone;
- a target the operator forbade for that drone or moved to another drone;
- a target already given to an earlier drone (the first assignment wins), a repeat;
- targets past the exact router's comfort zone (``MAX_PROPOSAL_TARGETS`` per drone).

The remaining targets of each drone are routed exactly (``planner.routing.route_allocation``
on the constrained mission). If a drone cannot visit all of them within its fuel budget, the
proposal fails: the allocator promised targets its drone cannot reach. Otherwise the routes
are post-optimised (optional), turned into a ``Solution`` and validated with the planner's
validator against the compiled mission. Pure and synchronous: the planning round runs it in
a worker thread.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from planner.constraints import (
    OperatorConstraints,
    constrain_mission,
    normalise_drone,
    parse_constraints,
)
from planner.errors import PlannerError
from planner.mission import Mission
from planner.model import Solution, drone_label
from planner.orienteering import solve_orienteering
from planner.planning import swarm_moves
from planner.postopt import post_optimise
from planner.routing import route_allocation
from planner.solution import build_solution
from planner.validation import validate_solution

__all__ = ["MAX_PROPOSAL_TARGETS", "ProposalResult", "clamp_assignments", "evaluate_proposal"]

MAX_PROPOSAL_TARGETS = 12
"""Per drone, as the allocator's prompt asks (seed 000 §4.2: the exact router's comfort)."""


@dataclass(frozen=True)
class ProposalResult:
    """What became of a proposal: what was kept, what was dropped, and the plan if valid."""

    allocation: dict[str, list[str]]  # after clamping, by mission drone id
    clamp_actions: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()  # why no valid plan came out of it (empty when ok)
    solution: Solution | None = None  # the validated plan; None when it failed

    @property
    def ok(self) -> bool:
        """A valid plan came out of the proposal."""
        return self.solution is not None and not self.errors


def clamp_assignments(
    mission: Mission,
    assignments: Mapping[str, Sequence[str]],
    constraints: OperatorConstraints | Mapping | None = None,
    max_per_drone: int = MAX_PROPOSAL_TARGETS,
) -> tuple[dict[str, list[int]], list[str]]:
    """The proposal with every offending entry dropped (drone id -> target nodes), and the
    clamp actions. Every planned drone has a key; its own frozen targets are left out (they
    are on its route anyway)."""
    constraints = parse_constraints(constraints)
    ids = [spec.id for spec in mission.drones]
    specs = {spec.id: spec for spec in mission.drones}
    env_targets = {t.id: t for t in mission.environment.targets}
    excluded = set(mission.excluded_targets)
    frozen_owner = {mission.node_ids[t]: spec.id for spec in mission.drones for t in spec.prefix}
    moved_to = {m.target: normalise_drone(m.to_drone, ids) for m in constraints.moves}
    forbidden = {
        (normalise_drone(d, ids), t) for d, ts in constraints.forbidden.items() for t in ts
    }

    allowed = {
        spec.id: set(spec.eligible) for spec in constrain_mission(mission, constraints).drones
    }
    allocation: dict[str, list[int]] = {d: [] for d in ids}
    owner: dict[str, str] = {}
    actions: list[str] = []
    for raw_drone, targets in assignments.items():
        drone = normalise_drone(str(raw_drone), ids)
        label = drone_label(str(raw_drone))
        if drone not in specs:
            for target in targets:
                actions.append(f"dropped {target} from {label}: unknown drone")
            if not targets:
                actions.append(f"dropped {label}: unknown drone")
            continue
        spec = specs[drone]
        label = drone_label(drone)
        for target in targets:
            reason = None
            t = env_targets.get(target)
            if t is None:
                reason = "unknown target"
            elif target in excluded:
                reason = "excluded target (inside a SAM zone)"
            elif not spec.config.can_sense(t.type):
                reason = f"ineligible target (type {t.type} not sensed)"
            elif frozen_owner.get(target, drone) != drone:
                reason = f"frozen on {drone_label(frozen_owner[target])}"
            elif target in frozen_owner:
                owner[target] = drone
                continue  # its own frozen target: already on its route
            elif mission.index[target] not in allowed[drone]:
                reason = (
                    "forbidden by the operator"
                    if (drone, target) in forbidden
                    else f"moved to {drone_label(moved_to.get(target, '?'))} by the operator"
                )
            elif target in owner:
                reason = (
                    "repeated"
                    if owner[target] == drone
                    else f"also assigned to {drone_label(owner[target])}"
                )
            elif len(allocation[drone]) >= max_per_drone:
                reason = f"over the {max_per_drone}-target limit"
            if reason is not None:
                actions.append(f"dropped {target} from {label}: {reason}")
                continue
            owner[target] = drone
            allocation[drone].append(mission.index[target])
    return allocation, actions


def _needed_fuel(mission: Mission, drone: str, targets: list[int]) -> float | None:
    """Length of the shortest route visiting all ``targets`` (None if it cannot be found)."""
    spec = mission.drone(drone)
    try:
        found = solve_orienteering(
            np.asarray(mission.dist, dtype=np.float64),
            mission.scores,
            spec.start,
            targets,
            spec.ends,
            math.inf,
            spec.prefix,
        )
    except (PlannerError, ValueError, OverflowError):
        return None
    if set(targets) - set(found.route):
        return None
    return float(found.length)


def evaluate_proposal(
    mission: Mission,
    assignments: Mapping[str, Sequence[str]],
    constraints: OperatorConstraints | Mapping | None = None,
    *,
    post_opt: bool = True,
) -> ProposalResult:
    """Clamp, route exactly, (post-optimise,) validate. Never raises for a bad proposal."""
    constraints = parse_constraints(constraints)
    allocation, actions = clamp_assignments(mission, assignments, constraints)
    named = {d: mission.ids(ts) for d, ts in allocation.items()}
    constrained = constrain_mission(mission, constraints)
    try:
        routes = route_allocation(constrained, allocation, max_exact=MAX_PROPOSAL_TARGETS)
    except PlannerError as exc:
        return ProposalResult(named, tuple(actions), (f"routing failed: {exc}",))
    errors: list[str] = []
    for drone, targets in allocation.items():
        missing = [t for t in targets if t not in set(routes[drone])]
        if not missing:
            continue
        spec = mission.drone(drone)
        needed = _needed_fuel(mission, drone, targets)
        need = (
            f"needs {needed:.1f}"
            if needed is not None and math.isfinite(needed)
            else "cannot be flown"
        )
        errors.append(
            f"{drone_label(drone)}: {', '.join(mission.ids(missing))} do not fit the fuel budget"
            f" (route over all {len(targets)} assigned targets {need}, budget {spec.budget:.1f})"
        )
    if errors:
        return ProposalResult(named, tuple(actions), tuple(errors))
    if post_opt:
        try:
            routes = post_optimise(constrained, routes, **swarm_moves(constrained)).routes
        except PlannerError as exc:  # pragma: no cover - post-opt keeps routes valid
            actions.append(f"post-optimisation skipped: {exc}")
    solution = build_solution(mission, routes)
    violations = validate_solution(mission, solution)
    if violations:
        return ProposalResult(named, tuple(actions), tuple(str(v) for v in violations))
    return ProposalResult(named, tuple(actions), (), solution)
