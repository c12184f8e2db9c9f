"""A swarm on the dashboard (issue 23), in real Chromium against a real ``isr run``: above
50 drones the drones, targets and paths are drawn on canvases (no SVG element per drone or
target), a click where a drone is drawn selects it as on the SVG map (the inspector names
it), and the fleet table keeps only the rows in sight in the DOM, the last drone's row
appearing when the table is scrolled to its end. Smaller missions keep the SVG map (the
other browser tests click its elements).
"""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest
from playwright.sync_api import sync_playwright

from tests.conftest import ROOT
from tests.dashboard.harness import TOKEN, CliProcess
from tests.dashboard.test_browser import BROWSER_ARGS

pytestmark = pytest.mark.browser

DRONES = 80
TIMEOUT_MS = 120_000

# In the page: the drone drawn farthest from any other (at least 6 px: the pointer picks the
# nearest drone), inside the map, and where (screen px); null while none is.
ISOLATED = """() => {
  const tel = (window.isr.telemetry || {}).drones || {};
  const m = document.getElementById("world").getScreenCTM();
  const r = document.getElementById("map").getBoundingClientRect();
  const at = Object.entries(tel).map(([id, d]) =>
    [id, m.a * d.x + m.c * d.y + m.e, m.b * d.x + m.d * d.y + m.f]);
  let best = null;
  for (const [id, x, y] of at) {
    if (x < r.left + 40 || x > r.right - 80 || y < r.top + 40 || y > r.bottom - 40) continue;
    const gap = Math.min(...at.filter(([o]) => o !== id).map(([, ox, oy]) => Math.hypot(ox - x, oy - y)));
    if (gap >= 6 && (!best || gap > best.gap)) best = {id, x, y, gap};
  }
  return best;
}"""


class SlowStop(CliProcess):
    """The CLI, given longer to stop: on a loaded machine an 80-drone run can take more than
    the harness's 30 s to wind down after Ctrl-C (its end-of-run work grows with the fleet;
    that is the executive's business, not the page's), so it is killed after 120 s."""

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        return self.proc.returncode


@pytest.mark.slow
def test_a_swarm_is_drawn_on_canvas_and_its_fleet_table_is_virtualised(chromium, tmp_path):
    mission = tmp_path / "swarm.json"
    subprocess.run(
        [sys.executable, "-m", "cli", "scenario", "new", "--drones", str(DRONES),
         "--targets", "160", "--sams", "2", "--out", str(mission)],
        check=True, cwd=ROOT, capture_output=True,
    )  # fmt: skip
    errors: list[str] = []
    cli = SlowStop(
        "run", str(mission), "--port", "0", "--token", TOKEN, "--db", "none",
        "--no-agents", "--no-replan", "--speed", "2",
    )  # fmt: skip
    with cli, sync_playwright() as pw:
        url = cli.wait_for(r"dashboard: (http://\S+)", timeout=300)
        browser = pw.chromium.launch(executable_path=chromium, args=BROWSER_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 960})
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(url)
            page.wait_for_function(
                f"() => window.isr.scene && Object.keys(window.isr.scene.drones).length === {DRONES}"
                " && window.isr.telemetry && document.getElementById('swarm-over')"
                " && !document.getElementById('swarm-over').hidden"
            )
            # the canvas draws them: no element per drone or target
            assert page.locator("#l-drones g.drone").count() == 0
            assert page.locator("#l-targets g.target").count() == 0
            assert page.locator("#swarm-under").is_visible()

            # the fleet table: only the rows in sight, the scroll bar as tall as all of them
            rows = page.locator("#fleet-body tr[data-drone-id]")
            assert 0 < rows.count() < DRONES
            assert page.locator('#fleet-body tr[data-drone-id="1"]').count() == 1
            page.evaluate(
                "() => { const b = document.getElementById('fleet-body').closest('.panel-body');"
                " b.scrollTop = b.scrollHeight; }"
            )
            page.wait_for_selector(f'#fleet-body tr[data-drone-id="{DRONES}"]')
            assert rows.count() < DRONES
            assert page.locator('#fleet-body tr[data-drone-id="1"]').count() == 0

            # a click where a drone is drawn selects it, as on the SVG map
            handle = page.wait_for_function(ISOLATED, polling=250)
            drone = handle.json_value()
            page.mouse.click(drone["x"], drone["y"])
            page.wait_for_function("() => window.isr.selected")
            assert page.evaluate("() => window.isr.selected") == {
                "kind": "drone",
                "id": drone["id"],
            }
            # the table scrolls to its row, marked selected
            page.wait_for_selector(f'#fleet-body tr.selected[data-drone-id="{drone["id"]}"]')
        finally:
            browser.close()
    assert errors == []
