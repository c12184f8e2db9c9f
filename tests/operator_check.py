"""An independent checker of a plan against what an operator said.

It reads only the posted scenario's JSON and the answered Solution's JSON (route ids, the
flown polyline) and an ``Expect`` written by hand next to the sentence: never the
coordinator's decision, never the planner's own checks. Used by the tests of the operator's
constraints and by ``bench/operator_sentences.py``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Expect", "check_plan"]

Kind = Literal[
    "forbid",  # ``target`` not visited by ``drone`` (None: by any drone)
    "require",  # ``target`` visited by some drone
    "move",  # ``target`` visited by ``drone``; other drones (but its old one) keep their routes
    "min_priority",  # every target ``drone`` (None: any) visits has priority >= ``value``
    "not_priority",  # no target ``drone`` (None: any) visits has priority == ``value``
    "reserve",  # ``drone`` (None: each) flies at most its budget - ``value`` km
    "keep_routes",  # every route is the existing one
]


@dataclass(frozen=True)
class Expect:
    """What one constraint asks of the plan."""

    kind: Kind
    target: str | None = None
    drone: str | None = None  # the scenario's spelling: "1"
    value: float | None = None


def _visits(route: list[str], scenario: dict[str, Any]) -> list[str]:
    targets = {t["id"] for t in scenario["environment"]["targets"]}
    return [x for x in route if x in targets]


def _length(points: list[list[float]]) -> float:
    return sum(math.dist(p, q) for p, q in zip(points, points[1:]))


def _flown(route: dict[str, Any], scenario: dict[str, Any]) -> float:
    """The route's length from its polyline (or, without one, straight legs: a lower bound)."""
    if route.get("path"):
        return _length(route["path"])
    where = {a["id"]: (a["x"], a["y"]) for a in scenario["environment"]["airports"]}
    where |= {t["id"]: (t["x"], t["y"]) for t in scenario["environment"]["targets"]}
    return _length([list(where[x]) for x in route["route"] if x in where])


def check_plan(
    expect: Expect,
    scenario: dict[str, Any],
    solution: dict[str, Any],
    existing: dict[str, Any] | None = None,
) -> list[str]:
    """What ``solution`` does against ``expect`` (empty: honoured)."""
    routes = {d: r["route"] for d, r in solution["routes"].items()}
    priority = {t["id"]: float(t["priority"]) for t in scenario["environment"]["targets"]}
    scope = [expect.drone] if expect.drone is not None else list(routes)
    out: list[str] = []
    if expect.kind == "forbid":
        out += [f"{d} visits {expect.target}" for d in scope if expect.target in routes.get(d, [])]
    elif expect.kind == "require":
        if not any(expect.target in r for r in routes.values()):
            out.append(f"{expect.target} is not visited")
    elif expect.kind == "move":
        assert expect.drone is not None and existing is not None
        if expect.target not in routes.get(expect.drone, []):
            out.append(f"{expect.target} is not on {expect.drone}")
        before = {d: r["route"] for d, r in existing["routes"].items()}
        old = next((d for d, r in before.items() if expect.target in r), None)
        for d, r in routes.items():
            if d not in (expect.drone, old) and r != before.get(d):
                out.append(f"{d} changed though the move does not name it: {before.get(d)} -> {r}")
    elif expect.kind in ("min_priority", "not_priority"):
        assert expect.value is not None
        for d in scope:
            for t in _visits(routes.get(d, []), scenario):
                low = expect.kind == "min_priority" and priority[t] < expect.value
                equal = expect.kind == "not_priority" and priority[t] == expect.value
                if low or equal:
                    out.append(f"{d} visits {t} of priority {priority[t]:g}")
    elif expect.kind == "reserve":
        assert expect.value is not None
        for d in scope:
            cfg = scenario["drone_configs"][d]
            budget = float(cfg.get("fuelBudget", cfg.get("fuel_budget")))
            flown = _flown(solution["routes"][d], scenario)
            if flown > budget - expect.value + 1e-3:
                out.append(f"{d} flies {flown:.1f} km of {budget:g} (reserve {expect.value:g})")
    elif expect.kind == "keep_routes":
        assert existing is not None
        before = {d: r["route"] for d, r in existing["routes"].items()}
        out += [
            f"{d} changed: {before.get(d)} -> {r}" for d, r in routes.items() if r != before.get(d)
        ]
    return out
