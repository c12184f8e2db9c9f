"""The operator's commands for one drone (the console's inspector): RETURN home, HOLD where it
is, RESUME it, each taken at the tick boundary through the safety layer, each refused with
its reason (a COMMAND_IGNORED event) when the drone cannot do it, and each replayed exactly.

The world of ``test_safety``: a line from A1 (0, 0) to A2 (60, 0), targets T1 at 20 km and T2
at 45 km, one drone at 0.2 km/s (72 km/h): at tick 400 it is 4 km out, flying east.
"""

from __future__ import annotations

import math
from typing import Any

from executive.contracts import HumanCommand, InputRecord, StateHashRecord
from executive.traces.replay import replay
from tests.executive.loop.test_safety import _assert_safe, _events, _fly, line_mission

HOLD_AT = 400
RESUME_AT = 1400


def _status_at(sink, tick: int, drone: str = "1") -> str:
    """The drone's status in the telemetry row at ``tick`` (rows every 5 ticks)."""
    rows = [r for r in sink.records if type(r).__name__ == "TelemetryRecord" and r.tick == tick]
    assert rows, tick
    return rows[0].drones[drone]["status"]


def test_hold_circles_where_the_drone_is_until_resume_then_it_flies_its_plan_on():
    _executive, sink, report = _fly(
        line_mission(),
        commands=[
            (HOLD_AT, HumanCommand("HOLD", drone="1")),
            (RESUME_AT, HumanCommand("RESUME", drone="1")),
        ],
    )
    _assert_safe(sink, report)
    (hold,) = _events(sink, "HOLD")
    assert hold.payload["drone"] == "1" and hold.payload["reason"] == "operator: hold"
    x, y = hold.payload["at"]
    assert math.isclose(x, 0.2 * HOLD_AT / 20) and abs(y) < 1e-9  # where it was: 4 km out
    # circling there (a 1 km circle) the whole time, then on its way again
    for tick in range(HOLD_AT + 100, RESUME_AT, 100):
        assert _status_at(sink, tick) == "holding", tick
    assert _status_at(sink, RESUME_AT + 20) == "flying"
    resumed = [e for e in _events(sink, "CONTINUE") if e.payload.get("resumed") == ["1"]]
    assert resumed and resumed[0].tick == RESUME_AT
    # it flew its plan on: both targets, landed at its end airport
    assert report.outcome.total_points == 10
    assert report.outcome.drones["1"].status == "landed"
    assert not _events(sink, "COMMAND_IGNORED")


def test_return_sends_the_drone_to_an_airport_through_the_safety_layer():
    # a round trip from A1: sent back 4 km out, it lands at A1 with both targets left
    drones = {"1": {"fuelBudget": 200, "home_airport": "A1", "accessibleTargets": "ALL"}}
    _executive, sink, report = _fly(
        line_mission(drones=drones), commands=[(HOLD_AT, HumanCommand("RETURN", drone="1"))]
    )
    _assert_safe(sink, report)
    (back,) = _events(sink, "SAFETY_RETURN")
    assert back.tick == HOLD_AT and back.payload["drone"] == "1"
    assert back.payload["reason"] == "operator: return home"
    assert back.payload["airport"] == "A1" and math.isclose(back.payload["km"], 4.0)
    assert report.safety_returns == ["1"]  # no plan re-tasks it
    drone = report.outcome.drones["1"]
    assert drone.status == "landed" and drone.collected == []
    assert math.isclose(drone.distance_flown, 8.0, abs_tol=1e-6)  # 4 km out, 4 km back


