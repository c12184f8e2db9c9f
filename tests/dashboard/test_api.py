"""The dashboard's REST API and live websocket against a real mission: a real uvicorn on an
ephemeral 127.0.0.1 port, fed by a real ``MissionHost(Executive(...))`` on an in-process bus,
flying at 20x real time with the algorithmic planner. Every wait is on an event (a frame, a
response) with a generous timeout; nothing sleeps on the wall clock."""

from __future__ import annotations

import asyncio
import base64
import functools
import json
import os
import posixpath
import re
import socket

import httpx
import pytest

from dashboard.server import DashboardError, start_dashboard
from executive.bus import InProcessBus
from planner.mission import compile_mission
from planner.model import Solution
from planner.scenario import parse_scenario
from planner.validation import validate_solution
from tests.dashboard.harness import (
    AUTH,
    SCENARIOS,
    TIMEOUT,
    TOKEN,
    Frames,
    event,
    live_mission,
    scene,
    telemetry,
)


def run_async(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return asyncio.run(asyncio.wait_for(fn(*args, **kwargs), 4 * TIMEOUT))

    return wrapper


def _client(mission) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=mission.url, timeout=TIMEOUT)


def _demo() -> dict:
    return json.loads((SCENARIOS / "demo.json").read_text())


def _paths(response) -> list[str]:
    body = response.json()
    assert set(body) == {"error", "problems"}, body
    return [p["path"] for p in body["problems"]]


# ----- authorisation and bad input -------------------------------------------------------


@run_async
async def test_commanding_needs_the_token_reading_does_not():
    async with live_mission() as mission, _client(mission) as http:
        for path, body in (
            ("/api/commands", {"command": "PAUSE"}),
            ("/api/edits", {"op": "remove_target", "id": "T1"}),
            ("/api/speed", {"speed": 5}),
            ("/api/ask", {"question": "how far is D1 from home?"}),
        ):
            missing = await http.post(path, json=body)
            assert missing.status_code == 401, (path, missing.text)
            assert "token" in missing.json()["error"]
            assert missing.headers["www-authenticate"] == "Bearer"
            wrong = await http.post(path, json=body, headers={"Authorization": "Bearer nope"})
            assert wrong.status_code == 401 and "wrong" in wrong.json()["error"]
        for path in (
            "/api/state",
            "/api/events",
            "/api/agents",
            "/api/clients",
            "/api/health",
            "/",
            "/static/app.js",
            "/static/style.css",
            "/openapi.json",
        ):
            assert (await http.get(path)).status_code == 200, path
        # nothing was commanded: the mission still flies
        state = (await http.get("/api/state")).json()
        assert state["mode"] != "PAUSED"


@run_async
async def test_the_api_docs_work_offline():
    """/docs loads Swagger UI from this server, never from a CDN."""
    async with live_mission() as mission, _client(mission) as http:
        page = await http.get("/docs")
        assert page.status_code == 200
        assets = [
            a
            for a in ("/docs-static/swagger-ui-bundle.js", "/docs-static/swagger-ui.css")
            if a in page.text
        ]
        assert len(assets) == 2 and "cdn" not in page.text.lower()
        for asset in assets:
            assert (await http.get(asset)).status_code == 200, asset
        spec = (await http.get("/openapi.json")).json()
        assert {"/api/commands", "/api/edits", "/api/ask", "/api/agent_solve"} <= set(spec["paths"])


