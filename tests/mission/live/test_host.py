"""The live host on the in-process bus: commands are never lost to the start-up."""

from __future__ import annotations

import asyncio

from executive.bus import InProcessBus
from executive.loop import Executive
from executive.planning.algorithmic import AlgorithmicPlanner
from executive.traces.sinks import NullSink
from mission.live.host import MissionHost
from planner.scenario import load_scenario
from tests.conftest import SCENARIOS


def test_a_command_sent_while_the_first_plan_is_made_is_not_lost():
    async def go():
        bus = InProcessBus()
        executive = Executive(
            load_scenario(SCENARIOS / "new_target.json"),
            planner=AlgorithmicPlanner(iterations=300),
            sink=NullSink(),
        )
        host = MissionHost(executive, bus)
        task = asyncio.create_task(host.run(None, until=100))
        await asyncio.sleep(0)  # the host has begun: its first plan is being made
        assert not executive.started
        bus.publish("cmd", {"type": "command", "command": "PAUSE"})
        await task
        return executive

    executive = asyncio.run(go())
    paused = [e for e in executive.events_seen if e["kind"] == "PAUSE"]
    assert len(paused) == 1 and paused[0]["tick"] <= 64  # as fast as possible, the loop
    # lets the bus in every 64 ticks
    assert executive.mode == "PAUSED"


def test_the_first_plan_is_on_the_bus_for_a_view_that_joins_before_any_replan():
    async def go():
        bus = InProcessBus()
        executive = Executive(
            load_scenario(SCENARIOS / "new_target.json"),
            planner=AlgorithmicPlanner(iterations=300),
            sink=NullSink(),
        )
        host = MissionHost(executive, bus)
        await host.run(None, until=50)  # long before the timeline's first change
        joined = bus.subscribe(["plan"])  # a view joining now
        kept = await asyncio.wait_for(joined.get(), 5)
        return kept, executive

    kept, executive = asyncio.run(go())
    assert kept.retained
    plan = kept.payload
    assert plan["plan_id"] == executive.plan_id
    assert plan["tick"] == 0 and plan["provenance"] == {"origin": "planner", "approved": "auto"}
    assert plan["solution"]["total_points"] == executive.plan.total_points
