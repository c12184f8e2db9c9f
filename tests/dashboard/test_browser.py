"""The dashboard as an operator uses it: the real CLI starts a live mission and its dashboard
in a subprocess, and Playwright drives Debian's headless Chromium against it.

The page loads and the drones move; with the add-SAM tool a click ON a drone's planned path
(the point computed from the path's polyline and the SVG's own transform) sends an edit that
makes the executive cut and replan: CUT_AND_FREEZE then a new COMMIT_PLAN appear on the
timeline, and the drone's planned path on the map now goes around the new SAM. A question
asked in the box is answered; dragging a target moves it and a click with the remove tool
removes the SAM, and after a pause from the controls a click with the drone-lost tool
disables a drone once confirmed (each an edit on the timeline). A screenshot is saved to tests/output/dashboard.png. Ctrl-C
(SIGINT) stops the CLI: uvicorn does not take the signal from it.

Every wait is Playwright's wait on a condition in the page, or a queue read with a timeout.
"""

from __future__ import annotations

import math
import re

import pytest
from playwright.sync_api import sync_playwright

from tests.dashboard.harness import TOKEN, CliProcess

TIMEOUT_MS = 60_000
SAM_RANGE = 4.0
BROWSER_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


# In the page: a point ON the drone's planned polyline, well ahead of it and clear of
# airports, targets and the other drones, in km; and that point in screen pixels through
# #world's own transform (km, y up -> viewport).
PICK_POINT = """([droneId, range]) => {
  const poly = document.querySelector(`#l-planned polyline[data-drone-id="${droneId}"]`);
  if (!poly) return null;
  const pts = [...poly.points].map((p) => [p.x, p.y]);
  const cum = [0];
  for (let i = 1; i < pts.length; i++)
    cum.push(cum[i - 1] + Math.hypot(pts[i][0] - pts[i - 1][0], pts[i][1] - pts[i - 1][1]));
  const total = cum[cum.length - 1];
  const scene = window.isr.scene;
  const avoid = [...scene.airports, ...scene.targets].map((a) => [a.x, a.y, range + 1.5]);
  for (const [id, d] of Object.entries(scene.drones))
    avoid.push([d.x, d.y, range + (id === droneId ? 12 : 6)]);
  for (const f of [0.45, 0.4, 0.5, 0.35, 0.55, 0.3, 0.6, 0.65, 0.25, 0.7]) {
    const s = f * total;
    const i = Math.max(1, cum.findIndex((c) => c >= s));
    const t = (s - cum[i - 1]) / Math.max(1e-9, cum[i] - cum[i - 1]);
    const x = pts[i - 1][0] + t * (pts[i][0] - pts[i - 1][0]);
    const y = pts[i - 1][1] + t * (pts[i][1] - pts[i - 1][1]);
    if (avoid.every(([ax, ay, r]) => Math.hypot(ax - x, ay - y) > r)) {
      const m = document.getElementById("world").getScreenCTM();
      return {x, y, sx: m.a * x + m.c * y + m.e, sy: m.b * x + m.d * y + m.f, total};
    }
  }
  return null;
}"""

# In the page: km (y up) -> screen pixels, through #world's transform.
SCREEN = """([x, y]) => { const m = document.getElementById("world").getScreenCTM();
  return [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]; }"""

# In the page: an applied operator edit whose timeline line contains the text.
EDITED = """(text) => [...document.querySelectorAll("#timeline li[data-kind='edit_applied']")]
  .some((li) => li.textContent.includes(text))"""

# In the page: no segment of the drone's frozen + planned path, as the map draws it, enters
# the disk (arcs are drawn as chords 0.05 km deep: a little slack).
AVOIDS = """([droneId, x, y, r]) => {
  const polys = document.querySelectorAll(
    `#l-planned polyline[data-drone-id="${droneId}"], #l-frozen polyline[data-drone-id="${droneId}"]`);
  if (!polys.length) return false;
  const dist = (a, b) => {  // from the centre to the segment a-b
    const dx = b.x - a.x, dy = b.y - a.y, dd = dx * dx + dy * dy;
    const t = dd > 0 ? Math.min(1, Math.max(0, ((x - a.x) * dx + (y - a.y) * dy) / dd)) : 0;
    return Math.hypot(a.x + t * dx - x, a.y + t * dy - y);
  };
  for (const poly of polys) {
    const pts = [...poly.points];
    for (let i = 1; i < pts.length; i++) if (dist(pts[i - 1], pts[i]) < r - 0.1) return false;
  }
  return true;
}"""


