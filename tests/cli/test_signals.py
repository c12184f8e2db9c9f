"""``isr run`` stopped from outside: SIGTERM (a service manager's or a container's orderly
stop) is caught like Ctrl-C (its traces flushed, exit 143) and the run recorded as
``interrupted`` with the signal named, "terminated by SIGTERM", what the bus publishes for it
(``executive.bus.exits``); after SIGKILL the run's heartbeat stops and it reads as crashed.
``isr replay`` says the run ended early, where and why, and replays exactly what was
stored."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from cli.main import build_app
from executive.traces import TraceReader
from executive.traces.reader import STALE_S, effective_status
from tests.conftest import ROOT, SCENARIOS

runner = CliRunner()
app = build_app()


def _start(url: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cli",
            "run",
            str(SCENARIOS / "demo.json"),
            "--headless",
            "--no-agents",
            "--speed",
            "20",
            "--db",
            url,
            "--json",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _running(
    url: str, proc: subprocess.Popen[bytes], after: float = 0.0, timeout: float = 60.0
) -> dict:
    """The run's row once a heartbeat has stamped it with a tick, later than ``after`` (a
    ``last_seen`` already read: the next heartbeat)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        try:
            reader = TraceReader(url)
            runs = reader.runs()
            reader.close()
        except Exception:  # the file is being created
            runs = []
        if runs and (runs[0].get("last_tick") or 0) > 0 and (runs[0].get("last_seen") or 0) > after:
            return runs[0]
        time.sleep(0.2)
    raise AssertionError("the run never started" if not after else "no heartbeat came")


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_a_killed_run_is_recorded_as_such_and_replays_what_it_stored(tmp_path, sig):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    proc = _start(url)
    first = _running(url, proc)
    run_id = str(first["run_id"])
    _running(url, proc, after=first["last_seen"])  # past a heartbeat or two
    proc.send_signal(sig)
    code = proc.wait(timeout=30)
    reader = TraceReader(url)
    row = reader.run(run_id)
    reader.close()
    if sig == signal.SIGTERM:
        assert code == 143
        assert row["status"] == "interrupted" and row["ended_at"] is not None
        assert row["outcome"] == {"error": "terminated by SIGTERM"}
        listed = runner.invoke(app, ["runs", "--db", url, "--status", "interrupted", "--json"])
        assert listed.exit_code == 0 and run_id in listed.output, listed.output
    elif sig == signal.SIGINT:  # Ctrl-C: the operator's own stop
        assert code == 130
        assert row["status"] == "interrupted" and row["outcome"] == {}
    else:
        assert code == -signal.SIGKILL
        assert row["status"] == "running" and row["ended_at"] is None
        assert effective_status(row, now=row["last_seen"] + STALE_S + 1) == "crashed"
    assert row["last_tick"] > 0
    done = runner.invoke(app, ["replay", run_id, "--db", url])
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())  # as one line, whatever the terminal's width
    early = re.search(r"the run ended early at tick (\d+) \(([^)]+)\)", said)
    assert early and int(early.group(1)) >= row["last_tick"], done.output
    assert (
        early.group(2)
        == {
            signal.SIGTERM: "interrupted: terminated by SIGTERM",
            signal.SIGINT: "interrupted",
            signal.SIGKILL: "running",
        }[sig]
    )
    assert "replayed exactly" in done.output
