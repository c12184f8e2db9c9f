"""The ``anthropic`` engine: the official SDK's async client, forced tool use, a hard deadline.

Options: ``model`` (argument, else env ``ISR_ANTHROPIC_MODEL``, else ``DEFAULT_MODEL``),
``api_key`` (argument, else env ``ANTHROPIC_API_KEY``; none is an ``ExecutiveError`` at
construction), ``base_url`` (argument, else the SDK's default / ``ANTHROPIC_BASE_URL``).

One call is one ``messages.create`` with the agent's tool forced through ``tool_choice``; the
tool's input is the structured output. With tools (``complete_with_tools``, the loop of
``agents.engines.tool_loop``) the role's tools are offered beside it (``tool_choice``
``any``): each ``tool_use`` is run and sent back as a ``tool_result`` (``is_error`` when the
result is not ok) until the agent's own tool is called, which is forced once the box is spent. The request races ``timeout_s`` in
``asyncio.wait_for``, so a late answer is cancelled and its connection dropped. The SDK
never retries (``max_retries=0``): the caller owns the fallback. SDK errors become
``EngineError`` kinds here, where they are caught:

    timeout        asyncio deadline or ``APITimeoutError``
    rate_limited   429 ``RateLimitError``
    server_error   any 5xx ``APIStatusError``
    refused        any other ``APIStatusError`` (400, 401, 403, 404, 413...)
    unavailable    ``APIConnectionError`` (refused connection, DNS, reset)
    malformed      no forced tool_use block, a non-object input, or a body the SDK can't parse
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any, cast

import anthropic
from anthropic.types import MessageParam, ToolChoiceParam, ToolChoiceToolParam, ToolParam

from agents.engines.base import (
    AgentCall,
    EngineError,
    EngineReply,
    ToolSpec,
)
from agents.engines.sdk_calls import PooledSdkEngine, guarded, tool_reply
from agents.engines.tool_loop import (
    MAX_TURNS,
    ToolBox,
    add_tokens,
    final_reply,
    forced,
    remaining,
)
from executive.errors import ExecutiveError

__all__ = ["DEFAULT_MODEL", "MODEL_ENV", "AnthropicEngine"]

DEFAULT_MODEL = "claude-sonnet-5-5"  # the newest Sonnet the SDK lists; 4-5 ends on 2026-11-30
MODEL_ENV = "ISR_ANTHROPIC_MODEL"
KEY_ENV = "ANTHROPIC_API_KEY"


class AnthropicEngine(PooledSdkEngine):
    """The engine that asks Claude through the SDK's async client, with the tool forced."""

    name = "anthropic"

    def __init__(
        self, *, model: str | None = None, api_key: str | None = None, base_url: str | None = None
    ) -> None:
        """Resolve the model and the key (arguments first, then the environment)."""
        self.model: str = model or os.environ.get(MODEL_ENV) or DEFAULT_MODEL
        key = api_key or os.environ.get(KEY_ENV)
        if not key:
            raise ExecutiveError(
                f"the anthropic engine needs an API key: pass api_key or set "
                f"{KEY_ENV} (or use --engine rules)"
            )
        self._client = anthropic.AsyncAnthropic(api_key=key, base_url=base_url, max_retries=0)

    async def list_models(self, *, timeout_s: float) -> list[str]:
        """The ids of the models the key may use (``GET /v1/models``): the cheap health call."""
        return await _guarded("models", self._model_ids(timeout_s), timeout_s)

    async def complete(self, call: AgentCall, *, timeout_s: float) -> EngineReply:
        """One ``messages.create`` with the call's tool forced, raced against ``timeout_s``."""
        tool = call.tool
        turn: MessageParam = {"role": "user", "content": call.prompt}
        choice: ToolChoiceToolParam = {"type": "tool", "name": tool.name}
        request = self._client.messages.create(
            model=self.model,
            max_tokens=call.max_tokens,
            system=call.system,
            messages=[turn],
            tools=[_tool_param(tool)],
            tool_choice=choice,
            timeout=timeout_s,
        )
        message = await _guarded(call.agent, request, timeout_s)
        return self._reply(call, message)

    async def complete_with_tools(
        self, call: AgentCall, tools: ToolBox, *, timeout_s: float
    ) -> EngineReply:
        """The tool-use loop (see the module docstring), all of it within ``timeout_s``."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        final = call.tool.name
        params = [_tool_param(spec) for spec in (*tools.specs, call.tool)]
        messages: list[MessageParam] = [{"role": "user", "content": call.prompt}]
        transcript: list[dict[str, Any]] = []
        tokens: tuple[int | None, int | None] = (None, None)
        model: str | None = None
        for turn in range(MAX_TURNS):
            choice: ToolChoiceParam = (
                {"type": "tool", "name": final} if forced(tools, turn) else {"type": "any"}
            )
            left = remaining(deadline, call.agent, timeout_s)
            request = self._client.messages.create(
                model=self.model,
                max_tokens=call.max_tokens,
                system=call.system,
                messages=messages,
                tools=params,
                tool_choice=choice,
                timeout=left,
            )
            message = await _guarded(call.agent, request, left)
            blocks = _content(call, message)
            transcript += blocks
            usage = getattr(message, "usage", None)
            tokens = (
                add_tokens(tokens[0], getattr(usage, "input_tokens", None)),
                add_tokens(tokens[1], getattr(usage, "output_tokens", None)),
            )
            model = getattr(message, "model", None) or model
            uses = [b for b in blocks if b.get("type") == "tool_use"]
            if not uses or any(b.get("name") == final for b in uses):
                return final_reply(
                    call,
                    transcript,
                    model=model or self.model,
                    tokens=tokens,
                    meta={"id": getattr(message, "id", None), "turns": turn + 1},
                )
            # the blocks as they came, so the model sees its own calls
            messages.append(cast(MessageParam, {"role": "assistant", "content": blocks}))
            results = []
            for use in uses:
                result = await tools.run(str(use.get("name")), use.get("input"))
                results.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": use.get("id"),
                        "content": json.dumps(result),
                        "is_error": not result.get("ok"),
                    }
                )
            messages.append(cast(MessageParam, {"role": "user", "content": results}))
        raise EngineError("malformed", f"{call.agent}: no final answer in {MAX_TURNS} turns")

    def _reply(self, call: AgentCall, message: Any) -> EngineReply:
        blocks = _content(call, message)
        raw, tool_input = tool_reply(call, blocks)
        usage = getattr(message, "usage", None)
        return EngineReply(
            tool_input=tool_input,
            raw=raw,
            model=getattr(message, "model", None) or self.model,
            tokens_in=getattr(usage, "input_tokens", None),
            tokens_out=getattr(usage, "output_tokens", None),
            meta={
                "id": getattr(message, "id", None),
                "stop_reason": getattr(message, "stop_reason", None),
            },
        )


def _tool_param(tool: ToolSpec) -> ToolParam:
    return {
        "name": tool.name,
        "description": tool.description,
        "input_schema": dict(tool.input_schema),
    }


def _content(call: AgentCall, message: Any) -> list[dict[str, Any]]:
    """The message's content blocks as dicts."""
    content = getattr(message, "content", None)
    if not isinstance(content, list):
        # the SDK hands back text (not a Message) when the body is not a JSON message
        raise EngineError(
            "malformed", f"{call.agent}: response is not a message: {str(message)[:120]!r}"
        )
    return [_block_dict(block) for block in content]


async def _guarded(what: str, request: Any, timeout_s: float) -> Any:
    return await guarded(anthropic, what, request, timeout_s, status_text=_status_text)


def _block_dict(block: Any) -> dict[str, Any]:
    if isinstance(block, dict):
        return block
    dump = getattr(block, "model_dump", None)
    if dump is None:
        raise EngineError("malformed", f"unexpected content block {block!r:.80}")
    return dump(mode="json", exclude_none=True, warnings=False)


def _status_text(exc: anthropic.APIStatusError) -> str:
    body = exc.body
    detail = None
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            detail = f"{error.get('type')}: {error.get('message')}"
    return f"HTTP {exc.status_code} {detail or exc.message}"
