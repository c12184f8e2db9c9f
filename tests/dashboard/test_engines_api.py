"""``GET /api/engines`` on a real dashboard server: each engine of the run checked with a real
reachability call (the openai SDK against a local chat-completions server; a closed port for
one that is down), its latency or the reason, no key shown, and checks shared; and the
engines panel in headless Chromium on a live ``isr run`` whose critic runs on a local model."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from playwright.sync_api import sync_playwright
from pydantic import SecretStr

from agents.engines.spec import EngineSpec
from dashboard.server import start_dashboard
from executive.bus import InProcessBus
from tests.dashboard.harness import TOKEN, CliProcess
from tests.dashboard.test_browser import BROWSER_ARGS
from tests.openai_api import ChatAPIServer

# the SDKs are imported by one worker only, the one running these (tests/conftest.py)
pytestmark = pytest.mark.xdist_group("sdk")

TIMEOUT = 10.0


def _get(engines, path: str = "/api/engines", times: int = 1) -> list[httpx.Response]:
    async def go():
        server = await start_dashboard(
            InProcessBus("engines"), port=0, token=TOKEN, engines=engines
        )
        try:
            async with httpx.AsyncClient(base_url=server.url, timeout=TIMEOUT) as http:
                return [await http.get(path) for _ in range(times)]
        finally:
            await server.stop()

    return asyncio.run(go())


def test_each_engine_is_checked_with_its_latency_or_the_reason():
    with ChatAPIServer(models=["llama3.1:latest"]) as api, ChatAPIServer() as gone:
        dead = gone.url
        gone.close()
        local = EngineSpec(
            engine="openai", model="llama3.1", base_url=api.url, api_key=SecretStr("sk-hidden")
        )
        engines = {
            "strategist": EngineSpec(),
            "allocator": EngineSpec(),
            "critic": local,
            "responder": EngineSpec(engine="openai", model="mistral", base_url=dead),
        }
        [response] = _get(engines)
        asked, served = api.model_requests, api.url

    assert response.status_code == 200
    body = response.json()
    assert body["configured"] is True and body["ok"] is False  # one engine is down
    rules, critic, responder = body["engines"]
    assert rules["roles"] == ["strategist", "allocator"] and rules["ok"] is True
    assert critic["roles"] == ["critic"] and critic["ok"] is True
    assert critic["engine"] == "openai" and critic["model"] == "llama3.1"
    assert critic["base_url"] == served
    assert 0 < critic["latency_ms"] < TIMEOUT * 1000 and critic["model_listed"] is True
    assert responder["ok"] is False and responder["error"].startswith("unavailable: ")
    assert asked == 1
    assert "sk-hidden" not in response.text and "api_key" not in response.text


def test_checks_are_shared_between_readers():
    with ChatAPIServer(models=["m"]) as api:
        engines = {"critic": EngineSpec(engine="openai", model="m", base_url=api.url)}
        answers = _get(engines, times=3)
        asked = api.model_requests
    assert [a.json()["ok"] for a in answers] == [True, True, True]
    assert asked == 1  # the page polls; the model server is asked once per ttl


def test_a_dashboard_with_no_run_of_its_own_has_no_engines_and_says_so():
    [response] = _get(None)
    assert response.status_code == 200
    assert response.json() == {"configured": False, "ok": True, "engines": []}
    [spec] = _get(None, "/openapi.json")
    assert "/api/engines" in spec.json()["paths"]


@pytest.fixture(scope="module")
def engines_run():
    """The real ``isr run`` of the demo whose critic runs on a local model (a chat-completions
    server of the test's own) and whose allocator plans every minute: its dashboard's URL.
    One process for both browser tests below (the engines panel reads it, the switches turn
    its critic off and on again); a process start is ~2 CPU s."""
    api = ChatAPIServer(models=["llama3.1:latest"]).start()
    try:
        with CliProcess(
            "run", "scenarios/demo.json", "--port", "0", "--token", TOKEN, "--db", "none",
            "--speed", "5", "--agent-engine", f"critic=openai:llama3.1@{api.url}",
            "--agent-cadence", "allocator=60",
        ) as cli:  # fmt: skip
            yield cli.wait_for(r"dashboard: (http://\S+)")
    finally:
        api.close()


@pytest.mark.browser
def test_the_engines_panel_on_a_live_run_whose_critic_runs_on_a_local_model(chromium, engines_run):
    errors: list[str] = []
    url = engines_run
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=BROWSER_ARGS)
        try:
            page = browser.new_page()
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(url)
            page.set_default_timeout(60_000)
            page.wait_for_selector("#engines-panel:not([hidden])")
            ok = page.wait_for_selector("#engines li[data-engine='openai'][data-ok='true']")
            line = ok.text_content() or ""
            rules = page.text_content("#engines li[data-engine='rules']") or ""
        finally:
            browser.close()
    assert "critic" in line and "llama3.1" in line and " ms" in line
    assert "strategist" in rules and "allocator" in rules and "responder" in rules
    assert errors == []


def test_the_view_follows_the_agent_switches_from_the_running_status_and_agents_events():
    """``/api/agent_switches``' source: the running status names the agents, those off and
    their cadences; each AGENTS event after it says which are off now."""
    from dashboard.live_view import LiveView
    from executive.bus import Message

    view = LiveView(InProcessBus("switches"))
    assert view.agent_switches is None
    start = {
        "roles": ["strategist", "allocator", "critic"],
        "off": {},
        "cadence_s": {"allocator": 60.0},
    }
    view.apply(Message("status", {"run_id": "switches", "state": "running", "agents": start}))
    assert view.agent_switches == start
    off = {"critic": "switched off by operator at tick 40"}
    view.apply(
        Message(
            "events",
            {
                "run_id": "switches",
                "tick": 40,
                "kind": "AGENTS",
                "agent": "critic",
                "on": False,
                "off": off,
            },
        )
    )
    assert view.agent_switches == {**start, "off": off}
    view.apply(
        Message(
            "events",
            {
                "run_id": "switches",
                "tick": 90,
                "kind": "AGENTS",
                "agent": "critic",
                "on": True,
                "off": {},
            },
        )
    )
    assert view.agent_switches["off"] == {} and view.agent_switches["cadence_s"] == {
        "allocator": 60.0
    }


@pytest.mark.browser
def test_the_engines_panel_switches_an_agent_off_and_on_through_the_command_door(
    chromium, engines_run
):
    """The real ``isr run`` and headless Chromium: the panel shows each planning agent with
    its cadence; unticking the critic sends AGENT_OFF through ``POST /api/commands``, and the
    switch shows off once the run's AGENTS event says so (with the reason from the run);
    ticking it again switches it back on."""
    errors: list[str] = []
    posted: list[dict] = []
    url = engines_run
    with sync_playwright() as pw:
        base = url.split("/?")[0]
        browser = pw.chromium.launch(executable_path=chromium, args=BROWSER_ARGS)
        try:
            page = browser.new_page()
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on(
                "request",
                lambda r: (
                    posted.append(r.post_data_json)
                    if r.method == "POST" and r.url.endswith("/api/commands")
                    else None
                ),
            )
            page.goto(url)
            page.set_default_timeout(60_000)
            critic = "#agent-switches li[data-role='critic']"
            page.wait_for_selector(f"{critic}[data-on='true']")
            roles = page.eval_on_selector_all(
                "#agent-switches li", "ls => ls.map(l => l.dataset.role)"
            )
            cadences = {
                r: page.text_content(f"#agent-switches li[data-role='{r}'] .cadence") for r in roles
            }
            page.uncheck(f"{critic} input[type='checkbox']")
            page.wait_for_selector(f"{critic}[data-on='false']")
            off_title = page.get_attribute(critic, "title") or ""
            switches = httpx.get(f"{base}/api/agent_switches", timeout=TIMEOUT).json()
            page.check(f"{critic} input[type='checkbox']")
            page.wait_for_selector(f"{critic}[data-on='true']")
            on_box = page.is_checked(f"{critic} input[type='checkbox']")
            events = httpx.get(f"{base}/api/events", timeout=TIMEOUT).json()["events"]
        finally:
            browser.close()
    assert roles == ["strategist", "allocator", "critic"]
    assert cadences == {
        "strategist": "on events",
        "allocator": "every 1 min",
        "critic": "on events",
    }
    assert posted == [
        {"command": "AGENT_OFF", "text": "critic"},
        {"command": "AGENT_ON", "text": "critic"},
    ]
    assert "critic is off: switched off by" in off_title
    [critic_switch] = [a for a in switches["agents"] if a["role"] == "critic"]
    assert critic_switch["on"] is False and "switched off by" in critic_switch["off_reason"]
    said = [(e["agent"], e["on"]) for e in events if e["kind"] == "AGENTS"]
    assert said == [("critic", False), ("critic", True)]
    assert on_box is True
    assert errors == []
