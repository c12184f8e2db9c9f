"""Agents test fixtures: the demo flown to its end through ``isr run`` (agents on, traced),
once per test session for the modules that ask questions of a finished run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import SCENARIOS, stored_once


@pytest.fixture(scope="session")
def demo_ended_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """(SQLite file, run id) of demo.json flown headless to its end by ``isr run`` (the real
    CLI app, agents on) into a SQLite store, once per test session (``stored_once``); a module
    takes its copy with ``copy_of``."""

    def fly(url: str) -> str:
        from cli.main import build_app

        done = CliRunner().invoke(
            build_app(), ["run", str(SCENARIOS / "demo.json"), "--headless", "--db", url, "--json"]
        )
        assert done.exit_code == 0, done.output
        return json.loads(done.stdout.strip().splitlines()[-1])["run_id"]

    return stored_once(tmp_path_factory, "demo_ended", fly)
