"""The one registry of tools a model can call, and which role may call which (seed 002:
access control is the orchestrator's, never the model's).

Roles are the agents that ask an engine (``agents.engines.spec``). The responder only
reads: it answers questions and can neither plan nor propose. The strategist may try a
what-if; the allocator may allocate, solve and validate; the critic may validate, optimise
and try a what-if. No tool commits: a role's proposal reaches the run only through the
planning round.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from agents.engines.base import ToolSpec
from agents.tools.act import ACT_TOOLS
from agents.tools.contract import Tool
from agents.tools.read import READ_TOOLS

__all__ = ["ROLE_TOOLS", "TOOLS", "schemas", "specs_for", "tools_for"]

TOOLS: Mapping[str, Tool] = MappingProxyType({t.name: t for t in (*READ_TOOLS, *ACT_TOOLS)})

_READ = frozenset(t.name for t in READ_TOOLS)

ROLE_TOOLS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "responder": _READ,
        "strategist": _READ | {"what_if"},
        "allocator": _READ | {"allocate", "solve", "validate"},
        "critic": _READ | {"validate", "optimise", "what_if"},
    }
)

assert all(names <= TOOLS.keys() for names in ROLE_TOOLS.values())


def tools_for(role: str) -> list[Tool]:
    """The tools ``role`` may call, in registry order (none for a role not listed)."""
    allowed = ROLE_TOOLS.get(role, frozenset())
    return [t for name, t in TOOLS.items() if name in allowed]


def specs_for(role: str) -> list[ToolSpec]:
    """What an engine is shown for ``role``: the schemas of the tools it may call."""
    return [t.spec for t in tools_for(role)]


def schemas() -> dict[str, dict[str, Any]]:
    """Every tool's contract: description, kind, input schema and the roles allowed."""
    return {
        name: {
            "description": t.description,
            "kind": t.kind,
            "input_schema": dict(t.spec.input_schema),
            "roles": sorted(r for r, names in ROLE_TOOLS.items() if name in names),
        }
        for name, t in TOOLS.items()
    }
