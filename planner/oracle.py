"""The oracle's scenario: the mission as it would be planned with full knowledge of the
timeline at the start — every scripted SAM known (hidden ones too), every scripted target
present, moves and priorities as they will be, drones that will be disabled left out. A
reference to compare replanning with, not something a real operator could fly."""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner.edits import (
    AddSam,
    AddTarget,
    DisableDrone,
    MoveSam,
    MoveTarget,
    RemoveSam,
    RemoveTarget,
    SetPriority,
)
from planner.model import Scenario, Solution

if TYPE_CHECKING:
    from planner.mission import Mission

__all__ = ["oracle_plan", "oracle_scenario"]


def oracle_scenario(scenario: Scenario) -> Scenario:
    """``scenario`` as it will be: the timeline's targets, SAMs (hidden ones known) and lost
    drones applied up front, and no timeline left."""
    data = scenario.model_dump(mode="json", by_alias=True)
    env = data["environment"]
    targets = {t["id"]: t for t in env["targets"]}
    sams = {s["id"]: s for s in env["sams"]}
    for edit in scenario.timeline:
        match edit:
            case AddTarget():
                targets[edit.id] = {
                    "id": edit.id,
                    "x": edit.x,
                    "y": edit.y,
                    "priority": edit.priority,
                    "type": edit.type,
                }
            case RemoveTarget():
                targets.pop(edit.id, None)
            case MoveTarget() if edit.id in targets:
                targets[edit.id].update(x=edit.x, y=edit.y)
            case SetPriority() if edit.id in targets:
                targets[edit.id]["priority"] = edit.priority
            case AddSam():
                sams[edit.id] = {"id": edit.id, "pos": list(edit.pos), "range": edit.range}
            case RemoveSam():
                sams.pop(edit.id, None)
            case MoveSam() if edit.id in sams:
                sams[edit.id]["pos"] = list(edit.pos)
                if edit.range is not None:
                    sams[edit.id]["range"] = edit.range
            case DisableDrone() if edit.drone in data["drone_configs"]:
                data["drone_configs"][edit.drone]["enabled"] = False
            case _:
                pass  # reveals (every SAM is known here), fuel changes, unknown ids
    env["targets"] = list(targets.values())
    env["sams"] = list(sams.values())
    data["timeline"] = []
    return Scenario.model_validate(data)


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
