"""Dashboard test fixtures: Debian's Chromium for the browser tests (marked ``browser``, so
a missing browser fails with how to install it), and where screenshots go.

The live mission behind a real dashboard, and the websocket reader, are in ``harness.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import chromium_path

OUTPUT = Path(__file__).resolve().parents[1] / "output"  # tests/output/ (gitignored)


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
