"""An agent call with tools: the model asks for tools, we run them, it answers.

The engines' side of seed 002's tool contracts (the tools themselves, their access control
and budget are ``agents.tools``). A ``ToolBox`` is what an engine is handed: the specs of the
tools the role may call, whether its call budget is spent, and ``run(name, arguments)``,
which answers ``{"ok": ..., "data" | "error": ...}`` and never raises.

The loop (``ToolEngine.complete_with_tools``), the same for every engine that has one: the
model is shown the role's tools and the call's own tool (its final answer) and must call
one; each tool it calls is run and the result sent back; the loop ends when it calls the
final tool, whose input is the structured output as in ``Engine.complete``. Once the box is
spent the final tool is forced. ``MAX_TURNS`` bounds the requests whatever the model does;
the caller's ``timeout_s`` bounds the whole answer. ``raw`` is the JSON of every content
block the model sent, in order, so a replay finds the final answer as it finds a forced one.

``call_with_tools`` is ``call_validated`` with a box: an engine without a loop (``replay``)
answers with ``complete``, and its tools are not run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel

from agents.engines.base import (
    AgentCall,
    CallResult,
    Engine,
    EngineError,
    EngineReply,
    ToolSpec,
    blocks_json,
    settle,
    tool_input_from_blocks,
)

__all__ = [
    "MAX_TURNS",
    "ToolBox",
    "ToolEngine",
    "add_tokens",
    "call_with_tools",
    "final_reply",
    "forced",
    "remaining",
]

MAX_TURNS = 12  # requests per answer at most, whatever the budget and the model


class ToolBox(Protocol):
    """The tools one answer may call (``agents.tools.ToolSession``)."""

    @property
    def specs(self) -> Sequence[ToolSpec]:
        """The tools the model is shown."""
        ...

    @property
    def exhausted(self) -> bool:
        """True once no call is left: the final answer is forced."""
        ...

    async def run(self, name: str, arguments: Any) -> dict[str, Any]:
        """``{"ok": true, "data": ...}`` or ``{"ok": false, "error": "..."}``; never raises."""
        ...


@runtime_checkable
class ToolEngine(Protocol):
    """An engine with the tool-use loop."""

    name: str

    async def complete_with_tools(
        self, call: AgentCall, tools: ToolBox, *, timeout_s: float
    ) -> EngineReply:
        """The final answer to ``call`` after the tools the model asked for."""
        ...


def forced(tools: ToolBox, turn: int) -> bool:
    """The final tool must be called at ``turn`` (from 0): no tool to offer, the budget
    spent, or the last of ``MAX_TURNS``."""
    return not tools.specs or tools.exhausted or turn >= MAX_TURNS - 1


def final_reply(
    call: AgentCall,
    transcript: list[dict[str, Any]],
    *,
    model: str | None,
    tokens: tuple[int | None, int | None],
    meta: dict[str, Any],
) -> EngineReply:
    """The reply once the final tool was called: its input from the transcript's blocks
    (``EngineError("malformed")`` naming the agent, with the raw text, when unusable)."""
    raw = blocks_json(transcript)
    try:
        tool_input = tool_input_from_blocks(transcript, call.tool.name)
    except EngineError as exc:
        error = EngineError(exc.kind, f"{call.agent}: {exc.message}")
        error.raw = raw
        raise error from None
    return EngineReply(
        tool_input=tool_input,
        raw=raw,
        model=model,
        tokens_in=tokens[0],
        tokens_out=tokens[1],
        meta=meta,
    )


def add_tokens(a: int | None, b: int | None) -> int | None:
    """Token counts summed over turns (None while no turn reported any)."""
    if b is None:
        return a
    return b if a is None else a + b


def remaining(deadline: float, agent: str, timeout_s: float) -> float:
    """Seconds left before ``deadline`` (loop time); ``EngineError("timeout")`` if none."""
    left = deadline - asyncio.get_running_loop().time()
    if left <= 0:
        raise EngineError("timeout", f"{agent}: no final answer within {timeout_s:g} s")
    return left


async def call_with_tools(
    engine: Engine,
    call: AgentCall,
    tools: ToolBox,
    output_model: type[BaseModel],
    timeout_s: float,
) -> CallResult:
    """``call_validated`` with tools: the engine's loop raced against ``timeout_s`` (the
    whole answer), the final tool's input parsed with ``output_model``. Never raises an
    engine failure: it becomes ``error`` (``"timeout: ..."``, ``"malformed: ..."``...)."""
    if isinstance(engine, ToolEngine):
        request = engine.complete_with_tools(call, tools, timeout_s=timeout_s)
    else:
        request = engine.complete(call, timeout_s=timeout_s)
    return await settle(request, output_model, timeout_s)
