"""``isr run --agents-off ROLE,... --agent-cadence ROLE=SECONDS`` through the real CLI app: the
run's configuration records them, the trace shows the agent off skipped with why and the
cadenced agent asked by rounds of its own; bad input is one clear line with exit 2."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from cli.main import build_app
from executive.traces import TraceReader
from tests.conftest import SCENARIOS

runner = CliRunner()
app = build_app()


def test_agents_off_and_a_cadence_from_the_command_line(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    done = runner.invoke(
        app,
        [
            "run",
            str(SCENARIOS / "popup_sam.json"),
            "--headless",
            "--json",
            "--db",
            url,
            "--agents-off",
            "Critic, strategist",
            "--agent-cadence",
            "allocator=400",
        ],
    )
    assert done.exit_code == 0, done.output
    out = json.loads(done.stdout.strip().splitlines()[-1])
    reader = TraceReader(url)
    try:
        run = reader.run(out["run_id"])
        runs = reader.agent_runs(run["run_id"])
        events = reader.events(run["run_id"])
    finally:
        reader.close()
    assert run["config"]["agents_off"] == ["critic", "strategist"]
    assert run["config"]["agent_cadence_s"] == {"allocator": 400.0}
    critic = [r for r in runs if r["agent"] == "critic"]
    assert critic and all(
        r["validated_output"]["skipped"] == "off in the run configuration" for r in critic
    )
    cadence = [e for e in events if e["kind"] == "AGENT_CADENCE"]
    assert cadence and cadence[0]["tick"] == 400 * 20  # due 400 mission seconds in
    # a cadence round asks the allocator alone: the strategist off, the critic off
    assert out["replans"][0]["trigger"] == "cadence:allocator"
    allocator = [r for r in runs if r["agent"] == "allocator"]
    assert allocator and all(r["input_hash"] for r in allocator)


def test_bad_agent_switches_are_one_line_and_exit_2():
    for args, words in (
        (["--agents-off", "pilot"], "--agents-off 'pilot': unknown agent"),
        (["--agent-cadence", "critic=0"], "seconds > 0"),
        (["--agent-cadence", "critic"], "expected ROLE=SECONDS"),
        (["--agent-cadence", "responder=5"], "unknown agent"),
        (["--no-agents", "--agent-cadence", "critic=5"], "the agents are off"),
    ):
        done = runner.invoke(app, ["run", str(SCENARIOS / "demo.json"), "--headless", *args])
        assert done.exit_code == 2, (args, done.output)
        assert words in done.output and "Traceback" not in done.output, (args, done.output)
