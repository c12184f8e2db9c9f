"""The mission as agents read it: every drone's eligible targets, listed or, for a swarm's
drone, described by sensor type without losing what it may not visit."""

from __future__ import annotations

import dataclasses

from agents.context import mission_context
from planner.mission import compile_mission
from planner.scenario import parse_scenario


def _scenario(targets: int):
    return parse_scenario(
        {
            "environment": {
                "airports": [{"id": "A1", "x": 0, "y": 0}],
                "targets": [
                    {
                        "id": f"T{k}",
                        "x": k % 10,
                        "y": k // 10,
                        "priority": 1,
                        "type": "a" if k % 2 else "b",
                    }
                    for k in range(targets)
                ],
                "sams": [],
            },
            "drone_configs": {
                "1": {"fuelBudget": 500.0, "home_airport": "A1", "accessibleTargets": ["a"]},
                "2": {"fuelBudget": 500.0, "home_airport": "A1", "accessibleTargets": "ALL"},
            },
        }
    )


def _line(text: str, drone: int) -> str:
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith(f"D{drone}:"))
    return lines[at + 1]


def test_a_few_eligible_targets_are_listed_one_by_one():
    text = mission_context(compile_mission(_scenario(6)))
    assert _line(text, 1).strip() == "ELIGIBLE TARGETS: T1, T3, T5"
    assert _line(text, 2).strip() == "ELIGIBLE TARGETS: T0, T1, T2, T3, T4, T5"


def test_a_swarms_drone_is_described_by_type_with_the_targets_it_may_not_visit():
    mission = compile_mission(_scenario(400))
    text = mission_context(mission)
    assert _line(text, 1).strip() == "ELIGIBLE TARGETS: every target of type a (200 targets)"
    assert _line(text, 2).strip() == "ELIGIBLE TARGETS: every target of type a, b (400 targets)"
    # a constraint takes some away: they are named (the first 60, then how many more)
    spec = mission.drones[1]
    taken = {mission.index[f"T{k}"] for k in range(100)}
    narrowed = dataclasses.replace(
        mission,
        drones=[
            mission.drones[0],
            dataclasses.replace(spec, eligible=tuple(n for n in spec.eligible if n not in taken)),
        ],
    )
    line = _line(mission_context(narrowed), 2).strip()
    assert line.startswith(
        "ELIGIBLE TARGETS: every target of type a, b (300 targets) except T0, T1,"
    )
    assert line.endswith(", T59 and 40 more")


def test_drones_of_one_sensor_fit_share_their_line_and_a_narrowed_one_keeps_its_own():
    # the line is made once per eligible tuple (compile_mission shares one per sensor fit):
    # a drone with the same sensors but a constraint's narrower tuple must not inherit it
    mission = compile_mission(_scenario(400))
    wide = mission.drones[1]
    same = dataclasses.replace(wide, id="3")
    taken = {mission.index["T0"]}
    fewer = dataclasses.replace(
        wide, id="4", eligible=tuple(n for n in wide.eligible if n not in taken)
    )
    equal = dataclasses.replace(wide, id="5", eligible=tuple(list(wide.eligible)))
    text = mission_context(
        dataclasses.replace(mission, drones=[*mission.drones, same, fewer, equal])
    )
    full = "ELIGIBLE TARGETS: every target of type a, b (400 targets)"
    assert [_line(text, d).strip() for d in (2, 3, 5)] == [full] * 3
    assert _line(text, 4).strip() == (
        "ELIGIBLE TARGETS: every target of type a, b (399 targets) except T0"
    )
