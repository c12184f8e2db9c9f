"""Operator constraints on a replan: moves, forbidden pairs, required targets.

A ``PlanRequest.constraints`` mapping such as::

    {"moves": [{"target": "T5", "to_drone": "1"}],
     "forbidden": {"2": ["T3"]},
     "required_targets": ["T9"]}

is parsed into :class:`OperatorConstraints` (pydantic, ``extra="forbid"``; drone ids may be
written ``"1"`` or ``"D1"``) and applied in two places:

* :func:`constrain_mission` -- a copy of the compiled mission whose drones' eligible targets
  are narrowed (a moved target is eligible for its new drone only, a forbidden pair is
  removed). Allocation, exact routing and post-optimisation run on it, so none of them can
  undo a constraint.
* :func:`constrain_problem` -- the team search's arrays (``planner.planning.team_problem``):
  the same eligibility, plus a score bonus on moved and required targets larger than every
  other score together, so the search takes them whenever they fit. The bonus lives in the
  search arrays only; a plan's points are always reported from the mission's true scores.

Sensor eligibility, exclusion and frozen legs are hard constraints: an operator constraint
that would break one is not applied and :func:`constraint_notes` says why.
:func:`constraint_violations` lists what a finished plan does against the constraints.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from planner.model import Solution, drone_label

if TYPE_CHECKING:  # types only: the constraints' model loads no kernels (executive.contracts)
    from planner.mission import Mission
    from planner.team_search import TeamProblem

__all__ = [
    "Move",
    "OperatorConstraints",
    "constrain_mission",
    "constrain_problem",
    "constraint_notes",
    "constraint_violations",
    "describe_constraints",
    "keep_others",
    "merge_constraints",
    "moved_drones",
    "normalise_drone",
    "parse_constraints",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Move(_Model):
    """The operator wants ``target`` flown by ``to_drone`` (``"1"`` or ``"D1"``)."""

    target: str = Field(min_length=1)
    to_drone: str = Field(min_length=1)


class OperatorConstraints(_Model):
    """Everything an operator asked of a replan: moves, forbidden (drone, target) pairs and
    targets that must be visited.
    """

    moves: list[Move] = Field(default_factory=list)
    forbidden: dict[str, list[str]] = Field(default_factory=dict)  # drone -> targets
    required_targets: list[str] = Field(default_factory=list)
    # drone -> km of its fuel a plan may not spend ("keep 20 km in reserve")
    fuel_reserve: dict[str, float] = Field(default_factory=dict)

    @property
    def empty(self) -> bool:
        """True when there is nothing to apply."""
        return not (self.moves or self.forbidden or self.required_targets or self.fuel_reserve)

    def reserve_of(self, drone: str) -> float:
        """The km ``drone`` (``"1"`` or ``"D1"``) keeps in reserve (0: none)."""
        for written, km in self.fuel_reserve.items():
            if written == drone or drone_label(written) == drone_label(drone):
                return km
        return 0.0


def parse_constraints(raw: Mapping[str, Any] | OperatorConstraints | None) -> OperatorConstraints:
    """Validate the request's constraints (raises ``pydantic.ValidationError`` if malformed)."""
    if raw is None:
        return OperatorConstraints()
    if isinstance(raw, OperatorConstraints):
        return raw
    return OperatorConstraints.model_validate(dict(raw))


def normalise_drone(drone: str, known: set[str] | list[str] | tuple[str, ...]) -> str:
    """``"D1"`` -> ``"1"`` when the mission's drone is called ``"1"`` (and the other way)."""
    known = set(known)
    if drone in known:
        return drone
    for other in known:
        if drone_label(other) == drone or drone_label(drone) == other:
            return other
    return drone


def describe_constraints(constraints: OperatorConstraints) -> list[str]:
    """One line per constraint, for prompts and the strategist's commands."""
    lines = [f"move {m.target} to {drone_label(m.to_drone)}" for m in constraints.moves]
    for drone, targets in constraints.forbidden.items():
        lines += [f"forbid {t} for {drone_label(drone)}" for t in targets]
    lines += [f"require {t}" for t in constraints.required_targets]
    lines += [
        f"keep {km:g} km in reserve for {drone_label(d)}"
        for d, km in constraints.fuel_reserve.items()
    ]
    return lines


