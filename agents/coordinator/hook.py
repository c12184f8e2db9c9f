"""The coordinator over what the mission knows: an environment, a scenario, a mission state,
and the executive's hook.

``coordinate_environment(text, environment, drone_ids, collected, *, fleet, in_force,
preferences)`` reads the words against an environment (and, with ``fleet``, refuses the
impossible commands); ``coordinate_scenario`` against a scenario before take-off;
``coordinate_state`` against a ``MissionState`` (the fleet now, the constraints in force).
``make_coordinate(environment, drone_ids, collected, fleet=..., in_force=...)`` is the
``Executive(coordinate=...)`` hook: each call reads the environment known at that moment (a
SAM detected since is a known id), the targets collected so far and, when given, the fleet and
the constraints in force. A decision with errors carries no constraints, so a command with an
unknown id, or one that is refused, is not half-applied.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from agents.coordinator.decide import coordinate
from agents.coordinator.fleet import DroneFacts, fleet_from_scenario, fleet_from_state
from planner.model import Environment, Scenario

__all__ = [
    "coordinate_environment",
    "coordinate_scenario",
    "coordinate_state",
    "make_coordinate",
]

_EMPTY: dict[str, Any] = {
    "moves": [],
    "forbidden": {},
    "required_targets": [],
    "forbidden_targets": [],
    "fixed_endpoints": {},
}


def coordinate_environment(
    text: str,
    environment: Environment,
    drone_ids: Iterable[str],
    collected: Iterable[str] | Mapping[str, str] = (),
    *,
    fleet: Mapping[str, DroneFacts] | None = None,
    in_force: Mapping[str, Any] | None = None,
    preferences: Mapping[str, Any] | None = None,
    planned: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """``coordinate`` over a ``planner.model.Environment`` (its targets, SAMs, airports)."""
    return coordinate(
        text,
        environment.targets,
        drone_ids,
        known_sams=[s.id for s in environment.sams],
        airports=environment.airports,
        collected=collected,
        environment=environment,
        fleet=fleet,
        in_force=in_force,
        preferences=preferences,
        planned=planned,
    )


def coordinate_scenario(
    text: str,
    scenario: Scenario,
    preferences: Mapping[str, Any] | None = None,
    allocation: Mapping[str, Iterable[str]] | None = None,
) -> dict[str, Any]:
    """The words read against a mission before take-off (every drone at its start, its
    whole budget left): what ``POST /api/agent_solve`` asks. ``allocation`` (drone ->
    targets) is the plan the words are about, if any."""
    planned = None
    if allocation is not None:
        planned = {t: d for d, ts in allocation.items() for t in ts}
    return coordinate_environment(
        text,
        scenario.environment,
        list(scenario.drone_configs),
        fleet=fleet_from_scenario(scenario),
        preferences=preferences,
        planned=planned,
    )


def coordinate_state(text: str, state: Any) -> dict[str, Any]:
    """The words read against a ``MissionState``: its known environment, its drones now (a
    command they cannot carry out is refused), the targets collected and the constraints in
    force (a command says which earlier order it replaces)."""
    return coordinate_environment(
        text,
        state.environment,
        list(state.drones),
        dict(state.collected),
        fleet=fleet_from_state(state),
        in_force=state.constraints,
        planned=state.planned_by if state.plan is not None else None,
    )


def make_coordinate(
    environment: Callable[[], Environment],
    drone_ids: Iterable[str],
    collected: Callable[[], Iterable[str] | Mapping[str, str]] = lambda: (),
    *,
    fleet: Callable[[], Mapping[str, DroneFacts]] | None = None,
    in_force: Callable[[], Mapping[str, Any]] | None = None,
) -> Callable[[str], dict[str, Any]]:
    """The ``Executive(coordinate=...)`` hook: words -> decision over the environment known
    at call time. A decision with errors carries no constraints (nothing half-applied)."""
    drones = [str(d) for d in drone_ids]

    def hook(text: str) -> dict[str, Any]:
        decision = coordinate_environment(
            text,
            environment(),
            drones,
            collected(),
            fleet=fleet() if fleet is not None else None,
            in_force=in_force() if in_force is not None else None,
        )
        if decision["errors"]:
            decision["constraints"] = dict(_EMPTY)
        return decision

    return hook