@run_async
async def test_the_page_modules_are_served_as_javascript():
    """The page's ES modules, followed from index.html through their imports, are all served
    as JavaScript (a browser refuses a module script of another type) and revalidated."""
    bus = InProcessBus("modules")
    server = await start_dashboard(bus, port=0, token=TOKEN)
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=TIMEOUT) as http:
            page = (await http.get("/")).text
            todo = re.findall(r'<script type="module" src="([^"]+)"', page)
            assert todo == ["/static/app.js"]
            seen: set[str] = set()
            while todo:
                path = todo.pop()
                if path in seen:
                    continue
                seen.add(path)
                r = await http.get(path)
                assert r.status_code == 200, path
                assert r.headers["content-type"].startswith("text/javascript"), path
                assert r.headers["cache-control"] == "no-cache", path
                base = path.rsplit("/", 1)[0]
                for rel in re.findall(r'^import [^;]*? from "(\./[^"]+)";', r.text, re.M):
                    todo.append(posixpath.normpath(f"{base}/{rel}"))
            assert len(seen) > 10  # app.js and its modules, one idea each
    finally:
        await server.stop()


@run_async
async def test_bad_commands_and_edits_get_422_naming_the_field():
    async with live_mission() as mission, _client(mission) as http:
        r = await http.post("/api/commands", json={"command": "PAUS"}, headers=AUTH)
        assert r.status_code == 422 and _paths(r) == ["$.command"]
        assert "PAUSE" in r.json()["problems"][0]["message"]
        r = await http.post("/api/commands", json={"command": "CUT", "txt": "x"}, headers=AUTH)
        assert r.status_code == 422 and _paths(r) == ["$.txt"]
        r = await http.post(
            "/api/edits",
            json={"op": "add_sam", "id": "S9", "pos": [50, 50], "range": -5},
            headers=AUTH,
        )
        assert r.status_code == 422 and _paths(r) == ["$.range"]
        r = await http.post(
            "/api/edits",
            json={"op": "add_target", "id": "T77", "x": 1, "priority": 3, "type": "A"},
            headers=AUTH,
        )
        assert r.status_code == 422 and _paths(r) == ["$.y"]
        r = await http.post("/api/edits", json={"op": "teleport", "id": "T1"}, headers=AUTH)
        assert r.status_code == 422 and _paths(r) == ["$.op"]
        assert "add_sam" in r.json()["problems"][0]["message"]
        r = await http.post(
            "/api/edits", json={"op": "remove_target", "id": "T1", "tick": 3}, headers=AUTH
        )
        assert r.status_code == 422 and _paths(r) == ["$.tick"]
        r = await http.post("/api/edits", json=[1, 2], headers=AUTH)
        assert r.status_code == 422 and _paths(r) == ["$"]
        r = await http.post("/api/speed", json={"speed": 0}, headers=AUTH)
        assert r.status_code == 422 and _paths(r) == ["$.speed"]
        r = await http.post("/api/ask", json={"question": ""}, headers=AUTH)
        assert r.status_code == 422 and _paths(r) == ["$.question"]
        for blank in (" \t", "\x1d"):  # blank once stripped: refused, not left to time out
            r = await http.post("/api/ask", json={"question": blank}, headers=AUTH)
            assert r.status_code == 422 and "blank" in r.json()["error"]
        r = await http.get("/api/events", params={"since": -1})
        assert r.status_code == 422 and _paths(r) == ["query.since"]
        r = await http.post(
            "/api/commands",
            content=b"{not json",
            headers={**AUTH, "content-type": "application/json"},
        )
        assert r.status_code == 422 and _paths(r) == ["$"]
        assert "malformed JSON" in r.json()["error"]
        r = await http.post(
            "/api/agent_solve",
            content=b"x" * 2_000_000,
            headers={"content-type": "application/json"},
        )
        assert r.status_code == 413 and "too large" in r.json()["error"]

        async def chunked():  # no Content-Length: counted as it streams
            for _ in range(30):
                yield b" " * 100_000

        r = await http.post(
            "/api/agent_solve", content=chunked(), headers={"content-type": "application/json"}
        )
        assert r.status_code == 413 and "too large" in r.json()["error"]
        # none of it reached the mission: no CMD_REJECTED event was needed
        events = (await http.get("/api/events")).json()["events"]
        assert not [e for e in events if e["kind"] == "CMD_REJECTED"]