def _pairs(
    mission: Mission, constraints: OperatorConstraints
) -> tuple[list[tuple[int, int]], list[tuple[int, int]], list[int], list[str]]:
    """(moves as (target node, drone index), forbidden (drone index, node), required nodes,
    notes on what cannot be applied)."""
    ids = [spec.id for spec in mission.drones]
    k_of = {d: k for k, d in enumerate(ids)}
    frozen_owner = {t: spec.id for spec in mission.drones for t in spec.prefix}
    excluded = set(mission.excluded_targets)
    notes: list[str] = []
    moves: list[tuple[int, int]] = []
    forbidden: list[tuple[int, int]] = []
    required: list[int] = []

    def node(target: str, what: str) -> int | None:
        if target in excluded:
            notes.append(f"{what}: {target} is excluded (inside a SAM zone)")
            return None
        if target not in mission.index or mission.index[target] not in mission.is_target:
            notes.append(f"{what}: {target} is not a target of this plan")
            return None
        return mission.index[target]

    for mv in constraints.moves:
        what = f"move {mv.target} to {drone_label(mv.to_drone)}"
        drone = normalise_drone(mv.to_drone, ids)
        if drone not in k_of:
            notes.append(f"{what}: unknown or unplanned drone")
            continue
        t = node(mv.target, what)
        if t is None:
            continue
        spec = mission.drones[k_of[drone]]
        owner = frozen_owner.get(t)
        if owner is not None and owner != drone:
            notes.append(f"{what}: frozen on {drone_label(owner)}")
            continue
        if t not in spec.can_visit:
            notes.append(f"{what}: {drone_label(drone)} cannot sense it")
            continue
        moves.append((t, k_of[drone]))
    for raw_drone, targets in constraints.forbidden.items():
        drone = normalise_drone(raw_drone, ids)
        for target in targets:
            what = f"forbid {target} for {drone_label(raw_drone)}"
            if drone not in k_of:
                notes.append(f"{what}: unknown or unplanned drone")
                continue
            t = node(target, what)
            if t is None:
                continue
            if frozen_owner.get(t) == drone:
                notes.append(f"{what}: already frozen on its route")
                continue
            forbidden.append((k_of[drone], t))
    for target in constraints.required_targets:
        t = node(target, f"require {target}")
        if t is not None:
            required.append(t)
    return moves, forbidden, required, notes


def constraint_notes(mission: Mission, constraints: OperatorConstraints) -> list[str]:
    """Why some constraints cannot be applied (unknown ids, sensors, frozen legs)."""
    return _pairs(mission, constraints)[3]


def _eligibility(mission: Mission, constraints: OperatorConstraints) -> list[set[int]]:
    moves, forbidden, _required, _notes = _pairs(mission, constraints)
    eligible = [set(spec.eligible) for spec in mission.drones]
    for t, k in moves:
        for j, allowed in enumerate(eligible):
            if j != k:
                allowed.discard(t)
    for k, t in forbidden:
        eligible[k].discard(t)
    return eligible


def constrain_mission(mission: Mission, constraints: OperatorConstraints) -> Mission:
    """A copy of ``mission`` whose drones may visit only what the constraints allow."""
    if constraints.empty:
        return mission
    eligible = _eligibility(mission, constraints)
    drones = [
        dataclasses.replace(
            spec,
            eligible=tuple(t for t in spec.eligible if t in allowed),
            budget=max(0.0, spec.budget - constraints.reserve_of(spec.id)),
        )
        for spec, allowed in zip(mission.drones, eligible)
    ]
    return dataclasses.replace(mission, drones=drones)


def constrain_problem(
    problem: TeamProblem, mission: Mission, constraints: OperatorConstraints
) -> TeamProblem:
    """The team search's arrays with the constraints applied (eligibility and bonus)."""
    if constraints.empty:
        return problem
    moves, forbidden, required, _notes = _pairs(mission, constraints)
    eligible = np.array(problem.eligible, dtype=np.bool_, copy=True)
    score = np.array(problem.score, dtype=np.float64, copy=True)
    bonus = float(np.abs(score).sum()) + 1.0  # worth more than every other target together
    for t, k in moves:
        keep = bool(eligible[k, t])
        eligible[:, t] = False
        eligible[k, t] = keep
    for k, t in forbidden:
        eligible[k, t] = False
    for t in {t for t, _k in moves} | set(required):
        score[t] += bonus
    # a fuel reserve is in the budgets already: the problem is built on constrain_mission's
    return dataclasses.replace(problem, eligible=eligible, score=score)


