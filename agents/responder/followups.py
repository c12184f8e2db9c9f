"""Suggested next questions (seed 004's follow-ups): two or three per answer, computed from
the state and from what was just asked, never a fixed list.

``follow_ups(question, state, intent=..., whatif=...)`` picks the drones and targets that
matter now -- the drone with the least margin, the one that used the most fuel, an idle
drone, an excluded target and its SAM, a target left out, two targets in a row on one
route -- and offers the questions that go one step further than the one asked (a margin
question leads to fuel used and to a what-if on the tightest drone; an exclusion to the
SAM's removal). Every suggestion is words the coordinator reads (questions and what-ifs,
never a command that would change a live plan), and none repeats the question asked.
"""

from __future__ import annotations

from typing import Any

from agents.responder.questions import (
    Allocation,
    Budgets,
    Compare,
    Drones,
    FuelUsed,
    Margins,
    OpenTargets,
    Order,
    Points,
    Sams,
    Status,
    Totals,
    Visited,
    Why,
    topic_of,
)
from agents.words.state import DroneState, MissionState

__all__ = ["MAX_FOLLOW_UPS", "follow_ups"]

MAX_FOLLOW_UPS = 3


class _Facts:
    """The drones and targets worth a next question in ``state``."""

    def __init__(self, state: MissionState) -> None:
        self.state = state
        flying = [d for d in state.drones.values() if d.status != "lost"]
        known = [d for d in flying if d.margin_km is not None]
        self.tight: DroneState | None = min(known, key=lambda d: (d.margin_km, d.id), default=None)
        self.roomy: DroneState | None = max(known, key=lambda d: (d.margin_km, d.id), default=None)
        self.busiest: DroneState | None = max(
            flying, key=lambda d: (d.budget - d.fuel, d.id), default=None
        )
        self.idle = next(
            (d for d in flying if not d.planned_targets and not state.collected_by(d.id)), None
        )
        self.excluded = next(
            ((t, sam[0]) for t in state.excluded if (sam := state.sam_containing(t))), None
        )
        self.left_out = next((t for t in state.unassigned if t not in state.excluded), None)
        self.pair = self._pair()

    def _pair(self) -> tuple[str, str, str] | None:
        """(drone label, first, second): two targets in a row on the busiest route."""
        ranked = sorted(
            self.state.drones.values(),
            key=lambda d: -len(self.state.collected_by(d.id) + d.planned_targets),
        )
        for d in ranked:
            targets = self.state.collected_by(d.id) + [
                t for t in d.planned_targets if t not in self.state.collected
            ]
            if len(targets) >= 2:
                mid = len(targets) // 2
                return d.label, targets[mid - 1], targets[mid]
        return None

    def owned_target(self, d: DroneState) -> str | None:
        mine = self.state.collected_by(d.id) + d.planned_targets
        return mine[0] if mine else None


def _budget_what_if(d: DroneState) -> str:
    return f"What if we increase {d.label}'s fuel budget to {round(d.budget * 1.25):g}?"


