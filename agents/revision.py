"""The critic acts: a NEEDS_REVISION verdict's concrete suggestions, tried once.

``concrete_suggestions(review, mission)`` reads the critic's suggestions and issues (a model's
words or the rules critic's) into edits the planner can make: ``move`` a target to a drone
("move T5 to D1", "reassign T3 from D1 to D2"), ``insert`` a missed target into a drone's
route ("add T9 to D3", "T9 (3 points) is unvisited; D3 can sense it ..."), ``uncross``
("D1 T2->T4 crosses D2 ..."). Ids are the mission's (case-insensitive; "D1" or "1"); a
suggestion naming an unknown id is no edit.

``revise(mission, solution, suggestions, constraints)`` makes the edits on a copy of the
plan's routes (each target at its cheapest position; a drone that cannot visit a target,
because of its sensors, a SAM or a frozen leg, skips that edit with the reason), re-optimises
the result (``planner.postopt.post_optimise`` under the operator's constraints), and keeps it
only if it passes the validator, breaks no operator constraint the plan kept, and scores
better: more points, or as many for less fuel. Synchronous and pure: call it in a worker
thread. ``Revision`` says what was tried, what was skipped, and why it was kept or not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agents.coordinator.ids import normalise, tokens
from agents.roles import CriticOutput
from planner.constraints import (
    OperatorConstraints,
    constrain_mission,
    constraint_violations,
    normalise_drone,
)
from planner.errors import PlannerError
from planner.mission import Mission
from planner.model import Solution, drone_label
from planner.planning import swarm_moves
from planner.postopt import post_optimise
from planner.solution import build_solution, solution_routes
from planner.validation import validate_solution

__all__ = ["Revision", "Suggestion", "concrete_suggestions", "revise"]

_EPS = 1e-6

_MOVE_RE = re.compile(
    r"\b(?:move|moving|reassign|reassigning|re-assign|transfer|transferring|give|giving|"
    r"shift|shifting|hand|swap|assign|assigning|reallocate)\b",
    re.I,
)
_INSERT_RE = re.compile(
    r"\b(?:add|adding|insert|inserting|include|including|cover|covering|visit|visiting|"
    r"pick\s+up|collect|collecting|unvisited|missed|not\s+visited|could\s+fit|fits)\b",
    re.I,
)
_CROSS_RE = re.compile(r"\bcross(?:es|ing|ings)?\b", re.I)
# a suggestion that says it does not fit is no edit ("... exceeds its 4.0 km margin")
_NO_FIT_RE = re.compile(
    r"\b(?:exceeds?|more\s+than\s+its|does\s+not\s+fit|doesn'?t\s+fit|stays\s+out|"
    r"too\s+far|cannot|can'?t)\b",
    re.I,
)


@dataclass(frozen=True)
class Suggestion:
    """One edit a critic's suggestion asks for (ids in the mission's spelling)."""

    kind: Literal["move", "insert", "uncross"]
    target: str | None
    drone: str | None
    text: str  # the critic's words it was read from

    def describe(self) -> str:
        """The edit in words: "move T5 to D1", "add T9 to D3", "remove crossings"."""
        if self.kind == "uncross":
            return "remove crossings"
        verb = "move" if self.kind == "move" else "add"
        return f"{verb} {self.target} to {drone_label(self.drone or '?')}"


@dataclass
class Revision:
    """One revision attempt: the edits tried and skipped, the result, and the decision."""

    suggestions: list[Suggestion]
    applied: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    solution: Solution | None = None  # the revised plan, when it was kept
    kept: bool = False
    reason: str = ""
    points_before: float = 0.0
    fuel_before: float = 0.0
    points_after: float | None = None
    fuel_after: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the trace."""
        return {
            "suggestions": [s.describe() for s in self.suggestions],
            "applied": list(self.applied),
            "skipped": list(self.skipped),
            "kept": self.kept,
            "reason": self.reason,
            "points_before": self.points_before,
            "fuel_before": self.fuel_before,
            "points_after": self.points_after,
            "fuel_after": self.fuel_after,
        }


def concrete_suggestions(review: CriticOutput, mission: Mission) -> list[Suggestion]:
    """The edits the review's suggestions and issues ask for (see the module docstring)."""
    targets = {mission.node_ids[t].lower(): mission.node_ids[t] for t in mission.target_nodes}
    drones = [spec.id for spec in mission.drones]
    out: list[Suggestion] = []
    for line in [*review.suggestions, *review.issues]:
        norm = normalise(line, list(targets.values()), drones)
        found = [targets[t.lower()] for t in tokens(norm, "@") if t.lower() in targets]
        named = [_drone(d, drones) for d in tokens(norm, "#")]
        to_drone = _after_to(norm, drones) or next((d for d in named if d), None)
        if _NO_FIT_RE.search(line):
            continue
        if _CROSS_RE.search(line):
            out.append(Suggestion("uncross", None, None, line))
        elif found and to_drone and _MOVE_RE.search(line):
            out += [Suggestion("move", t, to_drone, line) for t in found]
        elif found and to_drone and _INSERT_RE.search(line):
            out += [Suggestion("insert", t, to_drone, line) for t in found]
    seen: set[tuple[str, str | None, str | None]] = set()
    unique = []
    for s in out:
        key = (s.kind, s.target, s.drone)
        if key not in seen:
            seen.add(key)
            unique.append(s)
    return unique


