"""The local chat-completions server for the openai engine's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.openai_api import ChatAPIServer


@pytest.fixture
def chat_api() -> Iterator[ChatAPIServer]:
    """A started local server speaking the chat-completions API (models: ``llama3.1:latest``
    and ``qwen2.5:14b``), for the real openai SDK; script its replies with ``.script(...)``."""
    with ChatAPIServer(models=["llama3.1:latest", "qwen2.5:14b"]) as server:
        yield server
