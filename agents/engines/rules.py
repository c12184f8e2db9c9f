"""The ``rules`` engine: answers every call with the rules policy's deterministic answer.

Offline, instant, never fails; the default engine and the golden scenarios' engine. Its
``raw`` follows the shared convention (the JSON of one ``tool_use`` content block), so a
trace written with it replays like any other.
"""

from __future__ import annotations

from agents.engines.base import AgentCall, EngineReply, blocks_json

__all__ = ["RulesEngine"]


class RulesEngine:
    """The offline engine: every call's answer is its ``deterministic`` answer."""

    name = "rules"
    model: str | None = None

    async def complete(self, call: AgentCall, *, timeout_s: float) -> EngineReply:
        """``call.deterministic`` as a ``tool_use`` reply, at once."""
        answer = dict(call.deterministic)
        block = {
            "type": "tool_use",
            "id": f"rules_{call.input_hash}",
            "name": call.tool.name,
            "input": answer,
        }
        return EngineReply(
            tool_input=answer, raw=blocks_json([block]), model=None, tokens_in=None, tokens_out=None
        )
