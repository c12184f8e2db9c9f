"""What the console says before there is a mission to show (issue 26, items 1 and 2), in
Debian's headless Chromium.

``isr dashboard`` on a trace store (no live run) opens on the runs list; closed, the map says
there is no live run and where the runs are, every live control is disabled with that reason,
and a command is refused (409), never a 202. A live run's page says, from its first frame
until the first plan arrives, what the run is waiting for and for how long: "starting —
compiling the planner (first run only)" (a status published as the executive publishes it,
46 s into a first run), then "planning the first mission" on a real mission whose first plan
is held back until the test lets it go; then the map. Playwright's async API shares the
mission's event loop.
"""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from playwright.async_api import async_playwright
from playwright.sync_api import sync_playwright

from dashboard.server import start_dashboard
from executive.bus import InProcessBus
from executive.contracts import PlanOutcome, PlanRequest
from executive.planning.algorithmic import AlgorithmicPlanner
from tests.conftest import copy_of
from tests.dashboard.harness import AUTH, TIMEOUT, TOKEN, CliProcess, live_mission
from tests.dashboard.test_browser import BROWSER_ARGS

TIMEOUT_MS = 60_000


@pytest.fixture(scope="module")
def store(new_target_run, tmp_path_factory):
    """(url, run_id) of one finished new_target run (this module's copy of the session's)."""
    return copy_of(new_target_run, tmp_path_factory.mktemp("startup"))


@pytest.mark.browser
def test_isr_dashboard_opens_on_the_runs_list_and_refuses_commands(chromium, store):
    url, run_id = store
    errors: list[str] = []
    with (
        CliProcess("dashboard", "--db", url, "--port", "0", "--token", TOKEN) as cli,
        sync_playwright() as pw,
    ):
        page_url = cli.wait_for(r"dashboard: (http://\S+)")
        base = page_url.split("/?")[0]
        browser = pw.chromium.launch(executable_path=chromium, args=BROWSER_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(page_url)
            # the landing page is the runs list, with the stored run
            page.wait_for_selector(f'#runs-body tr[data-run-id="{run_id}"]')
            assert page.is_visible("#runs-panel")
            assert page.evaluate("() => location.hash") == "#runs"
            page.click("#runs-close")
            # behind it: no live run, said on the map and on every control
            page.wait_for_selector("#map-status:not([hidden])")
            said = page.inner_text("#map-status-text")
            assert said.startswith("no live run") and "open one from Runs" in said
            assert page.inner_text("#st-mode") == "NO LIVE RUN"
            for button in ("#btn-pause", "#btn-resume", "#btn-cut", "#btn-replan", "#btn-reset"):
                assert page.is_disabled(button), button
                assert "no live run" in page.get_attribute(button, "title"), button
            assert "no live run" in page.inner_text("#controls-why")
            assert page.is_disabled("#tools input[value='add-sam']")
            with httpx.Client(base_url=base, timeout=30) as http:
                r = http.post("/api/commands", json={"command": "PAUSE"}, headers=AUTH)
            assert r.status_code == 409 and "no live run" in r.json()["error"]
        finally:
            browser.close()
    assert not errors, errors


class _Gate:
    """The algorithmic planner, whose first plan waits until the test opens the gate."""

    def __init__(self) -> None:
        self.inner = AlgorithmicPlanner(seed=0)
        self.open = asyncio.Event()
        self.asked = asyncio.Event()

    async def plan(self, request: PlanRequest) -> PlanOutcome:
        if request.trigger == "initial":
            self.asked.set()
            await self.open.wait()
        return await self.inner.plan(request)


async def _phase_clock(page) -> int:
    return int(await page.get_attribute("#map-status-clock", "data-seconds") or -1)


@pytest.mark.browser
def test_a_live_page_says_what_the_start_up_waits_for_until_the_first_plan(chromium):
    errors: list[str] = []

    async def main():
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=chromium, args=BROWSER_ARGS)
            try:
                # 1. the compiling phase, as the executive publishes it 46 s into a first run
                bus = InProcessBus("first-run")
                server = await start_dashboard(bus, host="127.0.0.1", port=0, token=TOKEN)
                try:
                    page = await browser.new_page(viewport={"width": 1280, "height": 720})
                    page.on("pageerror", lambda exc: errors.append(str(exc)))
                    page.set_default_timeout(TIMEOUT_MS)
                    await page.goto(f"{server.url}/?token={TOKEN}")
                    await page.wait_for_selector("#map-status:not([hidden])")
                    assert await page.inner_text("#map-status-text") == (
                        "waiting for the mission to start"
                    )
                    bus.publish(
                        "status",
                        {
                            "run_id": "first-run",
                            "state": "starting",
                            "phase": "compiling",
                            "started_at": time.time() - 46,
                        },
                    )
                    await page.wait_for_function(
                        "() => document.getElementById('map-status').dataset.phase === 'compiling'"
                    )
                    assert await page.inner_text("#map-status-text") == (
                        "starting — compiling the planner (first run only)"
                    )
                    assert 46 <= await _phase_clock(page) <= 60
                    assert (await page.inner_text("#map-status-clock")).startswith("0:4")
                    assert await page.inner_text("#st-mode") == "STARTING"
                    assert "starting" in await page.get_attribute("#btn-pause", "title")
                    await page.close()
                finally:
                    await server.stop()

                # 2. a real mission whose first plan is held back: "planning the first
                # mission", the clock running, until the plan comes; then the map
                gate = _Gate()
                async with live_mission(speed=20.0, planner=gate) as mission:
                    page = await browser.new_page(viewport={"width": 1280, "height": 720})
                    page.on("pageerror", lambda exc: errors.append(str(exc)))
                    page.set_default_timeout(TIMEOUT_MS)
                    await asyncio.wait_for(gate.asked.wait(), TIMEOUT)
                    await page.goto(f"{mission.url}/?token={TOKEN}")
                    await page.wait_for_function(
                        "() => document.getElementById('map-status').dataset.phase === 'planning'"
                    )
                    assert await page.inner_text("#map-status-text") == "planning the first mission"
                    assert await page.is_visible("#map-status .spinner")
                    first = await _phase_clock(page)
                    await page.wait_for_function(
                        "(s) => Number(document.getElementById('map-status-clock').dataset.seconds) >= s + 2",
                        arg=first,
                    )  # the clock runs while it waits
                    assert await page.locator("#l-drones g.drone").count() == 0
                    assert await page.is_disabled("#btn-pause")  # nothing to command yet
                    gate.open.set()
                    await page.wait_for_function(
                        "() => document.querySelectorAll('#l-drones g.drone').length === 3"
                    )
                    await page.wait_for_selector("#map-status", state="hidden")
                    await page.wait_for_function(
                        "() => !document.getElementById('btn-pause').disabled"
                    )
                    await page.close()
            finally:
                await browser.close()

    asyncio.run(asyncio.wait_for(main(), 4 * TIMEOUT))
    assert not errors, errors
