"""Which engine answers which agent: the engine registry, the roles that call an engine and
one engine's settings.

``ENGINES`` is the one registry of engines (name, what it is, whether one role may be given
it alone, whether it asks a server): the names, the CLI's choices and help, the run
configuration's validation and ``make_engine`` all derive from it, so adding an engine is
one entry here plus its class (``docs/extending.md``).

``EngineSpec`` is what a run configuration (``mission.config.RunConfig``), a
configuration file and the CLI's ``--agent-engine ROLE=ENGINE[:MODEL][@URL]`` say about one
engine; ``agents.engines.per_role`` builds the engines from them. An API key is a
``SecretStr``: a run's recorded configuration shows it masked.

The roles are the agents that ask an engine: the strategist, the allocator and the critic
of a planning round, and the responder of the question box. The coordinator (intent and
policy) and the route optimizer (the algorithmic planner) are deterministic and ask none, so
a configuration that gives them an engine is refused rather than recorded as if it did.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal, get_args
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

__all__ = [
    "AGENT_ROLES",
    "DETERMINISTIC_ROLES",
    "ENGINES",
    "ENGINE_NAMES",
    "LIVE_ENGINES",
    "PLANNING_ROLES",
    "SERVER_ENGINES",
    "AgentRole",
    "EngineKind",
    "EngineName",
    "EngineSpec",
    "PlanningRole",
    "check_base_url",
    "choices_text",
    "parse_agent_engine",
]

# The planning round's chain, in the order it asks them: each may be switched off, or run on
# a cadence too, per run (mission.config.RunConfig.agents_off, agent_cadence_s) and live
# (the AGENT_OFF / AGENT_ON commands).
PlanningRole = Literal["strategist", "allocator", "critic"]
PLANNING_ROLES: tuple[PlanningRole, ...] = get_args(PlanningRole)
AgentRole = Literal[PlanningRole, "responder"]
AGENT_ROLES: tuple[AgentRole, ...] = get_args(AgentRole)
DETERMINISTIC_ROLES = ("coordinator", "route_optimizer")  # they ask no engine
EngineName = Literal["rules", "anthropic", "openai", "replay"]


@dataclass(frozen=True)
class EngineKind:
    """One engine of the registry: its class (loaded lazily: importing the registry never
    imports an SDK), what it is, whether one role may be given it alone (``replay`` answers
    a whole run from its trace) and whether it asks a server (a model, a URL, a key)."""

    name: EngineName
    summary: str
    module: str
    cls: str
    per_role: bool
    server: bool


ENGINES: Mapping[EngineName, EngineKind] = {
    k.name: k
    for k in (
        EngineKind(
            "rules", "offline and deterministic", "agents.engines.rules", "RulesEngine", True, False
        ),
        EngineKind(
            "anthropic",
            "the Anthropic SDK",
            "agents.engines.anthropic_engine",
            "AnthropicEngine",
            True,
            True,
        ),
        EngineKind(
            "openai",
            "any OpenAI-compatible server (Ollama, vLLM, llama.cpp, LiteLLM)",
            "agents.engines.openai_engine",
            "OpenAIEngine",
            True,
            True,
        ),
        EngineKind(
            "replay",
            "answers recorded in a trace",
            "agents.engines.replay",
            "ReplayEngine",
            False,
            False,
        ),
    )
}
# the Literal and the registry are one list: a name in one and not the other fails on import
assert tuple(ENGINES) == get_args(EngineName), "agents.engines.spec: ENGINES != EngineName"
ENGINE_NAMES: tuple[EngineName, ...] = tuple(ENGINES)
# The engines a role may be given on its own, and those that ask a server.
LIVE_ENGINES: tuple[EngineName, ...] = tuple(n for n, k in ENGINES.items() if k.per_role)
SERVER_ENGINES: tuple[EngineName, ...] = tuple(n for n, k in ENGINES.items() if k.server)


def choices_text(names: Iterable[str]) -> str:
    """``"rules, anthropic or openai"``: a list of engine names as help and errors say it."""
    items = list(names)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def check_base_url(url: str | None) -> str | None:
    """``url`` if it is an http(s) server address without a password in it, else a
    ``ValueError`` saying what to write instead; None passes."""
    if url is None:
        return None
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"base_url {url!r}: expected http(s)://HOST[:PORT][/PATH], e.g. "
            "http://localhost:11434/v1 (Ollama) or http://localhost:8000/v1 (vLLM)"
        )
    if parts.password is not None:
        raise ValueError(
            f"base_url {parts.scheme}://{parts.hostname}...: holds a password; give the key "
            "as api_key or in the engine's environment variable instead"
        )
    return url


class EngineSpec(BaseModel):
    """One engine's settings: which engine, its model, its server and its key.

    ``model``, ``base_url`` and ``api_key`` left out are the engine's own defaults and
    environment variables (``ISR_OPENAI_MODEL``, ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``;
    ``ISR_ANTHROPIC_MODEL``, ``ANTHROPIC_API_KEY``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    engine: EngineName = "rules"
    model: str | None = Field(None, min_length=1, max_length=200)
    base_url: str | None = Field(None, max_length=2000)  # anthropic / openai: the server
    api_key: SecretStr | None = None  # recorded masked; None: the engine's env variable

    @field_validator("base_url")
    @classmethod
    def _url(cls, url: str | None) -> str | None:
        return check_base_url(url)

    @property
    def label(self) -> str:
        """``engine[:model][@base_url]``, as the CLI writes it (never the key)."""
        text = self.engine + (f":{self.model}" if self.model else "")
        return text + (f"@{self.base_url}" if self.base_url else "")


def parse_agent_engine(text: str) -> tuple[AgentRole, EngineSpec]:
    """``ROLE=ENGINE[:MODEL][@URL]`` (``critic=anthropic:claude-sonnet-4-5``,
    ``responder=openai:llama3.1:8b@http://localhost:11434/v1``) as a role and its engine.

    The model is everything after the engine's colon up to ``@`` (Ollama's ``llama3.1:8b``
    keeps its tag). A ``ValueError`` names the part that is wrong and what would do."""
    written, sep, rest = text.partition("=")
    role = written.strip()
    if not sep or not rest.strip():
        raise ValueError(f"{text!r}: expected ROLE=ENGINE[:MODEL][@URL], e.g. critic=rules")
    if role not in AGENT_ROLES:
        if role in DETERMINISTIC_ROLES:
            raise ValueError(
                f"{text!r}: the {role} is deterministic and asks no engine; roles with an "
                f"engine: {', '.join(AGENT_ROLES)}"
            )
        raise ValueError(f"{text!r}: unknown role {role!r}; choose one of {', '.join(AGENT_ROLES)}")
    body, at, url = rest.strip().partition("@")
    engine, colon, model = body.partition(":")
    if engine not in LIVE_ENGINES:
        raise ValueError(
            f"{text!r}: unknown engine {engine!r} for {role}; choose one of "
            f"{', '.join(LIVE_ENGINES)}"
        )
    if colon and not model:
        raise ValueError(f"{text!r}: the model after {engine}: is empty")
    if at and not url:
        raise ValueError(f"{text!r}: the server URL after @ is empty")
    if engine not in SERVER_ENGINES and (model or url):
        raise ValueError(f"{text!r}: the {engine} engine takes no model or server")
    try:
        check_base_url(url or None)
    except ValueError as exc:
        raise ValueError(f"{role}: {exc}") from None
    spec = EngineSpec.model_validate(
        {"engine": engine, "model": model or None, "base_url": url or None}
    )
    return next(r for r in AGENT_ROLES if r == role), spec