@run_async
async def test_nothing_a_client_sends_gets_a_500():
    junk = [
        b"",
        b"null",
        b"[]",
        b'"PAUSE"',
        b"{}",
        b'{"command": null}',
        b'{"op": {"x": 1}}',
        b'{"speed": "fast"}',
        b'{"speed": 1e999}',
        b'{"environment": [], "drone_configs": 3}',
        b"\xff\xfe",
        b"{" * 5000,
        json.dumps({"environment": {"airports": []}, "drone_configs": {}}).encode(),
        json.dumps({"solution": {"routes": {"1": ["A1"]}}}).encode(),
    ]
    paths = [
        "/api/commands",
        "/api/edits",
        "/api/speed",
        "/api/ask",
        "/api/agent_solve",
        "/api/insert_missed_optimize",
        "/api/trajectory_swap_optimize",
        "/api/crossing_removal_optimize",
    ]
    async with live_mission() as mission, _client(mission) as http:
        for path in paths:
            for body in junk:
                r = await http.post(
                    path, content=body, headers={**AUTH, "content-type": "application/json"}
                )
                assert 400 <= r.status_code < 500, (path, body[:40], r.status_code, r.text)
                assert r.json()["error"], (path, body[:40])
        for path in ("/api/runs/zz", "/api/nothing", "/api/events?limit=abc"):
            r = await http.get(path)
            assert 400 <= r.status_code < 500 and r.json()["error"], path
        assert (await http.delete("/api/state")).status_code == 405


# ----- commands and edits take effect ----------------------------------------------------


@run_async
async def test_pause_then_resume_take_effect():
    async with live_mission() as mission, _client(mission) as http, Frames(mission.ws_url) as ws:
        await ws.until(
            telemetry(lambda t: t["mode"] == "FLYING" and t["tick"] > 20),
            what="telemetry while flying",
        )
        r = await http.post("/api/commands", json={"command": "PAUSE"}, headers=AUTH)
        assert r.status_code == 202, r.text
        sent = r.json()["sent"]
        assert len(sent.pop("id")) == 32  # the command's one id, given at the door
        assert sent == {"type": "command", "command": "PAUSE", "source": "dashboard"}
        await ws.until(telemetry(lambda t: t["mode"] == "PAUSED"), what="mode PAUSED")
        state = (await http.get("/api/state")).json()
        assert state["mode"] == "PAUSED"
        assert state["run_id"] == mission.executive.run_id
        await ws.until(
            telemetry(lambda t: any(d["status"] == "holding" for d in t["drones"].values())),
            what="a drone holding",
        )
        r = await http.post("/api/commands", json={"command": "RESUME"}, headers=AUTH)
        assert r.status_code == 202
        await ws.until(telemetry(lambda t: t["mode"] != "PAUSED"), what="mode no longer PAUSED")
        kinds = [e["kind"] for e in (await http.get("/api/events")).json()["events"]]
        assert "PAUSE" in kinds and "CONTINUE" in kinds


