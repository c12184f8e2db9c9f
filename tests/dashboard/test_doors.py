"""The dashboard's doors against a real mission (real uvicorn, real ``MissionHost``): the
ground truth only for the token (or a dashboard that shows it to all), the live websocket
only for its own origin, the security headers on every answer, and a websocket client that
stops reading dropped while the others keep receiving.

``popup_sam.json`` has a hidden SAM (``SAM3``, added hidden at t=0 by its timeline): it is in
the truth from the first tick, and known to nobody until a drone detects it.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import json
import os
import socket
import time

import httpx
import pytest
import websockets

from dashboard.errors import WS_POLICY_VIOLATION, WS_TRY_AGAIN_LATER, WS_WRONG_TOKEN
from dashboard.security import DOCS_CSP, PAGE_CSP
from tests.dashboard.harness import AUTH, TIMEOUT, TOKEN, Frames, live_mission, telemetry

HIDDEN = "SAM3"


def run_async(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return asyncio.run(asyncio.wait_for(fn(*args, **kwargs), 4 * TIMEOUT))

    return wrapper


def _client(mission, **kwargs) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=mission.url, timeout=TIMEOUT, **kwargs)


def _hidden_sams(scene: dict | None) -> list[dict]:
    return [s for s in (scene or {}).get("sams", []) if not s.get("known")]


def _no_truth_in(text: str) -> None:
    """A frame (or an answer) of the public view: no hidden SAM, no hidden edit, no
    truth-only event or field."""
    assert '"known":false' not in text.replace(" ", ""), text[:300]
    assert '"hidden":true' not in text.replace(" ", ""), text[:300]
    assert '"truth:' not in text, text[:300]
    assert '"excluded":[' not in text.replace(" ", ""), text[:300]


# ----- the ground truth ------------------------------------------------------------------


@run_async
async def test_hidden_sams_reach_only_the_token_holders():
    # At 5x: the drones are far from the hidden SAM for the whole test (not yet detected).
    async with live_mission("popup_sam.json", speed=5) as mission, _client(mission) as http:
        async with Frames(mission.ws_url, token=TOKEN) as truth:
            hello = await truth.next()
            assert hello["type"] == "hello" and hello["truth"] is True

            def hidden_known(f):
                return f.get("type") == "scene" and any(
                    s["id"] == HIDDEN for s in _hidden_sams(f["data"])
                )

            await truth.until(hidden_known, what="the hidden SAM in a scene, with the token")

        # REST: the state with the token has it, without the token not; a wrong token is a 401
        with_token = (await http.get("/api/state", headers=AUTH)).json()
        assert [s["id"] for s in _hidden_sams(with_token["scene"])] == [HIDDEN]
        public = await http.get("/api/state")
        assert public.status_code == 200
        assert not _hidden_sams(public.json()["scene"])
        assert {s["id"] for s in public.json()["scene"]["sams"]} == {"SAM1", "SAM2"}
        _no_truth_in(public.text)
        wrong = await http.get("/api/state", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and "wrong" in wrong.json()["error"]

        # the websocket without the token: the hello and every frame are the public view
        async with Frames(mission.ws_url) as anon:
            hello = await anon.next()
            assert hello["truth"] is False
            _no_truth_in(anon.last_text)
            scenes = 0
            while scenes < 5:
                frame = await asyncio.wait_for(anon.next(), TIMEOUT)
                _no_truth_in(anon.last_text)
                if frame["type"] == "scene":
                    scenes += 1
                    assert not _hidden_sams(frame["data"])
                    assert {"SAM1", "SAM2"} <= {s["id"] for s in frame["data"]["sams"]}

        # the token in an Authorization header works as well (scripts, the CLI)
        async with Frames(mission.ws_url, headers=AUTH) as scripted:
            assert (await scripted.next())["truth"] is True


@run_async
async def test_a_wrong_token_on_the_websocket_is_refused_with_4401():
    async with live_mission() as mission:
        for kwargs in ({"token": "nope"}, {"headers": {"Authorization": "Bearer nope"}}):
            async with Frames(mission.ws_url, **kwargs) as ws:
                with pytest.raises(websockets.ConnectionClosed) as closed:
                    await asyncio.wait_for(ws.next(), TIMEOUT)
                assert closed.value.rcvd.code == WS_WRONG_TOKEN
                assert "token" in closed.value.rcvd.reason
        assert mission.server.app.state.streams.clients() == []


@run_async
async def test_viewers_without_the_token_are_capped_and_the_token_always_gets_in():
    async with live_mission(max_anonymous_viewers=2) as mission:
        async with Frames(mission.ws_url) as one, Frames(mission.ws_url) as two:
            assert (await one.next())["type"] == "hello"
            assert (await two.next())["type"] == "hello"
            async with Frames(mission.ws_url) as third:
                with pytest.raises(websockets.ConnectionClosed) as closed:
                    await asyncio.wait_for(third.next(), TIMEOUT)
                assert closed.value.rcvd.code == WS_TRY_AGAIN_LATER
                assert "too many viewers without the token (2)" in closed.value.rcvd.reason
            async with Frames(mission.ws_url, token=TOKEN) as operator:
                assert (await operator.next())["truth"] is True
        # the seats free up when the viewers leave
        async with Frames(mission.ws_url) as again:
            assert (await again.next())["type"] == "hello"


@run_async
async def test_show_truth_shows_the_hidden_sams_to_every_reader():
    async with live_mission("popup_sam.json", show_truth=True) as mission, _client(mission) as http:
        async with Frames(mission.ws_url) as anon:
            assert (await anon.next())["truth"] is True
            await anon.until(
                lambda f: f["type"] == "scene" and _hidden_sams(f["data"]),
                what="the hidden SAM without a token",
            )
        state = (await http.get("/api/state")).json()
        assert [s["id"] for s in _hidden_sams(state["scene"])] == [HIDDEN]


@run_async
async def test_an_edit_that_names_a_hidden_sam_is_withheld_from_the_public():
    """A command message the executive rejects is echoed in a CMD_REJECTED event; its edit
    (here a hidden SAM the operator meant to add) is shown only with the token."""
    async with live_mission() as mission, _client(mission) as http, Frames(mission.ws_url) as ws:
        await ws.until(telemetry(lambda t: t["tick"] > 5), what="telemetry")
        secret = {"op": "add_sam", "id": "S77", "pos": "here", "range": 3, "hidden": True}
        mission.bus.publish("cmd", {"type": "edit", "edit": secret})
        frame = await ws.until(
            lambda f: f["type"] == "events" and f["data"]["kind"] == "CMD_REJECTED",
            what="the rejection",
        )
        assert "S77" not in json.dumps(frame) and "withheld" in json.dumps(frame)
        public = (await http.get("/api/events")).json()["events"]
        rejected = [e for e in public if e["kind"] == "CMD_REJECTED"]
        assert rejected and "S77" not in json.dumps(rejected)
        full = (await http.get("/api/events", headers=AUTH)).json()["events"]
        rejected = [e for e in full if e["kind"] == "CMD_REJECTED"]
        assert rejected[-1]["message"]["edit"] == secret


@run_async
async def test_stored_runs_keep_the_truth_for_the_token(tmp_path):
    """/api/runs/{id}: without the token, no timeline (the exercise's script), no
    ``truth:*`` events and no truth-only outcome fields."""
    from executive.contracts import RunEndRecord
    from executive.traces import TraceWriter

    url = f"sqlite:///{tmp_path / 'traces.db'}"
    writer = TraceWriter(url)
    writer.start()
    try:
        async with (
            live_mission("popup_sam.json", trace_sink=writer, trace_url=url) as mission,
            _client(mission) as http,
            Frames(mission.ws_url) as ws,
        ):
            await ws.until(telemetry(lambda t: t["tick"] > 50), what="telemetry")
            run_id = mission.executive.run_id
            outcome = {"total_points": 1.0, "excluded": ["T9"], "state_hash": "ab"}
            writer.emit(RunEndRecord(run_id, 0.0, "ended", outcome))
            assert await asyncio.to_thread(writer.flush, TIMEOUT)

            full = (await http.get(f"/api/runs/{run_id}", headers=AUTH)).json()
            assert any(e["kind"].startswith("truth:") for e in full["events"])
            assert any(t.get("hidden") for t in full["run"]["scenario"]["timeline"])
            assert full["run"]["outcome"]["excluded"] == ["T9"]

            public = await http.get(f"/api/runs/{run_id}")
            assert public.status_code == 200
            body = public.json()
            assert "timeline" not in body["run"]["scenario"]
            assert not [e for e in body["events"] if e["kind"].startswith("truth:")]
            assert body["run"]["outcome"] == {"total_points": 1.0}
            _no_truth_in(public.text)
            assert HIDDEN not in public.text
            listed = (await http.get("/api/runs")).json()["runs"]
            assert any(r["run_id"] == run_id for r in listed)
    finally:
        await asyncio.to_thread(writer.close)


# ----- the websocket's origin ------------------------------------------------------------


@run_async
async def test_the_websocket_serves_only_its_own_origin():
    async with live_mission() as mission:
        own = mission.server.url  # http://127.0.0.1:PORT, as the page's Origin
        async with Frames(mission.ws_url, headers={"Origin": own}) as ws:
            assert (await ws.next())["type"] == "hello"
        # no Origin at all: not a browser page (the CLI, scripts, these tests): served
        async with Frames(mission.ws_url) as ws:
            assert (await ws.next())["type"] == "hello"
        port = mission.server.port
        for origin in (
            "http://evil.example",
            f"http://evil.example:{port}",
            f"http://127.0.0.1:{port + 1}",
            f"https://127.0.0.1:{port}",
            "null",
        ):
            async with Frames(mission.ws_url, headers={"Origin": origin}) as ws:
                with pytest.raises(websockets.ConnectionClosed) as closed:
                    await asyncio.wait_for(ws.next(), TIMEOUT)
                assert closed.value.rcvd.code == WS_POLICY_VIOLATION, origin
                assert "cross-origin" in closed.value.rcvd.reason
        assert mission.server.app.state.streams.clients() == []


# ----- the security headers --------------------------------------------------------------


@run_async
async def test_every_answer_carries_the_security_headers():
    async with live_mission() as mission, _client(mission) as http:
        answers = {
            "/": await http.get("/"),
            "/static/app.js": await http.get("/static/app.js"),
            "/api/state": await http.get("/api/state"),
            "/openapi.json": await http.get("/openapi.json"),
            "/api/nothing (404)": await http.get("/api/nothing"),
            "/api/commands (401)": await http.post("/api/commands", json={"command": "PAUSE"}),
            "/api/edits (413)": await http.post(
                "/api/edits", content=b"x" * 2_000_001, headers=AUTH
            ),
        }
        for what, r in answers.items():
            assert r.headers["x-frame-options"] == "DENY", what
            assert r.headers["x-content-type-options"] == "nosniff", what
            assert r.headers["referrer-policy"] == "no-referrer", what
            assert r.headers["content-security-policy"] == PAGE_CSP, what
        assert answers["/api/state"].headers["cache-control"] == "no-store"
        csp = PAGE_CSP.split("; ")
        assert "script-src 'self'" in csp and "style-src 'self'" in csp
        assert "frame-ancestors 'none'" in csp
        docs = await http.get("/docs")
        assert docs.headers["content-security-policy"] == DOCS_CSP
        assert docs.headers["x-frame-options"] == "DENY"
        # the docs page has no inline script: every script has a src from here
        assert docs.text.count("<script") == docs.text.count('<script src="/')


def test_the_page_has_no_inline_script_style_or_handler():
    """What the page's CSP forbids is not in it: no inline script, style or ``on...``
    attribute in index.html; no ``style`` attribute, ``innerHTML`` with data, ``eval`` or
    ``new Function`` in the modules."""
    from dashboard.routes.pages import STATIC

    page = (STATIC / "index.html").read_text()
    scripts = page.count("<script")
    assert scripts == page.count('<script type="module" src="/static/'), "an inline script"
    assert "<style" not in page and " style=" not in page
    assert not [w for w in page.split() if w.lower().startswith("on") and "=" in w]
    for js in [STATIC / "app.js", STATIC / "docs.js", *sorted((STATIC / "js").glob("*.js"))]:
        text = js.read_text()
        for bad in ('setAttribute("style"', "eval(", "new Function", ".insertAdjacentHTML"):
            assert bad not in text, (js.name, bad)
        for line in text.splitlines():
            if "innerHTML" in line:  # only constant markup
                assert "${" not in line and "+" not in line.split("innerHTML", 1)[1], line


# ----- a client that stops reading -------------------------------------------------------


async def _stalled_client(host: str, port: int) -> socket.socket:
    """A websocket client that completes the handshake and then never reads (a small
    receive buffer, so that its window shuts quickly)."""
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


async def _reset(sock: socket.socket) -> bool:
    """Whether the server has let the connection go: a masked, empty ping from the client is
    answered with a reset (what the server had sent before is read and thrown away)."""
    loop = asyncio.get_running_loop()
    try:
        await loop.sock_sendall(sock, b"\x89\x80" + os.urandom(4))

        async def drain() -> None:
            while await loop.sock_recv(sock, 65536):
                pass

        await asyncio.wait_for(drain(), TIMEOUT)
    except ConnectionError:
        return True
    except TimeoutError:
        return False
    return True  # an orderly end (FIN) after what was sent


STALL_S = 2.0
SLACK_S = 8.0  # the client's buffer filling up, and a shared two-core machine


@run_async
async def test_a_client_that_stops_reading_is_dropped_and_the_others_keep_receiving():
    async with (
        live_mission(stall_timeout_s=STALL_S) as mission,
        _client(mission) as http,
        Frames(mission.ws_url) as reader,
    ):
        streams = mission.server.app.state.streams
        await reader.until(telemetry(lambda t: t["tick"] > 5), what="telemetry")
        stalled = await _stalled_client("127.0.0.1", mission.server.port)
        began = time.monotonic()
        try:
            mine = max(c["id"] for c in streams.clients())
            tick_then = mission.executive.sim.tick

            # Each frame the healthy client reads is the event to look again.
            await reader.until(
                lambda f: all(c["id"] != mine for c in streams.clients()),
                timeout=STALL_S + SLACK_S,
                what=f"the stalled client dropped within {STALL_S + SLACK_S:g} s",
            )
            gone_after = time.monotonic() - began
            print(f"stalled client dropped {gone_after:.1f} s after it stopped reading")
            gone = (await http.get("/api/clients")).json()["departed"]
            assert [c["id"] for c in gone] == [mine]
            # reset by the kernel (Linux), or given up on by the dashboard itself; whether its
            # subscription had dropped frames by then depends on the kernel's send buffer
            assert gone[0]["reason"] in ("lost", "stalled") and gone[0]["sent"] > 0
            # the healthy client kept receiving, and still does
            frame = await reader.until(
                telemetry(lambda t: t["tick"] > tick_then + 100), what="telemetry after"
            )
            assert frame["data"]["tick"] > tick_then + 100
            assert [c["id"] for c in streams.clients()] != [mine]
            assert len(streams.clients()) == 1
            # the connection itself is gone too, not only the dashboard's client
            assert await _reset(stalled), "the stalled client's connection is still open"
        finally:
            stalled.close()
        assert len(mission.bus.subscribers()) == 3  # mirror, host's cmd, the healthy client
