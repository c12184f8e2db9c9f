"""The bus carried over a socket pair (``executive.bus.pipe``), both ends in one loop over a
real socket pair: out-topic messages arrive as published, with their JSON kept for reuse;
``cmd`` goes back; a reader that never reads does not slow the publisher; the end of the
stream says the link is down."""

from __future__ import annotations

import asyncio
import json
import socket
import time

from executive.bus import InProcessBus
from executive.bus.pipe import PipeBridge, PipeBus, encode


async def _ends(bus: InProcessBus, **options) -> tuple[PipeBridge, PipeBus]:
    ours, theirs = socket.socketpair()
    bridge = PipeBridge(bus, *await asyncio.open_connection(sock=ours), **options)
    far = PipeBus(bus.run_id, *await asyncio.open_connection(sock=theirs))
    return bridge, far


async def _wait(check, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, "not within the time"
        await asyncio.sleep(0.01)
    return found


def test_messages_cross_as_published_and_commands_come_back():
    async def main() -> None:
        bus = InProcessBus("r1")
        bus.publish("status", {"run_id": "r1", "state": "running"})  # retained: first
        bridge, far = await _ends(bus)
        sub = far.subscribe(["telemetry", "events", "status"])
        await bridge.start()
        await far.start()
        payload = {"run_id": "r1", "tick": 3, "time": 0.1 + 0.2, "name": 'é\n"x"'}
        bus.publish("telemetry", payload)
        bus.publish("events", {"run_id": "r1", "tick": 3, "kind": "X"})
        got = {m.topic: m for m in [await asyncio.wait_for(sub.get(), 10) for _ in range(3)]}
        assert got["status"].payload["state"] == "running"
        assert got["telemetry"].payload == payload
        # what the page is sent, never encoded again
        assert got["telemetry"].encoded == encode(payload)
        assert json.loads(got["telemetry"].encoded) == payload
        commands = bus.subscribe(["cmd"])
        far.publish("cmd", {"type": "command", "command": "PAUSE", "id": "c1"})
        cmd = await asyncio.wait_for(commands.get(), 10)
        assert cmd.payload == {"type": "command", "command": "PAUSE", "id": "c1"}
        assert bridge.commands == 1 and far.link.state == "local"
        await bridge.stop()
        await asyncio.wait_for(far.closed.wait(), 10)
        assert far.link.state == "down" and far.link.commands is False
        await far.stop()

    asyncio.run(main())


def test_a_far_end_that_never_reads_does_not_slow_the_publisher():
    async def main() -> None:
        bus = InProcessBus("r1")
        bridge, far = await _ends(bus, maxsize=64)  # far never starts: nothing is read
        await bridge.start()
        blob = "x" * 20_000
        started = time.perf_counter()
        for tick in range(5000):
            bus.publish("telemetry", {"run_id": "r1", "tick": tick, "blob": blob})
            bus.publish("events", {"run_id": "r1", "tick": tick, "kind": "X"})
            if tick % 100 == 0:
                await asyncio.sleep(0)  # the bridge runs, fills the socket, then waits
        took = time.perf_counter() - started
        sub = bridge.subscription
        assert sub is not None
        await _wait(lambda: sub.dropped.get("events", 0) > 0)
        assert sub.pending() <= 64 + 1  # bounded: the queue, one telemetry slot
        assert took < 5.0, took  # publish never waited on the far end
        await bridge.stop()
        await far.stop()

    asyncio.run(main())
