"""The coordinator over what the mission knows: an environment, a scenario, a mission state,
and the verdict the executive applies.

``coordinate_environment(text, environment, drone_ids, collected, *, fleet, in_force,
preferences)`` reads the words against an environment (and, with ``fleet``, refuses the
impossible commands); ``coordinate_scenario`` against a scenario before take-off;
``coordinate_state`` against a ``MissionState`` (the fleet now, the constraints in force).
``verdict_of(decision)`` is a decision as the executive's loop applies it, an
``executive.contracts.CoordinatorVerdict``: a decision with errors carries no constraints, so
a command with an unknown id, or one that is refused, is not half-applied
(``agents.words.command.coordinate_live`` is the loop's ``Coordinate``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agents.coordinator.decide import coordinate
from agents.coordinator.fleet import DroneFacts, fleet_from_scenario, fleet_from_state
from agents.coordinator.schema import CoordinatorDecision, planner_constraints
from executive.contracts import CoordinatorVerdict
from planner.constraints import OperatorConstraints, moved_drones
from planner.model import Environment, Scenario

__all__ = [
    "coordinate_environment",
    "coordinate_scenario",
    "coordinate_state",
    "only_drones",
    "verdict_of",
]


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
) -> CoordinatorDecision:
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
) -> CoordinatorDecision:
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


def coordinate_state(text: str, state: Any) -> CoordinatorDecision:
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


def verdict_of(
    decision: CoordinatorDecision, allocation: Mapping[str, Iterable[str]] | None = None
) -> CoordinatorVerdict:
    """``decision`` as the executive's loop applies it: with errors, no constraints (nothing
    half-applied), the errors and the refusals; else the constraints the planner takes
    (``planner_constraints``) and the earlier orders replaced. With ``allocation`` (drone ->
    targets still to visit in the plan in force), a move that keeps the existing allocation
    names the only drones its round re-plans (``only_drones``)."""
    errors = tuple(decision.errors)
    constraints = OperatorConstraints() if errors else planner_constraints(decision)
    return CoordinatorVerdict(
        constraints=constraints,
        errors=errors,
        refused=tuple(decision.refused),
        replaced=tuple(decision.replaced),
        only_drones=only_drones(decision, allocation) if not errors else (),
    )


def only_drones(
    decision: CoordinatorDecision, allocation: Mapping[str, Iterable[str]] | None
) -> tuple[str, ...]:
    """The drones a move on the plan ``allocation`` re-plans (the others keep their routes),
    sorted; () for a full replan: no plan, words that are not only moves and swaps (a ban,
    a requirement, a priority rule or a reserve can change any drone's route), or the
    operator asking for one."""
    c = decision.constraints
    if not allocation or not decision.policy.use_existing_allocation or c.fuel_reserve:
        return ()
    return tuple(sorted(moved_drones(planner_constraints(decision).moves, allocation)))
