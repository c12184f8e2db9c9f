"""The map as an operator expects it (issue 17), in real Chromium against a real mission: the
``isr run`` CLI with its dashboard in a subprocess, driven by Playwright.

The wheel zooms about the cursor (the point under it stays put) and a drag pans; the cursor's
coordinates read the km of the point under it; the scale bar follows the zoom; Fit goes
back to the mission. The fleet table says what the state says (status, fuel, margin, points,
next target, when to turn home), and the scene's turn-home figures are checked against the
scenario's geometry. Labels do not overlap at the shared airport. Clicking an event centres
the map on where it happened. While paused, the planned paths stay on the map and Pause is
disabled with its reason; a lost drone has no fuel ring. The agent tree reads as words, the
raw JSON behind a toggle. After the mission ends, every control is disabled and says why.
``/docs`` renders the OpenAPI 3.1 operations. The screenshot is tests/output/console.png (the
manual's pictures of the console are test_layout_browser's).

A websocket test (no browser) checks the frame-rate cap: telemetry published at "max"
speed reaches a client at most ``max_fps`` times a second, the newest each time.
"""

from __future__ import annotations

import asyncio
import json
import math
import time

import httpx
import pytest
from playwright.sync_api import sync_playwright

from dashboard.server import start_dashboard
from executive.bus import InProcessBus
from executive.loop import Policy
from planner.geo import GeoOrigin, local_frame
from tests.conftest import copy_of
from tests.dashboard.harness import AUTH, SCENARIOS, TOKEN, CliProcess, Frames
from tests.dashboard.test_browser import BROWSER_ARGS, SCREEN
from tests.dashboard.test_replay_browser import SETTLED, serving

TIMEOUT_MS = 60_000
# The CLI's default reserve, robust: 1 km and the way round one more SAM as large as the
# largest known (Policy.reserve_km); the demo's SAMs are all known from the start
RESERVE_KM = Policy().reserve_km(
    s["range"] for s in json.loads((SCENARIOS / "demo.json").read_text())["environment"]["sams"]
)
GEO = {"lat0": 47.2692, "lon0": 11.4041}  # the demo's origin somewhere in the Alps

# In the page: the screen rectangles of every drone and airport label, by name.
LABEL_RECTS = """() => [...document.querySelectorAll('#l-drones text.dlabel, #l-airports text')]
  .map((t) => { const r = t.getBoundingClientRect();
                return {text: t.textContent, x0: r.left, y0: r.top, x1: r.right, y1: r.bottom}; })"""

# In the page: whether the fleet table says what the state says, for every drone (the
# expected texts computed here from window.isr, not by the table's own code).
FLEET_MATCHES = """() => {
  const scene = window.isr.scene, tel = (window.isr.telemetry || {}).drones || {};
  const rows = document.querySelectorAll('#fleet-body tr[data-drone-id]');
  if (!scene || rows.length !== Object.keys(scene.drones).length) return false;
  for (const tr of rows) {
    const id = tr.dataset.droneId, d = scene.drones[id], live = tel[id] || {};
    const cell = (c) => tr.querySelector(`td[data-col="${c}"]`).textContent;
    const status = live.status || d.status;
    const collected = new Set(scene.targets.filter((t) => t.status === 'collected').map((t) => t.id));
    const targets = new Set(scene.targets.map((t) => t.id));
    const next = d.route.find((t) => targets.has(t) && !collected.has(t)) || '–';
    if (cell('status') !== status) return false;
    if (cell('fuel') !== `${Math.round(live.fuel ?? d.fuel)}/${Math.round(d.budget)}`) return false;
    if (cell('points') !== String(Math.round((live.points ?? d.points ?? 0) * 10) / 10)) return false;
    if (cell('next') !== next) return false;
    const airborne = status === 'flying' || status === 'holding';
    const margin = airborne && d.margin_km !== null && d.margin_km !== undefined
      ? String(Math.abs(Math.round(d.margin_km))) : '–';
    if (!cell('margin').endsWith(margin)) return false;
    if (airborne && !scene.replay && d.pnr_km === null
        && !cell('pnr').includes(`bingo ${Math.round(d.bingo_km)}`)) return false;
    if (!airborne && cell('pnr') !== '–') return false;
  }
  return true;
}"""

