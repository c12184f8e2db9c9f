"""The live host on the in-process bus: commands are never lost to the start-up."""

from __future__ import annotations

import asyncio
import time

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


def test_the_start_up_says_its_phases_on_the_bus_until_the_run_is_running():
    """A view knows, from the first status, that the run is starting and what it waits for:
    the planner's kernels (compiled on the first run only), then the first plan."""

    async def go():
        bus = InProcessBus()
        statuses = bus.subscribe(["status"], maxsize=64)
        executive = Executive(
            load_scenario(SCENARIOS / "new_target.json"),
            planner=AlgorithmicPlanner(iterations=300),
            sink=NullSink(),
        )
        before = time.time()
        await MissionHost(executive, bus).run(None, until=10)
        seen = []
        while statuses.pending():
            seen.append((await statuses.get()).payload)
        return before, seen, executive

    before, seen, executive = asyncio.run(go())
    said = [(s["state"], s.get("phase")) for s in seen]
    assert said == [
        ("starting", None),
        ("starting", "compiling"),
        ("starting", "planning"),
        ("running", None),
        ("ended", None),
    ], said
    # every status carries when the start-up began, for a view's elapsed time
    assert len({s["started_at"] for s in seen}) == 1
    assert before <= seen[0]["started_at"] <= time.time()
    assert all(s["run_id"] == executive.run_id for s in seen)


def test_a_stop_ends_the_mission_and_per_drone_commands_are_checked():
    async def go():
        bus = InProcessBus()
        events = bus.subscribe(["events"], maxsize=4096)
        executive = Executive(
            load_scenario(SCENARIOS / "demo.json"),
            planner=AlgorithmicPlanner(iterations=300),
            sink=NullSink(),
        )
        host = MissionHost(executive, bus)
        task = asyncio.create_task(host.run(None))
        while not executive.started:
            await asyncio.sleep(0.01)
        refusals = [
            host.handle({"type": "command", "command": "HOLD"}),
            host.handle({"type": "command", "command": "RETURN", "drone": "9"}),
        ]
        assert host.handle({"type": "command", "command": "HOLD", "drone": "2"}) is None
        while not any(e["kind"] == "HUMAN_COMMAND" for e in executive.events_seen):
            await asyncio.sleep(0.01)  # taken at a tick boundary
        assert host.handle({"type": "stop", "reason": "the operator's Stop"}) is None
        report = await asyncio.wait_for(task, 60)
        seen = []
        while events.pending():
            seen.append((await events.get()).payload)
        return refusals, report, seen, executive

    refusals, report, seen, executive = asyncio.run(go())
    assert refusals == [
        "$.drone: HOLD needs the drone's id",
        "$.drone: no drone '9' in this mission",
    ]
    kinds = [e["kind"] for e in seen]
    assert kinds.count("CMD_REJECTED") == 2
    stopped = [e for e in seen if e["kind"] == "STOPPED"]
    assert stopped and stopped[0]["reason"] == "the operator's Stop"
    # it ended long before the demo's end (1695 s), with its outcome so far
    assert report.ticks < 20 * 600 and executive.sim.tick == report.ticks
    commands = [e for e in seen if e["kind"] == "HUMAN_COMMAND"]
    assert commands and commands[0]["command"] == "HOLD" and commands[0]["drone"] == "2"


def test_a_command_id_is_applied_once_and_traced_in_its_human_command():
    async def go():
        bus = InProcessBus()
        executive = Executive(
            load_scenario(SCENARIOS / "new_target.json"),
            planner=AlgorithmicPlanner(iterations=300),
            sink=NullSink(),
        )
        host = MissionHost(executive, bus)
        task = asyncio.create_task(host.run(None, until=200))
        await asyncio.sleep(0)
        pause = {"type": "command", "command": "PAUSE", "id": "c0ffee"}
        for _ in range(3):  # a requeue, a retry: the same id, sent again
            bus.publish("cmd", dict(pause))
        bus.publish("cmd", {"type": "command", "command": "RESUME", "id": "c0ffee"})  # taken
        bus.publish("cmd", {"type": "command", "command": "RESUME", "id": "beef"})
        bus.publish("cmd", {"type": "command", "command": "RESET", "id": "x" * 65})  # refused
        await task
        return executive, host

    executive, host = asyncio.run(go())
    humans = [e for e in executive.events_seen if e["kind"] == "HUMAN_COMMAND"]
    assert [(h["command"], h["id"]) for h in humans] == [("PAUSE", "c0ffee"), ("RESUME", "beef")]
    assert host.duplicates == 3 and host.rejected == 1


def test_a_command_is_read_as_its_typed_message_before_anything_is_applied():
    executive = Executive(
        load_scenario(SCENARIOS / "demo.json"),
        planner=AlgorithmicPlanner(iterations=300),
        sink=NullSink(),
    )
    host = MissionHost(executive, InProcessBus())
    refusals = [
        host.handle({"type": "command", "command": "PAUSE", "extra": 1}),
        host.handle({"type": "teleport"}),
        host.handle({"type": "speed", "speed": True}),
        host.handle({"type": "speed", "speed": 1e9}),
        host.handle({"type": "command", "command": "PAUS"}),
        host.handle({"type": "edit", "edit": [1]}),
        host.handle({"type": "ask", "text": "  "}),
        host.handle(["PAUSE"]),
    ]
    assert refusals[0] == "$.extra: Extra inputs are not permitted (got 1)"
    assert refusals[1] == "$.type: 'teleport' is not one of command, edit, ask, speed, stop"
    assert refusals[2] == refusals[3] and refusals[2].startswith("$.speed: a number from")
    assert refusals[4].startswith("$.command: Input should be 'CUT', 'PAUSE'")
    assert refusals[4].endswith("(got 'PAUS')")
    assert refusals[5] == "$.edit: Input should be a valid dictionary"
    assert refusals[6] == "$.text: the question must be a non-empty string"
    assert refusals[7] == "a command message must be a JSON object"
    assert host.rejected == 8 and host.duplicates == 0
