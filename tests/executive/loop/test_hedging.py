"""Hedging for value that arrives late: with ``Policy.spare_drones`` the first plan leaves
the drone it gives the fewest points parked, says so, and a change that brings value (a new
target, a drone lost, fuel lost) launches it; a SAM change does not."""

from __future__ import annotations

from executive.loop import Policy
from tests.executive.loop.test_safety import _events, _fly, line_mission

# D2 alone sees type B: the first plan gives it T3 (2 points), D1 T1 and T2 (10)
DRONES = {
    "1": {"fuelBudget": 200, "home_airport": "A1", "end_airport": "A2", "accessibleTargets": ["A"]},
    "2": {"fuelBudget": 200, "home_airport": "A2", "end_airport": "A2", "accessibleTargets": ["B"]},
}
TARGETS = [
    {"id": "T1", "x": 20, "y": 0, "priority": 5, "type": "A"},
    {"id": "T2", "x": 45, "y": 0, "priority": 5, "type": "A"},
    {"id": "T3", "x": 50, "y": 10, "priority": 2, "type": "B"},
]
NEW = {"t": 60, "op": "add_target", "id": "NEW1", "x": 60, "y": 25, "priority": 10, "type": "B"}
SAM = {"t": 60, "op": "add_sam", "id": "S1", "pos": [30.0, 30.0], "range": 3.0}


def _collected_by(sink) -> dict[str, str]:
    return {e.payload["target"]: e.payload["drone"] for e in _events(sink, "target_collected")}


def test_a_spare_stays_parked_and_a_new_target_launches_it():
    _, sink, report = _fly(
        line_mission(drones=DRONES, targets=TARGETS, timeline=[NEW]),
        policy=Policy(batch_iterations=300, spare_drones=1),
    )
    parked = [e.payload for e in _events(sink, "NOT_PLANNED")]
    assert len(parked) == 1 and "spare" in parked[0]["reason"]
    spare = parked[0]["drone"]
    released = _events(sink, "SPARES_RELEASED")
    assert [e.payload["drones"] for e in released] == [[spare]]
    assert released[0].payload["change"] == "add_target:NEW1"
    got = _collected_by(sink)
    assert spare == "2"
    assert got["NEW1"] == "2" and got["T3"] == "2"  # it flew for the value once it came
    assert {"T1", "T2"} <= set(got)
    assert report.outcome.lost == []


def test_a_sam_change_does_not_launch_the_spare_and_without_the_policy_none_is_kept():
    _, sink, _ = _fly(
        line_mission(drones=DRONES, targets=TARGETS, timeline=[SAM]),
        policy=Policy(batch_iterations=300, spare_drones=1),
    )
    assert len(_events(sink, "NOT_PLANNED")) == 1
    assert _events(sink, "SPARES_RELEASED") == []
    _, sink, _ = _fly(line_mission(drones=DRONES, targets=TARGETS, timeline=[NEW]))
    assert _events(sink, "NOT_PLANNED") == []


def test_a_target_that_appears_after_every_drone_landed_is_flown_for():
    # D1 lands at A2 after about 300 s with fuel to spare; NEW1 appears at 400 s. The
    # mission is not over while the timeline still has something to happen: D1 takes off
    # again from A2 for it and lands again.
    drones = {"1": {"fuelBudget": 200, "home_airport": "A1", "end_airport": "A2"}}
    late = {
        "t": 400,
        "op": "add_target",
        "id": "NEW1",
        "x": 60,
        "y": 15,
        "priority": 9,
        "type": "A",
    }
    _, sink, report = _fly(line_mission(drones=drones, timeline=[late]))
    landed = [e.tick for e in _events(sink, "drone_landed")]
    got = _collected_by(sink)
    assert got.get("NEW1") == "1"
    assert len(landed) == 2 and landed[0] < 400 * 20 < landed[1]
    assert report.outcome.drones["1"].status == "landed" and report.outcome.lost == []
