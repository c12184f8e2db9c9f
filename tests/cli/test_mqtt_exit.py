"""MQTT status on every exit, with a real Mosquitto (``tests.conftest.MQTT``): ``isr run --mqtt``
stopped by Ctrl-C (SIGINT) leaves ``interrupted`` as the run's retained status, by SIGTERM
``interrupted`` too (saying it was terminated), never a ghost ``running``; and ``isr dashboard
--mqtt`` that finds a ghost ``running`` run (nothing heard from it) marks it stale and moves
on to the live one."""

from __future__ import annotations

import asyncio
import signal
import time

import aiomqtt
import httpx
import pytest

from executive.bus.signing import Signer
from executive.bus.topics import mqtt_topic
from tests.conftest import MQTT
from tests.dashboard.harness import CliProcess

TOKEN = "exit-test-token"
BROKER = f"mqtt://{MQTT[0]}:{MQTT[1]}"


def _mission(*extra: str) -> CliProcess:
    return CliProcess(
        "run",
        "scenarios/demo.json",
        "--mqtt",
        BROKER,
        "--token",
        TOKEN,
        "--db",
        "none",
        "--no-agents",
        "--speed",
        "5",
        *extra,
    )


async def _retained_status(run_id: str, timeout: float = 10.0) -> dict:
    """The run's retained status on the broker, checked against the token's signature."""
    topic = mqtt_topic(run_id, "status")
    async with aiomqtt.Client(MQTT[0], MQTT[1]) as client:
        await client.subscribe(topic, qos=1)
        async with asyncio.timeout(timeout):
            async for message in client.messages:
                return Signer(TOKEN).open(topic, message.payload)
    raise AssertionError("unreachable")


