"""The console's API (issue 26) against real missions on a real uvicorn: no command is ever
accepted for a run that is not there (409 with a reason, never a 202 for a message nobody
hears); one drone's commands (RETURN, HOLD, RESUME) are checked at the door, then taken by the
executive; Stop ends a live run; one fork starts at a time; a dashboard whose run nobody
watches stops it after its idle timeout; the hello says whether the dashboard serves a live
run at all, and which dashboard started this one."""

from __future__ import annotations

import asyncio
import functools

import httpx
import pytest

from dashboard.server import start_dashboard
from executive.bus import InProcessBus
from tests.conftest import copy_of
from tests.dashboard.harness import (
    AUTH,
    TIMEOUT,
    TOKEN,
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


ACTS = (
    ("/api/commands", {"command": "PAUSE"}),
    ("/api/commands", {"command": "RETURN", "drone": "2"}),
    ("/api/edits", {"op": "remove_target", "id": "T1"}),
    ("/api/speed", {"speed": 5}),
    ("/api/ask", {"question": "how much fuel does D2 have?"}),
    ("/api/stop", {"run_id": "0123456789abcdef"}),
)


@run_async
async def test_a_dashboard_of_stored_runs_refuses_every_command_with_its_reason():
    bus = InProcessBus()
    server = await start_dashboard(bus, host="127.0.0.1", port=0, token=TOKEN, live=False)
    sub = bus.subscribe(["cmd"], maxsize=64)
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=TIMEOUT) as http:
            for path, body in ACTS:
                r = await http.post(path, json=body, headers=AUTH)
                assert r.status_code == 409, (path, r.status_code, r.text)
                assert "no live run: this dashboard serves the stored runs" in r.json()["error"]
                assert "nothing was sent" in r.json()["error"]
        async with Frames(server.url.replace("http://", "ws://") + "/ws/live") as ws:
            hello = await ws.until(lambda f: f.get("type") == "hello")
            assert hello["live"] is False and hello["run_id"] is None
    finally:
        await server.stop()
    assert sub.pending() == 0  # nothing reached the bus


@run_async
async def test_a_live_dashboard_before_its_run_starts_says_so():
    bus = InProcessBus()
    server = await start_dashboard(bus, host="127.0.0.1", port=0, token=TOKEN)
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=TIMEOUT) as http:
            r = await http.post("/api/commands", json={"command": "PAUSE"}, headers=AUTH)
            assert r.status_code == 409 and "no live run yet" in r.json()["error"]
        async with Frames(server.url.replace("http://", "ws://") + "/ws/live") as ws:
            hello = await ws.until(lambda f: f.get("type") == "hello")
            assert hello["live"] is True and hello["back_url"] is None
    finally:
        await server.stop()


@run_async
async def test_one_drones_commands_are_checked_at_the_door_then_taken_by_the_executive():
    async with (
        live_mission(speed=20.0) as mission,
        httpx.AsyncClient(base_url=mission.url, timeout=TIMEOUT) as http,
        Frames(mission.ws_url) as ws,
    ):
        await ws.until(
            telemetry(lambda t: t["tick"] > 40 and t["drones"]["2"]["status"] == "flying"),
            what="D2 flying",
        )

        async def post(body):
            return await http.post("/api/commands", json=body, headers=AUTH)

        r = await post({"command": "RETURN"})
        assert r.status_code == 422 and r.json()["problems"] == [
            {"path": "$.drone", "message": "RETURN needs a drone's id"}
        ]
        r = await post({"command": "PAUSE", "drone": "2"})
        assert r.status_code == 422 and "for the whole mission" in r.json()["error"]
        r = await post({"command": "HOLD", "drone": "9"})
        assert r.status_code == 422 and r.json()["problems"][0]["message"] == (
            "no drone '9' in this mission"
        )
        r = await post({"command": "RETURN", "drone": "1"})  # D1 stays parked in the demo
        assert r.status_code == 409 and "D1 is parked, not airborne" in r.json()["error"]
        r = await post({"command": "RESUME", "drone": "2"})
        assert r.status_code == 409 and "D2 is flying, not holding" in r.json()["error"]

        r = await post({"command": "HOLD", "drone": "2"})
        assert r.status_code == 202, r.text
        assert r.json()["sent"] == {
            "id": r.json()["sent"]["id"],
            "type": "command",
            "command": "HOLD",
            "source": "dashboard",
            "drone": "2",
        }
        held = await ws.until(event(lambda e: e["kind"] == "HOLD"), what="HOLD")
        assert held["data"]["drone"] == "2" and held["data"]["reason"] == "operator: hold"
        await ws.until(
            lambda f: (
                f.get("type") == "scene"
                and f["data"]["drones"]["2"]["status"] == "holding"
                and f["data"]["drones"]["2"]["held"] == "operator: hold"
            ),
            what="D2 held by the operator in the scene",
        )
        r = await post({"command": "RESUME", "drone": "2"})
        assert r.status_code == 202, r.text
        await ws.until(
            event(lambda e: e["kind"] == "CONTINUE" and e.get("resumed") == ["2"]),
            what="D2 resumed",
        )
        r = await post({"command": "RETURN", "drone": "2"})
        assert r.status_code == 202, r.text
        home = await ws.until(event(lambda e: e["kind"] == "SAFETY_RETURN"), what="D2 sent home")
        assert home["data"]["drone"] == "2" and home["data"]["reason"] == "operator: return home"
        await ws.until(
            lambda f: (
                f.get("type") == "scene"
                and f["data"]["drones"]["2"]["returning"] == "operator: return home"
            ),
            what="D2 returning in the scene",
        )