# In the page: the view's centre (km) and the map's centre on the screen.
VIEW = """() => { const v = window.isr.viewport.view, r = document.getElementById('map').getBoundingClientRect();
  return {cx: v.x + v.w / 2, cy: v.y + v.h / 2, w: v.w, h: v.h, auto: window.isr.viewport.auto,
          sx: r.left + r.width / 2, sy: r.top + r.height / 2}; }"""


def _overlaps(a: dict, b: dict) -> bool:
    return (
        a["x0"] < b["x1"] - 0.5
        and b["x0"] < a["x1"] - 0.5
        and (a["y0"] < b["y1"] - 0.5 and b["y0"] < a["y1"] - 0.5)
    )


@pytest.mark.slow
@pytest.mark.browser
def test_the_operator_console_in_a_real_browser(chromium, output_dir, tmp_path):
    errors: list[str] = []
    # the demo, pinned to the Earth: the cursor reads lat/lon too
    mission = json.loads((SCENARIOS / "demo.json").read_text())
    mission["geo"] = GEO
    path = tmp_path / "demo_geo.json"
    path.write_text(json.dumps(mission))
    with (
        CliProcess(
            "run",
            str(path),
            "--port",
            "0",
            "--token",
            TOKEN,
            "--db",
            "none",
            "--speed",
            # the demo flies 1695 s: at 5x its drones are in the air for the first five
            # minutes of the test, however slow a loaded machine makes the steps before
            # the pause and the lost drone (both need a drone still flying)
            "5",
        ) as cli,
        sync_playwright() as pw,
    ):
        url = cli.wait_for(r"dashboard: (http://\S+)")
        base = url.split("/?")[0]
        api = httpx.Client(base_url=base, headers=AUTH, timeout=30)
        browser = pw.chromium.launch(executable_path=chromium, args=BROWSER_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 960})
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(url)
            page.set_default_timeout(TIMEOUT_MS)
            page.wait_for_selector('#st-ws[data-state="open"]')
            page.wait_for_function(
                "() => document.querySelectorAll('#l-drones g.drone').length === 3"
            )

            # labels: D1 stays parked at A1 (which D3 shares); no two labels overlap
            page.wait_for_function("() => window.isr.viewport && window.isr.viewport.view")
            rects = page.evaluate(LABEL_RECTS)
            assert {r["text"].split()[0] for r in rects} >= {"D1", "D2", "D3", "A1", "A2", "A3"}
            clashes = [
                (a["text"], b["text"])
                for i, a in enumerate(rects)
                for b in rects[i + 1 :]
                if _overlaps(a, b)
            ]
            assert not clashes, clashes

            # the fleet table says what the state says
            page.wait_for_function(FLEET_MATCHES)
            scene = page.evaluate("() => window.isr.scene")
            airports = {a["id"]: a for a in scene["airports"]}
            flying = [i for i, d in scene["drones"].items() if d["status"] == "flying"]
            assert flying
            for drone_id in flying:
                d = scene["drones"][drone_id]
                home = airports[{"1": "A1", "2": "A2", "3": "A1"}[drone_id]]
                straight = math.hypot(d["x"] - home["x"], d["y"] - home["y"])
                assert d["home_km"] == pytest.approx(straight, abs=1e-6)
                assert d["bingo_km"] == pytest.approx(straight + RESERVE_KM, abs=1e-6)
                assert d["spare_km"] == pytest.approx(d["fuel"] - straight - RESERVE_KM, abs=1e-6)
                assert d["pnr_km"] is None  # a committed plan comes home within its fuel
                assert d["next_target"] in d["route"]

            # cursor coordinates: the point under the pointer, in km
            a2 = airports["A2"]
            sx, sy = page.evaluate(SCREEN, [a2["x"], a2["y"]])
            page.mouse.move(sx, sy)
            pos = page.locator("#cursor-pos")
            assert float(pos.get_attribute("data-x")) == pytest.approx(a2["x"], abs=0.1)
            assert float(pos.get_attribute("data-y")) == pytest.approx(a2["y"], abs=0.1)
            assert "km" in pos.inner_text()
            x, y = float(pos.get_attribute("data-x")), float(pos.get_attribute("data-y"))
            lat, lon = local_frame(GeoOrigin(**GEO)).to_geo(x, y)  # PROJ's answer
            assert float(pos.get_attribute("data-lat")) == pytest.approx(lat, abs=2e-5)
            assert float(pos.get_attribute("data-lon")) == pytest.approx(lon, abs=2e-5)
            assert "° N" in pos.inner_text() and "° E" in pos.inner_text()

            # the wheel zooms about the cursor: A2 stays under it, the scale bar follows
            before = page.evaluate(VIEW)
            bar_before = float(page.get_attribute("#scale-bar", "data-px")) / float(
                page.get_attribute("#scale-bar", "data-km")
            )
            page.mouse.wheel(0, -600)
            page.wait_for_function("(w) => window.isr.viewport.view.w < w * 0.6", arg=before["w"])
            assert not page.evaluate(VIEW)["auto"]
            nx, ny = page.evaluate(SCREEN, [a2["x"], a2["y"]])
            assert math.hypot(nx - sx, ny - sy) < 2.0
            # pixels per km on the scale bar, once a render pass drew it
            page.wait_for_function(
                "(b) => { const e = document.getElementById('scale-bar');"
                " return e.dataset.px / e.dataset.km > b * 1.6; }",
                arg=bar_before,
            )

            # a drag pans: A2 moves with the pointer
            page.mouse.move(sx - 40, sy - 40)
            page.mouse.down()
            page.mouse.move(sx + 20, sy - 10, steps=4)
            page.mouse.move(sx + 80, sy + 20, steps=4)
            page.mouse.up()
            px, py = page.evaluate(SCREEN, [a2["x"], a2["y"]])
            assert math.hypot(px - (sx + 120), py - (sy + 60)) < 3.0
            assert page.locator("#timeline li[data-kind='edit_applied']").count() == 0  # no click

            # Fit: the whole mission again
            page.click("#btn-fit")
            page.wait_for_function("() => window.isr.viewport.auto")
            assert page.evaluate(VIEW)["w"] == pytest.approx(before["w"])

            # an event clicked centres the map where it happened
            answer = api.post(
                "/api/edits", json={"op": "add_sam", "id": "S77", "pos": [70.0, 80.0], "range": 2.0}
            )
            assert answer.status_code == 202, answer.text
            line = page.wait_for_selector(
                "#timeline li[data-kind='edit_applied']:has-text('add_sam S77')"
            )
            page.mouse.move(sx, sy)
            page.mouse.wheel(0, -400)  # zoomed in somewhere else first
            page.wait_for_function("() => !window.isr.viewport.auto")
            line.click()
            page.wait_for_function(
                "() => { const v = window.isr.viewport.view;"
                " return Math.abs(v.x + v.w / 2 - 70) < 0.01 && Math.abs(v.y + v.h / 2 - 80) < 0.01; }"
            )
            detail = page.inner_text("#detail")  # the event in words, not JSON
            assert "op: add_sam" in detail and "id: S77" in detail and "{" not in detail
            view = page.evaluate(VIEW)
            s77 = page.evaluate(SCREEN, [70.0, 80.0])
            assert math.hypot(s77[0] - view["sx"], s77[1] - view["sy"]) < 3.0
            page.click("#btn-fit")

            # the agent tree in words, the raw JSON behind a toggle
            page.wait_for_selector("#agents details[data-run-id]", state="attached")
            first = page.locator("#agents > details[data-run-id]").first
            first.locator("summary").first.click()
            assert first.locator(":scope > .proposal").inner_text().startswith("proposal")
            raw = first.locator(":scope > details.raw")
            assert raw.count() == 1 and not raw.locator("pre").is_visible()

            # the console for the README (the cursor over the map: its coordinates show)
            page.mouse.move(*page.evaluate(SCREEN, [a2["x"] - 8, a2["y"] + 12]))
            page.screenshot(path=str(output_dir / "console.png"))

            raw.locator("summary").click()
            assert "validated_output" in raw.locator("pre").inner_text()

            # paused: the planned paths stay, Pause says why it cannot act
            assert page.is_disabled("#btn-resume")
            page.click("#btn-pause")
            page.wait_for_selector('#st-mode[data-mode="PAUSED"]')
            page.wait_for_function(
                "(ids) => ids.every((id) => window.isr.scene.drones[id].holding"
                ' && document.querySelector(`#l-planned polyline[data-drone-id="${id}"]`))',
                arg=flying,
            )
            page.wait_for_function("() => document.querySelector('#btn-pause').disabled")
            assert "already paused" in page.get_attribute("#btn-pause", "title")
            page.click("#btn-resume")
            page.wait_for_selector('#st-mode:not([data-mode="PAUSED"])')

            # a lost drone: no fuel ring, a cross; the fleet table says lost
            lost = flying[0]
            answer = api.post("/api/edits", json={"op": "disable_drone", "drone": lost})
            assert answer.status_code == 202, answer.text
            marker = f'#l-drones g.drone.lost[data-drone-id="{lost}"]'
            page.wait_for_selector(marker, state="attached")
            assert not page.locator(f"{marker} path.ring").is_visible()
            assert page.locator(f"{marker} g.cross line").first.is_visible()
            assert "lost" in page.text_content(f"{marker} text.dlabel")
            page.wait_for_function(FLEET_MATCHES)

            # the mission ends (at max speed): every control is disabled and says why
            page.wait_for_function("() => window.isr.stats && window.isr.scene")
            before = page.evaluate("() => [window.isr.stats, window.isr.scene.tick]")
            assert api.post("/api/speed", json={"speed": None}).status_code in (200, 202)
            page.wait_for_selector('#st-mode[data-mode="ENDED"]', timeout=180_000)
            page.wait_for_function("() => document.querySelector('#btn-cut').disabled")
            for button in ("#btn-pause", "#btn-resume", "#btn-cut", "#btn-replan", "#btn-reset"):
                assert page.is_disabled(button), button
                assert "the mission has ended" in page.get_attribute(button, "title")
            assert page.is_disabled("#speeds button[data-speed='max']")
            assert page.is_disabled("#tools input[value='add-sam']")
            assert "the mission has ended" in page.inner_text("#controls-why")
            # "max" sent the page the newest frames, not one per tick: the ones superseded
            # are not counted as dropped (the status line counts lost events only). Counted
            # from the switch to max: before it, a loaded machine may send every frame.
            stats0, tick0 = before
            page.wait_for_function(
                "(n) => window.isr.stats && window.isr.stats.superseded > n",
                arg=stats0["superseded"],
            )
            stats, tick = page.evaluate("() => [window.isr.stats, window.isr.scene.tick]")
            assert stats["sent"] - stats0["sent"] < tick - tick0
            assert page.inner_text("#st-dropped") == f"dropped {stats['lost']}"

            # /docs renders the operations of the OpenAPI 3.1 document
            assert api.get("/openapi.json").json()["openapi"].startswith("3.1")
            docs = browser.new_page()
            docs.on("pageerror", lambda exc: errors.append("docs: " + str(exc)))
            docs.goto(base + "/docs")
            docs.wait_for_selector(".opblock-summary-path[data-path='/api/runs']", timeout=30_000)
            assert docs.locator(".opblock").count() >= 10
            assert "Unable to render" not in docs.inner_text("body")
        finally:
            browser.close()
            api.close()
    assert cli.proc.returncode in (0, 130), "\n".join(cli.log)
    assert not errors, errors


