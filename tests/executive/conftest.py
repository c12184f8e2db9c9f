"""Executive test fixtures: a local Messages API server for the anthropic engine."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.executive.messages_api import MessagesAPIServer


@pytest.fixture
def messages_api() -> Iterator[MessagesAPIServer]:
    """A started local Messages API server; script replies with ``.script(...)``."""
    with MessagesAPIServer() as server:
        yield server
