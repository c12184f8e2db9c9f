"""Tools a model can call (seed 002's tool contracts, issue 25).

Read-only tools answer from the frozen mission state (``mission_overview``,
``drone_state``, ``distance``, ``plan_metrics``); acting tools plan on a copy and answer
with a proposal (``allocate``, ``solve``, ``validate``, ``optimise``, ``what_if``). Each
has a JSON Schema generated from its pydantic arguments' model, answers ``{"ok": true,
"data": ...}`` or ``{"ok": false, "error": "..."}``, and is open to the roles
``ROLE_TOOLS`` names. A ``ToolSession`` is one answer's calls: access control, a call
budget, a timeout per call, one trace row per call under the agent run that asked. The
engines' tool-use loop (``agents.engines.tool_loop``) drives it; ``ask_with_tools`` is the
agent call with tools, parsed like ``call_validated``.
"""

from __future__ import annotations

from agents.tools.contract import Tool, ToolContext, ToolError, failed, succeeded
from agents.tools.registry import ROLE_TOOLS, TOOLS, schemas, specs_for, tools_for
from agents.tools.session import DEFAULT_MAX_CALLS, DEFAULT_TIMEOUT_S, ToolCall, ToolSession

__all__ = [
    "DEFAULT_MAX_CALLS",
    "DEFAULT_TIMEOUT_S",
    "ROLE_TOOLS",
    "TOOLS",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolError",
    "ToolSession",
    "failed",
    "schemas",
    "specs_for",
    "succeeded",
    "tools_for",
]
