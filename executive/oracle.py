"""The oracle's scenario: the mission as it would be planned with full knowledge of the
timeline at the start — every scripted SAM known (hidden ones too), every scripted target
present, moves and priorities as they will be, drones that will be disabled left out. A
reference to compare replanning with, not something a real operator could fly."""

from __future__ import annotations

from planner.model import Scenario

__all__ = ["oracle_scenario"]


def oracle_scenario(scenario: Scenario) -> Scenario:
    data = scenario.model_dump(mode="json", by_alias=True)
    env = data["environment"]
    targets = {t["id"]: t for t in env["targets"]}
    sams = {s["id"]: s for s in env["sams"]}
    for edit in scenario.timeline:
        op = edit.op
        if op == "add_target":
            targets[edit.id] = {"id": edit.id, "x": edit.x, "y": edit.y,
                                "priority": edit.priority, "type": edit.type}
        elif op == "remove_target":
            targets.pop(edit.id, None)
        elif op == "move_target" and edit.id in targets:
            targets[edit.id].update(x=edit.x, y=edit.y)
        elif op == "set_priority" and edit.id in targets:
            targets[edit.id]["priority"] = edit.priority
        elif op == "add_sam":
            sams[edit.id] = {"id": edit.id, "pos": list(edit.pos), "range": edit.range}
        elif op == "remove_sam":
            sams.pop(edit.id, None)
        elif op == "move_sam" and edit.id in sams:
            sams[edit.id]["pos"] = list(edit.pos)
            if getattr(edit, "range", None) is not None:
                sams[edit.id]["range"] = edit.range
        elif op == "disable_drone" and edit.drone in data["drone_configs"]:
            data["drone_configs"][edit.drone]["enabled"] = False
    env["targets"] = list(targets.values())
    env["sams"] = list(sams.values())
    data["timeline"] = []
    return Scenario.model_validate(data)


def oracle_plan(scenario: Scenario, *, iterations: int = 3000, seed: int = 0):
    """(solution, mission): the plan made once on the whole timeline, and the mission it
    was made on (the executive flies it with that mission's geometry)."""
    from planner.mission import compile_mission
    from planner.planning import plan_mission

    mission = compile_mission(oracle_scenario(scenario))
    return plan_mission(mission, iterations=iterations, seconds=None, seed=seed).solution, mission
