"""``isr dashboard --mqtt``: a dashboard in a process of its own, fed by the real Mosquitto
broker (``tests.conftest.MQTT``), watching a mission that ``isr run --mqtt`` flies in another
process. It mirrors the run, and a command sent through it takes effect in the mission.
Both are given the same control token: the mission's MQTT messages are signed with it."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from tests.conftest import MQTT
from tests.dashboard.harness import TIMEOUT, CliProcess, Frames, event, telemetry


@pytest.fixture
def broker() -> str:
    return f"mqtt://{MQTT[0]}:{MQTT[1]}"


@pytest.mark.mqtt
def test_a_watcher_dashboard_mirrors_and_commands_a_mission_over_mqtt(broker):
    with CliProcess(
        "run",
        "scenarios/demo.json",
        "--mqtt",
        broker,
        "--port",
        "0",
        "--token",
        "shared-token",
        "--db",
        "none",
        "--speed",
        "20",
    ) as mission:
        run_id = mission.wait_for(r"run ([0-9a-f]+); Ctrl-C")
        with CliProcess(
            "dashboard", "--mqtt", broker, "--run", run_id, "--port", "0", "--token", "shared-token"
        ) as watcher:
            url = watcher.wait_for(r"dashboard: (http://\S+?)/\?token=shared-token")
            assert run_id in watcher.wait_for(r"(watching run \S+)")
            asyncio.run(asyncio.wait_for(_watch_and_pause(url, run_id), 4 * TIMEOUT))
            assert watcher.stop() in (0, 130), "\n".join(watcher.log)
        assert mission.stop() in (0, 130), "\n".join(mission.log)


async def _watch_and_pause(url: str, run_id: str) -> None:
    ws_url = url.replace("http://", "ws://") + "/ws/live"
    async with httpx.AsyncClient(base_url=url, timeout=TIMEOUT) as http, Frames(ws_url) as ws:
        frame = await ws.until(
            telemetry(lambda t: t["mode"] == "FLYING" and t["tick"] > 20),
            what="telemetry through the broker",
        )
        assert frame["data"]["run_id"] == run_id
        r = await http.post(
            "/api/commands",
            json={"command": "PAUSE"},
            headers={"Authorization": "Bearer shared-token"},
        )
        assert r.status_code == 202, r.text
        command_id = r.json()["sent"]["id"]  # one id from the door to the executive
        human = await ws.until(
            event(lambda e: e["kind"] == "HUMAN_COMMAND" and e["command"] == "PAUSE"),
            what="the PAUSE applied",
        )
        assert human["data"]["id"] == command_id
        await ws.until(
            telemetry(lambda t: t["mode"] == "PAUSED"), what="mode PAUSED through the broker"
        )
        state = (await http.get("/api/state")).json()
        assert state["run_id"] == run_id and state["mode"] == "PAUSED"
        assert state["scene"] and state["scene"]["airports"]
        assert state["link"]["state"] == "up" and state["link"]["commands"] is True
        # another token does not command through it
        r = await http.post(
            "/api/commands",
            json={"command": "RESUME"},
            headers={"Authorization": "Bearer another-token"},
        )
        assert r.status_code == 401