@run_async
async def test_an_added_target_appears_in_the_scene_and_events():
    async with (
        live_mission("new_target.json") as mission,
        _client(mission) as http,
        Frames(mission.ws_url) as ws,
    ):
        hello = await ws.next()
        assert hello["type"] == "hello"
        r = await http.post(
            "/api/edits",
            json={
                "op": "add_target",
                "id": "T99",
                "x": 30.0,
                "y": 60.0,
                "priority": 7,
                "type": "A",
            },
            headers=AUTH,
        )
        assert r.status_code == 202, r.text
        assert r.json()["edit"] == "add target T99 (A, priority 7) at (30, 60)"
        applied = await ws.until(
            event(lambda e: e["kind"] == "edit_applied" and e["edit"]["id"] == "T99"),
            what="edit_applied T99",
        )
        assert applied["data"]["edit"]["source"] == "operator"
        await ws.until(
            scene(lambda s: any(t["id"] == "T99" for t in s["targets"])), what="a scene with T99"
        )
        state = (await http.get("/api/state")).json()
        t99 = next(t for t in state["scene"]["targets"] if t["id"] == "T99")
        assert (t99["x"], t99["y"], t99["priority"], t99["type"]) == (30.0, 60.0, 7, "A")
        # a changed target set is a replan trigger: the executive cuts and replans
        await ws.until(
            event(lambda e: e["kind"] == "CUT_AND_FREEZE" and "add_target:T99" in e["trigger"]),
            what="a cut for T99",
        )
        since = applied["data"]["tick"]
        found = (await http.get("/api/events", params={"since": 0, "limit": 5000})).json()
        mine = [
            e for e in found["events"] if e["kind"] == "edit_applied" and e["edit"]["id"] == "T99"
        ]
        assert len(mine) == 1 and mine[0]["tick"] == since
        newer = (await http.get("/api/events", params={"since": mine[0]["seq"]})).json()
        assert all(e["seq"] > mine[0]["seq"] for e in newer["events"])


@run_async
async def test_speed_changes_the_pace():
    async with live_mission() as mission, _client(mission) as http, Frames(mission.ws_url) as ws:
        r = await http.post("/api/speed", json={"speed": 5}, headers=AUTH)
        assert r.status_code == 202
        await ws.until(scene(lambda s: s["speed"] == 5.0), what="a scene at 5x")
        r = await http.post("/api/speed", json={"speed": None}, headers=AUTH)
        assert r.status_code == 202
        await ws.until(scene(lambda s: s["speed"] is None), what="a scene at max speed")


@run_async
async def test_ask_round_trips_through_the_bus():
    async with live_mission() as mission, _client(mission) as http, Frames(mission.ws_url) as ws:
        await ws.until(telemetry(lambda t: t["tick"] > 10), what="telemetry")
        r = await http.post(
            "/api/ask", json={"question": "how much fuel does D2 have left?"}, headers=AUTH
        )
        assert r.status_code == 200, r.text
        answer = r.json()
        assert answer["question"] == "how much fuel does D2 have left?"
        assert answer["run_id"] == mission.executive.run_id
        assert answer["answer"] and answer["id"]
        assert answer["intent"] not in ("error", "unavailable"), answer
        # the coordinator's agent runs arrive on the agents topic: a tree by parent
        agents = (await http.get("/api/agents")).json()
        assert agents["count"] >= 1
        ids = {r["run_id"] for r in agents["runs"]}
        assert set(answer.get("agent_runs", [])[:1]) <= ids  # the root comes first


@run_async
async def test_commands_after_the_run_ended_are_a_409():
    async with live_mission() as mission, _client(mission) as http, Frames(mission.ws_url) as ws:
        mission.executive.stop()
        await ws.until(
            lambda f: f["type"] == "status" and f["data"]["state"] == "ended", what="status ended"
        )
        for path, body in (
            ("/api/commands", {"command": "PAUSE"}),
            ("/api/ask", {"question": "anyone?"}),
            ("/api/speed", {"speed": 3}),
        ):
            r = await http.post(path, json=body, headers=AUTH)
            assert r.status_code == 409, (path, r.text)
            assert f"run {mission.executive.run_id} has ended" in r.json()["error"]


@run_async
async def test_ask_without_a_listener_is_a_504():
    bus = InProcessBus("lonely")
    server = await start_dashboard(bus, port=0, token=TOKEN, ask_timeout_s=0.5)
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=TIMEOUT) as http:
            r = await http.post("/api/ask", json={"question": "anyone there?"}, headers=AUTH)
            assert r.status_code == 504 and "no answer within 0.5 s" in r.json()["error"]
    finally:
        await server.stop()


# ----- the websocket ---------------------------------------------------------------------