MAX_FPS = 30.0  # LiveStreams' default


def test_a_client_gets_at_most_the_frame_rate_cap_of_telemetry():
    """Telemetry published as fast as "max" speed publishes it (a message per tick, the
    event loop free: a dashboard apart from its mission, on MQTT) reaches a websocket client
    at most ``max_fps`` times a second, the newest each time, and the last one is sent; the
    ones it replaced are counted as coalesced, and none as dropped."""

    async def main():
        bus = InProcessBus()
        server = await start_dashboard(bus, host="127.0.0.1", port=0, token=TOKEN)
        try:
            url = server.url.replace("http://", "ws://") + "/ws/live"
            async with Frames(url) as ws:
                await ws.until(lambda f: f.get("type") == "hello")
                received: list[int] = []

                async def read():
                    while True:
                        frame = await ws.next()
                        if frame.get("type") == "telemetry":
                            received.append(frame["data"]["tick"])
                            if frame["data"]["tick"] == LAST:
                                return

                reader = asyncio.get_running_loop().create_task(read())
                t0 = time.monotonic()
                for tick in range(LAST + 1):
                    bus.publish("telemetry", {"tick": tick, "time": tick / 20, "drones": {}})
                    if tick % 20 == 0:
                        await asyncio.sleep(0.002)  # about 10,000 messages a second
                await asyncio.wait_for(reader, 10.0)
                elapsed = time.monotonic() - t0
                (client,) = server.app.state.context.streams.clients()
        finally:
            await server.stop()
        return received, elapsed, client

    received, elapsed, client = asyncio.run(main())
    print(f"{len(received)} of {LAST + 1} telemetry messages sent in {elapsed:.2f} s: {client}")
    assert received[-1] == LAST and received == sorted(received)
    assert len(received) <= MAX_FPS * elapsed + 2, (len(received), elapsed)
    assert client["coalesced"] > 0  # the cap held some back (the slot replaced the others)
    assert client["superseded"] == LAST + 1 - len(received)
    assert client["lost"] == 0


