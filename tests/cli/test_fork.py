"""``isr fork``, ``isr compare`` and ``isr report`` on a real stored run (popup_sam: a
hidden SAM detected at tick ~11 300 and a replan), and a fork started from the dashboard's
API as a real child process serving its own live page."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from typer.testing import CliRunner

from cli.launch import SubprocessForks
from cli.main import build_app
from dashboard.server import start_dashboard
from executive.bus import InProcessBus
from executive.loop.policy import Policy
from executive.traces import TraceReader
from executive.traces.replay import replay
from mission.config import RunConfig
from mission.session import run_mission
from planner.scenario import load_scenario
from tests.conftest import SCENARIOS

runner = CliRunner()
app = build_app()
TOKEN = "fork-test-token"


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """(url, run_id, detection tick) of one finished popup_sam run, batch, no agents."""
    url = f"sqlite:///{tmp_path_factory.mktemp('fork') / 'traces.db'}"
    scenario = load_scenario(SCENARIOS / "popup_sam.json")
    # the 1 km reserve: with the robust one (10 km: SAM2 is 15 km) the first plan stays clear
    # of where SAM3 pops up, and a fork in review would not leave its parent
    policy = Policy(reserve="fixed")
    config = RunConfig(trace_url=url, agents=False, policy=policy)
    report = asyncio.run(run_mission(scenario, config))
    reader = TraceReader(url)
    detected = next(e for e in reader.events(report.run_id) if e["kind"] == "sam_detected")
    reader.close()
    return url, report.run_id, detected["tick"]


def _fork(url: str, *args: str) -> dict:
    done = runner.invoke(app, ["fork", *args, "--headless", "--db", url, "--json"])
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout.strip().splitlines()[-1])


def _fails(url: str, *args: str) -> str:
    done = runner.invoke(app, ["fork", *args, "--headless", "--db", url])
    assert done.exit_code == 2, done.output
    assert "Traceback" not in done.output
    return done.output


def test_a_fork_with_nothing_changed_flies_as_its_parent_and_replays_exactly(stored):
    url, parent, detected = stored
    out = _fork(url, parent, "--at-tick", str(detected - 300))
    assert out["parent_run_id"] == parent and out["fork_tick"] == detected - 300
    side = out["compare"]
    assert side["first_divergence"] is None  # batch planning is deterministic
    assert side["a"]["points"] == side["b"]["points"] == out["total_points"]
    reader = TraceReader(url)
    child = reader.run(out["run_id"])
    assert child["parent_run_id"] == parent
    assert child["config"]["fork"] == {"parent": parent, "tick": detected - 300}
    # the fork's trace holds its whole history: it replays from tick 0 like any run
    result = replay(
        child["scenario"],
        reader.inputs(child["run_id"]),
        reader.state_hashes(child["run_id"]),
        hash_every=child["config"]["policy"]["hash_every"],
    )
    assert result.exact and result.compared > 1000
    forked = next(e for e in reader.events(child["run_id"]) if e["kind"] == "FORKED")
    assert forked["tick"] == detected - 300 and forked["payload"]["checked_tick"] is not None
    reader.close()


def test_a_fork_with_an_edit_diverges_after_the_fork_and_not_before(stored, tmp_path):
    url, parent, detected = stored
    at = detected - 300
    seconds = (at + 1) / 20 + 5
    edits = tmp_path / "edits.json"
    # a known SAM dropped on drone 2's way, 5 s after the fork
    edits.write_text(
        json.dumps([{"t": seconds, "op": "add_sam", "id": "S9", "pos": [62.0, 33.0], "range": 3.0}])
    )
    out = _fork(url, parent, "--at-tick", str(at), "--scenario-edits", str(edits))
    diverged = out["compare"]["first_divergence"]
    assert diverged is not None and at < diverged <= at + 20 * 5 + 40
    reader = TraceReader(url)
    a, b = reader.state_hashes(parent), reader.state_hashes(out["run_id"])
    assert all(a[t] == b[t] for t in a if t <= at)  # the shared past is the parent's
    applied = [
        e for e in reader.events(out["run_id"]) if e["kind"] == "edit_applied" and e["tick"] > at
    ]
    assert [e["payload"]["edit"]["id"] for e in applied] == ["S9"]
    reader.close()


def test_bad_fork_requests_are_one_line_and_exit_2(stored, tmp_path):
    url, parent, _ = stored
    assert "cannot fork at tick 99999999" in _fails(url, parent, "--at-tick", "99999999")
    assert "a mission time" in _fails(url, parent, "--at", "soon")
    assert "--at TIME or --at-tick" in _fails(url, parent)
    assert "no run" in _fails(url, "ffffffffffff", "--at", "10")
    early = tmp_path / "early.json"
    early.write_text(json.dumps([{"t": 1, "op": "remove_target", "id": "T1"}]))
    said = _fails(url, parent, "--at", "100", "--scenario-edits", str(early))
    assert "$[0].t" in said and "not after the fork" in said
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps([{"t": 500, "op": "add_sam", "id": "S9", "pos": "here"}]))
    assert "$[0]" in _fails(url, parent, "--at", "100", "--scenario-edits", str(wrong))


def test_compare_names_the_first_divergence_and_report_writes_html_and_png(stored, tmp_path):
    url, parent, detected = stored
    fork = _fork(url, parent, "--at-tick", str(detected), "--no-agents", "--review")
    done = runner.invoke(app, ["compare", parent, fork["run_id"], "--db", url, "--json"])
    assert done.exit_code == 0, done.output
    side = json.loads(done.stdout)
    assert side["a"]["run_id"] == parent and side["b"]["parent_run_id"] == parent
    # in review nobody accepts the replan: the fork leaves the parent after the detection
    assert side["first_divergence"] is not None and side["first_divergence"] > detected
    table = runner.invoke(app, ["compare", parent, fork["run_id"], "--db", url])
    assert table.exit_code == 0 and "first divergence at tick" in table.stdout
    page = tmp_path / "report.html"
    done = runner.invoke(app, ["report", parent, "--out", str(page), "--db", url])
    assert done.exit_code == 0, done.output
    text = page.read_text()
    assert parent in text and "data:image/png;base64," in text and "sam_detected" in text
    assert "truth:" not in text  # the page is for sharing: no ground-truth records
    picture = tmp_path / "report.png"
    done = runner.invoke(app, ["report", parent, "--out", str(picture), "--db", url])
    assert done.exit_code == 0 and picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = runner.invoke(app, ["report", parent, "--out", str(tmp_path / "r.txt"), "--db", url])
    assert bad.exit_code == 2 and "Traceback" not in bad.output


def test_the_dashboard_starts_a_fork_that_serves_live(stored):
    url, parent, detected = stored

    async def main():
        forks = SubprocessForks(url, TOKEN)
        server = await start_dashboard(
            InProcessBus(), port=0, token=TOKEN, trace_url=url, forks=forks
        )
        auth = {"Authorization": f"Bearer {TOKEN}"}
        try:
            async with httpx.AsyncClient(base_url=server.url, timeout=150) as http:
                refused = await http.post(f"/api/runs/{parent}/fork", json={"tick": 100})
                assert refused.status_code == 401
                past = await http.post(
                    f"/api/runs/{parent}/fork", json={"tick": 10**9}, headers=auth
                )
                assert past.status_code == 422 and past.json()["problems"][0]["path"] == "body.tick"
                started = await http.post(
                    f"/api/runs/{parent}/fork", json={"tick": detected}, headers=auth
                )
                assert started.status_code == 202, started.text
                body = started.json()
            live = body["url"].split("/?")[0]
            async with httpx.AsyncClient(base_url=live, timeout=30) as child:
                for _ in range(100):  # the fork's page answers as soon as it listens
                    state = (await child.get("/api/state")).json()
                    if (state.get("tick") or 0) > detected + 10:
                        break
                    await asyncio.sleep(0.2)
                assert state["run_id"] == body["run_id"] and state["tick"] > detected + 10
        finally:
            await server.stop()
            await forks.close()
        assert all(p.returncode is not None for p in forks.children)
        reader = TraceReader(url)
        row = reader.run(body["run_id"])
        # Stopped by SIGTERM when its dashboard closed: recorded as the bus says it.
        assert row["parent_run_id"] == parent and row["status"] == "interrupted"
        assert row["outcome"] == {"error": "terminated by SIGTERM"}
        reader.close()

    asyncio.run(asyncio.wait_for(main(), 300))


def test_a_fork_from_the_dashboard_draws_its_parents_flight_and_ends_its_process_with_its_mission(
    stored,
):
    """No orphans: Stop (POST /api/stop on the fork's page) ends the fork's mission, and its
    process ends with it (``--exit-when-done``), recorded as ended; its map started with the
    parent's flight up to the fork, as the parent's host drew it, not a line from the airport.
    A fork nobody watches is stopped after the idle timeout, and ends too."""
    url, parent, detected = stored
    at = detected - 200

    async def main():
        forks = SubprocessForks(url, TOKEN, idle_timeout_s=600)
        idle = SubprocessForks(url, TOKEN, idle_timeout_s=2)
        server = await start_dashboard(
            InProcessBus(), port=0, token=TOKEN, trace_url=url, forks=forks, live=False
        )
        auth = {"Authorization": f"Bearer {TOKEN}"}
        try:
            async with httpx.AsyncClient(base_url=server.url, timeout=150) as http:
                started = await http.post(
                    f"/api/runs/{parent}/fork", json={"tick": at}, headers=auth
                )
                assert started.status_code == 202, started.text
                body = started.json()
            live = body["url"].split("/?")[0]
            async with httpx.AsyncClient(base_url=live, timeout=30) as child:
                state = (await child.get("/api/state")).json()
                for _ in range(300):
                    if state.get("scene"):
                        break
                    await asyncio.sleep(0.1)
                    state = (await child.get("/api/state")).json()
                scene = state["scene"]
                assert scene["fork"] == {"parent": parent, "tick": at}
                stopped = await child.post(
                    "/api/stop", json={"run_id": body["run_id"]}, headers=auth
                )
                assert stopped.status_code == 202, stopped.text
            (proc,) = forks.children
            code = await asyncio.wait_for(proc.wait(), 120)  # its mission over: it ends
            # the one nobody watches: stopped by its own dashboard, then it ends
            lonely = await idle(parent, at)
            (quiet,) = idle.children
            quiet_code = await asyncio.wait_for(quiet.wait(), 120)
        finally:
            await server.stop()
            await forks.close()
            await idle.close()
        return body, scene, code, lonely, quiet_code

    body, scene, code, lonely, quiet_code = asyncio.run(asyncio.wait_for(main(), 400))
    assert code == 0 and quiet_code == 0
    reader = TraceReader(url)
    try:
        row = reader.run(body["run_id"])
        assert row["status"] == "ended" and row["parent_run_id"] == parent
        kinds = [e["kind"] for e in reader.events(body["run_id"])]
        assert "STOPPED" in kinds
        quiet_row = reader.run(lonely["run_id"])
        assert quiet_row["status"] == "ended"
        stop = next(e for e in reader.events(lonely["run_id"]) if e["kind"] == "STOPPED")
        assert stop["payload"]["reason"] == "no page watched this run for 2 s"
        # the trail: the parent's positions every 10 ticks up to the fork, in order
        rows = reader.telemetry_range(parent, 0, at, every=10)
    finally:
        reader.close()
    for drone_id, d in scene["drones"].items():
        flown = [r["drones"][drone_id] for r in rows]
        parent_points = [
            [round(p["x"], 4), round(p["y"], 4)]
            for p in flown
            if p["status"] in ("flying", "holding")
        ]
        if not parent_points:
            continue
        trail = d["flown"]
        # after the take-off airport: exactly the parent's points, then the fork's own
        assert trail[1 : 1 + len(parent_points)] == parent_points, drone_id
