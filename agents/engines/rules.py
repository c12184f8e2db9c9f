"""The ``rules`` engine: answers every call with the rules policy's deterministic answer.

Offline, instant, never fails; the default engine and the golden scenarios' engine. Its
``raw`` follows the shared convention (the JSON of one ``tool_use`` content block), so a
trace written with it replays like any other.

With tools (``complete_with_tools``) it first makes the call's ``tool_plan`` calls through
the box, in order, as a model would (access control, budget and traces all apply), then
answers as without: the offline path runs the same tools as the model engines.
"""

from __future__ import annotations

from typing import Any

from agents.engines.base import AgentCall, EngineReply, blocks_json
from agents.engines.tool_loop import ToolBox

__all__ = ["RulesEngine"]


class RulesEngine:
    """The offline engine: every call's answer is its ``deterministic`` answer."""

    name = "rules"
    model: str | None = None

    async def complete(self, call: AgentCall, *, timeout_s: float) -> EngineReply:
        """``call.deterministic`` as a ``tool_use`` reply, at once."""
        answer = dict(call.deterministic)
        block = _block(f"rules_{call.input_hash}", call.tool.name, answer)
        return EngineReply(
            tool_input=answer, raw=blocks_json([block]), model=None, tokens_in=None, tokens_out=None
        )

    async def complete_with_tools(
        self, call: AgentCall, tools: ToolBox, *, timeout_s: float
    ) -> EngineReply:
        """The ``tool_plan`` calls (until the box is spent), then the deterministic answer."""
        blocks: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        for n, (name, arguments) in enumerate(call.tool_plan):
            if tools.exhausted:
                break
            blocks.append(_block(f"rules_{call.input_hash}_{n}", name, dict(arguments)))
            results.append(await tools.run(name, dict(arguments)))
        answer = dict(call.deterministic)
        blocks.append(_block(f"rules_{call.input_hash}", call.tool.name, answer))
        return EngineReply(
            tool_input=answer,
            raw=blocks_json(blocks),
            model=None,
            tokens_in=None,
            tokens_out=None,
            meta={"tool_calls": len(results), "tool_errors": sum(not r["ok"] for r in results)},
        )


def _block(block_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": block_id, "name": name, "input": arguments}
