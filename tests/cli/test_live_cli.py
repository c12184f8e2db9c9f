"""``isr edit``, ``isr command`` and ``isr ask --url/--mqtt`` on a live run: a real ``isr run``
process serving its dashboard and publishing on a real Mosquitto (``tests.conftest.MQTT``), acted
on through the dashboard's HTTP API and through the broker (commands signed with the run's
token). What the commands did is read back from the dashboard. Refusals (a duplicate SAM,
an unknown target, a bad command, a wrong token, an unknown or ended run) exit 2 with the
reason; an unreachable dashboard or broker exits 1.

The ``isr`` app is invoked in process (typer's runner: the same code as the entry point,
without a second interpreter start on a loaded machine); the mission is a process of its
own."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from cli.live import _Mqtt
from cli.main import build_app
from tests.conftest import MQTT
from tests.dashboard.harness import CliProcess

TOKEN = "live-cli-token"
BROKER = f"{MQTT[0]}:{MQTT[1]}"  # HOST:PORT, as an operator types it
runner = CliRunner()
app = build_app()


class Mission:
    def __init__(self, proc: CliProcess, url: str, run_id: str) -> None:
        self.proc, self.url, self.run_id = proc, url, run_id

    def state(self) -> dict[str, Any]:
        return httpx.get(f"{self.url}/api/state", headers=_auth(), timeout=10).json()

    def events(self, since: int = 0) -> list[dict[str, Any]]:
        """The events numbered above ``since`` (the newest 1,000 without it: a window that
        slides, so a count over it can stay the same while events arrive)."""
        params = {"since": since, "limit": 5000} if since else {}
        return httpx.get(f"{self.url}/api/events", params=params, timeout=10).json()["events"]

    def last_seq(self) -> int:
        """The number of the newest event so far."""
        return int(httpx.get(f"{self.url}/api/events?limit=1", timeout=10).json()["last_seq"])

    def until(self, what: str, check: Callable[[], Any], timeout: float = 60.0) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = check()
            if found:
                return found
            time.sleep(0.2)
        raise AssertionError(f"no {what} within {timeout:g} s")

    def applied(self, op: str, ident: str) -> dict[str, Any]:
        return self.until(
            f"edit_applied {op} {ident}",
            lambda: next(
                (
                    e
                    for e in self.events()
                    if e["kind"] == "edit_applied"
                    and e["edit"]["op"] == op
                    and e["edit"].get("id") == ident
                ),
                None,
            ),
        )


def _retained_scene(run: str) -> dict[str, Any] | None:
    """The run's scene as the broker hands it to a new subscriber: what ``isr edit --mqtt``
    checks an edit against."""

    async def read() -> dict[str, Any] | None:
        link = _Mqtt(f"mqtt://{BROKER}", TOKEN)
        try:
            await link.open(run)
            return link.scene
        finally:
            await link.close()

    return asyncio.run(read())


def _auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def mission() -> Iterator[Mission]:
    with CliProcess(
        "run",
        "scenarios/demo.json",
        "--port",
        "0",
        "--token",
        TOKEN,
        "--db",
        "none",
        "--no-agents",
        "--speed",
        "4",
        "--mqtt",
        f"mqtt://{BROKER}",
    ) as proc:
        url = proc.wait_for(r"dashboard: (http://\S+?)/\?token=")
        run_id = proc.wait_for(r"run ([0-9a-f]+); Ctrl-C")
        live = Mission(proc, url, run_id)
        live.until("a scene", lambda: live.state().get("scene"))
        yield live


def isr(*args: str) -> Any:
    return runner.invoke(app, list(args))


def _ok(result: Any) -> str:
    assert result.exit_code == 0, result.output
    return str(result.output)


def _refused(result: Any, code: int, *words: str) -> str:
    assert result.exit_code == code, result.output
    for word in words:
        assert word in result.output, (word, result.output)
    assert "Traceback" not in result.output
    return str(result.output)


# ----- through the dashboard ---------------------------------------------------------------


@pytest.mark.mqtt
def test_edits_through_the_dashboard(mission):
    url = f"{mission.url}/?token={TOKEN}"  # the address isr run prints, token included
    out = _ok(
        isr(
            "edit",
            mission.run_id,
            '{"op": "add_sam", "id": "S9", "pos": [5, 95], "range": 2}',
            "--url",
            url,
        )
    )
    assert f"sent to run {mission.run_id}: add SAM S9 at (5, 95), range 2" in out
    applied = mission.applied("add_sam", "S9")
    assert applied["edit"]["source"] == "operator"
    # refused at the door, with the reason and the field, exit 2
    _refused(
        isr(
            "edit",
            mission.run_id[:6],
            '{"op": "add_sam", "id": "SAM1", "pos": [1, 1], "range": 1}',
            "--url",
            url,
        ),
        2,
        "edit refused: SAM 'SAM1' already exists (HTTP 409)",
        "$.id: SAM 'SAM1' already exists",
    )
    _refused(
        isr(
            "edit",
            mission.run_id,
            '{"op": "move_target", "id": "T404", "x": 1, "y": 1}',
            "--url",
            url,
        ),
        2,
        "no target 'T404' (HTTP 422)",
    )
    _refused(
        isr(
            "edit",
            mission.run_id,
            '{"op": "add_sam", "id": "S8", "pos": [1, 1], "range": -3}',
            "--url",
            url,
        ),
        2,
        "invalid edit (HTTP 422)",
        "$.range",
    )
    _refused(isr("edit", mission.run_id, "{not json", "--url", url), 2, "not JSON")
    # none of the refused ones reached the run
    assert not [e for e in mission.events() if e["kind"] in ("edit_rejected", "CMD_REJECTED")]


@pytest.mark.mqtt
def test_commands_and_questions_through_the_dashboard(mission):
    url = mission.url
    _ok(isr("command", mission.run_id, "PAUSE", "--url", url, "--token", TOKEN))
    mission.until("mode PAUSED", lambda: mission.state()["mode"] == "PAUSED")
    _ok(isr("command", mission.run_id, "resume", "--url", url, "--token", TOKEN))
    mission.until("mode not PAUSED", lambda: mission.state()["mode"] != "PAUSED")
    out = _ok(isr("command", mission.run_id, "SPEED", "6", "--url", url, "--token", TOKEN))
    assert "speed 6x" in out
    mission.until("speed 6", lambda: (mission.state()["scene"] or {}).get("speed") == 6)
    _ok(isr("command", mission.run_id, "SPEED", "4", "--url", url, "--token", TOKEN))
    answer = _ok(
        isr(
            "ask",
            mission.run_id,
            "How much fuel does drone 1 have left?",
            "--url",
            url,
            "--token",
            TOKEN,
            "--json",
        )
    )
    data = json.loads(answer)
    assert data["answer"] and data["run_id"] == mission.run_id
    _refused(isr("command", mission.run_id, "PAUS", "--url", url, "--token", TOKEN), 2, "PAUSE")
    _refused(
        isr("command", mission.run_id, "SPEED", "fast", "--url", url, "--token", TOKEN), 2, "SPEED"
    )
    _refused(
        isr("command", "ffff0000", "PAUSE", "--url", url, "--token", TOKEN),
        2,
        "unknown run 'ffff0000'",
    )
    _refused(
        isr("command", mission.run_id, "PAUSE", "--url", url, "--token", "nope"),
        2,
        "wrong control token",
    )
    with socket.socket() as s:  # a port with nothing behind it
        s.bind(("127.0.0.1", 0))
        nobody = f"http://127.0.0.1:{s.getsockname()[1]}"
    _refused(
        isr("command", mission.run_id, "PAUSE", "--url", nobody, "--token", TOKEN),
        1,
        "cannot reach the dashboard",
    )


def _held(mission: Mission, since: int) -> bool:
    """The executive has held D3 for the operator (its HOLD event) since event ``since``."""
    return any(
        e["kind"] == "HOLD" and e.get("drone") == "3" and e.get("reason") == "operator: hold"
        for e in mission.events(since)
    )


def _status(mission: Mission, drone: str) -> str | None:
    """A drone's status in the telemetry the dashboard mirrors (what its door judges by)."""
    return (mission.state()["telemetry"] or {}).get("drones", {}).get(drone, {}).get("status")


