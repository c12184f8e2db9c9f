"""The agents' engines from the command line and from an engines file, for ``isr run`` and
``isr fork``.

    --engine rules --agent-engine critic=anthropic:claude-sonnet-4-5 \\
        --agent-engine responder=openai:llama3.1@http://localhost:11434/v1
    --engines engines.yaml

An engines file (YAML or JSON) holds the ``RunConfig`` fields about engines::

    engine: openai                       # every role's engine unless given its own
    model: llama3.1
    engine_url: http://gpu-box:11434/v1  # Ollama; vLLM: http://HOST:8000/v1
    agent_engines:
      critic: {engine: anthropic, model: claude-sonnet-4-5}
      responder: {engine: openai, model: qwen2.5:14b, base_url: http://gpu-box:11434/v1}

The command line wins over the file: ``--engine`` (with ``--model`` and ``--engine-url``)
replaces the file's engine, and ``--agent-engine ROLE=...`` the file's entry for ROLE. Keys
come from the file (``engine_key``, ``api_key``) or the engines' environment variables
(``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``); a run's trace records them masked. Bad input is
one line naming the file and field, or the option, and exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from agents.engines.spec import (
    SERVER_ENGINES,
    AgentRole,
    EngineSpec,
    check_base_url,
    parse_agent_engine,
)
from cli.common import fail
from mission.config import ENGINES, EngineName

__all__ = [
    "AgentEngineOption",
    "EngineUrlOption",
    "EnginesFile",
    "EnginesFileOption",
    "check_engine_url",
    "engine_fields",
    "load_engines_file",
    "recorded_agent_engines",
]

AgentEngineOption = Annotated[
    list[str] | None,
    typer.Option(
        "--agent-engine",
        help="one role's own engine, ROLE=ENGINE[:MODEL][@URL], e.g. critic=anthropic or "
        "responder=openai:llama3.1@http://localhost:11434/v1 (repeatable; roles: strategist, "
        "allocator, critic, responder)",
        metavar="ROLE=ENGINE[:MODEL][@URL]",
    ),
]
EngineUrlOption = Annotated[
    str | None,
    typer.Option(
        "--engine-url",
        help="the engine's server (openai: Ollama http://HOST:11434/v1, vLLM "
        "http://HOST:8000/v1; default $OPENAI_BASE_URL / $ANTHROPIC_BASE_URL)",
        metavar="URL",
    ),
]
EnginesFileOption = Annotated[
    Path | None,
    typer.Option(
        "--engines",
        help="YAML or JSON file: engine, model, engine_url, engine_key, agent_engines",
        metavar="FILE",
    ),
]


class EnginesFile(BaseModel):
    """What an engines file may hold: the ``RunConfig`` fields about engines."""

    model_config = ConfigDict(extra="forbid")

    engine: EngineName | None = None
    model: str | None = Field(None, min_length=1)
    engine_url: str | None = None
    engine_key: SecretStr | None = None
    agent_engines: dict[AgentRole, EngineSpec] = Field(default_factory=dict)


def load_engines_file(path: Path) -> EnginesFile:
    """The engines file at ``path`` (``.yaml``, ``.yml`` or ``.json``), or exit 2 naming
    the file and each field that is wrong."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "unreadable"
        raise fail(f"--engines {path}: {reason}") from None
    try:
        if path.suffix.lower() in (".yaml", ".yml"):
            import yaml

            data: Any = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except ValueError as exc:  # json.JSONDecodeError; yaml.YAMLError below
        raise fail(f"--engines {path}: not JSON: {exc}") from None
    except Exception as exc:  # yaml.YAMLError (yaml is imported only for a YAML file)
        raise fail(f"--engines {path}: not YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise fail(f"--engines {path}: expected a mapping of fields, got {type(data).__name__}")
    try:
        return EnginesFile.model_validate(data)
    except ValidationError as exc:
        raise fail(
            f"{path}: {'.'.join(str(p) for p in e['loc']) or 'file'}: {e['msg']}"
            for e in exc.errors(include_url=False)
        ) from None


def check_engine_url(url: str | None, engine: str) -> None:
    """Refuse ``--engine-url`` that is not an http(s) server, or given to an engine that
    asks none (exit 2); None passes."""
    if url is None:
        return
    if engine not in SERVER_ENGINES:
        raise fail(f"--engine-url: the {engine} engine asks no server")
    try:
        check_base_url(url)
    except ValueError as exc:
        raise fail(f"--engine-url: {exc}") from None


def engine_fields(
    *,
    engine: str | None,
    model: str | None,
    engine_url: str | None,
    agent_engine: list[str] | None,
    engines_file: Path | None,
) -> dict[str, Any]:
    """The ``RunConfig`` fields about engines from the options and the file (the options
    win), checked: an unknown engine or role, a bad URL or file is exit 2."""
    if engine is not None and engine not in ENGINES:
        raise fail(f"--engine {engine!r}: choose one of {', '.join(ENGINES)}")
    try:
        check_base_url(engine_url)
    except ValueError as exc:
        raise fail(f"--engine-url: {exc}") from None
    file = load_engines_file(engines_file) if engines_file is not None else EnginesFile()
    fields: dict[str, Any] = {
        "engine": file.engine or "rules",
        "model": file.model,
        "engine_url": file.engine_url,
        "engine_key": file.engine_key,
    }
    if engine is not None and engine != file.engine:
        # another engine than the file's: the file's model, server and key were for that one
        fields = {"engine": engine, "model": None, "engine_url": None, "engine_key": None}
    if model is not None:
        fields["model"] = model
    if engine_url is not None:
        fields["engine_url"] = engine_url
    own: dict[AgentRole, EngineSpec] = dict(file.agent_engines)
    for text in agent_engine or ():
        try:
            role, spec = parse_agent_engine(text)
        except ValueError as exc:
            raise fail(f"--agent-engine {exc}") from None
        own[role] = spec
    fields["agent_engines"] = own
    return fields


def recorded_agent_engines(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The per-role engines of a recorded run configuration, without their keys (recorded
    masked): a fork's engines take theirs from the environment."""
    own = config.get("agent_engines") or {}
    return {
        role: {field: value for field, value in spec.items() if field != "api_key"}
        for role, spec in own.items()
        if isinstance(spec, dict)
    }
