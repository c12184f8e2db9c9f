"""The MQTT bus against a real Mosquitto broker (the test process's own: ``tests.conftest.MQTT``).

Each test uses its own run id and clears the retained topics it left behind. Waits are on
messages (``asyncio.wait_for`` with generous timeouts), never on the wall clock.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import uuid
from collections.abc import Callable, Iterator

import aiomqtt
import pytest

from executive.bus import Bus, Message, Subscription
from executive.bus.mqtt import MqttBus
from executive.bus.topics import OUT_TOPICS, RETAINED
from executive.errors import ExecutiveError
from executive.loop import Executive
from executive.planning.algorithmic import AlgorithmicPlanner
from executive.traces.sinks import ListSink
from mission.live.host import MissionHost
from planner.scenario import load_scenario
from tests.conftest import MQTT, ROOT

SCENARIO = ROOT / "scenarios" / "new_target.json"
HOST, PORT = MQTT
URL = f"mqtt://{HOST}:{PORT}"
WAIT = 60.0  # seconds: generous, for a loaded 2-core machine


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]  # nobody listens once it is closed


@pytest.fixture
def run_ids() -> Iterator[Callable[[], str]]:
    """Fresh run ids; their retained messages are cleared afterwards."""
    made: list[str] = []

    def make() -> str:
        made.append(f"test-{uuid.uuid4().hex[:12]}")
        return made[-1]

    yield make

    async def clear() -> None:
        async with aiomqtt.Client(HOST, PORT) as client:
            for run_id in made:
                for topic in RETAINED:
                    await client.publish(f"isr/{run_id}/{topic}", b"", qos=1, retain=True)

    asyncio.run(clear())


def _executive(run_id: str | None = None) -> Executive:
    return Executive(
        load_scenario(SCENARIO),
        planner=AlgorithmicPlanner(iterations=500),
        sink=ListSink(),
        run_id=run_id,
    )


class Collector:
    """Reads a subscription into lists as messages come; tests wait on conditions."""

    def __init__(self, sub: Subscription) -> None:
        self.sub = sub
        self.messages: list[Message] = []
        self._changed = asyncio.Condition()
        self.task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        async for message in self.sub:
            async with self._changed:
                self.messages.append(message)
                self._changed.notify_all()

    def of(self, topic: str) -> list[dict]:
        return [m.payload for m in self.messages if m.topic == topic]

    async def until(self, predicate: Callable[[], object], timeout: float = WAIT):
        async def check():
            async with self._changed:
                await self._changed.wait_for(predicate)

        await asyncio.wait_for(check(), timeout)

    def status_is(self, state: str) -> Callable[[], bool]:
        return lambda: any(p.get("state") == state for p in self.of("status"))

    def event(self, kind: str) -> Callable[[], dict | None]:
        return lambda: next((p for p in self.of("events") if p.get("kind") == kind), None)

    async def close(self) -> None:
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


def _wire(payload: dict) -> dict:
    """What a payload looks like after a trip through JSON."""
    return json.loads(json.dumps(payload, default=str))


# ----- (1) a live run: telemetry in order, events as published, retained picture ------


@pytest.mark.mqtt
def test_watcher_sees_the_run_in_order_and_the_retained_picture(run_ids):
    run_id = run_ids()

    async def go():
        executive = _executive(run_id)
        async with (
            MqttBus(URL, run_id=run_id, role="watcher") as watcher,
            MqttBus(URL, run_id=run_id, role="executive") as bus,
        ):
            seen = Collector(watcher.subscribe(OUT_TOPICS, maxsize=100_000))
            published = bus.subscribe(OUT_TOPICS, maxsize=100_000)  # what the host sent
            report = await MissionHost(executive, bus).run(None)
            sent = []
            while (m := published.get_nowait()) is not None:
                sent.append(m)
            sent_events = [_wire(m.payload) for m in sent if m.topic == "events"]
            last_tick = next(m.payload["tick"] for m in reversed(sent) if m.topic == "telemetry")
            final_scene = next(m.payload for m in reversed(sent) if m.topic == "scene")
            await seen.until(
                lambda: (
                    len(seen.of("events")) >= len(sent_events)
                    and seen.of("telemetry")
                    and seen.of("telemetry")[-1]["tick"] == last_tick
                    and seen.status_is("ended")()
                )
            )
            await seen.close()
            assert not {"events", "plan", "status"} & set(bus.dropped), bus.dropped
        assert report.outcome.total_points > 0
        # events: all of them, in the order the host published them
        assert sent_events and seen.of("events") == sent_events
        assert [e["kind"] for e in sent_events].count("COMMIT_PLAN") >= 2  # initial + replan
        ticks = [p["tick"] for p in seen.of("telemetry")]
        assert len(ticks) >= 2 and ticks == sorted(set(ticks)), (
            f"telemetry ticks must strictly increase: {ticks[:20]}"
        )
        assert [(p["state"], p.get("phase")) for p in seen.of("status")] == [
            ("starting", None),
            ("starting", "compiling"),  # the start-up's phases, for a view that waits
            ("starting", "planning"),
            ("running", None),
            ("ended", None),
        ]
        assert all(p["run_id"] == run_id for p in seen.of("status"))

        # A view that joins after the end gets the retained picture first.
        async with MqttBus(URL, run_id=run_id, role="watcher") as late:
            joined = Collector(late.subscribe(["scene", "status", "plan"]))
            await joined.until(
                lambda: {m.topic for m in joined.messages} == {"scene", "status", "plan"}
            )
            await joined.close()
        assert all(m.retained for m in joined.messages)
        scene = joined.of("scene")[-1]
        assert scene["tick"] == final_scene["tick"] == executive.sim.tick
        assert scene["run_id"] == run_id and set(scene["drones"]) == {"1", "2", "3"}
        assert joined.of("status")[-1]["state"] == "ended"
        assert joined.of("status")[-1]["outcome"]["total_points"] == report.outcome.total_points

    asyncio.run(go())


# ----- (2) commands from a watcher take effect in the executive ------------------------


@pytest.mark.mqtt
def test_commands_and_edits_sent_on_cmd_take_effect(run_ids):
    run_id = run_ids()

    async def go():
        executive = _executive(run_id)
        async with (
            MqttBus(URL, run_id=run_id, role="watcher") as watcher,
            MqttBus(URL, run_id=run_id, role="executive") as bus,
        ):
            seen = Collector(watcher.subscribe(["events", "status"], maxsize=10_000))
            host = MissionHost(executive, bus)
            mission = asyncio.get_running_loop().create_task(host.run(1.0))  # real time
            try:
                await seen.until(seen.status_is("running"))
                watcher.publish("cmd", {"type": "command", "command": "PAUSE"})
                await seen.until(seen.event("PAUSE"))
                assert executive.mode == "PAUSED"
                human = seen.event("HUMAN_COMMAND")()
                assert human["command"] == "PAUSE" and human["source"] == "operator"

                sam = {"op": "add_sam", "id": "SAM_MQTT", "pos": [62.0, 22.0], "range": 4.0}
                watcher.publish("cmd", {"type": "edit", "edit": sam})
                await seen.until(seen.event("edit_applied"))
                applied = seen.event("edit_applied")()["edit"]
                assert applied["id"] == "SAM_MQTT" and applied["source"] == "operator"
                assert "SAM_MQTT" in {s.id for s in executive.sim.world.known_environment.sams}

                # Bad commands are rejected with a reason naming the field, and the run goes on.
                def rejected() -> list[dict]:
                    return [e for e in seen.of("events") if e["kind"] == "CMD_REJECTED"]

                watcher.publish("cmd", {"type": "command", "command": "SELF_DESTRUCT"})
                await seen.until(lambda: len(rejected()) == 1)
                assert "$.command" in rejected()[0]["reason"]
                assert "SELF_DESTRUCT" in rejected()[0]["reason"]
                async with aiomqtt.Client(HOST, PORT) as raw:  # not even JSON
                    await raw.publish(f"isr/{run_id}/cmd", b"{not json", qos=1)
                await seen.until(lambda: len(rejected()) == 2)
                assert "JSON object" in rejected()[1]["reason"]
                assert rejected()[1]["message"] == "{not json"
                assert not mission.done()
            finally:
                executive.stop()
                await asyncio.wait_for(mission, WAIT)
            await seen.close()

    asyncio.run(go())


# ----- (3) a publisher killed mid-run: its last will says crashed --------------------

_PUBLISHER = """
import asyncio, sys
from executive.planning.algorithmic import AlgorithmicPlanner
from executive.bus.mqtt import MqttBus
from mission.live.host import MissionHost
from executive.loop import Executive
from executive.traces.sinks import ListSink
from planner.scenario import load_scenario

