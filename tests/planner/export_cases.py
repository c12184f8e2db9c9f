"""Planned missions to export, placed where exports go wrong: the demo around Zurich, in the
southern and eastern hemispheres, near the pole, astride the antimeridian, and a wide
geographic mission with SAMs thousands of km from its origin. Shared by the export tests
and ``bench/exports_loaders.py``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache

from planner.geo import GeoOrigin, LocalFrame
from planner.interop import mission_frame
from planner.mission import compile_mission
from planner.model import Scenario, Solution
from planner.planning import plan_mission
from planner.scenario_io import load_scenario, parse_scenario
from tests.conftest import SCENARIOS

__all__ = ["WIDE_MISSION", "ExportCase", "export_cases"]

# The demo placed by an --origin, at each of these places.
PLACES = {
    "zurich": (47.397742, 8.545594),
    "sydney": (-33.8688, 151.2093),
    "tromso": (69.6492, 18.9553),
    "antimeridian": (-16.5, 179.67),  # Fiji: the demo crosses 180 degrees, SAM1 astride it
    "quito": (-0.1807, -78.4678),
}

# A geographic mission 6,000 km across: SAMs up to 2,800 km out, every route going round one.
WIDE_MISSION = {
    "geo": {"lat0": 40.0, "lon0": -100.0},
    "environment": {
        "airports": [
            {"id": "A1", "x": -3000, "y": 0},
            {"id": "A2", "x": 2800, "y": 300},
            {"id": "A3", "x": 0, "y": -1500},
        ],
        "targets": [
            {"id": "T1", "x": -2600, "y": 40, "priority": 5, "type": "A"},
            {"id": "T2", "x": 2600, "y": 80, "priority": 5, "type": "A"},
            {"id": "T3", "x": 300, "y": 2900, "priority": 4, "type": "A"},
            {"id": "T4", "x": -1200, "y": -2700, "priority": 3, "type": "A"},
        ],
        "sams": [
            {"id": "S1", "pos": [-2800, 20], "range": 60},
            {"id": "S2", "pos": [2700, 200], "range": 40},
            {"id": "S3", "pos": [200, 1500], "range": 80},
            {"id": "S4", "pos": [-1100, -2580], "range": 30},
        ],
    },
    "drone_configs": {
        "1": {"fuelBudget": 2500, "home_airport": "A1"},
        "2": {"fuelBudget": 2500, "home_airport": "A2"},
        "3": {"fuelBudget": 9500, "home_airport": "A3"},
        "4": {"fuelBudget": 4000, "home_airport": "A3"},
    },
}


@dataclass(frozen=True)
class ExportCase:
    """A planned mission and the frame its exports are written in."""

    name: str
    scenario: Scenario
    solution: Solution
    frame: LocalFrame


def _plan(scenario: Scenario, iterations: int) -> Solution:
    return plan_mission(compile_mission(scenario), "team", iterations=iterations, seed=0).solution


@cache
def export_cases(iterations: int = 300) -> tuple[ExportCase, ...]:
    """The demo at each of ``PLACES`` and the wide geographic mission, planned."""
    demo = load_scenario(SCENARIOS / "demo.json")
    demo_plan = _plan(demo, iterations)
    cases = [
        ExportCase(name, demo, demo_plan, mission_frame(demo, GeoOrigin(lat0=lat, lon0=lon)))
        for name, (lat, lon) in PLACES.items()
    ]
    wide = parse_scenario(json.dumps(WIDE_MISSION))
    cases.append(ExportCase("wide", wide, _plan(wide, iterations), mission_frame(wide)))
    return tuple(cases)
