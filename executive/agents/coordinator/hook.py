"""The coordinator as the executive's hook: words read against the known environment.

``make_coordinate(environment, drone_ids, collected)`` is the ``Executive(coordinate=...)``
hook: each call reads the environment known at that moment (a SAM detected since is a known
id) and the targets collected so far. A decision with errors carries no constraints, so a
command with an unknown id is not half-applied.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from executive.agents.coordinator.decide import coordinate
from planner.model import Environment

__all__ = ["coordinate_environment", "make_coordinate"]


def coordinate_environment(
    text: str, environment: Environment, drone_ids: Iterable[str], collected: Iterable[str] = ()
) -> dict[str, Any]:
    """``coordinate`` over a ``planner.model.Environment`` (its targets, SAMs, airports)."""
    return coordinate(
        text,
        environment.targets,
        drone_ids,
        known_sams=[s.id for s in environment.sams],
        airports=environment.airports,
        collected=collected,
    )


def make_coordinate(
    environment: Callable[[], Environment],
    drone_ids: Iterable[str],
    collected: Callable[[], Iterable[str]] = lambda: (),
) -> Callable[[str], dict[str, Any]]:
    """The ``Executive(coordinate=...)`` hook: words -> decision over the environment known
    at call time. A decision with errors carries no constraints (nothing half-applied)."""
    drones = [str(d) for d in drone_ids]

    def hook(text: str) -> dict[str, Any]:
        decision = coordinate_environment(text, environment(), drones, collected())
        if decision["errors"]:
            decision["constraints"] = {"moves": [], "forbidden": {}, "required_targets": []}
        return decision

    return hook
