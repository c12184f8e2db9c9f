"""The bound above any policy: each relaxation valid on its own (above every clairvoyant
plan), the way home counted unless the drone is lost, and the path relaxation tighter than
the knapsack where collections chain."""

from __future__ import annotations

from planner.bound import knapsack_bound, path_bound, upper_bound
from planner.clairvoyant import clairvoyant_candidates
from planner.scenario import parse_scenario
from planner.scenario.generator import generate_mission
from tests.planner.missions import TIMELINE_SUITE
from tests.planner.test_clairvoyant import _scenario


def _small_suite():
    return [parse_scenario(generate_mission(TIMELINE_SUITE, i).scenario) for i in range(4)]


def test_each_relaxation_is_above_every_clairvoyant_plan_and_the_path_one_is_tighter():
    tighter = 0
    for scenario in _small_suite():
        knapsack, paths = knapsack_bound(scenario), path_bound(scenario)
        assert upper_bound(scenario) == min(knapsack, paths)
        for candidate in clairvoyant_candidates(scenario, seeds=(0, 1), iterations=300):
            assert candidate.value <= paths + 1e-6
            assert candidate.value <= knapsack + 1e-6
        tighter += paths < knapsack - 1e-6
    assert tighter >= 1  # the suite's fuel binds somewhere: chained legs cost more


def test_the_bound_covers_every_target_when_fuel_is_plentiful_and_none_when_it_is_not():
    assert upper_bound(_scenario([], fuel=1000.0)) == 8
    assert upper_bound(_scenario([], fuel=1.0)) == 0


def _far(timeline):
    # one target 10 km out; 15 km of fuel reach it but cannot bring a drone back
    target = [{"id": "T1", "x": 10.0, "y": 0.0, "priority": 5, "type": "A"}]
    return _scenario(timeline, fuel=15.0, targets=target)


def test_a_target_a_drone_cannot_come_back_from_is_out_unless_the_drone_is_lost_anyway():
    assert knapsack_bound(_far([])) == 0 and path_bound(_far([])) == 0
    # both drones lost at 150 s (15 km at 0.1 km/s): nothing to come back for
    lost = [{"t": 150.0, "op": "disable_drone", "drone": d} for d in ("1", "2")]
    assert knapsack_bound(_far(lost)) == 5 and path_bound(_far(lost)) == 5