@pytest.mark.slow
@pytest.mark.browser
def test_dashboard_in_a_real_browser(chromium, output_dir):
    errors: list[str] = []
    with (
        CliProcess(
            "run",
            "scenarios/demo.json",
            "--port",
            "0",
            "--token",
            TOKEN,
            "--db",
            "none",
            "--speed",
            "20",
        ) as cli,
        sync_playwright() as pw,
    ):
        url = cli.wait_for(r"dashboard: (http://\S+)")
        assert url.endswith(f"/?token={TOKEN}")
        browser = pw.chromium.launch(executable_path=chromium, args=BROWSER_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(url)
            page.set_default_timeout(TIMEOUT_MS)

            # loads: the websocket is open, the map is drawn, the token is kept off the URL
            page.wait_for_selector('#st-ws[data-state="open"]')
            page.wait_for_function(
                "() => document.querySelectorAll('#l-drones g.drone').length === 3"
            )
            page.wait_for_selector("#l-airports [data-airport-id='A1']", state="attached")
            assert "token" not in page.url
            assert page.input_value("#token") == TOKEN
            assert page.locator("#l-sams [data-sam-id]").count() == 2  # the known SAMs
            assert page.locator("#timeline li[data-kind='COMMIT_PLAN']").count() >= 1

            # drones move: a flying drone's marker changes position
            drone = page.evaluate("""() => Object.entries(window.isr.scene.drones)
                .filter(([id, d]) => d.planned.length > 1)
                .sort((a, b) => b[1].remaining_km - a[1].remaining_km)[0][0]""")
            marker = f'#l-drones g.drone[data-drone-id="{drone}"]'
            before = page.get_attribute(marker, "transform")
            page.wait_for_function(
                "([sel, t]) => document.querySelector(sel).getAttribute('transform') !== t",
                arg=[marker, before],
            )

            # the add-SAM tool: a click ON the drone's planned path
            page.check("#tools input[value='add-sam']")
            page.fill("#sam-range", str(SAM_RANGE))
            point = page.evaluate(PICK_POINT, [drone, SAM_RANGE])
            assert point is not None, "no clear point on the planned path"
            assert not page.evaluate(AVOIDS, [drone, point["x"], point["y"], SAM_RANGE])
            cuts_before = page.locator("#timeline li[data-kind='CUT_AND_FREEZE']").count()
            page.mouse.click(point["sx"], point["sy"])

            # the edit reaches the sim, then the executive cuts, replans and commits
            added = page.wait_for_selector("#timeline li[data-kind='edit_applied']")
            sam_id = re.search(r"add_sam (\S+)", added.inner_text()).group(1)
            page.wait_for_selector(f'#l-sams [data-sam-id="{sam_id}"]', state="attached")
            sam = page.evaluate(f"""() => window.isr.scene.sams.find((s) => s.id === "{sam_id}")""")
            assert math.hypot(sam["x"] - point["x"], sam["y"] - point["y"]) < 0.5
            assert sam["range"] == SAM_RANGE and sam["known"] is True
            page.wait_for_function(
                "(n) => document.querySelectorAll(\"#timeline li[data-kind='CUT_AND_FREEZE']\").length > n",
                arg=cuts_before,
            )
            cut_seq = int(
                page.get_attribute("#timeline li[data-kind='CUT_AND_FREEZE']", "data-seq")
            )
            cut_text = page.inner_text("#timeline li[data-kind='CUT_AND_FREEZE']")
            assert f"add_sam:{sam_id}" in cut_text
            page.wait_for_function(
                """(seq) => [...document.querySelectorAll("#timeline li[data-kind='COMMIT_PLAN']")]
                     .some((li) => Number(li.dataset.seq) > seq)""",
                arg=cut_seq,
            )
            # the map: the drone's path now goes around the SAM it used to cross
            page.wait_for_function(AVOIDS, arg=[drone, sam["x"], sam["y"], sam["range"]])

            # clicking an event shows its details
            page.click("#timeline li[data-kind='CUT_AND_FREEZE']")
            assert f"add_sam:{sam_id}" in page.inner_text("#detail")

            # the agent trace tree and the question box
            page.wait_for_selector("#agents details[data-run-id]", state="attached")
            page.fill("#ask-text", "how much fuel does D2 have left?")
            page.click("#ask-send")
            page.wait_for_function(
                "() => { const t = document.querySelector('#ask-answer').textContent;"
                " return t && t !== '…'; }"
            )

            page.check("#truth")  # the hidden-SAM layer on and off again
            page.uncheck("#truth")
            page.check("#tools input[value='select']")
            page.screenshot(path=str(output_dir / "dashboard.png"))

            # the other edit tools: drag a target to move it, click a SAM to remove it
            page.check("#tools input[value='move']")
            target = page.evaluate("""() => window.isr.scene.targets
                .filter((t) => t.status === "planned").sort((a, b) => b.y - a.y)[0]""")
            sx, sy = page.evaluate(SCREEN, [target["x"], target["y"]])
            page.mouse.move(sx, sy)
            page.mouse.down()
            page.mouse.move(sx + 15, sy + 10, steps=5)
            page.mouse.move(sx + 30, sy + 20, steps=5)
            page.mouse.up()
            page.wait_for_function(EDITED, arg=f"move_target {target['id']}")
            page.wait_for_function(
                """([id, x]) => { const t = window.isr.scene.targets.find((t) => t.id === id);
                                  return t && t.x > x + 0.5; }""",
                arg=[target["id"], target["x"]],
            )
            page.check("#tools input[value='remove']")
            page.mouse.click(*page.evaluate(SCREEN, [sam["x"], sam["y"]]))
            page.wait_for_function(EDITED, arg=f"remove_sam {sam_id}")
            page.wait_for_selector(f'#l-sams [data-sam-id="{sam_id}"]', state="detached")

            # pause from the controls; mark a drone lost with its tool; resume
            page.click("#btn-pause")
            page.wait_for_selector('#st-mode[data-mode="PAUSED"]')
            page.check("#tools input[value='lose-drone']")
            page.click(
                f'#l-drones g.drone[data-drone-id="{drone}"] polygon', force=True
            )  # circling
            page.wait_for_selector("#confirm[open]")  # it cannot be undone: asked first
            assert "lost" in page.inner_text("#confirm-title")
            page.click("#confirm-ok")
            page.wait_for_function(EDITED, arg=f"disable_drone {drone}")
            page.wait_for_selector(
                f'#l-drones g.drone.lost[data-drone-id="{drone}"]', state="attached"
            )
            page.click("#btn-resume")
            page.wait_for_selector('#st-mode:not([data-mode="PAUSED"])')
        finally:
            browser.close()
    assert cli.proc.returncode in (0, 130), "\n".join(cli.log)
    assert not errors, errors