@run_async
async def test_stop_ends_the_live_run_and_says_why():
    async with (
        live_mission(speed=20.0) as mission,
        httpx.AsyncClient(base_url=mission.url, timeout=TIMEOUT) as http,
        Frames(mission.ws_url) as ws,
    ):
        await ws.until(telemetry(lambda t: t["tick"] > 20), what="ticks")
        run_id = mission.executive.run_id
        r = await http.post("/api/stop", json={"run_id": "0" * 16}, headers=AUTH)
        assert r.status_code == 409 and f"is not the live run ({run_id})" in r.json()["error"]
        r = await http.post("/api/stop", json={"run_id": run_id}, headers=AUTH)
        assert r.status_code == 202 and r.json()["sent"] == {
            "id": r.json()["sent"]["id"],
            "type": "stop",
            "reason": "operator",
        }
        await ws.until(event(lambda e: e["kind"] == "STOPPED"), what="STOPPED")
        ended = await ws.until(
            lambda f: f.get("type") == "status" and f["data"]["state"] == "ended", what="ended"
        )
        assert ended["data"]["outcome"]["ticks"] < 20 * 1695  # long before the demo's end
        r = await http.post("/api/stop", json={"run_id": run_id}, headers=AUTH)
        assert r.status_code == 409 and "has ended" in r.json()["error"]


@run_async
async def test_a_run_nobody_watches_is_stopped_after_the_idle_timeout():
    async with live_mission(speed=20.0, idle_timeout_s=1.0) as mission:
        # watched: it flies on past the timeout
        async with Frames(mission.ws_url) as ws:
            first = await ws.until(telemetry(lambda t: t["tick"] > 0), what="telemetry")
            start = first["data"]["tick"]
            # at 20x, 400 ticks go by each wall second: 1200 ticks is three timeouts
            await ws.until(telemetry(lambda t: t["tick"] > start + 1200), what="3 s watched")
        assert not mission.task.done()
        # nobody watches any more: stopped within about the timeout
        report = await asyncio.wait_for(asyncio.shield(mission.task), TIMEOUT)
        stopped = [e for e in mission.executive.events_seen if e["kind"] == "STOPPED"]
        assert stopped and stopped[0]["reason"] == "no page watched this run for 1 s"
        assert report.ticks < 20 * 1695


@pytest.fixture(scope="module")
def stored(new_target_run, tmp_path_factory):
    """(url, run_id) of one finished new_target run (this module's copy of the session's)."""
    return copy_of(new_target_run, tmp_path_factory.mktemp("console"))


class _SlowForks:
    """A fork launcher that starts nothing until told to, and remembers what it was asked."""

    def __init__(self) -> None:
        self.go = asyncio.Event()
        self.asked: list[tuple[str, int, str | None]] = []

    async def __call__(self, run_id: str, tick: int, *, back_url: str | None = None):
        self.asked.append((run_id, tick, back_url))
        await self.go.wait()
        return {"run_id": "f" * 16, "url": "http://127.0.0.1:1/?token=x"}


def test_one_fork_starts_at_a_time(stored):
    url, run_id = stored

    async def main():
        forks = _SlowForks()
        server = await start_dashboard(
            InProcessBus(), port=0, token=TOKEN, trace_url=url, forks=forks, live=False
        )
        try:
            async with httpx.AsyncClient(base_url=server.url, timeout=TIMEOUT) as http:
                first = asyncio.create_task(
                    http.post(f"/api/runs/{run_id}/fork", json={"tick": 100}, headers=AUTH)
                )
                while not forks.asked:
                    await asyncio.sleep(0.01)
                second = await http.post(
                    f"/api/runs/{run_id}/fork", json={"tick": 200}, headers=AUTH
                )
                assert second.status_code == 409, second.text
                assert "a fork is already starting" in second.json()["error"]
                assert "at tick 100" in second.json()["error"]
                forks.go.set()
                done = await first
                assert done.status_code == 202, done.text
                third = await http.post(
                    f"/api/runs/{run_id}/fork", json={"tick": 300}, headers=AUTH
                )  # the first has started: the next may
                assert third.status_code == 202, third.text
        finally:
            await server.stop()
        return forks.asked, server.url

    asked, base = asyncio.run(main())
    assert [(r, t) for r, t, _ in asked] == [(run_id, 100), (run_id, 300)]
    assert all(back == base for _, _, back in asked)  # the fork's page links back here