def _drone(written: str, drones: list[str]) -> str | None:
    for cand in (written, f"D{written}") if written.isdigit() else (written,):
        found = normalise_drone(cand, drones)
        if found in drones:
            return found
    return None


def _after_to(norm: str, drones: list[str]) -> str | None:
    """The drone written after "to" / "into" / "for" / "by" (where a target goes)."""
    m = re.search(r"\b(?:to|into|onto|for|by)\s+#(\S+)", norm, re.I)
    return _drone(m.group(1), drones) if m else None


def revise(
    mission: Mission,
    solution: Solution,
    suggestions: Sequence[Suggestion],
    constraints: OperatorConstraints | None = None,
) -> Revision:
    """Try the edits once, re-optimise, keep the result only if it is valid and better."""
    constraints = constraints or OperatorConstraints()
    out = Revision(list(suggestions), points_before=solution.total_points)
    out.fuel_before = solution.total_fuel
    if not suggestions:
        out.reason = "no concrete suggestion"
        return out
    routes = {d: list(r) for d, r in solution_routes(mission, solution).items()}
    specs = {spec.id: spec for spec in mission.drones}
    for s in suggestions:
        if s.kind == "uncross":
            out.applied.append(s.describe())  # the re-optimisation's 2-opt does it
            continue
        spec = specs.get(s.drone or "")
        if spec is None or s.target is None:
            out.skipped.append(f"{s.describe()}: {drone_label(s.drone or '?')} is not planned")
            continue
        t = mission.index[s.target]
        if t not in spec.can_visit:
            out.skipped.append(
                f"{s.describe()}: {drone_label(spec.id)} cannot visit"
                f" {s.target} (its sensors, a SAM, or a frozen leg)"
            )
            continue
        holder = next((d for d, r in routes.items() if t in r[1:-1]), None)
        if holder == spec.id:
            out.skipped.append(f"{s.describe()}: already on that route")
            continue
        if holder is not None and t in specs[holder].prefix:
            out.skipped.append(f"{s.describe()}: {s.target} is on a frozen leg")
            continue
        route = routes.get(spec.id) or [spec.start, *spec.prefix, spec.ends[0]]
        longer = _cheapest_insertion(mission, spec, route, t)
        length = mission.route_length(longer)
        if length > spec.budget + _EPS:  # the edits so far leave no room for this one
            out.skipped.append(
                f"{s.describe()}: the route would be {length:.1f} km, over"
                f" {drone_label(spec.id)}'s {spec.budget:.1f} km"
            )
            continue
        if holder is not None:
            routes[holder] = [n for n in routes[holder] if n != t]
        routes[spec.id] = longer
        out.applied.append(s.describe())
    if not out.applied:
        out.reason = "no suggestion could be applied"
        return out
    try:
        constrained = constrain_mission(mission, constraints)
        improved = post_optimise(constrained, routes, **swarm_moves(constrained)).routes
        revised = build_solution(mission, improved)
    except (PlannerError, IndexError, KeyError) as exc:
        out.reason = f"the revision could not be re-optimised: {exc}"
        return out
    out.points_after, out.fuel_after = revised.total_points, revised.total_fuel
    problems = validate_solution(mission, revised)
    if problems:
        out.reason = "the revision is invalid: " + "; ".join(map(str, problems[:3]))
        return out
    before = set(constraint_violations(solution, constraints, mission))
    worse = [v for v in constraint_violations(revised, constraints, mission) if v not in before]
    if worse:
        out.reason = "the revision breaks operator constraints: " + "; ".join(worse)
        return out
    gain = revised.total_points - solution.total_points
    saved = solution.total_fuel - revised.total_fuel
    if gain > _EPS or (gain > -_EPS and saved > _EPS):
        out.kept, out.solution = True, revised
        out.reason = f"kept: {gain:+g} points, {-saved:+.1f} km of fuel"
    else:
        out.reason = (
            f"not better: {revised.total_points:g} points, {revised.total_fuel:.1f} km"
            f" against {solution.total_points:g} points, {solution.total_fuel:.1f} km"
        )
    return out


def _cheapest_insertion(mission: Mission, spec: Any, route: list[int], t: int) -> list[int]:
    """``route`` with ``t`` where it adds the least length (after the frozen prefix)."""
    lo = 1 + len(spec.prefix)
    best, best_i = float("inf"), lo
    for i in range(lo, len(route)):
        a, b = route[i - 1], route[i]
        delta = float(mission.dist[a, t] + mission.dist[t, b] - mission.dist[a, b])
        if delta < best:
            best, best_i = delta, i
    return route[:best_i] + [t] + route[best_i:]