def _status_when(run_id: str, wanted: str, timeout: float = 60.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        status = asyncio.run(_retained_status(run_id))
        if status["state"] == wanted or time.monotonic() > deadline:
            return status


def _started(mission: CliProcess, live: bool) -> str:
    pattern = r"run ([0-9a-f]+); Ctrl-C" if live else r"run ([0-9a-f]+) on MQTT"
    run_id = mission.wait_for(pattern)
    assert _status_when(run_id, "running")["state"] == "running"
    return run_id


@pytest.mark.mqtt
@pytest.mark.parametrize("live", [True, False], ids=["with-dashboard", "headless"])
def test_ctrl_c_leaves_interrupted_not_running(live):
    with _mission(*(("--port", "0") if live else ("--headless",))) as mission:
        run_id = _started(mission, live)
        assert mission.stop() == 130, "\n".join(mission.log)  # SIGINT, as Ctrl-C sends
    status = asyncio.run(_retained_status(run_id))
    assert status["run_id"] == run_id
    assert status["state"] == "interrupted", status


@pytest.mark.mqtt
def test_sigterm_leaves_interrupted_saying_so(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with _mission("--port", "0", "--db", url) as mission:  # the last --db wins
        run_id = _started(mission, live=True)
        assert mission.proc is not None
        mission.proc.send_signal(signal.SIGTERM)
        assert mission.proc.wait(timeout=60) == 143, "\n".join(mission.log)
    status = asyncio.run(_retained_status(run_id))
    assert status["state"] == "interrupted", status
    assert status["error"] == "terminated by SIGTERM"
    # The trace store says what the bus says.
    from executive.traces import TraceReader

    reader = TraceReader(url)
    row = reader.run(run_id)
    reader.close()
    assert (row["status"], row["outcome"]) == (
        "interrupted",
        {"error": "terminated by SIGTERM"},
    )


async def _publish_ghost(run_id: str, at: float) -> None:
    """A retained ``running`` status, signed with the token, of a run nobody flies."""
    topic = mqtt_topic(run_id, "status")
    payload = Signer(TOKEN).seal(topic, {"run_id": run_id, "state": "running", "at": at})
    async with aiomqtt.Client(MQTT[0], MQTT[1]) as client:
        await client.publish(topic, payload, qos=1, retain=True)


async def _clear(run_id: str) -> None:
    async with aiomqtt.Client(MQTT[0], MQTT[1]) as client:
        await client.publish(mqtt_topic(run_id, "status"), b"", qos=1, retain=True)


@pytest.mark.mqtt
def test_a_dashboard_leaves_a_ghost_running_run_for_the_live_one():
    ghost = f"ghost{int(time.time() * 1000):x}"
    with _mission("--headless") as mission:
        live_run = _started(mission, live=False)
        # newer than any run on the broker: the dashboard picks it first
        asyncio.run(_publish_ghost(ghost, time.time() + 3600))
        try:
            with CliProcess(
                "dashboard", "--mqtt", BROKER, "--token", TOKEN, "--port", "0",
                "--stale-after", "2",
            ) as watcher:  # fmt: skip
                url = watcher.wait_for(r"dashboard: (http://\S+?)/\?token=")
                assert ghost in watcher.wait_for(r"(watching run \S+)")
                stale = watcher.wait_for(r"(run \S+ says it is running but sent nothing)")
                assert ghost in stale
                moved_to = asyncio.run(_moved_on(url, ghost))
                assert watcher.stop() in (0, 130), "\n".join(watcher.log)
        finally:
            asyncio.run(_clear(ghost))
        # the newest live run once the ghost is left: ours (retained "running", ticking),
        # unless another test started a run on the shared broker meanwhile
        assert moved_to != ghost
        assert moved_to == live_run or not moved_to.startswith("ghost")
        assert mission.stop() == 130


async def _moved_on(url: str, ghost: str, timeout: float = 60.0) -> str:
    """Poll /api/state until the dashboard watches a run other than the ghost whose
    telemetry ticks on; that run's id."""
    first: int | None = None
    async with httpx.AsyncClient(base_url=url, timeout=10.0) as http:
        async with asyncio.timeout(timeout):
            while True:
                state = (await http.get("/api/state")).json()
                tick = state.get("tick")
                if state["run_id"] not in (None, ghost) and isinstance(tick, int):
                    assert state["link"]["stale"] is False
                    first = tick if first is None else first
                    if tick > first:
                        return str(state["run_id"])
                await asyncio.sleep(0.2)


@pytest.mark.mqtt
def test_the_final_status_goes_out_ahead_of_a_backlog():
    """A run stopping with thousands of messages still queued: its final status is sent
    first, so stop()'s bound on the rest cannot leave "running" on the broker."""
    from executive.bus.mqtt import MqttBus

    run_id = f"backlog{int(time.time() * 1000):x}"

    async def go() -> dict:
        bus = MqttBus(BROKER, run_id=run_id, token=TOKEN, timeout=0.2)
        await bus.start()
        bus.publish("status", {"run_id": run_id, "state": "running"})
        for i in range(5000):
            bus.publish("events", {"run_id": run_id, "tick": i, "kind": "X", "pad": "x" * 4000})
        assert bus.close_run("interrupted")
        await bus.stop()
        assert bus.lost.get("events", 0) > 0  # the bound did cut the backlog short
        return await _retained_status(run_id)

    try:
        assert asyncio.run(go())["state"] == "interrupted"
    finally:
        asyncio.run(_clear(run_id))


@pytest.mark.mqtt
def test_a_run_that_dies_of_an_exception_leaves_crashed_with_the_error():
    """The bus of a run whose task raises (``async with``, as a host would use it)."""
    from executive.bus.mqtt import MqttBus

    run_id = f"boom{int(time.time() * 1000):x}"

    async def go() -> None:
        async with MqttBus(BROKER, run_id=run_id, token=TOKEN) as bus:
            bus.publish("status", {"run_id": run_id, "state": "running"})
            raise RuntimeError("the planner blew up")

    try:
        with pytest.raises(RuntimeError):
            asyncio.run(go())
        status = asyncio.run(_retained_status(run_id))
        assert status["state"] == "crashed"
        assert status["error"] == "RuntimeError: the planner blew up"
    finally:
        asyncio.run(_clear(run_id))