async def main(url, run_id, scenario):
    executive = Executive(load_scenario(scenario), planner=AlgorithmicPlanner(iterations=300),
                          sink=ListSink(), run_id=run_id)
    async with MqttBus(url, run_id=run_id, keepalive=2) as bus:
        await MissionHost(executive, bus).run(0.5)  # slow: it is killed long before the end

asyncio.run(main(*sys.argv[1:]))
"""


@pytest.mark.mqtt
def test_killed_publisher_leaves_its_crashed_last_will(run_ids, tmp_path):
    run_id = run_ids()

    async def go():
        async with MqttBus(URL, run_id=run_id, role="watcher") as watcher:
            seen = Collector(watcher.subscribe(["status"]))
            log = (tmp_path / "publisher.log").open("wb")
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                _PUBLISHER,
                URL,
                run_id,
                str(SCENARIO),
                cwd=ROOT,
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
            )
            try:
                running = asyncio.ensure_future(seen.until(seen.status_is("running"), 180))
                exited = asyncio.ensure_future(proc.wait())
                await asyncio.wait({running, exited}, return_when=asyncio.FIRST_COMPLETED)
                if not running.done():
                    running.cancel()
                    pytest.fail(
                        "the publisher exited before running:\n"
                        + (tmp_path / "publisher.log").read_text()[-3000:]
                    )
                running.result()
                proc.kill()  # SIGKILL: no clean disconnect, the broker sends the will
                await exited
            finally:
                if proc.returncode is None:
                    proc.kill()
                    await proc.wait()
                log.close()
            await seen.until(seen.status_is("crashed"))
            await seen.close()
        assert seen.of("status")[-1] == {"run_id": run_id, "state": "crashed"}

        # The will is retained: a view joining now learns the run crashed.
        async with MqttBus(URL, run_id=run_id, role="watcher") as late:
            joined = Collector(late.subscribe(["status"]))
            await joined.until(lambda: joined.messages)
            await joined.close()
        assert joined.messages[0].retained
        assert joined.messages[0].payload == {"run_id": run_id, "state": "crashed"}

    asyncio.run(go())


@pytest.mark.mqtt
def test_clean_stop_sends_no_last_will(run_ids):
    run_id = run_ids()

    async def go():
        async with MqttBus(URL, run_id=run_id, role="watcher") as watcher:
            seen = Collector(watcher.subscribe(["status", "events"]))
            async with MqttBus(URL, run_id=run_id) as bus:
                bus.publish("status", {"run_id": run_id, "state": "ended"})
            # A marker sent after the stop: once it arrives, a will would have arrived too.
            async with MqttBus(URL, run_id=run_id) as other:
                other.publish("events", {"run_id": run_id, "tick": 0, "kind": "MARKER"})
            await seen.until(seen.event("MARKER"))
            await seen.close()
        assert [p["state"] for p in seen.of("status")] == ["ended"]

    asyncio.run(go())


# ----- discovery: a watcher without a run id finds the newest running run -------------


@pytest.mark.mqtt
def test_watcher_discovers_the_newest_running_run(run_ids):
    old, new, done = run_ids(), run_ids(), run_ids()

    async def go():
        async with MqttBus(URL, run_id=old) as a, MqttBus(URL, run_id=done) as c:
            a.publish("status", {"run_id": old, "state": "running"})
            c.publish("status", {"run_id": done, "state": "ended"})
            async with MqttBus(URL, run_id=new) as b:
                b.publish("status", {"run_id": new, "state": "running"})
                await b.stop()  # flushes: the retained statuses are on the broker now
                async with MqttBus(URL, role="watcher") as watcher:
                    assert await watcher.wait_for_run(WAIT) == new
                    assert watcher.run_id == new
                    seen = Collector(watcher.subscribe(["status", "events"]))
                    await seen.until(seen.status_is("running"))
                    async with MqttBus(URL, run_id=new) as again:
                        cmds = again.subscribe(["cmd"])
                        again.publish("events", {"run_id": new, "tick": 1, "kind": "HELLO"})
                        await seen.until(seen.event("HELLO"))
                        watcher.publish("cmd", {"type": "speed", "speed": 3})
                        got = await asyncio.wait_for(cmds.get(), WAIT)
                        assert got.payload.pop("id")  # a watcher gives each command an id
                        assert got.payload == {"type": "speed", "speed": 3}
                    await seen.close()
                assert all(p["run_id"] == new for p in seen.of("status"))

    asyncio.run(go())


# ----- (4) bad URLs and unreachable brokers ------------------------------------------


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://127.0.0.1:1883", "scheme must be mqtt"),
        ("mqtt://", "no host"),
        ("mqtt://127.0.0.1:notaport", "port must be a number"),
        ("mqtt://127.0.0.1:70000", "port must be a number"),
        ("mqtt://127.0.0.1:1883/isr", "nothing may follow"),
        ("127.0.0.1:1883", "scheme must be mqtt"),
    ],
)
def test_bad_url_is_refused_naming_it(url, why):
    with pytest.raises(ExecutiveError) as info:
        MqttBus(url, run_id="r1")
    assert repr(url) in str(info.value) and why in str(info.value)


def test_unreachable_broker_fails_start_with_a_clear_error():
    port = _closed_port()

    async def go():
        bus = MqttBus(f"mqtt://127.0.0.1:{port}", run_id="r1")
        with pytest.raises(ExecutiveError) as info:
            await bus.start()
        await bus.stop()  # harmless after a failed start
        return str(info.value)

    text = asyncio.run(go())
    assert text.startswith(f"cannot reach MQTT broker at mqtt://127.0.0.1:{port}: ")
    assert "refused" in text.lower()


def test_bad_run_id_role_and_order_are_refused():
    with pytest.raises(ExecutiveError, match="topic level"):
        MqttBus(URL, run_id="a/b")
    with pytest.raises(ExecutiveError, match="role 'dashboard'"):
        MqttBus(URL, role="dashboard")

    async def go():
        with pytest.raises(ExecutiveError, match="run id before start"):
            await MqttBus(URL).start()

    asyncio.run(go())


@pytest.mark.mqtt
def test_run_id_is_fixed_once_started(run_ids):
    run_id = run_ids()

    async def go():
        async with MqttBus(URL, run_id=run_id) as bus:
            assert isinstance(bus, Bus)
            bus.run_id = run_id  # what MissionHost.run does: the same id is fine
            with pytest.raises(ExecutiveError, match="cannot switch"):
                bus.run_id = "another"
            with pytest.raises(ExecutiveError, match="unknown bus topic"):
                bus.publish("nonsense", {})

    asyncio.run(go())


# ----- (5) bounded: slow subscribers and a slow sender drop and count -----------------


@pytest.mark.mqtt
def test_subscriber_that_never_reads_stays_bounded(run_ids):
    run_id = run_ids()
    n = 500

    async def go():
        async with (
            MqttBus(URL, run_id=run_id, role="watcher") as watcher,
            MqttBus(URL, run_id=run_id) as bus,
        ):
            stalled = watcher.subscribe(["events", "telemetry"], maxsize=16)  # never read
            reader = Collector(watcher.subscribe(["events"], maxsize=n))
            for i in range(n):
                bus.publish("events", {"run_id": run_id, "tick": i, "kind": "TICK"})
                bus.publish("telemetry", {"run_id": run_id, "tick": i})
            await reader.until(lambda: len(reader.messages) == n)
            await reader.close()
            assert [p["tick"] for p in reader.of("events")] == list(range(n))
            assert stalled.pending() <= 16 + 1  # the queue, plus one telemetry slot
            assert stalled.dropped["events"] == n - 16
            # everything the watcher received was either kept or counted as dropped
            assert stalled.dropped_total + stalled.pending() == watcher.received
            assert stalled.delivered == 0

    asyncio.run(go())


@pytest.mark.mqtt
def test_outgoing_queue_is_bounded_and_telemetry_conflated(run_ids):
    run_id = run_ids()

    async def go():
        async with (
            MqttBus(URL, run_id=run_id, role="watcher") as watcher,
            MqttBus(URL, run_id=run_id, max_outgoing=8) as bus,
        ):
            seen = Collector(watcher.subscribe(["events", "telemetry"], maxsize=1000))
            # publish never awaits: all of this happens before the sender runs once
            for i in range(100):
                bus.publish("telemetry", {"run_id": run_id, "tick": i})
            for i in range(20):
                bus.publish("events", {"run_id": run_id, "tick": i, "kind": "E"})
            assert bus.pending() == 8
            # 99 telemetry conflated into one entry, then the oldest entries (that one and
            # 12 events) dropped at the bound of 8
            assert bus.dropped == {"telemetry": 100, "events": 12}
            await seen.until(lambda: seen.of("events") and seen.of("events")[-1]["tick"] == 19)
            await seen.close()
        assert [p["tick"] for p in seen.of("events")] == list(range(12, 20))  # the newest
        assert seen.of("telemetry") == []

    async def conflated():
        async with (
            MqttBus(URL, run_id=run_id, role="watcher") as watcher,
            MqttBus(URL, run_id=run_id) as bus,
        ):
            seen = Collector(watcher.subscribe(["events", "telemetry"], maxsize=1000))
            bus.publish("events", {"run_id": run_id, "tick": 0, "kind": "FIRST"})
            for i in range(100):
                bus.publish("telemetry", {"run_id": run_id, "tick": i})
            bus.publish("events", {"run_id": run_id, "tick": 99, "kind": "LAST"})
            assert bus.pending() == 3 and bus.dropped == {"telemetry": 99}
            await seen.until(seen.event("LAST"))
            await seen.close()
        # the sender that fell behind sent only the latest telemetry; no event was lost
        assert [p["tick"] for p in seen.of("telemetry")] == [99]
        assert [p["kind"] for p in seen.of("events")] == ["FIRST", "LAST"]

    asyncio.run(go())
    asyncio.run(conflated())
