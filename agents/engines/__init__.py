"""Agent engines behind one interface: ``rules`` (offline, the default), ``anthropic`` (the
official SDK), ``openai`` (any OpenAI-compatible server: Ollama, vLLM, llama.cpp, LiteLLM)
and ``replay`` (answers recorded in a trace). ``make_engine`` builds one by name;
``agents.engines.per_role`` gives each agent role its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agents.engines.base import (
    AgentCall,
    Engine,
    EngineError,
    EngineReply,
    ToolSpec,
    blocks_json,
    input_hash,
    tool_input_from_blocks,
    tool_schema,
)
from agents.engines.spec import ENGINE_NAMES, ENGINES
from executive.errors import ExecutiveError

__all__ = [
    "ENGINE_NAMES",
    "AgentCall",
    "AnthropicEngine",
    "Engine",
    "EngineError",
    "EngineReply",
    "OpenAIEngine",
    "ReplayEngine",
    "RulesEngine",
    "ToolSpec",
    "blocks_json",
    "input_hash",
    "make_engine",
    "tool_input_from_blocks",
    "tool_schema",
]

_LAZY = {k.cls: k.module for k in ENGINES.values()}  # the registry's classes


def __getattr__(name: str) -> Any:
    """The engine classes, loaded on first use: importing the package never imports the SDK."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_engine(
    name: str,
    *,
    model: str | None = None,
    api_key: str | None = None,
    base_url: str | None = None,
    records: Iterable[Any] | None = None,
) -> Engine:
    """The engine called ``name`` (a name of the registry, ``agents.engines.spec.ENGINES``);
    an SDK is imported only when its engine is asked for."""
    kind = ENGINES.get(name)  # type: ignore[call-overload]
    if kind is None:
        raise ExecutiveError(f"unknown engine {name!r}: choose one of {', '.join(ENGINE_NAMES)}")
    import importlib

    cls = getattr(importlib.import_module(kind.module), kind.cls)
    if kind.server:
        return cls(model=model, api_key=api_key, base_url=base_url)
    if kind.name == "replay":
        return cls(records if records is not None else ())
    return cls()
