"""A replay that reads right (issue 26, items 4 and 7), in Debian's headless Chromium: a
stored run (lost_drone, the drone lost between two stored telemetry rows) served by a
dashboard of stored runs.

At its loss tick the lost drone is lost (marker, fleet row, inspector), not "flying" as the
row a few ticks before said; the status line labels the playback speed and the pace the
mission was recorded at, each by name; at the run's end the points line says what was
collected and claims no plan. The charts have their axes in units, show the values under the
pointer, zoom with the wheel and with a drag (the three together), and show the whole run
again on a double click.
"""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from playwright.sync_api import sync_playwright

from executive.traces import TraceReader
from mission.config import RunConfig
from mission.session import run_mission
from planner.scenario import parse_scenario
from tests.dashboard.harness import SCENARIOS, TOKEN
from tests.dashboard.test_browser import BROWSER_ARGS
from tests.dashboard.test_replay_browser import SETTLED, serving

TIMEOUT_MS = 30_000


@pytest.fixture(scope="module")
def lost_run(tmp_path_factory):
    """(url, run_id, loss tick, lost drone) of one finished lost_drone run, the loss between
    two stored telemetry rows."""
    url = f"sqlite:///{tmp_path_factory.mktemp('lost') / 'traces.db'}"
    mission = json.loads((SCENARIOS / "lost_drone.json").read_text())
    mission["timeline"][0]["t"] = 900.1  # tick 18 002: rows are stored every 5 ticks
    report = asyncio.run(
        run_mission(parse_scenario(mission, "lost"), RunConfig(trace_url=url, agents=False))
    )
    reader = TraceReader(url)
    lost = next(e for e in reader.events(report.run_id) if e["kind"] == "drone_lost")
    reader.close()
    return url, report.run_id, lost["tick"], lost["payload"]["drone"]


def _seek(page, tick: int) -> None:
    page.fill("#pb-time", f"{tick / 20:.2f}")
    page.press("#pb-time", "Enter")
    page.wait_for_function(SETTLED, arg=tick)


@pytest.mark.browser
def test_a_replay_that_reads_right_and_charts_that_answer(lost_run, chromium):
    url, run_id, loss, drone = lost_run
    errors: list[str] = []
    with serving(url) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=BROWSER_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(f"{base}/?token={TOKEN}&replay={run_id}&tick={loss - 1}")
            page.wait_for_function(SETTLED, arg=loss - 1)
            row = f'#fleet-body tr[data-drone-id="{drone}"]'
            assert page.get_attribute(row, "data-status") == "flying"

            # ----- the loss tick: lost everywhere
            _seek(page, loss)
            page.wait_for_function(
                "(sel) => document.querySelector(sel).dataset.status === 'lost'", arg=row
            )
            marker = f'#l-drones g.drone[data-drone-id="{drone}"]'
            assert "lost" in page.get_attribute(marker, "class")
            assert page.get_attribute(marker, "data-status") == "lost"
            page.click(row)
            page.wait_for_selector(f'#inspector[data-kind="drone"][data-id="{drone}"]')
            status = page.inner_text('#insp-facts dd[data-fact="status"]')
            assert status.startswith("lost"), status
            assert page.is_hidden('#insp-actions button[data-action="HOLD"]') or (
                page.locator("#insp-actions button").count() == 0
            )  # a replay: nothing to command

            # ----- the speeds, each by name
            speed = page.inner_text("#st-speed")
            assert re.fullmatch(r"playback 1x ❚❚ · recorded at max", speed), speed
            assert "recorded" in page.get_attribute("#st-speed", "title")

            # ----- the end: what was collected, no plan claimed
            last = page.evaluate("() => window.isr.replay.lastTick")
            _seek(page, last)
            points = page.inner_text("#st-points")
            assert re.fullmatch(r"points [\d.]+ collected", points), points
            _seek(page, last // 2)
            assert "still planned" in page.inner_text("#st-points")

            # ----- the charts: axes in units
            for chart, unit in (
                ("#ch-points", "points"),
                ("#ch-fuel", "km"),
                ("#ch-latency", "ms"),
            ):
                assert page.text_content(f"{chart} text.ylabel") == unit
                assert page.text_content(f"{chart} text.xlabel") == "mission time (m:ss)"
                assert page.locator(f"{chart} text.xtick").count() >= 2
                assert page.locator(f"{chart} text.ytick").count() >= 2
            # hover: the values at the pointer, every drone's fuel
            box = page.locator("#ch-fuel").bounding_box()
            page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.5)
            tip = page.locator("#ch-fuel").locator("xpath=..").locator(".chart-tip")
            tip.wait_for(state="visible")
            lines = tip.inner_text().splitlines()
            assert re.match(r"\d+:\d\d \(tick \d+\)", lines[0]), lines
            assert sum(bool(re.fullmatch(r"D\d [\d.]+ km", ln)) for ln in lines) == 3, lines
            hovered = int(tip.get_attribute("data-tick"))
            assert abs(hovered - last / 2) < last * 0.08, (hovered, last)
            # zoom: the wheel about the pointer, all three charts
            page.mouse.wheel(0, -500)
            page.wait_for_function("() => window.isr.replay.chartSpan.zoomed")
            span = page.evaluate("() => window.isr.replay.chartSpan")
            assert span["to"] - span["from"] < 0.6 * last
            assert span["from"] < hovered < span["to"]  # about the pointer
            assert page.locator("figcaption .zoomed").count() == 3
            # a double click: the whole run again; a drag: the span dragged over
            page.mouse.dblclick(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.5)
            page.wait_for_function("() => !window.isr.replay.chartSpan.zoomed")
            y = box["y"] + box["height"] * 0.5
            x0, x1 = (
                box["x"] + 46 + 0.2 * (box["width"] - 56),
                box["x"] + 46 + 0.4 * (box["width"] - 56),
            )
            before = page.evaluate("() => window.isr.replay.tick")
            page.mouse.move(x0, y)
            page.mouse.down()
            page.mouse.move((x0 + x1) / 2, y, steps=3)
            page.mouse.move(x1, y, steps=3)
            page.mouse.up()
            page.wait_for_function("() => window.isr.replay.chartSpan.zoomed")
            span = page.evaluate("() => window.isr.replay.chartSpan")
            assert span["from"] == pytest.approx(0.2 * last, rel=0.05)
            assert span["to"] == pytest.approx(0.4 * last, rel=0.05)
            assert page.evaluate("() => window.isr.replay.tick") == before  # a drag is no seek
        finally:
            browser.close()
    assert not errors, errors
