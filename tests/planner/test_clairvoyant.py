"""The clairvoyant's model of the timeline and its time-expanded evaluation."""

from __future__ import annotations

import pytest

from planner.clairvoyant import (
    clairvoyant_candidates,
    clairvoyant_scenario,
    evaluate,
    knowledge,
)
from planner.feasibility import plannable
from planner.mission import compile_mission
from planner.oracle import oracle_plan
from planner.scenario import parse_scenario


def _scenario(timeline, *, fuel=300.0, targets=None, airport=(0.0, 0.0)):
    return parse_scenario(
        {
            "environment": {
                "airports": [{"id": "A1", "x": airport[0], "y": airport[1]}],
                "targets": targets
                or [
                    {"id": "T1", "x": 10.0, "y": 0.0, "priority": 5, "type": "A"},
                    {"id": "T2", "x": 20.0, "y": 0.0, "priority": 3, "type": "A"},
                ],
                "sams": [{"id": "S1", "pos": [80.0, 80.0], "range": 5.0}],
            },
            "drone_configs": {
                "1": {"fuelBudget": fuel, "home_airport": "A1", "accessibleTargets": "ALL"},
                "2": {"fuelBudget": fuel, "home_airport": "A1", "accessibleTargets": "ALL"},
            },
            "sim": {"speed": 0.1},
            "timeline": timeline,
        }
    )


def test_the_timeline_becomes_versions_in_time_loss_times_and_fuel_caps():
    scenario = _scenario(
        [
            {"t": 50.0, "op": "move_target", "id": "T1", "x": 30.0, "y": 5.0},
            {"t": 60.0, "op": "set_priority", "id": "T2", "priority": 9},
            {"t": 80.0, "op": "remove_target", "id": "T2"},
            {
                "t": 100.0,
                "op": "add_target",
                "id": "N1",
                "x": 5.0,
                "y": 5.0,
                "priority": 7,
                "type": "A",
            },
            {"t": 200.0, "op": "disable_drone", "drone": "2"},
            {"t": 100.0, "op": "set_fuel", "drone": "1", "fuel": 20.0},
            {
                "t": 10.0,
                "op": "add_sam",
                "id": "P1",
                "pos": [40.0, 40.0],
                "range": 3.0,
                "hidden": True,
            },
        ]
    )
    known = knowledge(scenario)
    t1, t1_moved = known.versions["T1"], known.versions["T1_v1"]
    assert t1.windows == [(0.0, 50.0, 5.0)] and (t1_moved.x, t1_moved.y) == (30.0, 5.0)
    assert t1_moved.value_at(49.0) == 0 and t1_moved.value_at(50.0) == 5.0
    t2 = known.versions["T2"]  # re-prioritised in place: one node, two windows, then gone
    assert t2.windows == [(0.0, 60.0, 3.0), (60.0, 80.0, 9.0)] and t2.value_at(90.0) == 0
    assert known.versions["N1"].value_at(99.0) == 0 and known.versions["N1"].value_at(100.0) == 7
    assert known.lost_at == {"2": 200.0}
    assert known.cap["1"] == pytest.approx(0.1 * 100.0 + 20.0)  # flown by then, plus what is left
    assert known.cap["2"] == 300.0
    assert len(known.sams) == 2  # the hidden SAM is known from the start


def test_a_visit_counts_only_inside_its_window_and_before_the_loss():
    scenario = _scenario(
        [
            {
                "t": 150.0,
                "op": "add_target",
                "id": "N1",
                "x": 10.0,
                "y": 10.0,
                "priority": 7,
                "type": "A",
            },
            {"t": 150.0, "op": "disable_drone", "drone": "2"},
        ]
    )
    known = knowledge(scenario)
    mission = plannable(compile_mission(clairvoyant_scenario(scenario, known))).mission
    n = mission.index
    early = [n["A1"], n["N1"], n["A1"]]  # at 10 km / 0.1 km/s = 141 s: before it appears
    late = [n["A1"], n["T2"], n["N1"], n["A1"]]  # 20 + 14.1 km = 341 s: after
    assert evaluate(mission, known, {"1": early})[0] == 0
    assert evaluate(mission, known, {"1": late})[0] == 3 + 7
    # drone 2 is lost at 150 s: T1 at 100 s counts, T2 at 200 s does not
    value, counts = evaluate(mission, known, {"2": [n["A1"], n["T1"], n["T2"], n["A1"]]})
    assert value == 5 and counts["2"] == [True, False]


def test_the_clairvoyant_uses_a_drone_before_it_is_lost_where_full_knowledge_parks_it():
    scenario = _scenario(
        [{"t": 150.0, "op": "disable_drone", "drone": "2"}],
        fuel=25.0,
        airport=(50.0, 50.0),
        targets=[  # on either side of the airport: one round trip (20 km) each
            {"id": "T1", "x": 60.0, "y": 50.0, "priority": 5, "type": "A"},
            {"id": "T2", "x": 40.0, "y": 50.0, "priority": 3, "type": "A"},
        ],
    )
    oracle, _ = oracle_plan(scenario, iterations=200)
    best = clairvoyant_candidates(scenario, seeds=(0,), iterations=300)[0]
    assert oracle.total_points == 5  # drone 2 left out from t = 0
    assert best.value == 8  # drone 2 reaches a target at 100 s, before it is lost at 150 s