def _candidates(question: str, state: MissionState, intent: str, whatif: Any) -> list[str]:
    f = _Facts(state)
    out: list[str] = []
    add = out.append
    if state.plan is None and not state.collected:
        add("Generate optimal routes maximizing priority points")
    if whatif is not None:
        kinds = {c.get("kind") for c in whatif.changes}
        if "lose_drone" in kinds and f.roomy is not None:
            add(f"What if {f.roomy.label} were lost?")
        if f.tight is not None and "set_fuel" not in kinds and "set_budget" not in kinds:
            add(_budget_what_if(f.tight))
        add("Which drone has the most fuel margin?")
        if f.excluded is not None:
            add(f"What if {f.excluded[1]} were removed?")
        return out
    if intent in ("reallocate", "replan", "plan"):
        add("Which drone has the most fuel margin?")
        add("Which targets are not visited?")
        return out
    topic = topic_of(question, state)
    match topic:
        case Margins():
            add("Which drone uses the most fuel?")
            if f.tight is not None:
                add(_budget_what_if(f.tight))
            if f.tight is not None and f.roomy is not None and f.tight.id != f.roomy.id:
                add(f"Compare {f.roomy.label} and {f.tight.label}")
        case FuelUsed() | Budgets():
            add("Which drone has the most fuel margin?")
            if f.busiest is not None and f.roomy is not None and f.busiest.id != f.roomy.id:
                add(f"Compare {f.busiest.label} and {f.roomy.label}")
            add("What is the total fuel used?")
            if f.idle is not None:
                add(f"Why did {f.idle.label} not fly?")
        case Order(first=first, second=second):
            owner = state.collected.get(first) or state.planned_by.get(first)
            if owner is not None:
                label = state.drones[owner].label
                add(f"Why did {label} get {first}?")
                add(f"What if {label} were lost?")
            add(f"What if {second} had priority {state.priority(second) + 5:g}?")
        case Allocation(target=target, drone=drone):
            if target is not None:
                others = [d for d in state.drones.values() if d.status != "lost"]
                owner = state.collected.get(target) or state.planned_by.get(target)
                alt = next((d for d in others if d.id not in (owner, drone)), None) or next(
                    (d for d in others if d.id != owner), None
                )
                if alt is not None and target not in state.collected:
                    add(f"What if {target} went to {alt.label}?")
                add(f"What if {target} had priority {state.priority(target) + 5:g}?")
            elif drone is not None and state.drones[drone].status != "lost":
                add(_budget_what_if(state.drones[drone]))
            add("Which drone uses the most fuel?")
        case Why() | OpenTargets() | Sams():
            if f.excluded is not None:
                add(f"What if {f.excluded[1]} were removed?")
                add(f"Why was {f.excluded[0]} excluded?")
            if f.left_out is not None:
                add(f"Why was {f.left_out} not visited?")
            add("Which targets were visited?")
        case Drones(drones=drones):
            d = state.drones[drones[0]]
            if f.pair is not None and f.pair[0] == d.label:
                add(f"Why did {d.label} visit {f.pair[1]} before {f.pair[2]}?")
            elif not d.planned_targets and not state.collected_by(d.id):
                add(f"Why did {d.label} not fly?")
            if d.status != "lost":
                add(f"What if {d.label} were lost?")
            add("Which drone has the most fuel margin?")
        case Compare(drones=drones):
            add("Which drone uses the most fuel?")
            if f.pair is not None:
                add(f"Why did {f.pair[0]} visit {f.pair[1]} before {f.pair[2]}?")
            if drones and state.drones[drones[0]].status != "lost":
                add(f"What if {state.drones[drones[0]].label} were lost?")
        case Points() | Totals() | Visited() | Status():
            add("Which targets are not visited?")
            add("Which drone uses the most fuel?")
            if f.idle is not None:
                add(f"Why did {f.idle.label} not fly?")
            elif f.pair is not None:
                add(f"Why did {f.pair[0]} visit {f.pair[1]} before {f.pair[2]}?")
            if f.tight is not None:
                add(_budget_what_if(f.tight))
    add("Which drone has the most fuel margin?")
    add("What is the status of the mission?")
    return out


def follow_ups(
    question: str, state: MissionState, *, intent: str = "question", whatif: Any | None = None
) -> list[str]:
    """Two or three next questions for the operator (see the module docstring)."""
    asked = " ".join(question.lower().split()).rstrip("?")
    seen: set[str] = set()
    out: list[str] = []
    for text in _candidates(question, state, intent, whatif):
        key = " ".join(text.lower().split()).rstrip("?")
        if key == asked or key in seen:
            continue
        seen.add(key)
        out.append(text)
        if len(out) == MAX_FOLLOW_UPS:
            break
    return out
