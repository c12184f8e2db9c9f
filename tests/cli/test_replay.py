"""``isr replay`` on runs cut short before they stored anything to compare: it says what
happened, in one line, and never claims an exact replay it did not make."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from cli.main import build_app
from executive.contracts import RunEndRecord, RunRecord
from executive.traces import TraceWriter
from tests.conftest import SCENARIOS

runner = CliRunner()
app = build_app()


def test_a_run_that_ended_before_its_first_input_says_nothing_to_replay(tmp_path):
    url = f"sqlite:///{tmp_path / 'cut.db'}"
    scenario = json.loads((SCENARIOS / "demo.json").read_text())
    writer = TraceWriter(url)
    writer.start()
    writer.emit(RunRecord("00000000000000aa", scenario, 0, {"policy": {}}))
    writer.emit(RunEndRecord("00000000000000aa", 0.0, "interrupted", {}))
    writer.close()
    done = runner.invoke(app, ["replay", "00000000000000aa", "--db", url])
    assert done.exit_code == 0, done.output
    assert "ended early at tick 0 (interrupted)" in done.output
    assert "nothing to replay" in done.output and "replayed exactly" not in done.output
