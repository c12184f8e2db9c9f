"""What the responder is shown: the mission state as text, every number an answer may cite.

Environment (airports, known SAMs, targets with where each stands: collected, excluded,
planned, not planned), each drone (status, position, fuel, budget, remaining path, margin,
points, sensors, route), the totals, and the operator's constraints.
"""

from __future__ import annotations

from agents.words.state import MissionState
from planner.model import drone_label

__all__ = ["number_or_dash", "state_context"]


def number_or_dash(value: float | None, digits: int = 1) -> str:
    """``value`` with ``digits`` decimals, or ``-`` when it is not known."""
    return "-" if value is None else f"{value:.{digits}f}"


def state_context(state: MissionState) -> str:
    """The mission state as the prompt's text: every number the answer may cite."""
    env = state.environment
    out = [
        f"MISSION STATE ({state.source} run {state.run_id}, tick {state.tick},"
        f" t = {state.time:.1f} s, mode {state.mode})"
    ]
    out.append("AIRPORTS: " + ", ".join(f"{a.id} ({a.x:g}, {a.y:g})" for a in env.airports))
    out.append(
        "SAMS (known): "
        + ("; ".join(f"{s.id} at ({s.x:g}, {s.y:g}) range {s.range:g}" for s in env.sams) or "none")
    )
    planned = state.planned_by
    out.append("TARGETS:")
    for t in env.targets:
        if t.id in state.collected:
            where = f"collected by {drone_label(state.collected[t.id])}"
        elif t.id in state.excluded:
            where = "EXCLUDED (inside a known SAM)"
        elif t.id in planned:
            where = f"planned for {drone_label(planned[t.id])}"
        else:
            where = "not planned"
        out.append(f"  {t.id} at ({t.x:g}, {t.y:g}) priority {t.priority:g} type {t.type}: {where}")
    out.append("DRONES:")
    for d in state.drones.values():
        sensors = "ALL" if d.sensors == "ALL" else ", ".join(d.sensors)
        line = (
            f"  {d.label}: {d.status}{f' ({d.lost_reason})' if d.lost_reason else ''} at"
            f" ({d.x:.1f}, {d.y:.1f}); fuel {d.fuel:.1f} of budget {d.budget:.1f}"
            f" (used {max(0.0, d.budget - d.fuel):.1f});"
            f" remaining path {number_or_dash(d.remaining_km)};"
            f" margin {number_or_dash(d.margin_km)};"
            f" points {d.points:g}; sensors {sensors}"
        )
        out.append(line)
        out.append(
            f"    route: {' -> '.join(d.route) or '(none)'}; still to collect:"
            f" {', '.join(d.planned_targets) or 'none'};"
            f" collected (in order): {', '.join(state.collected_by(d.id)) or 'none'}"
        )
    out.append(
        f"TOTALS: points collected {state.collected_points:g}; still planned"
        f" {state.points_to_collect:g}; planned in total {state.planned_points:g};"
        f" targets collected {len(state.collected)} of {len(env.targets)};"
        f" open {len(state.open_targets)}; excluded {', '.join(state.excluded) or 'none'};"
        f" fuel used {sum(max(0.0, d.budget - d.fuel) for d in state.drones.values()):.1f}"
        f" of {sum(d.budget for d in state.drones.values()):.1f} budgeted"
    )
    if state.plan is None:
        out.append("CURRENT SOLUTION: none (no mission plan exists yet)")
    if state.constraints:
        out.append(f"OPERATOR CONSTRAINTS: {state.constraints}")
    return "\n".join(out)
