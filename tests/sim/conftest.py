"""Small worlds for the simulation tests, built in code (no IO) and checked like files."""

from __future__ import annotations

import pytest

from planner.mission import compile_mission
from planner.scenario import load_scenario, parse_scenario
from tests.conftest import SCENARIOS

DRONE = {"fuelBudget": 100.0, "home_airport": "A1", "accessibleTargets": "ALL"}


def line_world(*, sams=(), targets=(), timeline=(), sim=None, drones=None, airports=None):
    """Airports A1 (0, 0) and A2 (40, 0); one drone "1" parked at A1 unless told otherwise.
    At the default 0.1 km/s and 20 Hz a drone flies 0.005 km per tick."""
    return parse_scenario(
        {
            "environment": {
                "airports": airports
                or [{"id": "A1", "x": 0, "y": 0}, {"id": "A2", "x": 40, "y": 0}],
                "targets": list(targets),
                "sams": list(sams),
            },
            "drone_configs": drones or {"1": dict(DRONE)},
            "sim": sim or {},
            "timeline": list(timeline),
        }
    )


def efficient_plan(scenario):
    """A deterministic planner plan (allocation, exact routing, post-optimisation)."""
    from planner.planning import plan_mission

    mission = compile_mission(scenario)
    return mission, plan_mission(mission, "efficient").solution


@pytest.fixture
def demo():
    return load_scenario(SCENARIOS / "demo.json")


@pytest.fixture
def scenario_file():
    return lambda name: load_scenario(SCENARIOS / f"{name}.json")
