"""Dashboard test fixtures: Debian's Chromium for the browser tests (marked ``browser``, so
a missing browser fails with how to install it), and where screenshots go.

Screenshots always go to ``tests/output/`` (gitignored); the ones the manual shows are
written to ``docs/`` too only when ``ISR_DOCS_SCREENSHOTS=1`` asks for them (``shoot``), so a
normal test run never rewrites tracked files:

    ISR_DOCS_SCREENSHOTS=1 .venv/bin/python -m pytest tests/dashboard/test_layout_browser.py

The live mission behind a real dashboard, and the websocket reader, are in ``harness.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SCENARIOS, chromium_path, stored_once

OUTPUT = Path(__file__).resolve().parents[1] / "output"  # tests/output/ (gitignored)
DOCS = Path(__file__).resolve().parents[2] / "docs"
DOCS_ENV = "ISR_DOCS_SCREENSHOTS"


@pytest.fixture
def chromium() -> str:
    """The system's Chromium (Playwright cannot download a browser here); the ``browser``
    marker has already failed the test, with how to install it, when there is none."""
    path = chromium_path()
    assert path is not None, "a browser test without the browser marker"
    return path


@pytest.fixture
def output_dir() -> Path:
    OUTPUT.mkdir(parents=True, exist_ok=True)
    return OUTPUT


@pytest.fixture
def shoot(output_dir: Path) -> Callable[[Any, str], Path]:
    """``shoot(page, "console-1600.png")``: the page's screenshot in tests/output/, and in
    docs/ too when $ISR_DOCS_SCREENSHOTS is 1 (the manual's pictures, refreshed on request)."""

    def take(page: Any, name: str) -> Path:
        path = output_dir / name
        page.screenshot(path=str(path))
        if os.environ.get(DOCS_ENV) == "1":
            DOCS.mkdir(exist_ok=True)
            page.screenshot(path=str(DOCS / name))
        return path

    return take


@pytest.fixture(scope="session")
def popup_sam_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """(SQLite file, run id) of one finished popup_sam run (a hidden SAM detected mid-flight,
    a replan committed), flown headless in batch with no agents, once per test session
    (``stored_once``); a module takes its copy with ``copy_of``."""
    return stored_once(tmp_path_factory, "popup_sam", _batch_run("popup_sam.json"))


@pytest.fixture(scope="session")
def new_target_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """(SQLite file, run id) of one finished new_target run (a target added mid-flight),
    flown headless in batch with no agents, once per test session (``stored_once``); a
    module takes its copy with ``copy_of``."""
    return stored_once(tmp_path_factory, "new_target", _batch_run("new_target.json"))


def _batch_run(name: str) -> Callable[[str], str]:
    """``scenarios/<name>`` flown to its end in batch, no agents, into the store at a URL:
    its run id."""

    def fly(url: str) -> str:
        from mission.config import RunConfig
        from mission.session import run_mission
        from planner.scenario import parse_scenario

        data = json.loads((SCENARIOS / name).read_text())
        config = RunConfig(trace_url=url, agents=False)
        report = asyncio.run(run_mission(parse_scenario(data, name), config))
        assert report is not None
        return report.run_id

    return fly
