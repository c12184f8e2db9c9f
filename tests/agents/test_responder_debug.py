""" "Why is the solver crashing?" is answered from the run's planning troubles, with the
numbers: live (the executive's rounds and events) and stored (``isr ask`` on the real
SQLite store: outcome, agent run rows, events); a run with none says "No planner errors in
this run". The agents fail for real: the openai SDK against a local server answering 500."""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from agents.engines import make_engine
from agents.engines.spec import EngineSpec
from agents.words.ask import answer
from agents.words.command import coordinate_live
from agents.words.state import from_executive
from cli.main import build_app
from executive.contracts import AgentRunRecord, EventRecord, HumanCommand
from executive.loop import Executive
from executive.loop.policy import Policy
from executive.traces import TraceReader
from executive.traces.sinks import ListSink
from mission.config import RunConfig
from mission.session import build_planner
from planner.scenario import load_scenario
from tests.conftest import SCENARIOS
from tests.openai_api import ChatAPIServer, Status

# the SDKs are imported by one worker only, the one running these (tests/conftest.py)
pytestmark = pytest.mark.xdist_group("sdk")

QUESTION = "Why is the solver crashing?"
PLANNING_AGENTS = ("planning_round", "strategist", "allocator", "critic", "route_optimizer")
runner = CliRunner()
app = build_app()


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    for name in ("ISR_OPENAI_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _failed_agents(rows) -> list:
    """Planning agents' runs with an error other than being superseded (cancelled)."""
    return [
        r
        for r in rows
        if r["agent"] in PLANNING_AGENTS
        and r["error"]
        and not str(r["error"]).startswith("cancelled")
    ]


def test_live_the_answer_counts_the_agent_failures_and_the_refused_order():
    """popup_sam.json replans when its hidden SAM is seen; every agent call gets a 500."""
    sink = ListSink()
    with ChatAPIServer(lambda request: Status(500)) as api:
        spec = EngineSpec(engine="openai", model="m", base_url=api.url, api_key=SecretStr("k"))
        config = RunConfig(policy=Policy(), agent_engines={"critic": spec, "allocator": spec})
        executive = Executive(
            load_scenario(SCENARIOS / "popup_sam.json"),
            planner=build_planner(config, sink),
            sink=sink,
            options=config.loop_options(),
            coordinate=coordinate_live,
        )

        async def go():
            await executive.start()
            await executive.run(None, until=40)
            executive.command(HumanCommand("REPLAN", "move T11 to D1", "operator"))
            await executive.run(None)
            return await answer(
                QUESTION, from_executive(executive), engine=make_engine("rules"), sink=ListSink()
            )

        out = asyncio.run(go())
    assert out["intent"] == "debug"
    rounds = len(executive.replans)
    failed_rounds = sum(r.status in ("failed", "rejected") for r in executive.replans)
    agent_errors = [
        reason
        for r in executive.replans
        for reason in r.reasons
        if reason.startswith(("allocator: server_error", "critic: server_error"))
    ]
    assert rounds >= 1 and agent_errors  # the replan asked the local server, which failed
    [ignored] = [e for e in sink.of(EventRecord) if e.kind == "COMMAND_IGNORED"]
    assert ignored.payload["text"] == "move T11 to D1"
    assert out["answer"].startswith(
        f"Planner errors in this run: of {_n(rounds, 'planning round')} after the first plan,"
        f" {failed_rounds} failed and 0 were rejected by the validator;"
        f" {_n(len(agent_errors), 'agent run')} failed; 1 order refused."
    )
    assert f"{len(agent_errors)} server_error" in out["answer"]
    assert "REPLAN 'move T11 to D1'" in out["answer"] and "cannot see T11" in out["answer"]
    numbers = {n["label"]: n["value"] for n in out["numbers"]}
    assert numbers["agent runs failed"] == len(agent_errors)
    assert numbers["orders refused"] == 1
    # the traced agent runs agree with what the rounds said
    traced = _failed_agents(
        [{"agent": r.agent, "error": r.error} for r in sink.of(AgentRunRecord) if r.tick > 0]
    )
    assert len(traced) == len(agent_errors)
    assert "Mission at tick" not in out["answer"]  # not the mission status


def test_stored_runs_with_and_without_planner_errors(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"

    def run(*args: str) -> str:
        done = runner.invoke(
            app,
            ["run", str(SCENARIOS / "popup_sam.json"), "--headless", "--json", "--db", url, *args],
        )
        assert done.exit_code == 0, done.output
        return json.loads(done.stdout.strip().splitlines()[-1])["run_id"]

    with ChatAPIServer(lambda request: Status(500)) as api:
        broken = run("--agent-engine", f"allocator=openai:m@{api.url}")
    clean = run("--no-agents")

    reader = TraceReader(url)
    try:
        failed = _failed_agents(reader.agent_runs(broken))
        total = [r for r in reader.agent_runs(broken) if r["agent"] in PLANNING_AGENTS]
        rounds = len(reader.run(broken)["outcome"]["replans"])
        clean_rounds = len(reader.run(clean)["outcome"]["replans"])
    finally:
        reader.close()
    assert failed and all(r["agent"] == "allocator" for r in failed)

    done = runner.invoke(app, ["ask", broken, QUESTION, "--db", url, "--json"])
    assert done.exit_code == 0, done.output
    out = json.loads(done.stdout)
    assert out["intent"] == "debug"
    assert out["answer"].startswith(
        f"Planner errors in this run: of {_n(rounds, 'planning round')} after the first plan,"
        f" 0 failed and 0 were rejected by the validator;"
        f" {_n(len(failed), 'agent run')} failed (of {len(total)}); 0 orders refused."
    )
    assert f"allocator (openai:m): {failed[0]['error']}" in out["answer"]

    done = runner.invoke(app, ["ask", clean, QUESTION, "--db", url, "--json"])
    assert done.exit_code == 0, done.output
    out = json.loads(done.stdout)
    assert out["answer"].startswith(
        f"No planner errors in this run: {_n(clean_rounds, 'planning round')} after the first"
        " plan,"
        " none failed or rejected by the validator;"
    )
    assert clean_rounds >= 1  # the hidden SAM made it replan: rounds were run and all went well
