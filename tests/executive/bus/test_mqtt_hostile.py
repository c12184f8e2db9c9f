"""A bus no peer can knock over (issue 24), against a real Mosquitto of the test's own.

A flood of deep-nested, oversized and unsigned messages on ``cmd`` and on the out topics
costs neither link its connection, and a signed PAUSE sent in the middle is applied once; a
command re-signed with its id kept (what a requeue after a lost link does) is applied once,
across a reconnection; old signed messages republished (telemetry, a ``running`` status
after the run ended) are not believed by a watcher.

Waits are on messages, or on a bus's state polled every 20 ms; never a fixed sleep.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import aiomqtt
import pytest

from executive.bus.executive_link import CMD_MAX_BYTES
from executive.bus.mqtt import MqttBus
from executive.bus.signing import Signer
from mission.live.host import MissionHost
from tests.executive.bus.broker import Mosquitto
from tests.executive.bus.test_mqtt import Collector, _executive
from tests.executive.bus.test_mqtt_faults import until

TOKEN = "hostile-control-token"
WAIT = 60.0
DEEP = b"[" * 5000  # json.loads raises RecursionError on it


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    mosquitto = Mosquitto(tmp_path)
    mosquitto.start()
    try:
        yield mosquitto
    finally:
        mosquitto.stop()


def _signed_deep(topic: str) -> bytes:
    """A correctly signed message whose body nests too deep to parse (a token holder's
    mistake, or malice): the signature holds, the parse must not raise."""
    body = b'{"type":"command","x":' + DEEP + b"]" * 5000 + b"}"
    key = hmac.new(TOKEN.encode(), b"isr-mqtt-v1", hashlib.sha256).digest()
    sig = hmac.new(key, topic.encode() + b"\n" + body, hashlib.sha256).hexdigest()
    return body[:-1] + f',"sig":"{sig}"}}'.encode()


def _humans(seen: Collector, command: str) -> list[dict]:
    return [
        e for e in seen.of("events") if e["kind"] == "HUMAN_COMMAND" and e["command"] == command
    ]


@pytest.mark.mqtt
def test_a_flood_of_hostile_messages_costs_no_reconnect_and_pause_is_applied_once(broker):
    run_id = f"hostile-{uuid.uuid4().hex[:12]}"
    cmd = f"isr/{run_id}/cmd"

    async def go() -> None:
        executive = _executive(run_id)
        async with (
            MqttBus(broker.url, run_id=run_id, role="watcher", token=TOKEN) as watcher,
            MqttBus(broker.url, run_id=run_id, token=TOKEN) as bus,
        ):
            seen = Collector(watcher.subscribe(["events", "status"], maxsize=100_000))
            mission = asyncio.get_running_loop().create_task(MissionHost(executive, bus).run(2.0))
            try:
                await seen.until(seen.status_is("running"), WAIT)
                just_over = b'{"type":"command","command":"PAUSE","pad":"' + b"x" * CMD_MAX_BYTES
                unsigned = json.dumps({"type": "command", "command": "RESUME"}).encode()
                async with aiomqtt.Client("127.0.0.1", broker.port) as intruder:
                    for i in range(300):
                        await intruder.publish(cmd, DEEP, qos=1)
                        if i == 150:  # the operator's PAUSE, signed, in the middle of it
                            watcher.publish("cmd", {"type": "command", "command": "PAUSE"})
                        if i % 30 == 0:
                            await intruder.publish(cmd, just_over, qos=1)  # refused unread
                            await intruder.publish(cmd, b"[" * 2_000_000, qos=0)  # > packet
                            await intruder.publish(cmd, unsigned, qos=1)
                            await intruder.publish(cmd, _signed_deep(cmd), qos=1)
                        if i % 10 == 0:  # and the watcher's side: junk on the out topics
                            await intruder.publish(f"isr/{run_id}/status", DEEP, qos=1)
                            await intruder.publish(f"isr/{run_id}/telemetry", DEEP, qos=0)

                def refused() -> int:
                    return sum(bus.stats()["refused"].values())

                await until(lambda: refused() >= 300 + 3 * 10, "every refusal counted", WAIT)
                await seen.until(lambda: _humans(seen, "PAUSE"), WAIT)
                await until(lambda: executive.mode == "PAUSED", "the pause", WAIT)
                # a marker sent after everything: once it is applied, nothing else is coming
                watcher.publish("cmd", {"type": "command", "command": "RESUME"})
                await seen.until(lambda: _humans(seen, "RESUME"), WAIT)
            finally:
                executive.stop()
                await asyncio.wait_for(mission, WAIT)
            await seen.close()
        assert bus.reconnects == 0 and watcher.reconnects == 0
        assert len(_humans(seen, "PAUSE")) == 1 and len(_humans(seen, "RESUME")) == 1
        counts = bus.stats()["refused"]
        assert counts["not_json"] == 300 + 10  # the deep ones, signed or not: never parsed
        assert counts["too_large"] == 10 and counts["unsigned"] == 10
        assert bus.bad_messages == 0  # every one refused by rule, none by accident
        assert sum(watcher.stats()["refused"].values()) >= 30  # the out-topic junk
        echoes = [e["message"] for e in seen.of("events") if e["kind"] == "CMD_REJECTED"]
        assert echoes and max(len(str(m)) for m in echoes) < 300  # excerpts only

    asyncio.run(go())


@pytest.mark.mqtt
def test_a_command_re_signed_across_a_reconnection_is_applied_once(broker):
    run_id = f"hostile-{uuid.uuid4().hex[:12]}"
    cmd = f"isr/{run_id}/cmd"
    pause = {"type": "command", "command": "PAUSE", "id": uuid.uuid4().hex}

    async def go() -> None:
        executive = _executive(run_id)
        signer = Signer(TOKEN)
        async with (
            MqttBus(broker.url, run_id=run_id, role="watcher", token=TOKEN) as watcher,
            MqttBus(broker.url, run_id=run_id, token=TOKEN, backoff=(0.05, 0.2)) as bus,
        ):
            seen = Collector(watcher.subscribe(["events", "status"], maxsize=10_000))
            mission = asyncio.get_running_loop().create_task(MissionHost(executive, bus).run(2.0))
            try:
                await seen.until(seen.status_is("running"), WAIT)
                # what the watcher sends, and sends again after a lost link: signed afresh
                first = signer.seal_command(cmd, pause, sender=watcher.client_id)
                again = signer.seal_command(cmd, pause, sender=watcher.client_id)
                assert first != again and json.loads(first)["id"] == json.loads(again)["id"]
                async with aiomqtt.Client("127.0.0.1", broker.port) as sender:
                    await sender.publish(cmd, first, qos=1)
                await seen.until(lambda: _humans(seen, "PAUSE"), WAIT)
                broker.kill()  # the link is lost ...
                await until(lambda: bus.link.state == "down", "the executive's link down")
                broker.start()  # ... and comes back: the copy arrives after the reconnection
                await until(lambda: bus.link.state == "up", "the executive's link up", WAIT)
                await until(lambda: watcher.link.state == "up", "the watcher's link up", WAIT)
                async with aiomqtt.Client("127.0.0.1", broker.port) as sender:
                    await sender.publish(cmd, again, qos=1)
                    marker = {"type": "command", "command": "RESUME", "id": uuid.uuid4().hex}
                    await sender.publish(cmd, signer.seal_command(cmd, marker), qos=1)
                await seen.until(lambda: _humans(seen, "RESUME"), WAIT)
            finally:
                executive.stop()
                await asyncio.wait_for(mission, WAIT)
            await seen.close()
        assert bus.reconnects == 1
        paused = _humans(seen, "PAUSE")
        assert len(paused) == 1 and paused[0]["id"] == pause["id"]

    asyncio.run(go())


@pytest.mark.mqtt
def test_old_signed_messages_republished_are_not_believed(broker):
    run_id = f"hostile-{uuid.uuid4().hex[:12]}"

    async def go() -> None:
        executive = _executive(run_id)
        captured: dict[str, bytes] = {}
        async with (
            aiomqtt.Client("127.0.0.1", broker.port) as spy,
            MqttBus(broker.url, run_id=run_id, role="watcher", token=TOKEN) as watcher,
            MqttBus(broker.url, run_id=run_id, token=TOKEN) as bus,
        ):
            await spy.subscribe(f"isr/{run_id}/#", qos=1)

            async def listen() -> None:
                async for m in spy.messages:
                    name = str(m.topic).rsplit("/", 1)[-1]
                    data = bytes(m.payload)
                    state = json.loads(data).get("state") if name == "status" else None
                    key = f"status:{state}" if state else name
                    captured.setdefault(key, data)  # the first of each: the oldest

            spying = asyncio.get_running_loop().create_task(listen())
            seen = Collector(watcher.subscribe(["telemetry", "status"], maxsize=100_000))
            mission = asyncio.get_running_loop().create_task(MissionHost(executive, bus).run(4.0))
            try:
                await seen.until(lambda: len(seen.of("telemetry")) >= 20, WAIT)
                assert "telemetry" in captured and "status:running" in captured
                old = json.loads(captured["telemetry"])["tick"]
                async with aiomqtt.Client("127.0.0.1", broker.port) as replayer:
                    await replayer.publish(f"isr/{run_id}/telemetry", captured["telemetry"])
                await until(lambda: watcher.refused.get("old"), "the replay refused", WAIT)
                ticks = [t["tick"] for t in seen.of("telemetry")]
                assert ticks == sorted(ticks) and ticks[-1] > old, "no jump back"
            finally:
                executive.stop()
                await asyncio.wait_for(mission, WAIT)
            spying.cancel()
            await seen.close()

        # After the run: its old "running" status republished, retained, over the final one
        async with aiomqtt.Client("127.0.0.1", broker.port) as replayer:
            await replayer.publish(
                f"isr/{run_id}/status", captured["status:running"], qos=1, retain=True
            )
        async with MqttBus(broker.url, run_id=run_id, role="watcher", token=TOKEN) as late:
            heard = Collector(late.subscribe(["scene", "status"], maxsize=1000))
            await heard.until(lambda: heard.of("scene"), WAIT)
            await until(
                lambda: "older than the run's newest" in (late.link.reason or ""), "doubt", WAIT
            )
            assert late.link.commands is False  # a PAUSE now would be a 503, not a 202
            await heard.close()

    asyncio.run(go())
