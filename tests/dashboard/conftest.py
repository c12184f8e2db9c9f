"""Dashboard test fixtures: Debian's Chromium for the browser tests (marked ``browser``, so
a missing browser fails with how to install it), and where screenshots go.

Screenshots always go to ``tests/output/`` (gitignored); the ones the manual shows are
written to ``docs/`` too only when ``ISR_DOCS_SCREENSHOTS=1`` asks for them (``shoot``), so a
normal test run never rewrites tracked files:

    ISR_DOCS_SCREENSHOTS=1 .venv/bin/python -m pytest tests/dashboard/test_layout_browser.py

The live mission behind a real dashboard, and the websocket reader, are in ``harness.py``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import chromium_path

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
