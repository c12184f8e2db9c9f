"""Drawing a plan: airports, targets by priority and type, SAMs, excluded targets, paths."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; never open a window
import matplotlib.pyplot as plt
from matplotlib.patches import Circle

from planner.mission import Mission
from planner.model import Solution, drone_label

__all__ = ["plot_plan"]

_MARKERS = "o^sDvP*Xhp"


def plot_plan(mission: Mission, solution: Solution, out: Path, title: str | None = None) -> None:
    """Draw ``solution`` on its map and save the figure to ``out`` (any format matplotlib
    knows by the suffix).
    """
    env = mission.environment
    fig, ax = plt.subplots(figsize=(9, 8), dpi=110)
    for sam in env.sams:
        ax.add_patch(Circle(sam.pos, sam.range, color="tab:red", alpha=0.18, lw=0))
        ax.add_patch(Circle(sam.pos, sam.range, fill=False, color="tab:red", lw=1.2))
        ax.annotate(sam.id, sam.pos, ha="center", va="center", color="darkred", fontsize=8)
    types = sorted({t.type for t in env.targets})
    excluded = set(solution.excluded_targets)
    visited = {t for r in solution.routes.values() for t in r.visited_targets}
    for target in env.targets:
        marker = _MARKERS[types.index(target.type) % len(_MARKERS)]
        colour = (
            "grey" if target.id in excluded else ("black" if target.id in visited else "tab:orange")
        )
        ax.scatter(
            target.x,
            target.y,
            s=25 + 12 * target.priority,
            marker=marker,
            facecolor="none" if target.id in excluded else colour,
            edgecolor=colour,
            zorder=4,
        )
        label = f"{target.id} ({target.priority:g})" + (" excl." if target.id in excluded else "")
        ax.annotate(
            label, (target.x, target.y), xytext=(5, 5), textcoords="offset points", fontsize=7
        )
    for airport in env.airports:
        ax.scatter(airport.x, airport.y, marker="s", s=90, color="tab:blue", zorder=5)
        ax.annotate(
            airport.id,
            (airport.x, airport.y),
            xytext=(6, -10),
            textcoords="offset points",
            fontsize=8,
            color="tab:blue",
            weight="bold",
        )
    colours = plt.get_cmap("tab10")
    for i, (drone_id, result) in enumerate(solution.routes.items()):
        if not result.path:
            continue
        xs, ys = zip(*result.path)
        ax.plot(
            xs,
            ys,
            color=colours(i % 10),
            lw=1.8,
            zorder=3,
            label=f"{drone_label(drone_id)}: {result.total_points:g} pts, "
            f"{result.fuel_used:.1f}/{result.fuel_budget:g} fuel",
        )
    for marker_i, target_type in enumerate(types):
        ax.scatter(
            [],
            [],
            marker=_MARKERS[marker_i % len(_MARKERS)],
            facecolor="none",
            edgecolor="black",
            label=f"type {target_type}",
        )
    ax.set_aspect("equal")
    ax.grid(alpha=0.3)
    ax.set_xlabel("east (km)")
    ax.set_ylabel("north (km)")
    ax.set_title(title or f"{solution.total_points:g} points, {solution.total_fuel:.1f} km of fuel")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    fig.tight_layout()
    fig.savefig(out, bbox_inches="tight")
    plt.close(fig)
