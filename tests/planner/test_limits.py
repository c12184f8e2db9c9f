"""Tests for planner.limits' budgets: the swarm the limits are sized for loads at the door,
and a mission past a budget is refused with a message naming that budget."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from planner.errors import PlannerError
from planner.limits import (
    COMPILE_BUDGET_S,
    MAX_COORD_KM,
    MAX_NODES,
    SWARM_DRONES,
    SWARM_SAMS,
    SWARM_TARGETS,
    TABLE_BUDGET_BYTES,
    compile_estimate,
    compile_problem,
)
from planner.mission import compile_mission
from planner.model import Environment
from planner.scenario import ScenarioError, parse_scenario
from planner.scenario.limits import budget_problems


def _mission(
    targets: int, sams: int, drones: int, *, half_width: float, sam_range: tuple[float, float]
) -> dict[str, Any]:
    """Everything uniform over a square, nothing inside a SAM, drones at 50 airports."""
    rng = random.Random(5)
    sam_list = [
        {
            "id": f"S{i}",
            "pos": [rng.uniform(-half_width, half_width), rng.uniform(-half_width, half_width)],
            "range": rng.uniform(*sam_range),
        }
        for i in range(sams)
    ]

    def free() -> tuple[float, float]:
        while True:
            x, y = rng.uniform(-half_width, half_width), rng.uniform(-half_width, half_width)
            if all(
                math.hypot(x - s["pos"][0], y - s["pos"][1]) > s["range"] * 1.05 for s in sam_list
            ):
                return x, y

    airports = [dict(zip(("x", "y"), free(), strict=True), id=f"A{i}") for i in range(50)]
    return {
        "environment": {
            "airports": airports,
            "targets": [
                {"id": f"T{i}", "x": x, "y": y, "priority": 1 + i % 10, "type": "A"}
                for i, (x, y) in enumerate(free() for _ in range(targets))
            ],
            "sams": sam_list,
        },
        "drone_configs": {
            str(k): {"fuelBudget": 10_000.0, "home_airport": f"A{k % 50}"} for k in range(drones)
        },
    }


def test_the_swarm_the_limits_are_sized_for_loads_at_the_door():
    data = _mission(
        SWARM_TARGETS, SWARM_SAMS, SWARM_DRONES, half_width=MAX_COORD_KM, sam_range=(100, 1000)
    )
    scenario = parse_scenario(data)
    assert len(scenario.drone_configs) == SWARM_DRONES
    assert budget_problems(scenario) == []


def test_a_table_past_its_memory_budget_is_refused_naming_it():
    why = compile_problem(MAX_NODES + 1, 0, 0)
    assert why is not None and "TABLE_BUDGET_BYTES" in why
    assert compile_problem(MAX_NODES, 0, 0) is None
    assert 8 * MAX_NODES**2 <= TABLE_BUDGET_BYTES < 8 * (MAX_NODES + 1) ** 2


def test_a_compile_past_its_time_budget_is_refused_naming_it():
    # 5,000 targets among 500 tiny SAMs far apart: nearly every bitangent is clear, the
    # tangent graph has ~500,000 nodes and each of 5,050 rows would search all of them.
    data = _mission(SWARM_TARGETS, SWARM_SAMS, 10, half_width=MAX_COORD_KM, sam_range=(0.1, 0.5))
    with pytest.raises(ScenarioError) as refused:
        parse_scenario(data)
    text = str(refused.value)
    assert "$.environment.targets" in text and "COMPILE_BUDGET_S" in text
    assert f"{COMPILE_BUDGET_S:g} s" in text


def test_compile_mission_refuses_what_the_door_would():
    # The executive's rebuilt scenarios are not counted at the door: the compile checks too.
    small = parse_scenario(_mission(10, 2, 2, half_width=100.0, sam_range=(1, 5)))
    assert compile_mission(small).dist.shape == (60, 60)
    data = _mission(SWARM_TARGETS, SWARM_SAMS, 2, half_width=MAX_COORD_KM, sam_range=(0.1, 0.5))
    big = small.model_copy(update={"environment": Environment.model_validate(data["environment"])})
    with pytest.raises(PlannerError, match="COMPILE_BUDGET_S"):
        compile_mission(big)


def test_the_estimate_grows_with_what_a_compile_does():
    assert compile_estimate(100, 10, 200) < compile_estimate(1000, 10, 200)
    assert compile_estimate(1000, 10, 200) < compile_estimate(1000, 10, 20_000)
    assert compile_estimate(1000, 10, 200) < compile_estimate(1000, 500, 200)
