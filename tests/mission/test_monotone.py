"""Replanning is worth it on the suites' missions where it used to lose to flying on, and
no drone runs dry: flown as ``isr eval`` flies them (mission.evaluation.reference.fly).

The missions are the ones bench/reference.py named before the fix: the first plan was
planned on the full fuel while every replan kept the 1 km reserve, so the plan in force,
rebased onto a cut, lost what it planned in its last kilometre and replanning scored below
flying on (harder-0023: 248 vs 256). And drones ran dry: flying on towards a SAM that had
moved onto their way (harder-0057, no replans), and planned down to 1 km when a SAM closed
the way home (harder-0026, every policy).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mission.evaluation.reference import fly
from planner.scenario import load_scenario

SUITES = Path(__file__).resolve().parents[2] / "scenarios" / "suites"


@pytest.mark.parametrize(
    "mission", ["harder/harder-0023.json", "harder/harder-0001.json", "standard/standard-0016.json"]
)
def test_auto_collects_at_least_what_flying_the_first_plan_on_does(mission):
    scenario = load_scenario(SUITES / mission)
    auto = fly(scenario, "auto")
    flown_on = fly(scenario, "no-replan")
    assert auto.points >= flown_on.points
    assert auto.fuel_outs == flown_on.fuel_outs == 0


@pytest.mark.parametrize(
    ("mission", "policy"),
    [("harder/harder-0057.json", "no-replan"), ("harder/harder-0026.json", "auto")],
)
def test_no_drone_runs_dry_when_a_sam_closes_its_way(mission, policy):
    flown = fly(load_scenario(SUITES / mission), policy)
    assert flown.fuel_outs == 0
    assert flown.lost_known == 0
    if policy == "no-replan":  # flying on, the SAM did close its way: the safety layer acted
        assert flown.forced
