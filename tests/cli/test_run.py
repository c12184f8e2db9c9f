"""``isr run`` through the real CLI app: the JSON contract and the comparisons."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cli.main import build_app
from tests.conftest import SCENARIOS

# the SDKs are imported by one worker only, the one running these (tests/conftest.py)
pytestmark = pytest.mark.xdist_group("sdk")

runner = CliRunner()
app = build_app()


def _run(*args: str) -> dict:
    done = runner.invoke(app, ["run", *args, "--headless", "--no-agents", "--db", "none", "--json"])
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_run_json_has_the_promised_fields_and_replans_on_the_timeline():
    out = _run(str(SCENARIOS / "lost_drone.json"))
    assert {"run_id", "total_points", "drones", "replans"} <= out.keys()
    assert (
        out["drones"]["3"]["status"] == "lost" and out["drones"]["3"]["lost_reason"] == "disabled"
    )
    for drone in out["drones"].values():
        assert {"status", "fuel_left", "points"} <= drone.keys()
    assert out["replans"] and out["replans"][0]["trigger"].startswith("drone_lost:3")
    assert out["replans"][0]["latency_ms"] > 0
    assert out["total_points"] == sum(d["points"] for d in out["drones"].values())


def test_no_replan_and_oracle_are_the_comparisons():
    replanned = _run(str(SCENARIOS / "new_target.json"))
    blind = _run(str(SCENARIOS / "new_target.json"), "--no-replan")
    oracle = _run(str(SCENARIOS / "new_target.json"), "--oracle")
    assert blind["replans"] == [] and oracle["replans"] == []
    assert replanned["total_points"] > blind["total_points"]
    assert oracle["total_points"] >= blind["total_points"]


def test_bad_options_are_one_clear_line_and_exit_2():
    for args, needle in (
        (["--speed", "fast"], "--speed"),
        (["--engine", "gpt"], "--engine"),
        (["--engine", "replay"], "--replay-run"),
        (["--no-replan", "--oracle"], "--no-replan"),
    ):
        done = runner.invoke(app, ["run", str(SCENARIOS / "demo.json"), "--headless", *args])
        assert done.exit_code == 2, (args, done.output)
        assert needle in done.output and "Traceback" not in done.output


def test_a_broken_scenario_names_the_json_path(tmp_path):
    bad = tmp_path / "bad.json"
    data = json.loads((SCENARIOS / "demo.json").read_text())
    data["environment"]["targets"][0]["priority"] = -3
    bad.write_text(json.dumps(data))
    done = runner.invoke(app, ["run", str(bad), "--headless"])
    assert done.exit_code == 2
    assert "$.environment.targets[0].priority" in done.output


def test_an_anthropic_run_replays_its_agent_answers_without_the_network(tmp_path, monkeypatch):
    """Agent answers go to the trace store; ``--engine replay --replay-run RUN`` answers every
    call from it, so the same decisions are made with the server gone."""
    from tests.agents.planning.test_live_agents import CRITIC, STRATEGIST
    from tests.messages_api import MessagesAPIServer, ToolUse

    def respond(request):
        tool = request["tool_choice"]["name"]
        if tool == "strategist_decision":
            return ToolUse(STRATEGIST)
        if tool == "critique":
            return ToolUse(CRITIC)
        return ToolUse(
            {
                "strategy_used": "efficient",
                "assignments": {"D1": ["T99"]},
                "excluded": [],
                "rationale": {},
                "tradeoffs": "",
            }
        )

    db = f"sqlite:///{tmp_path / 'runs.db'}"
    scenario = str(SCENARIOS / "new_target.json")
    with MessagesAPIServer(respond) as api:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        done = runner.invoke(
            app, ["run", scenario, "--headless", "--engine", "anthropic", "--db", db, "--json"]
        )
        assert done.exit_code == 0, done.output
        calls = len(api.requests)
    live = json.loads(done.stdout.strip().splitlines()[-1])
    assert calls >= 3  # strategist, allocator, critic for the replan (the first plan: fast tier)

    from executive.traces import TraceReader

    reader = TraceReader(db)
    runs = reader.agent_runs(live["run_id"])
    roles = ("strategist", "allocator", "critic")
    assert sum(r["engine"] == "anthropic" and r["agent"] in roles for r in runs) == calls
    assert any("T99" in " ".join(r["clamp_actions"]) for r in runs if r["agent"] == "allocator")

    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # nothing listens there
    done = runner.invoke(
        app,
        [
            "run",
            scenario,
            "--headless",
            "--engine",
            "replay",
            "--replay-run",
            live["run_id"],
            "--db",
            db,
            "--json",
        ],
    )
    assert done.exit_code == 0, done.output
    replayed = json.loads(done.stdout.strip().splitlines()[-1])
    assert replayed["total_points"] == live["total_points"]
    assert [r["reasons"] for r in replayed["replans"]] == [r["reasons"] for r in live["replans"]]
    again = reader.agent_runs(replayed["run_id"])
    assert sum(r["engine"] == "replay" and r["agent"] in roles for r in again) == calls
    assert not any((r["error"] or "").startswith("not_recorded") for r in again)