def _within(seconds: float, check: Callable[[], Any]) -> bool:
    """Whether ``check`` holds within ``seconds`` (polled; False, not an error, if not)."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def _committed(mission: Mission, since: int) -> bool:
    return any(e["kind"] == "COMMIT_PLAN" for e in mission.events(since))


@pytest.mark.mqtt
def test_one_drones_commands_through_the_dashboard(mission):
    url, run = mission.url, mission.run_id
    flying = mission.until("D3 flying", lambda: _status(mission, "3") == "flying")
    assert flying
    for _ in range(3):
        seq = mission.last_seq()
        out = _ok(isr("command", run, "HOLD", "D3", "--url", url, "--token", TOKEN))
        assert "HOLD 3" in out
        # the executive's event, not the scene: a scene drawn while D3 holds may come after
        # a plan committed meanwhile has re-tasked it (scenes are drawn paced, in a worker)
        mission.until("D3 held", lambda seq=seq: _held(mission, seq))
        # The door judges RESUME by the telemetry it mirrors, which trails the event by up
        # to a frame: give it time to show the hold (or a plan committed since re-task D3).
        # Events are read since the HOLD: the newest 1,000 (the list's default) slide, and a
        # count over them could miss a commit.
        _within(30, lambda s=seq: _status(mission, "3") == "holding" or _committed(mission, s))
        resumed = isr("command", run, "RESUME", "3", "--url", url, "--token", TOKEN)
        if resumed.exit_code == 0:
            break
        # Something re-tasked the held drone before the door saw it hold (a plan committed
        # meanwhile, as it should): RESUME is refused with why, and the hold is tried again.
        _refused(resumed, 2, "RESUME refused: D3 is", "not holding")
    else:
        pytest.fail("every RESUME met D3 re-tasked since its HOLD")
    mission.until(
        "D3 resumed",
        lambda: any(
            e["kind"] == "CONTINUE" and e.get("resumed") == ["3"] for e in mission.events()
        ),
    )
    _refused(isr("command", run, "HOLD", "--url", url, "--token", TOKEN), 2, "needs the drone's id")
    _refused(isr("command", run, "PAUSE", "2", "--url", url, "--token", TOKEN), 2, "takes no value")
    _refused(
        isr("command", run, "RETURN", "9", "--url", url, "--token", TOKEN),
        2,
        "no drone '9' in this mission",
    )
    _refused(
        isr("command", run, "RETURN", "D1", "--url", url, "--token", TOKEN),
        2,
        "D1 is parked, not airborne",
    )


@pytest.mark.mqtt
def test_agent_switches_through_the_dashboard(mission):
    # the same door as every command, traced; this run asks no agents: refused with why
    url, run = mission.url, mission.run_id
    out = _ok(isr("command", run, "AGENT_OFF", "Critic", "--url", url, "--token", TOKEN))
    assert "AGENT_OFF" in out
    ignored = mission.until(
        "AGENT_OFF refused",
        lambda: next(
            (
                e
                for e in mission.events()
                if e["kind"] == "COMMAND_IGNORED" and e["command"] == "AGENT_OFF"
            ),
            None,
        ),
    )
    assert (
        ignored["reason"]
        == "no agent 'critic' to switch; this run's: none: this run asks no agents"
    )
    said = [
        e for e in mission.events() if e["kind"] == "HUMAN_COMMAND" and e["command"] == "AGENT_OFF"
    ]
    assert said and said[0]["text"] == "critic"
    for args in (("AGENT_ON",), ("AGENT_ON", "pilot"), ("AGENT_OFF", "critic", "--text", "x")):
        _refused(isr("command", run, *args, "--url", url, "--token", TOKEN), 2, "needs one agent")


# ----- through the broker ------------------------------------------------------------------


@pytest.mark.mqtt
def test_edits_commands_and_questions_through_the_broker(mission):
    run = mission.run_id
    out = _ok(
        isr("edit", run, '{"op": "remove_target", "id": "T12"}', "--mqtt", BROKER, "--token", TOKEN)
    )
    assert "remove target T12" in out
    mission.applied("remove_target", "T12")
    # the rule the sim applies, on the retained scene: refused before anything is sent. The
    # CLI reads the broker's retained scene, which trails the run's own dashboard (a loaded
    # machine delays the publish): wait for that one, not the dashboard's
    mission.until(
        "T12 gone from the broker's retained scene",
        lambda: (
            (scene := _retained_scene(run)) is not None
            and "T12" not in {t["id"] for t in scene["targets"]}
        ),
    )
    _refused(
        isr(
            "edit", run, '{"op": "remove_target", "id": "T12"}', "--mqtt", BROKER, "--token", TOKEN
        ),
        2,
        "edit refused: no target 'T12'",
        "$.id",
    )
    _refused(
        isr(
            "edit",
            run,
            '{"op": "add_sam", "id": "SAM2", "pos": [1, 1], "range": 1}',
            "--mqtt",
            BROKER,
            "--token",
            TOKEN,
        ),
        2,
        "SAM 'SAM2' already exists",
    )
    # a lat/lon on a mission with no geographic origin: named at its path, nothing sent
    _refused(
        isr(
            "edit",
            run,
            '{"op": "move_sam", "id": "SAM1", "pos": {"lat": 47.4, "lon": 8.5}}',
            "--mqtt",
            BROKER,
            "--token",
            TOKEN,
        ),
        2,
        "$.pos: a lat/lon position needs the mission's geographic origin",
    )
    _ok(isr("command", run, "PAUSE", "--mqtt", BROKER, "--token", TOKEN))
    mission.until("mode PAUSED", lambda: mission.state()["mode"] == "PAUSED")
    _ok(isr("command", run, "RESUME", "--mqtt", f"mqtt://{BROKER}", "--token", TOKEN))
    mission.until("mode not PAUSED", lambda: mission.state()["mode"] != "PAUSED")
    answer = _ok(
        isr("ask", run, "Which drone has the most fuel left?", "--mqtt", BROKER, "--token", TOKEN)
    )
    assert answer.strip() and "You could ask next:" in answer  # the follow-ups, as isr ask prints
    _refused(
        isr("command", "nosuchrun0", "PAUSE", "--mqtt", BROKER, "--token", TOKEN),
        2,
        "unknown run 'nosuchrun0'",
    )
    # a wrong token: the run's messages do not open with it, so the run is not found
    _refused(
        isr("command", run, "PAUSE", "--mqtt", BROKER, "--token", "nope"),
        2,
        "not signed with this token",
    )
    assert mission.state()["mode"] != "PAUSED"


@pytest.mark.mqtt
def test_a_run_that_is_over_is_refused(mission):
    assert mission.proc.stop() == 130  # Ctrl-C: the run is interrupted
    _refused(
        isr("command", mission.run_id, "PAUSE", "--mqtt", BROKER, "--token", TOKEN),
        2,
        f"run {mission.run_id} has interrupted",
    )
    _refused(
        isr("command", mission.run_id, "PAUSE", "--url", mission.url, "--token", TOKEN),
        1,
        "cannot reach the dashboard",
    )
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        nobody = f"127.0.0.1:{s.getsockname()[1]}"
    _refused(isr("command", mission.run_id, "PAUSE", "--mqtt", nobody, "--token", TOKEN), 1, "MQTT")
