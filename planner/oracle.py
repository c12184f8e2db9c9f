"""Full knowledge at t0 (the ``full-knowledge-t0`` policy of ``isr eval``, formerly "the
oracle"): the mission as it would be planned with the timeline known at the start and taken
to hold from the start — every scripted SAM known (hidden ones too), every scripted target
present, moves and priorities as they will be, drones that will be disabled left out.

A comparison, **not an upper bound**: it ignores *when* things happen (a drone lost late is
parked from t = 0 and forfeits what it could collect before; a target that appears late may
be planned before it exists, one that moves late is planned only where it ends up), it
ignores fuel changes, and it never replans. Policies can beat it; the reference to measure
them against is the clairvoyant's (``planner.clairvoyant``), which knows each event *and its
time*."""

from __future__ import annotations

from typing import TYPE_CHECKING, assert_never

from planner.changes import ScenarioPicture, apply_edit
from planner.edits import (
    AddSam,
    AddTarget,
    DisableDrone,
    MoveSam,
    MoveTarget,
    RemoveSam,
    RemoveTarget,
    RevealSam,
    SetFuel,
    SetPriority,
)
from planner.model import Scenario, Solution

if TYPE_CHECKING:
    from planner.mission import Mission

__all__ = ["oracle_plan", "oracle_scenario"]


def oracle_scenario(scenario: Scenario) -> Scenario:
    """``scenario`` as it will be: the timeline's targets, SAMs (hidden ones known) and lost
    drones applied up front, and no timeline left."""
    picture = ScenarioPicture(scenario)
    for edit in scenario.timeline:
        match edit:
            case (
                AddTarget()
                | RemoveTarget()
                | MoveTarget()
                | SetPriority()
                | AddSam()
                | RemoveSam()
                | MoveSam()
                | RevealSam()  # every SAM is known here anyway
                | DisableDrone()
            ):
                apply_edit(picture, edit)  # an id that names nothing changes nothing
            case SetFuel():
                pass  # the fuel left at some time is no budget at the start
            case _:  # pragma: no cover - the union is closed
                assert_never(edit)
    return picture.scenario(hidden_known=True)


def oracle_plan(
    scenario: Scenario, *, iterations: int = 3000, seed: int = 0
) -> tuple[Solution, Mission]:
    """(solution, mission): the plan made once on the whole timeline, and the mission it
    was made on (the executive flies it with that mission's geometry)."""
    from planner.mission import compile_mission
    from planner.planning import plan_mission

    mission = compile_mission(oracle_scenario(scenario))
    result = plan_mission(mission, iterations=iterations, seconds=None, seed=seed)
    # the mission it was planned on: narrowed to the drones that can be planned
    return result.solution, result.mission or mission
