"""Shared fixtures (scenario paths and loaders, a seeded rng), the hypothesis profiles, and
the real parts some tests need.

Tests that talk to a real part carry its marker (``browser``, ``mqtt``, ``postgres``). When
the part is missing the test fails, never skips, with a message saying how to start it:
CI runs every test, so a missing part must show.

Hypothesis runs derandomised when ``CI`` is set (``.ci/run`` sets it), so a CI run is
repeatable; a developer's run keeps exploring new examples.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

from tests.messages_api import MessagesAPIServer

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("dev")
settings.load_profile("ci" if os.environ.get("CI") else "dev")

# A suite started in the background by a shell without job control (``.ci/run &``, nohup)
# inherits SIGINT ignored, and so would every ``isr`` child the tests start: their Ctrl-C
# tests would then measure the shell, not the CLI. Give the children a terminal's Ctrl-C.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

MQTT = ("127.0.0.1", 1883)
POSTGRES = ("127.0.0.1", 5432)
CHROMIUM = "/usr/bin/chromium"

_HOW_TO_START = {
    "mqtt": "no MQTT broker on 127.0.0.1:1883: install and start Mosquitto "
    "(apt-get install mosquitto && mosquitto -d; `make test` does both)",
    "postgres": "no PostgreSQL on 127.0.0.1:5432: start it "
    "(pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start) with a "
    "'test' database that user postgres may use",
    "browser": "no Chromium for the browser tests: apt-get install chromium "
    "(`make test` installs it when run as root)",
}


@cache
def _listening(address: tuple[str, int]) -> bool:
    try:
        socket.create_connection(address, timeout=1).close()
    except OSError:
        return False
    return True


@cache
def chromium_path() -> str | None:
    """The system's Chromium (Playwright cannot download a browser here)."""
    return CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")


def _available(part: str) -> bool:
    if part == "mqtt":
        return _listening(MQTT)
    if part == "postgres":
        return _listening(POSTGRES)
    return chromium_path() is not None


def pytest_runtest_setup(item: pytest.Item) -> None:
    for part in ("mqtt", "postgres", "browser"):
        if item.get_closest_marker(part) is not None and not _available(part):
            pytest.fail(_HOW_TO_START[part], pytrace=False)


@pytest.fixture
def messages_api() -> Iterator[MessagesAPIServer]:
    """A started local server speaking the Messages API, for the real anthropic SDK; script
    its replies with ``.script(...)``."""
    with MessagesAPIServer() as server:
        yield server


@pytest.fixture
def demo_path() -> Path:
    return SCENARIOS / "demo.json"


@pytest.fixture
def demo_data(demo_path) -> dict:
    return json.loads(demo_path.read_text())


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261122)
