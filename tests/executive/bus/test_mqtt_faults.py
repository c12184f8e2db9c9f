"""The MQTT bus when the broker fails: a real Mosquitto of the test's own (on a free port,
``tests/executive/bus/broker.py``) killed mid-run with SIGKILL and started again on the same
port. The mission flies on; publishing and commands resume once the broker is back; what
could not be sent is counted in ``stats()``, and exactly that is what the watcher missed.

Waits are on messages, or on the bus's link state polled every 20 ms (the bus has no event
for it); never a fixed sleep.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from executive.bus.mqtt import MqttBus
from executive.bus.topics import OUT_TOPICS
from mission.live.host import MissionHost
from tests.executive.bus.broker import Mosquitto
from tests.executive.bus.test_mqtt import Collector, _executive

WAIT = 30.0  # seconds: generous, for a loaded 2-core machine
TOKEN = "faults-control-token"


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    """A Mosquitto of this test's own, anonymous, without persistence."""
    mosquitto = Mosquitto(tmp_path)
    mosquitto.start()
    try:
        yield mosquitto
    finally:
        mosquitto.stop()


async def until(predicate: Callable[[], object], what: str, timeout: float = WAIT) -> None:
    """Poll ``predicate`` every 20 ms (for states that have no event to await)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(0.02)


def _key(payload: dict) -> str:
    return json.dumps(payload, sort_keys=True, default=str)


@pytest.mark.mqtt
def test_broker_restarted_mid_run_publishing_and_commands_resume_losses_reported(
    broker, monkeypatch
):
    run_id = f"faults-{uuid.uuid4().hex[:12]}"

    async def go() -> None:
        executive = _executive(run_id)
        # a small outgoing bound, so that the outage overflows it and loses events for real
        bus = MqttBus(broker.url, run_id=run_id, token=TOKEN, backoff=(0.05, 0.2), max_outgoing=64)
        watcher = MqttBus(
            broker.url, run_id=run_id, role="watcher", token=TOKEN, backoff=(0.05, 0.2)
        )
        async with watcher, bus:
            seen = Collector(watcher.subscribe(OUT_TOPICS, maxsize=100_000))
            published = Collector(bus.subscribe(["events"], maxsize=100_000))  # the host's
            mission = asyncio.get_running_loop().create_task(MissionHost(executive, bus).run(4.0))
            try:
                await seen.until(
                    lambda: seen.of("telemetry") and seen.of("telemetry")[-1]["tick"] > 10
                )
                # (the host publishes a plan at a replan only: this one stands for it)
                bus.publish("plan", {"run_id": run_id, "tick": 1, "plan_id": "P-before-the-kill"})
                # The executive reconnects only once the watcher is back: what it sends on
                # its return then has a subscriber (else the watcher's own reconnection
                # would race it, and its misses would not be the bus's losses).
                watcher_back = asyncio.Event()
                connect = bus._connect  # noqa: SLF001 (fault injection: the reconnect is gated)

                async def gated():
                    await watcher_back.wait()
                    return await connect()

                monkeypatch.setattr(bus, "_connect", gated)

                broker.kill()
                await until(
                    lambda: bus.link.state == "down" and watcher.link.state == "down",
                    "both links down",
                )
                assert not watcher.link.commands and watcher.link.reason
                assert bus.link.commands  # the local host still hears local commands
                down_tick = executive.sim.tick
                # the mission flies on without the broker, never waiting for it
                await until(lambda: executive.sim.tick >= down_tick + 20, "ticks while down")
                assert not mission.done()
                for i in range(100):  # more than the outgoing bound holds
                    bus.publish(
                        "events",
                        {"run_id": run_id, "tick": executive.sim.tick, "kind": "FILLER", "i": i},
                    )
                assert bus.stats()["lost"].get("events", 0) >= 100 - 64

                returned = broker.start()  # same port, empty: no retained messages
                await until(lambda: watcher.link.state == "up", "the watcher back")
                # up, but the run's executive is not back yet: a command now would be
                # dropped by the broker (no subscriber), so the link says it cannot go
                assert not watcher.link.commands
                assert "waiting to hear from run" in (watcher.link.reason or "")
                watcher_back.set()
                await seen.until(
                    lambda: any(t["tick"] > down_tick + 20 for t in seen.of("telemetry"))
                )
                first_publish_s = time.monotonic() - returned
                assert first_publish_s < 5.0
                await until(lambda: bus.link.state == "up", "the executive back")
                assert bus.reconnects == 1 and watcher.reconnects == 1
                assert watcher.link.commands

                # The restarted broker forgot every retained message; the executive put its
                # newest status, scene and plan back: a view joining now gets the picture.
                async with MqttBus(broker.url, run_id=run_id, role="watcher", token=TOKEN) as late:
                    joined = Collector(late.subscribe(["scene", "status", "plan"]))
                    await joined.until(
                        lambda: {m.topic for m in joined.messages} == {"scene", "status", "plan"}
                    )
                    await joined.close()
                # (a scene is latest-only: a live one may take its retained copy's place)
                for topic in ("status", "plan"):  # each starts with its retained copy
                    assert next(m for m in joined.messages if m.topic == topic).retained
                assert joined.of("plan")[0]["plan_id"] == "P-before-the-kill"
                assert joined.of("status")[-1]["state"] == "running"
                assert joined.of("scene")[-1]["run_id"] == run_id

                # Commands resume: a PAUSE sent after the return reaches the mission.
                watcher.publish("cmd", {"type": "command", "command": "PAUSE"})
                await seen.until(seen.event("PAUSE"))
                assert executive.mode == "PAUSED"
            finally:
                executive.stop()
                await asyncio.wait_for(mission, WAIT)
            await published.close()
            bus.publish("status", {"run_id": run_id, "state": "ended"})
            await seen.until(seen.status_is("ended"))
            await seen.close()

        stats = bus.stats()
        # Losses reported: every event the host published reached the watcher (QoS 1, resent
        # after the link came back: perhaps twice), except exactly those counted as lost.
        received = {_key(p) for p in seen.of("events")}
        missing = [p for p in published.of("events") if _key(p) not in received]
        assert stats["lost"]["events"] == len(missing) >= 100 - 64
        # the outage's telemetry was conflated into one waiting message, not queued
        assert stats["superseded"]["telemetry"] >= 20
        assert stats["reconnects"] == 1 and stats["down_s"] > 0
        assert stats["pending"] == 0
        assert watcher.stats()["reconnects"] == 1
        assert watcher.stats()["refused"] == {}  # everything it got was signed by the run

    asyncio.run(go())