def test_per_drone_commands_the_drone_cannot_do_are_refused_with_their_reason():
    # two SAMs either side of the line at 4 km: clear of its path, not of a holding circle
    sams = [
        {"t": 5, "op": "add_sam", "id": f"S{i}", "pos": [4.0, y], "range": 1.0}
        for i, y in ((1, 2.6), (2, -2.6))
    ]
    executive, sink, report = _fly(
        line_mission(timeline=sams),
        commands=[
            (HOLD_AT, HumanCommand("HOLD", drone="1")),  # its circle would meet S1
            (HOLD_AT + 1, HumanCommand("RESUME", drone="1")),  # not held
            (HOLD_AT + 2, HumanCommand("HOLD", drone="9")),  # no such drone
            (HOLD_AT + 3, HumanCommand("PAUSE", drone="1")),  # a fleet command
            (HOLD_AT + 4, HumanCommand("RETURN", drone="1")),
            (HOLD_AT + 5, HumanCommand("RETURN", drone="1")),  # already on its way
            (HOLD_AT + 6, HumanCommand("HOLD", drone="1")),  # on its way home
            (HOLD_AT + 7, HumanCommand("RETURN")),  # which drone?
        ],
    )
    _assert_safe(sink, report)
    said = [
        (e.tick, e.payload["command"], e.payload["reason"])
        for e in _events(sink, "COMMAND_IGNORED")
    ]
    assert said == [
        (HOLD_AT, "HOLD", "D1: its holding circle here would meet a known SAM"),
        (HOLD_AT + 1, "RESUME", "D1 is not held by the operator"),
        (HOLD_AT + 2, "HOLD", "no drone '9' in this mission"),
        (HOLD_AT + 3, "PAUSE", "PAUSE is for the whole mission: give no drone"),
        (HOLD_AT + 5, "RETURN", "D1 is already on its way home"),
        (HOLD_AT + 6, "HOLD", "D1 is on its way home"),
        (HOLD_AT + 7, "RETURN", "RETURN needs a drone's id"),
    ], said
    assert not _events(sink, "HOLD") and len(_events(sink, "SAFETY_RETURN")) == 1
    assert executive.mode == "FLYING"  # nothing paused the fleet


def test_a_drone_on_the_ground_cannot_be_sent_home_or_held():
    one = {"fuelBudget": 200, "home_airport": "A1", "end_airport": "A2", "accessibleTargets": "ALL"}
    drones = {"1": one, "2": {**one, "enabled": False}}  # D2 stays parked at A1
    _executive, sink, report = _fly(
        line_mission(drones=drones),
        commands=[
            (HOLD_AT, HumanCommand("RETURN", drone="2")),
            (HOLD_AT + 1, HumanCommand("HOLD", drone="2")),
            (HOLD_AT + 2, HumanCommand("RESUME", drone="2")),
        ],
    )
    reasons = [e.payload["reason"] for e in _events(sink, "COMMAND_IGNORED")]
    assert reasons == [
        "D2 is parked, not airborne",
        "D2: it is parked, not flying",
        "D2 is not held by the operator",
    ], reasons
    assert report.outcome.total_points == 10  # D1 flew its plan, untouched


def test_hold_and_return_replay_exactly():
    executive, sink, report = _fly(
        line_mission(),
        commands=[
            (HOLD_AT, HumanCommand("HOLD", drone="1")),
            (HOLD_AT + 300, HumanCommand("RETURN", drone="1")),
        ],
    )
    assert _events(sink, "HOLD") and _events(sink, "SAFETY_RETURN")
    inputs: list[dict[str, Any]] = [
        {"kind": r.kind, "payload": r.payload, "source": r.source, "tick": r.tick}
        for r in sink.of(InputRecord)
    ]
    kinds = [i["payload"].get("kind") for i in inputs if i["kind"] == "command"]
    assert "hold" in kinds
    recorded = {r.tick: r.state_hash for r in sink.of(StateHashRecord)}
    result = replay(
        executive.scenario.model_dump(mode="json", by_alias=True), inputs, recorded, hash_every=20
    )
    assert result.exact and result.final_hash == report.outcome.state_hash
    assert math.isfinite(report.outcome.drones["1"].fuel_left)
