"""The scene says a plan in force left unsafe as data a view counts down from (issue 26,
"Review that explains"): the draft's ``hazards`` and the drone's ``hazard`` are the safety
layer's warning, the mission ticks at which the plan in force would enter the SAM and at
which the layer acts. Those ticks stay put as the drone flies on (the view's countdown is
against the tick it shows, not a number frozen when the scene was drawn), and the layer
acts when its ``acts_tick`` said.

The world: tests/executive/loop/test_safety.py's line from A1 to A2, a SAM announced ahead
of the drone at t = 30 s, review mode with nobody answering."""

from __future__ import annotations

import asyncio
from typing import Any

from executive.contracts import EventRecord
from executive.loop import Executive, Policy
from executive.loop.options import LoopOptions
from executive.traces.sinks import ListSink
from mission.live.scene import scene
from tests.executive.loop.test_safety import (
    SAM_AHEAD,
    _assert_safe,
    _events,
    _planner,
    line_mission,
)

HAZARD = {"drone", "sam", "enters_tick", "acts_tick", "action"}


def test_the_draft_and_the_drone_carry_the_ticks_a_view_counts_down_to():
    sink = ListSink()
    executive = Executive(
        line_mission(timeline=[SAM_AHEAD]),
        planner=_planner(sink),
        sink=sink,
        options=LoopOptions(policy=Policy(commit="review", batch_iterations=300)),
    )
    seen: list[dict[str, Any]] = []  # the scene every 10 ticks a draft waits on a hazard

    def look(result) -> None:
        if result.tick % 10 == 0 and executive.safety.warnings and executive.review():
            seen.append(scene(executive))

    executive.watch(on_tick=look)
    report = asyncio.run(executive.run(None))
    _assert_safe(sink, report)
    assert len(seen) > 5, len(seen)  # the draft waited while the drone flew on

    first, last = seen[0], seen[-1]
    (hazard,) = first["draft"]["hazards"]
    assert set(hazard) == HAZARD
    assert hazard["drone"] == "1" and hazard["sam"] == "S1"
    assert "divert around S1" in hazard["action"]
    # the moments are ahead of the scene, the layer's first
    assert first["tick"] < hazard["acts_tick"] < hazard["enters_tick"]
    # the hazard is data, not words: the words left are the trigger's, and the drone it
    # concerns is one the draft changes (drawn on the map)
    assert not any("S1" in w and "enters" in w for w in first["draft"]["why"])
    assert first["draft"]["why"][-1].startswith("asked for by")
    assert "1" in first["draft"]["changed"]
    assert first["draft"]["urgent"] is True  # a fix for an unsafe plan, not an improvement
    # the fleet row's copy is the same data
    assert first["drones"]["1"]["hazard"] == hazard
    assert first["drones"]["1"]["warning"] is None  # its fuel covers its plan

    # the drone flew on, the moments did not move (within a tick of rounding): a view
    # counts down to them
    (later,) = last["draft"]["hazards"]
    assert last["tick"] - first["tick"] > 50
    assert abs(later["enters_tick"] - hazard["enters_tick"]) <= 1
    assert abs(later["acts_tick"] - hazard["acts_tick"]) <= 1

    # PLAN_UNSAFE says the same ticks, its seconds derived from them
    (said,) = [e for e in _events(sink, "PLAN_UNSAFE") if e.payload["sam"] == "S1"][:1]
    p = said.payload
    assert abs(p["enters_tick"] - hazard["enters_tick"]) <= 1
    assert p["in_s"] == round((p["enters_tick"] - said.tick) / 20, 1)
    assert p["acts_in_s"] == round((p["acts_tick"] - said.tick) / 20, 1)

    # and the layer acted when it said (it checks every safety_every ticks)
    acted: list[EventRecord] = _events(sink, "SAFETY_DIVERT")
    assert acted and acted[0].payload["drone"] == "1"
    assert abs(acted[0].tick - hazard["acts_tick"]) <= 2 * Policy().safety_every
    # once it acted, no scene said the hazard any more
    assert all(s["tick"] <= acted[0].tick for s in seen)


def test_a_draft_that_only_improves_a_safe_plan_is_not_urgent():
    # a target appears: the draft adds it, the plan in force is safe and fits its fuel
    new = {"t": 30, "op": "add_target", "id": "N1", "x": 30, "y": 5, "priority": 9, "type": "A"}
    sink = ListSink()
    executive = Executive(
        line_mission(timeline=[new]),
        planner=_planner(sink),
        sink=sink,
        options=LoopOptions(policy=Policy(commit="review", batch_iterations=300)),
    )
    seen: list[dict[str, Any]] = []

    def look(result) -> None:
        if result.tick % 10 == 0 and executive.review() and not seen:
            seen.append(scene(executive))

    executive.watch(on_tick=look)
    asyncio.run(executive.run(None))
    assert seen and seen[0]["draft"]["urgent"] is False
    assert seen[0]["draft"]["hazards"] == []
