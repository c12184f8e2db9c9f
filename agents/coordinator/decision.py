"""The coordinator's decision while it is being read from the words.

A ``Decision`` collects what the clauses order (moves, forbidden targets per drone, required
targets, the regions resolved), the what-if changes, a memory, the rules that fired and the
warnings; ``coordinate`` turns it into the decision dict the executive reads.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from agents.coordinator.intent import Intent
from planner.model import drone_label

__all__ = ["Decision"]


@dataclass
class Decision:
    """What the words ask for so far (ids in the scenario's spelling)."""

    intent: Intent
    rules_hit: list[str]
    moves: list[dict[str, str]] = field(default_factory=list)
    forbidden: dict[str, list[str]] = field(default_factory=dict)
    required: list[str] = field(default_factory=list)
    regions: list[dict[str, Any]] = field(default_factory=list)
    what_if: list[dict[str, Any]] = field(default_factory=list)
    memory: dict[str, str] | None = None
    warnings: list[str] = field(default_factory=list)
    # the drone a move says a target leaves ("transfer T3 from D1 to D2"): target -> drone
    sources: dict[str, str] = field(default_factory=dict)
    # moves replaced within the same words: (target, the drone before, the drone after)
    replaced: list[tuple[str, str, str]] = field(default_factory=list)
    # other orders replaced within the same words: (target, the order before, the order after)
    overridden: list[tuple[str, str, str]] = field(default_factory=list)
    # drone -> km of fuel a plan may not spend ("keep 20 km in reserve")
    fuel_reserve: dict[str, float] = field(default_factory=dict)
    priority_rules: list[dict[str, Any]] = field(default_factory=list)
    keep: str | None = None  # "routes" | "allocation": answer from the plan as it is
    planned: dict[str, str] = field(default_factory=dict)  # target -> its drone in the plan

    def forbid(self, drone: str, targets: Iterable[str]) -> None:
        """Forbid ``targets`` to ``drone`` (each once); a move of one of them to ``drone``
        or its requirement said before is replaced (the last order wins, noted)."""
        have = self.forbidden.setdefault(drone, [])
        for t in targets:
            if t in have:
                continue
            have.append(t)
            after = f"forbid {t} for {drone_label(drone)}"
            for m in [m for m in self.moves if m["target"] == t and m["to_drone"] == drone]:
                self.moves.remove(m)
                self.overridden.append((t, f"move {t} to {drone_label(drone)}", after))

    def move(self, target: str, drone: str) -> None:
        """Move ``target`` to ``drone``; a later move of the same target replaces this one
        (and the replacement is noted), as it replaces a ban of it for ``drone``."""
        for m in self.moves:
            if m["target"] == target and m["to_drone"] != drone:
                self.replaced.append((target, m["to_drone"], drone))
        self.moves = [m for m in self.moves if m["target"] != target]  # the last word wins
        self.moves.append({"target": target, "to_drone": drone})
        banned = self.forbidden.get(drone, [])
        if target in banned:
            banned.remove(target)
            self.overridden.append(
                (
                    target,
                    f"forbid {target} for {drone_label(drone)}",
                    f"move {target} to {drone_label(drone)}",
                )
            )

    def require(self, target: str) -> None:
        """Require ``target``: a ban of it said before (for any drone) no longer holds."""
        if target not in self.required:
            self.required.append(target)
        for drone, banned in self.forbidden.items():
            if target in banned:
                banned.remove(target)
                self.overridden.append(
                    (target, f"forbid {target} for {drone_label(drone)}", f"require {target}")
                )

    def unrequire(self, target: str, why: str) -> None:
        """A later ban of ``target`` for every drone replaces its requirement."""
        if target in self.required:
            self.required.remove(target)
            self.overridden.append((target, f"require {target}", why))
