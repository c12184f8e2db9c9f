"""What every agent prompt is built from: the hard constraints, the memories, the mission.

Seed 000 Appendix A.1 (hard constraints, injected into every prompt), Appendix C/D (mission
context and current solution summary, with the numbers agents must cite) and seed 001's
memory block. Pure functions of planner values: no IO here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from planner.metrics import compute_solution_metrics
from planner.mission import DroneSpec, Mission
from planner.model import Solution, drone_label

__all__ = [
    "HARD_CONSTRAINTS",
    "MemoryLike",
    "format_memories",
    "mission_context",
    "solution_summary",
]

HARD_CONSTRAINTS = """\
HARD CONSTRAINTS - MUST NEVER BE VIOLATED
1. DRONE TARGET ELIGIBILITY (sensor type restrictions): a drone may only be assigned
   targets from its ELIGIBLE TARGETS list. This is physical and cannot be overridden.
2. EXCLUDED TARGETS (inside SAM zones) are unreachable: no drone may visit them.
3. FUEL BUDGET: each drone's route, from its start (or checkpoint) to an allowed end
   airport, must fit its fuel budget (fuel left, for a replan).
4. Every target is assigned to at most one drone; frozen (already flown or committed)
   legs stay as they are; no path may enter a SAM disk.
These apply to allocation, optimisation, reallocation and routing. No request overrides them.
"""


class MemoryLike(Protocol):
    """A memory as the prompts use it: its category and its text (read only)."""

    @property
    def category(self) -> str:
        """instruction | note | preference | warning | lesson"""
        ...

    @property
    def text(self) -> str:
        """The memory, one line."""
        ...


def format_memories(memories: Iterable[MemoryLike]) -> str:
    """Seed 001's block appended to every system prompt ('' when there are none)."""
    lines = [f"[{m.category.upper()}] {m.text}" for m in memories]
    if not lines:
        return ""
    bar = "=" * 72
    return "\n".join([bar, "IMPORTANT MEMORIES & INSTRUCTIONS:", bar, *lines, bar]) + "\n"


def mission_context(mission: Mission) -> str:
    """Airports, targets (priority, type, excluded), SAMs and drones with their eligible
    targets, budgets and starts, as text (seed 000 Appendix C)."""
    env = mission.environment
    excluded = set(mission.excluded_targets)
    out = ["AIRPORTS:"]
    out += [f"  {a.id} at ({a.x:g}, {a.y:g})" for a in env.airports]
    for sid, p in env.synthetic_starts.items():
        out.append(f"  {sid} (checkpoint) at ({p.x:.2f}, {p.y:.2f})")
    out.append("TARGETS:")
    for t in env.targets:
        flag = "  EXCLUDED (inside SAM zone)" if t.id in excluded else ""
        out.append(f"  {t.id} at ({t.x:g}, {t.y:g}) priority {t.priority:g} type {t.type}{flag}")
    out.append("SAMS (known):")
    out += [f"  {s.id} at ({s.x:g}, {s.y:g}) range {s.range:g}" for s in env.sams]
    out.append("DRONES:")
    type_of = {t.id: t.type for t in env.targets}
    by_type: dict[str, set[int]] = {}
    for n in mission.target_nodes:
        by_type.setdefault(type_of[mission.node_ids[n]], set()).add(n)
    # a swarm's drones of one sensor fit share one eligible tuple (compile_mission): its
    # line is made once, not per drone (1,000 set unions of 5,000 ids held the GIL ~1 s)
    lines: dict[tuple[int, tuple[str, ...]], tuple[tuple[int, ...], str]] = {}
    for spec in mission.drones:
        types = tuple(sorted(t for t in by_type if spec.config.can_sense(t)))
        made = lines.get((id(spec.eligible), types))
        if made is None or made[0] is not spec.eligible:
            made = lines[(id(spec.eligible), types)] = (
                spec.eligible,
                _eligible(mission, spec, types, by_type),
            )
        eligible = made[1]
        ends = ", ".join(mission.node_ids[n] for n in spec.ends)
        out.append(
            f"  {drone_label(spec.id)}: start {mission.node_ids[spec.start]}, end {ends},"
            f" fuel budget {spec.budget:.1f}"
        )
        out.append(f"    ELIGIBLE TARGETS: {eligible}")
        if spec.prefix:
            out.append("    FROZEN: " + " -> ".join(mission.node_ids[n] for n in spec.prefix))
    return "\n".join(out)


# A drone's ELIGIBLE TARGETS are listed one by one up to this many; a swarm's drone (5,000
# targets) is described by its sensor types instead: a list of every drone's thousands of
# ids made a 30 MB prompt no model takes, built in Python holding the GIL the tick needs.
_LISTED_AT_MOST = 60


def _eligible(
    mission: Mission, spec: DroneSpec, types: tuple[str, ...], by_type: dict[str, set[int]]
) -> str:
    """A drone's ELIGIBLE TARGETS line: its targets, or, when there are many, the sensor
    ``types`` it covers, with the targets of those types it may not visit."""
    if len(spec.eligible) <= _LISTED_AT_MOST:
        return ", ".join(mission.node_ids[n] for n in spec.eligible) or "none"
    covered = set().union(*(by_type[t] for t in types))
    # eligible is a subset of the targets its sensors cover (compile_mission); a constraint
    # may only take some away
    missing = sorted(covered.difference(spec.eligible))
    text = f"every target of type {', '.join(types)} ({len(spec.eligible)} targets)"
    if missing:
        names = [mission.node_ids[n] for n in missing[:_LISTED_AT_MOST]]
        more = len(missing) - len(names)
        text += " except " + ", ".join(names) + (f" and {more} more" if more else "")
    return text


def solution_summary(mission: Mission, solution: Solution | None) -> str:
    """Per drone route, fuel used / budget / margin, points; totals; unvisited (Appendix D)."""
    if solution is None or not solution.routes:
        return "CURRENT SOLUTION: none (no mission plan exists yet)"
    m = compute_solution_metrics(mission, solution)
    out = ["CURRENT SOLUTION:"]
    for drone_id, d in m.drones.items():
        route = solution.routes.get(drone_id)
        seq = " -> ".join(route.route) if route else "(no route)"
        out.append(
            f"  {d.drone}: {seq}; fuel {d.fuel_used:.1f} of {d.fuel_budget:.1f}"
            f" (margin {d.fuel_margin:.1f}); points {d.points:g};"
            f" targets {len(d.visited_targets)}"
        )
    out.append(
        f"  TOTAL: points {m.total_points:g} of {m.total_possible_points:g}"
        f" ({100 * m.points_coverage:.1f}%), fuel {m.total_fuel:.1f} of {m.total_budget:.1f},"
        f" visited {m.visited_count}"
    )
    out.append("  UNVISITED: " + (", ".join(m.unvisited_targets) or "none"))
    if m.excluded_targets:
        out.append("  EXCLUDED: " + ", ".join(m.excluded_targets))
    return "\n".join(out)
