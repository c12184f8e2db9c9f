"""``isr runs`` names each role's engine when a run's roles are mixed ("rules;
critic=openai:llama3.1"), and only the run's engine when they are not; runs made through the
real CLI (``isr run`` with ``--agent-engine``), listed from the real SQLite store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import build_app
from tests.conftest import short_demo
from tests.openai_api import ChatAPIServer, ToolCall

# the SDKs are imported by one worker only, the one running these (tests/conftest.py)
pytestmark = pytest.mark.xdist_group("sdk")

runner = CliRunner()
app = build_app()


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    for name in ("ISR_OPENAI_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def _run(url: str, scenario: Path, *args: str) -> str:
    done = runner.invoke(app, ["run", str(scenario), "--headless", "--json", "--db", url, *args])
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout.strip().splitlines()[-1])["run_id"]


def test_isr_runs_shows_each_roles_engine_when_roles_are_mixed(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    demo = short_demo(tmp_path)  # its engines are in its config, not its flight
    answer = {"review": "ok", "issues": [], "suggestions": [], "final_verdict": "APPROVED"}
    with ChatAPIServer(lambda request: ToolCall(answer), models=["llama3.1:latest"]) as api:
        mixed = _run(url, demo, "--agent-engine", f"critic=openai:llama3.1@{api.url}")
    plain = _run(url, demo)
    no_agents = _run(
        url, demo, "--no-agents", "--agent-engine", "responder=openai:qwen2.5@http://h/v1"
    )

    listed = runner.invoke(app, ["runs", "--db", url, "--json"])
    assert listed.exit_code == 0, listed.output
    rows = {r["run_id"]: r for r in json.loads(listed.stdout)}
    assert rows[mixed]["engine"] == "rules; critic=openai:llama3.1"
    assert rows[mixed]["engines"] == {"critic": "openai:llama3.1"}
    assert (rows[plain]["engine"], rows[plain]["engines"]) == ("rules", {})
    assert rows[no_agents]["engine"] == "none; responder=openai:qwen2.5"

    table = runner.invoke(app, ["runs", "--db", url], env={"COLUMNS": "250"})
    assert table.exit_code == 0, table.output
    [line] = [x for x in table.stdout.splitlines() if mixed in x]
    assert "rules; critic=openai:llama3.1" in line
