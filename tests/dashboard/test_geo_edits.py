"""Live edits in lat/lon on a geographic mission, against a real mission behind a real
dashboard: a position posted (or sent on the bus) as ``lat, lon`` or ``pos: {lat, lon}`` is
converted to km around the mission's origin by the scenario loader's conversion
(``planner.geo``) and applied where the km frame puts it; on a mission without an origin a
lat/lon is a 422 naming its JSON path, and on the bus a CMD_REJECTED saying the same."""

from __future__ import annotations

import asyncio
import functools
import json
import math

import httpx
import pytest

from executive.bus import CMD
from planner.geo import GeoOrigin, local_frame
from tests.dashboard.harness import AUTH, SCENARIOS, TIMEOUT, Frames, event, live_mission, scene

ORIGIN = {"lat0": 47.4, "lon0": 8.5}
FRAME = local_frame(GeoOrigin.model_validate(ORIGIN))


def run_async(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return asyncio.run(asyncio.wait_for(fn(*args, **kwargs), 4 * TIMEOUT))

    return wrapper


def _geo_demo(tmp_path) -> str:
    data = json.loads((SCENARIOS / "demo.json").read_text())
    data["geo"] = dict(ORIGIN)
    path = tmp_path / "geo_demo.json"
    path.write_text(json.dumps(data))
    return str(path)  # absolute: live_mission's SCENARIOS / name is this path


def _latlon(x: float, y: float) -> dict[str, float]:
    lat, lon = FRAME.to_geo(x, y)
    return {"lat": lat, "lon": lon}


@run_async
async def test_lat_lon_edits_land_where_the_km_frame_puts_them(tmp_path):
    async with (
        live_mission(_geo_demo(tmp_path)) as mission,
        httpx.AsyncClient(base_url=mission.url, timeout=TIMEOUT) as http,
        Frames(mission.ws_url) as ws,
    ):
        await ws.until(scene(lambda s: s["tick"] > 0 and s["geo"] is not None), what="a scene")
        sam = {"op": "add_sam", "id": "S9", "pos": _latlon(5, 95), "range": 2}
        r = await http.post("/api/edits", json=sam, headers=AUTH)
        assert r.status_code == 202, r.text
        assert r.json()["sent"]["edit"]["pos"] == pytest.approx([5, 95], abs=1e-6)
        target = {"op": "add_target", "id": "T77", **_latlon(20, 80), "priority": 4, "type": "A"}
        assert (await http.post("/api/edits", json=target, headers=AUTH)).status_code == 202
        # The bus door converts too: a client speaking MQTT to the run directly.
        mission.bus.publish(
            CMD, {"type": "edit", "edit": {"op": "move_target", "id": "T77", **_latlon(21, 81)}}
        )
        await ws.until(
            event(lambda e: e["kind"] == "edit_applied" and e["edit"]["op"] == "move_target"),
            what="the move of T77 applied",
        )
        shown = await ws.until(
            scene(
                lambda s: (
                    any(x["id"] == "S9" for x in s["sams"])
                    and any(t["id"] == "T77" and abs(t["x"] - 21) < 1e-6 for t in s["targets"])
                )
            ),
            what="S9 and T77 in the scene",
        )
        s9 = next(x for x in shown["data"]["sams"] if x["id"] == "S9")
        t77 = next(t for t in shown["data"]["targets"] if t["id"] == "T77")
        assert math.hypot(s9["x"] - 5, s9["y"] - 95) < 1e-6  # metres: well under a millimetre
        assert math.hypot(t77["x"] - 21, t77["y"] - 81) < 1e-6
        # A lat/lon out of range is named at its path, as a scenario file's would be.
        bad = {"op": "add_sam", "id": "S10", "pos": {"lat": 95.0, "lon": 8.5}, "range": 2}
        r = await http.post("/api/edits", json=bad, headers=AUTH)
        assert r.status_code == 422 and r.json()["problems"][0]["path"] == "$.pos.lat", r.text


@run_async
async def test_lat_lon_on_a_mission_without_an_origin_is_refused_naming_the_path():
    async with (
        live_mission() as mission,
        httpx.AsyncClient(base_url=mission.url, timeout=TIMEOUT) as http,
        Frames(mission.ws_url) as ws,
    ):
        await ws.until(scene(lambda s: s["tick"] > 0), what="a scene")
        for edit, path in (
            (
                {"op": "add_target", "id": "T77", **_latlon(20, 80), "priority": 4, "type": "A"},
                "$.lat",
            ),
            ({"op": "move_sam", "id": "SAM1", "pos": _latlon(20, 80)}, "$.pos"),
        ):
            r = await http.post("/api/edits", json=edit, headers=AUTH)
            assert r.status_code == 422, r.text
            problem = r.json()["problems"][0]
            assert problem["path"] == path and "geographic origin" in problem["message"], problem
        mission.bus.publish(
            CMD, {"type": "edit", "edit": {"op": "move_sam", "id": "SAM1", "pos": _latlon(1, 1)}}
        )
        rejected = await ws.until(
            event(lambda e: e["kind"] == "CMD_REJECTED"), what="the bus edit rejected"
        )
        assert rejected["data"]["reason"].startswith("$.edit.pos: a lat/lon position needs")


@run_async
async def test_lat_lon_before_the_first_scene_waits_for_the_origin():
    """A dashboard that has no scene yet does not know the mission's origin: 503 with
    Retry-After, nothing sent (a km edit still goes through, as before)."""
    from dashboard.server import start_dashboard
    from executive.bus import InProcessBus
    from tests.dashboard.harness import TOKEN

    # a bus that carries its run (as isr run's does before the first scene): commands go
    # through; without a run at all they would be a 409 (no live run)
    bus = InProcessBus("starting-run")
    server = await start_dashboard(bus, host="127.0.0.1", port=0, token=TOKEN)
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=TIMEOUT) as http:
            edit = {"op": "move_sam", "id": "SAM1", "pos": _latlon(1, 2)}
            r = await http.post("/api/edits", json=edit, headers=AUTH)
            assert r.status_code == 503 and r.headers["retry-after"] == "2", r.text
            assert "origin, not received yet" in r.json()["error"]
            km = await http.post("/api/edits", json=edit | {"pos": [1, 2]}, headers=AUTH)
            assert km.status_code == 202, km.text
    finally:
        await server.stop()
