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

    def forbid(self, drone: str, targets: Iterable[str]) -> None:
        """Forbid ``targets`` to ``drone`` (each once)."""
        have = self.forbidden.setdefault(drone, [])
        have += [t for t in targets if t not in have]

    def move(self, target: str, drone: str) -> None:
        """Move ``target`` to ``drone``; a later move of the same target replaces this one
        (and the replacement is noted)."""
        for m in self.moves:
            if m["target"] == target and m["to_drone"] != drone:
                self.replaced.append((target, m["to_drone"], drone))
        self.moves = [m for m in self.moves if m["target"] != target]  # the last word wins
        self.moves.append({"target": target, "to_drone": drone})