@run_async
async def test_websocket_hello_then_telemetry_with_increasing_ticks():
    async with live_mission() as mission, Frames(mission.ws_url) as ws:
        hello = await ws.next()
        assert hello["type"] == "hello"
        assert set(hello) >= {"scene", "events", "agents", "telemetry", "run_id", "client"}
        assert hello["scene"] is None or hello["scene"]["airports"]
        ticks = []
        while len(ticks) < 30:
            frame = await asyncio.wait_for(ws.next(), TIMEOUT)
            assert frame["type"] in (
                "telemetry",
                "scene",
                "events",
                "agents",
                "plan",
                "status",
                "stats",
                "answers",
            ), frame["type"]
            if frame["type"] == "telemetry":
                assert set(frame["data"]["drones"]) == {"1", "2", "3"}
                ticks.append(frame["data"]["tick"])
        assert ticks == sorted(ticks) and len(set(ticks)) == len(ticks), ticks
        assert ticks[-1] > ticks[0]
        scene_frame = await ws.until(lambda f: f["type"] == "scene", what="a scene frame")
        drones = scene_frame["data"]["drones"]
        assert {"flown", "frozen", "planned", "margin_km", "heading"} <= set(drones["2"])


async def _stalled_client(host: str, port: int) -> socket.socket:
    """A websocket client that completes the handshake and then never reads (a small
    receive buffer so the server's side fills quickly)."""
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await loop.sock_connect(sock, (host, port))
    key = base64.b64encode(os.urandom(16)).decode()
    await loop.sock_sendall(
        sock,
        (
            f"GET /ws/live HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        ).encode(),
    )
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = await loop.sock_recv(sock, 1)
        assert chunk, "the server closed the connection during the handshake"
        head += chunk
    assert head.startswith(b"HTTP/1.1 101"), head
    return sock


@run_async
async def test_a_client_that_never_reads_drops_frames_while_the_run_keeps_ticking():
    async with (
        live_mission() as mission,
        _client(mission) as http,
        Frames(mission.ws_url) as reader,
    ):
        await reader.until(telemetry(lambda t: t["tick"] > 5), what="telemetry")
        stalled = await _stalled_client("127.0.0.1", mission.server.port)
        try:
            clients = (await http.get("/api/clients")).json()["clients"]
            assert len(clients) == 2
            mine = max(c["id"] for c in clients)  # the stalled one connected last
            first_tick = mission.executive.sim.tick

            def stalled_info():
                # connected, or already let go (its socket's buffers full): its counts either way
                streams = mission.server.app.state.streams
                everyone = [*streams.clients(), *streams.departed()]
                return next((c for c in everyone if c["id"] == mine), {"dropped_total": 0})

            # Each frame the healthy client reads is the event to look again. Telemetry and
            # scene are capped per client (#17): what a stalled client cannot take is first
            # superseded by newer frames, and dropped from its queue once its socket is full.
            await reader.until(
                lambda f: (
                    stalled_info().get("superseded", 0) + stalled_info()["dropped_total"] > 20
                ),
                what="frames the stalled client did not get, counted",
            )
            listed = (await http.get("/api/clients")).json()
            info = next(c for c in listed["clients"] + listed["departed"] if c["id"] == mine)
            assert info["superseded"] + info["dropped_total"] > 20
            assert info["lost"] == 0  # only telemetry and scene thinned: no event lost
            assert info["pending"] <= 256 + 2  # bounded: the queue plus two latest slots
            # the run kept ticking, and the healthy client still gets fresh telemetry
            frame = await reader.until(
                telemetry(lambda t: t["tick"] > first_tick + 100), what="telemetry past the stall"
            )
            assert frame["data"]["tick"] > first_tick + 100
            healthy = next(
                c for c in (await http.get("/api/clients")).json()["clients"] if c["id"] != mine
            )
            # (telemetry and scene at most 30 frames a second each since #17: the newest)
            assert healthy["sent"] >= 10  # fresh frames, not one per tick
        finally:
            stalled.close()
        # the stalled client's disconnect cleans its subscription up
        await reader.until(
            lambda f: len(mission.server.app.state.streams.clients()) == 1,
            what="the stalled client forgotten",
        )
        assert len(mission.bus.subscribers()) == 3  # mirror, host's cmd, the healthy client
        # ... and its final counts stay readable
        gone = (await http.get("/api/clients")).json()["departed"]
        assert [c["id"] for c in gone] == [mine] and gone[0]["left"]
        assert gone[0]["dropped_total"] >= info["dropped_total"]


@run_async
async def test_each_frame_is_encoded_once_for_all_clients():
    async with live_mission() as mission, Frames(mission.ws_url) as a, Frames(mission.ws_url) as b:
        fa = await a.until(telemetry(lambda t: t["tick"] > 40), what="telemetry on a")
        fb = await b.until(
            telemetry(lambda t: t["tick"] >= fa["data"]["tick"]), what="telemetry on b"
        )
        assert fb["data"]["tick"] >= fa["data"]["tick"]
        cache = mission.server.app.state.streams.cache
        # b reads on until a frame a's request encoded is handed to it as text already made
        # (on a loaded machine b may lag a by more than the cache's 256 frames at first)
        await b.until(lambda f: cache.hits > 0, what="a frame encoded once, sent to both")
        assert cache.hits > 0 and cache.encoded > 0


# ----- the planning API (stateless) ------------------------------------------------------


@run_async
async def test_agent_solve_returns_a_valid_solution_on_the_demo():
    demo = _demo()
    async with live_mission() as mission, _client(mission) as http:
        r = await http.post(
            "/api/agent_solve",
            json={
                "user_message": "Generate optimal routes maximizing priority points",
                "environment": demo["environment"],
                "drone_configs": demo["drone_configs"],
                "preferences": {"allocation_strategy": "efficient", "iterations": 500},
            },
        )
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["success"] is True and body["response"].startswith("MISSION PLAN COMPUTED")
        solution = Solution.model_validate(
            {
                k: body[k]
                for k in (
                    "routes",
                    "allocation",
                    "sequences",
                    "unassigned_targets",
                    "excluded_targets",
                    "total_points",
                    "total_fuel",
                )
            }
        )
        mission_model = compile_mission(parse_scenario(demo))
        assert validate_solution(mission_model, solution) == []
        assert solution.total_points > 0
        assert sorted(solution.excluded_targets) == ["T12", "T7"]
        assert body["coordinator_decision"]["policy"]["allocation_strategy"] == "efficient"

        # the three optimisers improve (or keep) a posted plan, still valid
        for tool in ("insert_missed", "trajectory_swap", "crossing_removal"):
            r = await http.post(
                f"/api/{tool}_optimize",
                json={
                    "environment": demo["environment"],
                    "drone_configs": demo["drone_configs"],
                    "solution": {
                        "routes": {
                            "2": {"route": ["A2", "T3", "T11", "A2"]},
                            "3": {"route": ["A1", "T10", "T1", "A1"]},
                        }
                    },
                },
            )
            assert r.status_code == 200, (tool, r.text)
            out = r.json()
            assert out["points_delta"] >= 0, tool
            improved = Solution.model_validate({k: out[k] for k in solution.model_fields_set})
            assert validate_solution(mission_model, improved) == [], tool

        # bad missions and plans name the field
        bad = json.loads(json.dumps(demo))
        bad["environment"]["targets"][0]["priority"] = -2
        r = await http.post(
            "/api/agent_solve",
            json={"environment": bad["environment"], "drone_configs": bad["drone_configs"]},
        )
        assert r.status_code == 422 and "$.environment.targets[0].priority" in _paths(r)
        r = await http.post(
            "/api/agent_solve",
            json={
                "environment": demo["environment"],
                "drone_configs": demo["drone_configs"],
                "preferences": {"allocation_strategy": "psychic"},
            },
        )
        assert r.status_code == 422 and _paths(r) == ["$.preferences.allocation_strategy"]
        r = await http.post(
            "/api/crossing_removal_optimize",
            json={
                "environment": demo["environment"],
                "drone_configs": demo["drone_configs"],
                "solution": {"routes": {"2": {"route": ["A2", "T99", "A2"]}}},
            },
        )
        assert r.status_code == 422 and _paths(r) == ['$.solution.routes["2"].route[1]']
        r = await http.post(
            "/api/insert_missed_optimize",
            json={
                "environment": demo["environment"],
                "drone_configs": demo["drone_configs"],
                "solution": {"routes": {"1": {"route": ["A1", "T3", "A1"]}}},
            },
        )  # D1 cannot sense C
        assert r.status_code == 422 and "hard constraints" in r.json()["error"]
        big = {
            "environment": {
                **demo["environment"],
                "targets": [
                    {"id": f"T{i}", "x": i % 90, "y": i // 90, "priority": 1, "type": "A"}
                    for i in range(300)
                ],
            },
            "drone_configs": demo["drone_configs"],
        }
        r = await http.post("/api/agent_solve", json=big)
        assert r.status_code == 413 and _paths(r) == ["$.environment.targets"]


# ----- traces and the server itself ------------------------------------------------------


@run_async
async def test_runs_come_from_the_trace_store(tmp_path):
    from executive.contracts import RunEndRecord
    from executive.traces import TraceWriter

    url = f"sqlite:///{tmp_path / 'traces.db'}"
    writer = TraceWriter(url)
    writer.start()
    try:
        async with (
            live_mission(trace_sink=writer, trace_url=url) as mission,
            _client(mission) as http,
            Frames(mission.ws_url) as ws,
        ):
            await ws.until(telemetry(lambda t: t["tick"] > 50), what="telemetry")
            run_id = mission.executive.run_id
            writer.emit(RunEndRecord(run_id, 0.0, "ended", {"total_points": 1.0}))
            assert await asyncio.to_thread(writer.flush, TIMEOUT)  # written, off the loop

            async def listed():
                while True:
                    runs = (await http.get("/api/runs")).json()["runs"]
                    if any(r["run_id"] == run_id for r in runs):
                        return runs
                    await ws.until(lambda f: f["type"] == "scene")  # the event to look again

            runs = await asyncio.wait_for(listed(), TIMEOUT)
            assert runs[0]["run_id"] == run_id
            prefix = await http.get(f"/api/runs/{run_id[:8]}")
            assert prefix.status_code == 404  # exact ids only over HTTP (the CLI takes prefixes)
            r = await http.get(f"/api/runs/{run_id}")
            assert r.status_code == 200, r.text
            detail = r.json()
            assert detail["run"]["run_id"] == run_id
            assert detail["plan_versions"] and detail["plan_versions"][0]["status"] == "committed"
            r = await http.get("/api/runs/ffffffffff")
            assert r.status_code == 404 and "no run" in r.json()["error"]
    finally:
        await asyncio.to_thread(writer.close)
    async with live_mission() as mission, _client(mission) as http:
        r = await http.get("/api/runs")
        assert r.status_code == 404 and "trace store" in r.json()["error"]


@run_async
async def test_a_port_in_use_is_a_clear_error():
    bus = InProcessBus()
    server = await start_dashboard(bus, port=0, token=TOKEN)
    try:
        with pytest.raises(DashboardError, match="in use"):
            await start_dashboard(bus, port=server.port, token=TOKEN)
        async with httpx.AsyncClient(base_url=server.url, timeout=TIMEOUT) as http:
            health = (await http.get("/api/health")).json()
            assert health["ok"] is True and health["clients"] == 0
    finally:
        await server.stop()
    assert not server.running
