"""Dashboard test fixtures: Debian's Chromium for the browser test, and where screenshots go.

The live mission behind a real dashboard, and the websocket reader, are in ``harness.py``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
OUTPUT = Path(__file__).resolve().parents[1] / "output"  # tests/output/ (gitignored)


@pytest.fixture
def chromium() -> str:
    """The system's Chromium (Playwright cannot download a browser here). CI installs it,
    so a missing browser is a failure, never a silent skip."""
    path = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    if not path:
        pytest.fail("no Chromium for the browser test: install Debian's chromium: "
                    "apt-get install chromium")
    return path


@pytest.fixture
def output_dir() -> Path:
    OUTPUT.mkdir(parents=True, exist_ok=True)
    return OUTPUT