def constraint_violations(
    solution: Solution,
    constraints: OperatorConstraints | Mapping[str, Any] | None,
    mission: Mission | None = None,
) -> list[str]:
    """What ``solution`` does against the constraints (empty = all honoured).

    A moved target must be visited by its new drone, a forbidden pair must not occur, a
    required target must be visited. With ``mission``, constraints that cannot be applied
    (see :func:`constraint_notes`) are not counted: no plan could honour them.
    """
    constraints = parse_constraints(constraints)
    if constraints.empty:
        return []
    ids = list(solution.routes)
    visitor = {t: d for d, r in solution.routes.items() for t in r.visited_targets}
    skip: set[str] = set()
    if mission is not None:
        skip = {note.split(":", 1)[0] for note in constraint_notes(mission, constraints)}
    out: list[str] = []
    for mv in constraints.moves:
        what = f"move {mv.target} to {drone_label(mv.to_drone)}"
        if what in skip:
            continue
        drone = normalise_drone(mv.to_drone, ids)
        got = visitor.get(mv.target)
        if got != drone:
            where = f"visited by {drone_label(got)}" if got else "not visited"
            out.append(f"{what}: {where}")
    for raw_drone, targets in constraints.forbidden.items():
        drone = normalise_drone(raw_drone, ids)
        for target in targets:
            what = f"forbid {target} for {drone_label(raw_drone)}"
            if what not in skip and visitor.get(target) == drone:
                out.append(f"{what}: visited by {drone_label(drone)}")
    for target in constraints.required_targets:
        what = f"require {target}"
        if what not in skip and target not in visitor:
            out.append(f"{what}: not visited")
    for raw_drone, km in constraints.fuel_reserve.items():
        route = solution.routes.get(normalise_drone(raw_drone, ids))
        if route is None or route.fuel_budget is None:
            continue
        if route.fuel_used > route.fuel_budget - km + 1e-6:
            out.append(
                f"keep {km:g} km in reserve for {drone_label(raw_drone)}: uses"
                f" {route.fuel_used:.1f} of {route.fuel_budget:g} km"
            )
    return out


def merge_constraints(
    current: OperatorConstraints, added: OperatorConstraints
) -> OperatorConstraints:
    """The operator's constraints after ``added``, the last word winning: a target moved
    again loses its earlier move, a move to a drone now forbidden that target is dropped, a
    ban on a target now moved to that drone is lifted; forbidden targets joined per drone
    (sorted), required targets once each. The one merge: the live loop, a what-if and a
    posted plan all use it."""
    moved = {m.target for m in added.moves}
    banned = {(d, t) for d, ts in added.forbidden.items() for t in ts}
    kept = [
        m for m in current.moves if m.target not in moved and (m.to_drone, m.target) not in banned
    ]
    forbidden: dict[str, list[str]] = {}
    for drone, targets in current.forbidden.items():
        left = [
            t
            for t in targets
            if not any(m.target == t and m.to_drone == drone for m in added.moves)
        ]
        if left:
            forbidden[drone] = sorted(set(left))
    for drone, targets in added.forbidden.items():
        forbidden[drone] = sorted(set(forbidden.get(drone, [])) | set(targets))
    return OperatorConstraints(
        moves=[*kept, *added.moves],
        forbidden=forbidden,
        required_targets=list(dict.fromkeys([*current.required_targets, *added.required_targets])),
        fuel_reserve={**current.fuel_reserve, **added.fuel_reserve},
    )


def moved_drones(moves: Iterable[Move], allocation: Mapping[str, Iterable[str]]) -> set[str]:
    """The drones ``moves`` name on a plan whose ``allocation`` is drone -> targets: each
    target's new drone and the drone that holds it now (a move re-plans only these)."""
    holder = {t: d for d, ts in allocation.items() for t in ts}
    named = set()
    for m in moves:
        named.add(normalise_drone(m.to_drone, list(allocation)))
        if m.target in holder:
            named.add(holder[m.target])
    return named


def keep_others(
    constraints: OperatorConstraints, allocation: Mapping[str, Iterable[str]], named: set[str]
) -> OperatorConstraints:
    """``constraints`` plus what keeps every drone's targets where they are: a drone not in
    ``named`` keeps exactly its targets, a named one its own but the moved ones plus those
    moved to it (a move changes only the drones it names; the live loop and a posted plan
    both use it)."""
    ids = list(allocation)
    moved = {m.target: normalise_drone(m.to_drone, ids) for m in constraints.moves}
    everything = {t for ts in allocation.values() for t in ts} | set(moved)
    moves = list(constraints.moves)
    forbidden = {d: list(ts) for d, ts in constraints.forbidden.items()}
    for drone, targets in allocation.items():
        own = [t for t in targets if t not in moved]
        if drone not in named:
            moves += [Move(target=t, to_drone=drone) for t in own]
        mine = set(own) | {t for t, d in moved.items() if d == drone}
        extra = sorted(everything - mine)
        if extra:
            forbidden[drone] = sorted(set(forbidden.get(drone, [])) | set(extra))
    return constraints.model_copy(update={"moves": moves, "forbidden": forbidden})
