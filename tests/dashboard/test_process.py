"""The dashboard served by a process of its own (``dashboard.process``), against a real
mission (real ``MissionHost`` on an ``InProcessBus``, real uvicorn in a spawned process):
the run streams to the page, commands come back and are applied once, the doors (token,
the cap on anonymous viewers) hold, a port in use is refused at once, and stopping it ends
the process (``isr run``'s, on Ctrl-C or when the run is killed). What a client receives is
what the mission published, encoded once."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import socket
import time
from pathlib import Path

import httpx
import pytest
import websockets

from dashboard.errors import WS_TRY_AGAIN_LATER
from dashboard.process import DashboardProcess, start_dashboard_process
from dashboard.server import DashboardError
from executive.bus import InProcessBus
from tests.dashboard.harness import (
    AUTH,
    TIMEOUT,
    TOKEN,
    CliProcess,
    Frames,
    event,
    live_mission,
    telemetry,
)


def run_async(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return asyncio.run(asyncio.wait_for(fn(*args, **kwargs), 4 * TIMEOUT))

    return wrapper


@run_async
async def test_the_run_streams_from_another_process_and_its_commands_come_back_once():
    async with live_mission(serve=start_dashboard_process) as mission:
        server = mission.server
        assert isinstance(server, DashboardProcess)
        assert server.process.pid != os.getpid() and server.running
        async with (
            Frames(mission.ws_url, token=TOKEN) as ws,
            httpx.AsyncClient(base_url=mission.url, timeout=TIMEOUT) as http,
        ):
            hello = await ws.next()
            assert hello["type"] == "hello" and hello["truth"] is True
            frame = await ws.until(telemetry(lambda t: t["tick"] > 5), what="telemetry")
            # the text the page gets is the payload as published, encoded once (compact)
            assert ws.last_text == json.dumps(frame, separators=(",", ":"))
            state = (await http.get("/api/state")).json()
            assert state["run_id"] == mission.executive.run_id
            assert state["link"]["state"] == "local" and state["link"]["commands"] is True
            sent = await http.post("/api/commands", json={"command": "PAUSE"}, headers=AUTH)
            assert sent.status_code == 202, sent.text
            command_id = sent.json()["sent"]["id"]
            applied = await ws.until(
                event(lambda e: e["kind"] == "HUMAN_COMMAND"), what="the PAUSE applied"
            )
            assert applied["data"]["command"] == "PAUSE"
            assert command_id in json.dumps(applied["data"])
            # the same command again (a requeue) is not applied twice
            mission.bus.publish("cmd", {**sent.json()["sent"]})
            await asyncio.sleep(0.5)
            assert mission.host.duplicates == 1
            assert mission.bus.stats()["published"] > 0
    assert not server.running  # stopped with the mission


@run_async
async def test_viewers_without_the_token_are_capped_in_the_viewers_process():
    async with (
        live_mission(serve=start_dashboard_process, max_anonymous_viewers=1) as mission,
        Frames(mission.ws_url) as one,
        httpx.AsyncClient(base_url=mission.url, timeout=TIMEOUT) as http,
    ):
        assert (await one.next())["truth"] is False
        async with Frames(mission.ws_url) as two:
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await asyncio.wait_for(two.next(), TIMEOUT)
            assert closed.value.rcvd.code == WS_TRY_AGAIN_LATER
        async with Frames(mission.ws_url, token=TOKEN) as operator:
            assert (await operator.next())["truth"] is True
        missing = await http.post("/api/commands", json={"command": "PAUSE"})
        assert missing.status_code == 401


@run_async
async def test_a_port_in_use_is_refused_before_any_process_starts():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(DashboardError, match="already in use"):
            await start_dashboard_process(InProcessBus("r1"), port=port, token=TOKEN)


def test_a_viewers_process_that_dies_is_said_not_silent(caplog):
    """Killed under a live run: the mission's process says the dashboard is gone (an ERROR
    naming its address) and flies on; a stop asked for is not reported as a loss."""

    async def go() -> DashboardProcess:
        bus = InProcessBus("r-dies")
        server = await start_dashboard_process(bus, port=0, token=TOKEN)
        try:
            server.process.kill()
            deadline = time.monotonic() + TIMEOUT
            while not server.lost and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
        finally:
            await server.stop()
        return server

    with caplog.at_level("ERROR", logger="dashboard.process"):
        server = asyncio.run(go())
    assert server.lost is True
    said = [r.getMessage() for r in caplog.records if r.name == "dashboard.process"]
    assert len(said) == 1 and server.url in said[0] and "no longer served" in said[0], said


@run_async
async def test_a_stopped_dashboard_is_not_reported_lost():
    server = await start_dashboard_process(InProcessBus("r-stops"), port=0, token=TOKEN)
    await server.stop()
    assert server.lost is False and not server.running


@run_async
async def test_a_dashboard_that_cannot_start_says_why():
    with pytest.raises(DashboardError, match="did not start"):
        # create_app refuses an unknown option: raised over there, reported here
        await start_dashboard_process(InProcessBus("r1"), port=0, token=TOKEN, no_such=1)


def _viewers_of(pid: int) -> list[int]:
    """The children of ``pid`` that are multiprocessing's spawned processes."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            with contextlib.suppress(OSError):
                cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
                if b"spawn_main" in cmdline:
                    found.append(int(child))
    return found


def _gone(pid: int) -> bool:
    try:  # a zombie (no reaper in a container) is gone too
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@pytest.mark.parametrize("ending", ["ctrl-c", "kill -9"])
def test_isr_run_serves_its_dashboard_from_a_process_that_ends_with_the_run(ending):
    with CliProcess(
        "run", "scenarios/demo.json", "--port", "0", "--token", TOKEN, "--db", "none",
        "--no-agents", "--speed", "4",
    ) as cli:  # fmt: skip
        url = cli.wait_for(r"dashboard: (http://\S+?)/\?token=")
        assert cli.proc is not None
        viewers = _viewers_of(cli.proc.pid)
        assert len(viewers) == 1, viewers
        state = httpx.get(f"{url}/api/state", timeout=TIMEOUT).json()
        assert state["link"]["state"] == "local"
        if ending == "kill -9":  # no goodbye: the viewers' process sees its link end
            cli.proc.kill()
            cli.proc.wait(TIMEOUT)
    deadline = time.monotonic() + TIMEOUT
    while not _gone(viewers[0]):
        assert time.monotonic() < deadline, f"the viewers' process outlived the run ({ending})"
        time.sleep(0.2)
