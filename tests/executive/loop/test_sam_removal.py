"""A known SAM removed or shrunk replans at once when it frees a target (policy trigger
``sam_cleared``), and not at all when it frees nothing, against the real sim and planner.

The demo's SAM1 ((35, 45), 12 km) covers T7 ((37, 46), type D, priority 8): the first plan
leaves T7 out. Drone 3 senses every type.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from executive.contracts import EventRecord
from executive.loop import Executive
from executive.loop.options import LoopOptions
from executive.loop.policy import TRIGGERS, Policy
from executive.planning.algorithmic import AlgorithmicPlanner
from executive.traces.sinks import ListSink
from planner.scenario import parse_scenario
from tests.conftest import SCENARIOS

AT_S = 150  # mission seconds: every drone is in the air, far from its end


def _run(timeline: list[dict], *, sams: list[dict] | None = None, policy: Policy | None = None):
    data = json.loads((SCENARIOS / "demo.json").read_text())
    data["environment"]["sams"] += sams or []
    data["timeline"] = timeline
    scenario = parse_scenario(data)
    sink = ListSink()
    executive = Executive(
        scenario,
        planner=AlgorithmicPlanner(iterations=2000),
        sink=sink,
        options=LoopOptions(policy=policy or Policy()),
    )
    report = asyncio.run(executive.run(None))
    return sink, report


def _events(sink: ListSink, kind: str) -> list[EventRecord]:
    return [r for r in sink.of(EventRecord) if r.kind == kind]


@pytest.mark.parametrize(
    ("edit", "trigger"),
    [
        ({"op": "remove_sam", "id": "SAM1"}, "remove_sam:SAM1"),
        ({"op": "move_sam", "id": "SAM1", "pos": [35, 45], "range": 1}, "move_sam:SAM1"),
    ],
    ids=["removed", "shrunk"],
)
def test_a_sam_that_covered_a_target_replans_at_once_and_the_target_is_taken(edit, trigger):
    sink, report = _run([{"t": AT_S, **edit}])
    applied = [e for e in _events(sink, "edit_applied") if e.payload["edit"]["op"] == edit["op"]]
    assert len(applied) == 1
    tick = applied[0].tick
    cleared = _events(sink, "SAM_CLEARED")
    assert [(e.tick, e.payload["change"]) for e in cleared] == [(tick + 1, trigger)]
    assert "T7" in cleared[0].payload["reason"]
    # The round starts at the next tick boundary, named by the trigger.
    rounds = [r for r in report.replans if r.trigger == trigger]
    assert len(rounds) == 1 and rounds[0].asked_tick == tick + 1, report.replans
    assert rounds[0].status == "committed"
    cuts = [e for e in _events(sink, "CUT_AND_FREEZE") if e.payload["trigger"] == trigger]
    assert [e.tick for e in cuts] == [tick + 1]
    commit = next(
        e
        for e in _events(sink, "COMMIT_PLAN")
        if e.tick >= tick and any("T7" in r for r in e.payload.get("routes", {}).values())
    )
    assert commit.tick < tick + 40  # planned within two seconds of mission time
    collected = {t for d in report.outcome.drones.values() for t in d.collected}
    assert "T7" in collected


def test_without_the_trigger_the_freed_target_waits():
    """The same removal with ``sam_cleared`` off the policy: no round, T7 never taken (the
    demo has no other change that would replan)."""
    off = tuple(t for t in TRIGGERS if t != "sam_cleared")
    sink, report = _run(
        [{"t": AT_S, "op": "remove_sam", "id": "SAM1"}], policy=Policy(triggers=off)
    )
    assert [r.trigger for r in report.replans] == []
    assert [e.payload["change"] for e in _events(sink, "CONTINUE") if "change" in e.payload] == [
        "remove_sam:SAM1"
    ]
    collected = {t for d in report.outcome.drones.values() for t in d.collected}
    assert "T7" not in collected


def test_removing_a_sam_that_frees_nothing_does_not_replan():
    far = {"id": "SAM9", "pos": [95, 3], "range": 1.5}  # no target, no path near it
    sink, report = _run([{"t": AT_S, "op": "remove_sam", "id": "SAM9"}], sams=[far])
    assert report.replans == []
    assert not _events(sink, "SAM_CLEARED")
    notes = [e.payload for e in _events(sink, "CONTINUE") if e.payload.get("change")]
    assert notes == [{"change": "remove_sam:SAM9", "reason": "frees nothing planned"}]


def test_a_sam_that_grows_over_its_old_disk_frees_nothing():
    sink, report = _run([{"t": AT_S, "op": "move_sam", "id": "SAM1", "pos": [35, 45], "range": 13}])
    assert not _events(sink, "SAM_CLEARED")
    assert [r.trigger for r in report.replans if "SAM1" in r.trigger] in ([], ["move_sam:SAM1"])


def _corridor(timeline: list[dict], policy: Policy | None = None):
    """One drone from A1 to T1 and back, around SAM S1 sitting on the straight line."""
    data = {
        "environment": {
            "airports": [{"id": "A1", "x": 0, "y": 0}],
            "targets": [{"id": "T1", "x": 40, "y": 0, "priority": 5, "type": "A"}],
            "sams": [{"id": "S1", "pos": [20, 0], "range": 5}],
        },
        "drone_configs": {
            "1": {
                "enabled": True,
                "fuelBudget": 120,
                "home_airport": "A1",
                "start_airport": "A1",
                "end_airport": "A1",
                "accessibleTargets": "ALL",
            }
        },
        "sim": {"tick_hz": 20, "seed": 0, "speed": 0.1, "sensor_range": 10},
        "timeline": timeline,
    }
    sink = ListSink()
    executive = Executive(
        parse_scenario(data),
        planner=AlgorithmicPlanner(iterations=500),
        sink=sink,
        options=LoopOptions(policy=policy or Policy()),
    )
    return sink, asyncio.run(executive.run(None))


def test_a_sam_that_bent_a_path_replans_for_the_shorter_way():
    removal = [{"t": 30, "op": "remove_sam", "id": "S1"}]  # the drone is 3 km out
    sink, report = _corridor(removal)
    cleared = _events(sink, "SAM_CLEARED")
    assert [e.payload["reason"] for e in cleared] == ["frees the path of drone 1"]
    assert [r.trigger for r in report.replans] == ["remove_sam:S1"]
    off = tuple(t for t in TRIGGERS if t != "sam_cleared")
    _, blind = _corridor(removal, Policy(triggers=off))
    flown = report.outcome.drones["1"].distance_flown
    around = blind.outcome.drones["1"].distance_flown
    assert report.outcome.drones["1"].collected == ["T1"] == blind.outcome.drones["1"].collected
    assert flown < around - 0.5, (flown, around)  # straight there and back: 80 km
    assert abs(flown - 80.0) < 0.5
