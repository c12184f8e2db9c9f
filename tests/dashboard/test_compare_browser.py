"""The compare view and Fork here's success path, in Debian's headless Chromium (issue 14).

A finished popup_sam run and its fork (``isr fork --review``: nobody answers the review, so
the fork leaves its parent after the SAM detection) are opened side by side at
/?compare=PARENT,FORK from the runs picker's Compare button: the table's values are
/api/compare's, both runs' tracks are drawn (one SVG path per drone and run) and the first
divergence is shown with a link to the fork's replay at that tick. A screenshot goes to
compare.png (in docs/ when ``ISR_DOCS_SCREENSHOTS=1``).

The table colours each difference by what it means (more points, fewer drones lost, less fuel
used are better; replans and length are neither); each target is drawn in two halves, A's
state and B's own.

Fork here on a dashboard with a real fork launcher (``SubprocessForks``): the button is
disabled at once with a spinner saying where it forks; the browser lands on the fork's own
live page (another port, the token in its address), which shows the new run's ticks going
past the fork tick, the parent's flight drawn up to the fork, what it forks with a link back,
and Stop (confirmed), which ends it; the parent's runs picker then lists the fork with its
parent.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import sync_playwright
from typer.testing import CliRunner

from cli.launch import SubprocessForks
from cli.main import build_app
from dashboard.server import start_dashboard
from executive.bus import InProcessBus
from executive.traces import TraceReader
from tests.conftest import copy_of
from tests.dashboard.harness import AUTH, TIMEOUT, TOKEN
from tests.dashboard.test_browser import BROWSER_ARGS

TIMEOUT_MS = 30_000

SETTLED = """(tick) => { const r = window.isr && window.isr.replay;
  return Boolean(r) && r.tick === tick && !r.pending && window.isr.scene && window.isr.scene.tick === tick; }"""


@pytest.fixture(scope="module")
def stored(popup_sam_run, tmp_path_factory):
    """(url, run_id, detection tick) of one finished popup_sam run (this module's copy of the
    session's)."""
    url, run_id = copy_of(popup_sam_run, tmp_path_factory.mktemp("compare"))
    reader = TraceReader(url)
    detected = next(e for e in reader.events(run_id) if e["kind"] == "sam_detected")
    reader.close()
    return url, run_id, detected["tick"]


@contextmanager
def serving(trace_url: str, with_forks: bool = False) -> Iterator[str]:
    """A dashboard serving the store (an idle bus), its loop in a thread, with a real fork
    launcher or none; its URL."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    forks = SubprocessForks(trace_url, TOKEN) if with_forks else None

    async def start():
        return await start_dashboard(
            InProcessBus(), port=0, token=TOKEN, trace_url=trace_url, forks=forks
        )

    server = asyncio.run_coroutine_threadsafe(start(), loop).result(TIMEOUT)
    try:
        yield server.url
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result(TIMEOUT)
        if forks is not None:
            asyncio.run_coroutine_threadsafe(forks.close(), loop).result(60)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(TIMEOUT)
        loop.close()


def _fork_by_cli(url: str, parent: str, tick: int) -> str:
    done = CliRunner().invoke(
        build_app(),
        ["fork", parent, "--at-tick", str(tick), "--headless", "--db", url, "--json"]
        + ["--no-agents", "--review"],
    )
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout.strip().splitlines()[-1])["run_id"]


def _num(text: str) -> float:
    return float(text.replace("+", "").replace("−", "-"))


@pytest.mark.browser
def test_compare_a_run_and_its_fork(stored, chromium, shoot):
    url, parent, detected = stored
    fork = _fork_by_cli(url, parent, detected)
    errors: list[str] = []
    with (
        serving(url) as base,
        httpx.Client(base_url=base, headers=AUTH, timeout=TIMEOUT) as http,
        sync_playwright() as pw,
    ):
        side = http.get("/api/compare", params={"a": parent, "b": fork}).json()
        assert side["first_divergence"] is not None
        browser = pw.chromium.launch(executable_path=chromium, args=BROWSER_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.set_default_timeout(TIMEOUT_MS)

            # the runs picker: tick the fork, then its parent; Compare puts the parent first
            page.goto(f"{base}/?token={TOKEN}#runs")
            page.wait_for_selector(f'#runs-body tr[data-run-id="{fork}"]')
            assert page.is_disabled("#runs-compare")
            page.check(f'#runs-body tr[data-run-id="{fork}"] input.run-pick')
            page.check(f'#runs-body tr[data-run-id="{parent}"] input.run-pick')
            assert "#runs" in page.url  # a tick opens no replay
            page.click("#runs-compare")
            page.wait_for_function(
                "() => Boolean(window.isr && window.isr.compare && window.isr.compare.loaded)"
            )
            assert f"compare={parent},{fork}" in page.url

            # the table: /api/compare's values, with B - A
            def cells(key: str) -> list[str]:
                return [
                    page.inner_text(f'#cmp-body tr[data-key="{key}"] td.{c}')
                    for c in ("a", "b", "d")
                ]

            for key in ("points", "replans", "ticks"):
                a, b, d = cells(key)
                va, vb = side["a"][key], side["b"][key]
                assert _num(a) == pytest.approx(va, abs=1e-3) and _num(b) == pytest.approx(
                    vb, abs=1e-3
                )
                assert _num(d) == pytest.approx(vb - va, abs=1e-3) if d != "0" else va == vb
            a, b, d = cells("fuel_used")
            assert _num(a) == pytest.approx(side["a"]["fuel_used"], abs=0.06)
            assert _num(b) == pytest.approx(side["b"]["fuel_used"], abs=0.06)
            a, b, _ = cells("lost")
            assert (int(a), int(b)) == (len(side["a"]["lost"]), len(side["b"]["lost"]))
            assert cells("status")[:2] == [side["a"]["status"], side["b"]["status"]]
            assert "fork of A" in page.inner_text("#cmp-summary")

            # both runs' tracks: one path per drone (that flew) and run, the same colour per drone
            n_a, n_b = len(side["a"]["tracks"]), len(side["b"]["tracks"])
            assert n_a >= 2 and n_b >= 2
            assert page.locator("#l-tracks path.track-a").count() == n_a
            assert page.locator("#l-tracks path.track-b").count() == n_b
            colours = page.evaluate(
                "() => [...document.querySelectorAll('#l-tracks path')].map((p) =>"
                " [p.dataset.run, p.dataset.droneId, p.getAttribute('stroke')])"
            )
            by = {(r, d): c for r, d, c in colours}
            assert all(by[("a", d)] == by[("b", d)] for d in side["a"]["tracks"])
            assert len({by[("a", d)] for d in side["a"]["tracks"]}) == n_a
            dashed = page.evaluate(
                "() => getComputedStyle(document.querySelector('#l-tracks path.track-b'))"
                ".strokeDasharray"
            )
            assert dashed not in ("", "none")

            # each difference coloured by what it means for that figure: more points are
            # better, fewer drones lost and less fuel used are better; replans and length
            # are neither
            def sense(key: str, a: float, b: float) -> str:
                if abs(b - a) < 1e-9:
                    return "same"
                better = {"points": b > a, "lost": b < a, "fuel_used": b < a}.get(key)
                return "neutral" if better is None else ("better" if better else "worse")

            figures = {
                "points": (side["a"]["points"], side["b"]["points"]),
                "lost": (len(side["a"]["lost"]), len(side["b"]["lost"])),
                "fuel_used": (side["a"]["fuel_used"], side["b"]["fuel_used"]),
                "replans": (side["a"]["replans"], side["b"]["replans"]),
                "ticks": (side["a"]["ticks"], side["b"]["ticks"]),
            }
            for key, (va, vb) in figures.items():
                cell = f'#cmp-body tr[data-key="{key}"] td.d'
                assert page.get_attribute(cell, "data-meaning") == sense(key, va, vb), key
            assert {sense(k, *v) for k, v in figures.items()} - {"same"}, "nothing to colour"
            colours = page.evaluate(
                "() => Object.fromEntries([...document.querySelectorAll('#cmp-body td.d')]"
                ".map((td) => [td.dataset.meaning, getComputedStyle(td).color]))"
            )
            if "better" in colours and "worse" in colours:
                assert colours["better"] != colours["worse"]
            # each target in two halves: A's state on the left, B's own on the right
            statuses_b = {t["id"]: t["status"] for t in side["b"]["scene"]["targets"]}
            halves = page.evaluate(
                "() => [...document.querySelectorAll('#l-targets g.target')].map((g) =>"
                " [g.dataset.targetId, g.dataset.statusA, g.dataset.statusB,"
                " g.querySelector('polygon.half-b').dataset.status])"
            )
            assert len(halves) == len(side["a"]["scene"]["targets"])
            statuses_a = {t["id"]: t["status"] for t in side["a"]["scene"]["targets"]}
            for target, a_said, b_said, drawn in halves:
                assert a_said == statuses_a[target]
                assert b_said == drawn == statuses_b.get(target, "gone"), target
            assert page.locator("#l-sams g.sam").count() >= 2  # the scene, drawn once
            assert page.locator("#l-targets g.target").count() == len(side["a"]["scene"]["targets"])

            # the first divergence, with the link to B's replay at that tick
            tick = side["first_divergence"]
            assert f"first divergence at tick {tick}" in page.inner_text("#cmp-diverge")
            href = page.get_attribute("#cmp-diverge-link", "href")
            assert href == f"/?replay={fork}&tick={tick}"
            shoot(page, "compare.png")
            page.click("#cmp-diverge-link")
            page.wait_for_function(SETTLED, arg=tick)
            assert f"replay={fork}" in page.url
        finally:
            browser.close()
    assert not errors, errors


@pytest.mark.browser
def test_fork_here_lands_on_the_forks_live_page(stored, chromium):
    url, parent, detected = stored
    at = detected - 200
    errors: list[str] = []
    with serving(url, with_forks=True) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=BROWSER_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.set_default_timeout(TIMEOUT_MS)
            documents: list[str] = []
            page.on(
                "request",
                lambda r: documents.append(r.url) if r.resource_type == "document" else None,
            )
            page.goto(f"{base}/?replay={parent}&token={TOKEN}")
            page.wait_for_function(SETTLED, arg=0)
            page.fill("#pb-time", f"{at / 20:.2f}")
            page.press("#pb-time", "Enter")
            page.wait_for_function(SETTLED, arg=at)

            page.click("#pb-fork")
            # at once: the button disabled, a spinner saying where it forks
            page.wait_for_selector("#pb-fork-status:not([hidden])", timeout=2_000)
            assert page.is_disabled("#pb-fork")
            assert page.inner_text("#pb-fork-status").startswith("forking at ")
            assert f"(tick {at})" in page.inner_text("#pb-fork-status")
            assert page.is_visible("#pb-fork-status .spinner")
            # the fork's child starts (about 5 s) and the page goes to its own live page
            page.wait_for_function(
                "(base) => location.origin !== base && !location.search.includes('replay')",
                arg=base,
                timeout=90_000,
            )
            live = page.evaluate("() => location.origin")
            assert urlsplit(live).port != urlsplit(base).port
            landed = [u for u in documents if u.startswith(live)]
            assert landed and f"token={TOKEN}" in landed[0], documents
            # the live page: the new run, its ticks past the fork tick
            page.wait_for_function(
                "(at) => { const s = window.isr; if (!s) return false; const t = (s.telemetry && s.telemetry.tick)"
                " || (s.scene && s.scene.tick) || 0; return s.runId && t > at + 20; }",
                arg=at,
                timeout=60_000,
            )
            assert "token" not in page.url  # kept out of the address bar once stored
            child = page.evaluate("() => window.isr.runId")
            assert child and child != parent
            tick_text = page.inner_text("#st-tick")
            assert int(tick_text.split()[-1]) > at, tick_text
            # the parent's flight is drawn, not a line from the airport to the fork point
            trails = page.evaluate(
                "() => Object.values(window.isr.scene.drones).map((d) => d.flown.length)"
            )
            assert max(trails) > at // 10 // 2, trails
            # it says what it forks, links back to the parent's replay, and can be stopped
            page.wait_for_selector("#fork-row:not([hidden])")
            assert page.inner_text("#fork-what").startswith(f"fork of {parent[:8]} at ")
            back = page.get_attribute("#fork-back", "href")
            assert back == f"{base}/?replay={parent}"
            page.click("#btn-stop")
            page.wait_for_selector("#confirm[open]")
            assert page.inner_text("#confirm-title") == "Stop this fork?"
            page.click("#confirm-ok")
            page.wait_for_selector('#st-mode[data-mode="ENDED"]', timeout=60_000)
            page.wait_for_function(
                "(href) => document.getElementById('fork-back').getAttribute('href') === href",
                arg=f"{base}/?replay={child}",
            )
            assert page.inner_text("#fork-back") == "this fork's replay"

            # the parent's runs picker lists the fork with its parent
            page.goto(f"{base}/#runs")
            row = page.wait_for_selector(f'#runs-body tr[data-run-id="{child}"]')
            link = row.query_selector("td:last-child a")
            assert link is not None and link.inner_text() == f"{parent[:8]} @{at}"
            assert link.get_attribute("href") == f"/?replay={parent}"
        finally:
            browser.close()
    assert not errors, errors
