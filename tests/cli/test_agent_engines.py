"""``isr run --engine/--model/--engine-url/--agent-engine/--engines FILE`` through the real CLI
app: the options and the engines file make the run's per-role engines (the options win), the
trace records them with keys masked, and bad input is one clear line with exit 2."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cli.main import build_app
from executive.traces import TraceReader
from tests.conftest import SCENARIOS, short_demo
from tests.openai_api import ChatAPIServer, ToolCall

# the SDKs are imported by one worker only, the one running these (tests/conftest.py)
pytestmark = pytest.mark.xdist_group("sdk")

runner = CliRunner()
app = build_app()


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    for name in ("ISR_OPENAI_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def _recorded(url: str, out: dict) -> dict:
    reader = TraceReader(url)
    try:
        run = reader.run(out["run_id"])
        return {"config": run["config"], "agent_runs": reader.agent_runs(run["run_id"])}
    finally:
        reader.close()


def _run(*args: str) -> dict:
    done = runner.invoke(app, ["run", *args, "--headless", "--json"])
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_file_gives_the_engines_and_the_options_win(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    engines = tmp_path / "engines.yaml"
    engines.write_text(
        "engine: openai\n"
        "model: llama3.1\n"
        "engine_url: http://gpu-box:11434/v1\n"
        "engine_key: sk-file-secret\n"
        "agent_engines:\n"
        "  critic: {engine: anthropic, model: claude-x}\n"
        "  allocator: {engine: openai, model: qwen2.5:14b}\n"
    )
    out = _run(
        str(short_demo(tmp_path)),  # what is checked is the run's config, not its flight
        "--no-agents",
        "--db",
        url,
        "--engines",
        str(engines),
        "--agent-engine",
        "critic=rules",
        "--model",
        "llama3.1:70b",
    )

    config = _recorded(url, out)["config"]
    assert (config["engine"], config["model"]) == ("openai", "llama3.1:70b")
    assert config["engine_url"] == "http://gpu-box:11434/v1"
    assert config["engine_key"] == "**********"
    assert config["agent_engines"]["critic"]["engine"] == "rules"  # the option won
    assert config["agent_engines"]["allocator"]["model"] == "qwen2.5:14b"
    assert "sk-file-secret" not in json.dumps(config)


def test_another_engine_on_the_command_line_drops_the_files_model_and_server(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    engines = tmp_path / "engines.json"
    engines.write_text(json.dumps({"engine": "openai", "model": "m", "engine_url": "http://h/v1"}))
    out = _run(
        str(short_demo(tmp_path)), "--no-agents", "--db", url, "--engines", str(engines),
        "--engine", "rules",
    )  # fmt: skip
    config = _recorded(url, out)["config"]
    assert (config["engine"], config["model"], config["engine_url"]) == ("rules", None, None)


def test_isr_run_with_the_critic_on_a_local_server_traces_each_roles_engine(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    answer = {"review": "ok", "issues": [], "suggestions": [], "final_verdict": "APPROVED"}
    with ChatAPIServer(lambda request: ToolCall(answer), models=["llama3.1:latest"]) as api:
        out = _run(
            str(SCENARIOS / "popup_sam.json"),
            "--db",
            url,
            "--agent-engine",
            f"critic=openai:llama3.1@{api.url}",
        )
        asked = len(api.requests)
    runs = _recorded(url, out)["agent_runs"]
    engines = {(r["agent"], r["engine"]) for r in runs if r["agent"] != "route_optimizer"}
    assert ("critic", "openai") in engines and ("allocator", "rules") in engines
    assert ("critic", "rules") not in engines
    assert asked == sum(1 for r in runs if r["agent"] == "critic") > 0


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--agent-engine", "coordinator=openai:m"], "coordinator is deterministic"),
        (["--agent-engine", "critic=gpt"], "unknown engine 'gpt' for critic"),
        (["--agent-engine", "critic"], "expected ROLE=ENGINE"),
        (["--engine", "gpt"], "--engine 'gpt'"),
        (["--engine", "openai", "--engine-url", "gpu-box:11434"], "--engine-url"),
        (["--engine-url", "http://h/v1"], "the rules engine asks no server"),
        (["--engines", "missing.yaml"], "--engines missing.yaml"),
    ],
)
def test_bad_engine_options_are_one_clear_line_and_exit_2(args, says):
    done = runner.invoke(app, ["run", str(SCENARIOS / "demo.json"), "--headless", *args])
    assert done.exit_code == 2, (args, done.output)
    assert says in done.output and "Traceback" not in done.output


def test_a_bad_engines_file_names_the_file_and_the_field(tmp_path):
    bad = tmp_path / "engines.yaml"
    bad.write_text("agent_engines:\n  critic: {engine: openai, modle: llama3.1}\n")
    broken = tmp_path / "broken.yaml"
    broken.write_text("engine: [openai\n")

    done = runner.invoke(
        app, ["run", str(SCENARIOS / "demo.json"), "--headless", "--engines", str(bad)]
    )
    assert done.exit_code == 2
    assert "agent_engines.critic.modle" in done.output and str(bad.name) in done.output

    done = runner.invoke(
        app, ["run", str(SCENARIOS / "demo.json"), "--headless", "--engines", str(broken)]
    )
    assert done.exit_code == 2 and "not YAML" in done.output and "Traceback" not in done.output


def test_isr_ask_answers_with_a_model_on_a_local_server(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    out = _run(str(short_demo(tmp_path)), "--no-agents", "--db", url)  # any stored run
    answer = {"answer": "The mission is under way.", "numbers": [], "ids": []}
    with ChatAPIServer(lambda request: ToolCall(answer), models=["llama3.1:latest"]) as api:
        done = runner.invoke(
            app,
            ["ask", out["run_id"], "What is the status?", "--db", url, "--engine", "openai",
             "--model", "llama3.1", "--engine-url", api.url, "--trace", "--json"],
        )  # fmt: skip
        asked = [r["model"] for r in api.requests]
    assert done.exit_code == 0, done.output
    payload = json.loads(done.stdout.strip().splitlines()[-1])
    responders = [r for r in payload["trace"] if r["agent"] == "responder"]
    assert asked == ["llama3.1"]
    assert [(r["engine"], r["model"]) for r in responders] == [("openai", "llama3.1")]


def test_isr_ask_refuses_a_server_for_the_rules_engine():
    done = runner.invoke(app, ["ask", "abc", "why?", "--engine-url", "http://h:1/v1"])
    assert done.exit_code == 2 and "the rules engine asks no server" in done.output


def test_a_fork_keeps_the_parents_engine_per_role_with_keys_from_the_environment(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    engines = tmp_path / "engines.yaml"
    engines.write_text(
        "agent_engines:\n"
        "  critic: {engine: openai, model: llama3.1, base_url: 'http://gpu-box:11434/v1',"
        " api_key: sk-file-secret}\n"
    )
    parent = _run(  # the parent and its fork end at 300 s: their configs are what is checked
        str(short_demo(tmp_path)), "--no-agents", "--db", url, "--engines", str(engines)
    )
    done = runner.invoke(
        app, ["fork", parent["run_id"], "--at-tick", "20", "--headless", "--db", url, "--json"]
    )
    assert done.exit_code == 0, done.output
    fork = json.loads(done.stdout.strip().splitlines()[-1])
    config = _recorded(url, fork)["config"]
    critic = config["agent_engines"]["critic"]
    assert (critic["engine"], critic["model"]) == ("openai", "llama3.1")
    assert critic["base_url"] == "http://gpu-box:11434/v1"
    assert critic["api_key"] is None  # the masked key is not carried over as a key
