"""A control token given through ``$ISR_TOKEN`` is a secret kept in the environment: ``isr
run`` serves with it but never prints it (a terminal, a service's log); a token given with
``--token`` or made fresh is printed as before, for the person who started the run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from tests.conftest import ROOT, SCENARIOS

SECRET = "env-secret-7f3a9c1d"


def _said_at_start(tmp_path, *extra: str, env: dict[str, str]) -> str:
    """What ``isr run`` (live, its dashboard on a free port) prints up to its run line."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cli",
            "run",
            str(SCENARIOS / "demo.json"),
            "--no-agents",
            "--port",
            "0",
            "--db",
            f"sqlite:///{tmp_path / 'runs.db'}",
            *extra,
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={k: v for k, v in {**os.environ, **env}.items() if v is not None},
    )
    lines: list[str] = []
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            lines.append(line)
            if line.startswith("run "):
                break
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
    said = "".join(lines)
    assert "dashboard: " in said, said
    return said


def test_a_token_from_the_environment_is_never_printed(tmp_path):
    said = _said_at_start(tmp_path, env={"ISR_TOKEN": SECRET})
    assert SECRET not in said, said
    assert "control token: the one given in the environment (not printed)" in said


def test_a_token_given_as_an_option_is_printed_as_before(tmp_path):
    said = _said_at_start(tmp_path, "--token", "opt-token-1234", env={"ISR_TOKEN": ""})
    assert "?token=opt-token-1234" in said and "control token: opt-token-1234" in said