LAST = 3000


@pytest.fixture(scope="module")
def stored_run(popup_sam_run, tmp_path_factory):
    """(trace url, run id) of one finished popup_sam run (a hidden SAM detected mid-flight;
    this module's copy of the session's)."""
    return copy_of(popup_sam_run, tmp_path_factory.mktemp("console"))


@pytest.mark.browser
def test_an_event_clicked_in_a_replay_moves_the_playhead_there_and_centres_the_map(
    chromium, stored_run
):
    trace_url, run_id = stored_run
    errors: list[str] = []
    with serving(trace_url) as base, sync_playwright() as pw:
        with httpx.Client(base_url=base, headers=AUTH, timeout=30) as http:
            last = http.get(f"/api/runs/{run_id}").json()["last_tick"]
            events = http.get(f"/api/runs/{run_id}/events").json()["events"]
        detected = next(e for e in events if e["kind"] == "sam_detected")
        x, y = detected["payload"]["pos"]
        browser = pw.chromium.launch(executable_path=chromium, args=BROWSER_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(f"{base}/?token={TOKEN}&replay={run_id}&tick={last}")
            page.wait_for_function(SETTLED, arg=last)
            # every control says why it cannot act in a replay
            assert page.is_disabled("#btn-pause")
            assert "a replay" in page.get_attribute("#btn-pause", "title")
            # the fleet table shows the drones at the playhead
            page.wait_for_function(FLEET_MATCHES)

            page.click("#timeline li[data-kind='sam_detected']")
            page.wait_for_function(SETTLED, arg=detected["tick"])
            page.wait_for_function(
                "([x, y]) => { const v = window.isr.viewport.view;"
                " return Math.abs(v.x + v.w / 2 - x) < 0.01 && Math.abs(v.y + v.h / 2 - y) < 0.01; }",
                arg=[x, y],
            )
            assert page.get_attribute("#pb-clock", "data-tick") == str(detected["tick"])
            view = page.evaluate(VIEW)
            sx, sy = page.evaluate(SCREEN, [x, y])
            assert math.hypot(sx - view["sx"], sy - view["sy"]) < 3.0
        finally:
            browser.close()
    assert not errors, errors
