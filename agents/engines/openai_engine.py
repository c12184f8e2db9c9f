"""The ``openai`` engine: any OpenAI-compatible chat-completions server, through the official SDK.

For a model inside the user's own network: Ollama (``http://HOST:11434/v1``), vLLM
(``http://HOST:8000/v1``), llama.cpp's ``llama-server``, LiteLLM, or OpenAI itself.

Options: ``model`` (argument, else env ``ISR_OPENAI_MODEL``; none is an ``ExecutiveError``:
a local server has no default model), ``base_url`` (argument, else env ``OPENAI_BASE_URL``,
else OpenAI's), ``api_key`` (argument, else env ``OPENAI_API_KEY``; a server given by
``base_url`` may need none, so a placeholder is sent; OpenAI itself needs one).

One call is one ``chat.completions.create`` with the agent's tool as the only function and
forced through ``tool_choice``; the function's arguments are the structured output. With
tools (``complete_with_tools``, the loop of ``agents.engines.tool_loop``) the role's tools are
offered beside it (``tool_choice`` ``required``): each tool call is run and its result sent
back as a ``tool`` message until the agent's own function is called, which is forced once
the box is spent. The
request races ``timeout_s`` in ``asyncio.wait_for``; the SDK never retries
(``max_retries=0``): the caller owns the fallback. SDK errors become ``EngineError`` kinds
exactly as in the anthropic engine (timeout, rate_limited, server_error, refused,
unavailable, malformed). The reply's ``raw`` follows the shared convention (the JSON of
content blocks: ``text`` and ``tool_use``), so a trace written with it replays like any other.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any, cast

import openai
from openai.types.chat import (
    ChatCompletionMessageParam,
    ChatCompletionNamedToolChoiceParam,
    ChatCompletionToolChoiceOptionParam,
    ChatCompletionToolParam,
)

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

__all__ = ["BASE_URL_ENV", "KEY_ENV", "MODEL_ENV", "NO_KEY", "OpenAIEngine"]

MODEL_ENV = "ISR_OPENAI_MODEL"
KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"
NO_KEY = "no-key"  # sent to a server that wants none (Ollama, vLLM without --api-key)


class OpenAIEngine(PooledSdkEngine):
    """The engine that asks an OpenAI-compatible server, with the agent's tool forced."""

    name = "openai"

    def __init__(
        self, *, model: str | None = None, api_key: str | None = None, base_url: str | None = None
    ) -> None:
        """Resolve the model, the server and the key (arguments first, then the environment)."""
        chosen = model or os.environ.get(MODEL_ENV)
        if not chosen:
            raise ExecutiveError(
                f"the openai engine needs a model: pass model (--model, or ROLE=openai:MODEL)"
                f" or set {MODEL_ENV}, e.g. llama3.1 on Ollama"
            )
        self.model: str = chosen
        self.base_url: str | None = base_url or os.environ.get(BASE_URL_ENV) or None
        key = api_key or os.environ.get(KEY_ENV)
        if not key:
            if self.base_url is None:
                raise ExecutiveError(
                    f"the openai engine needs a server: pass base_url (e.g. "
                    f"http://localhost:11434/v1 for Ollama) or set {BASE_URL_ENV}, or an API "
                    f"key for OpenAI itself ({KEY_ENV})"
                )
            key = NO_KEY
        self._client = openai.AsyncOpenAI(api_key=key, base_url=self.base_url, max_retries=0)

    async def list_models(self, *, timeout_s: float) -> list[str]:
        """The ids of the models the server serves (``GET /models``): the cheap health call."""
        return await _guarded("models", self._model_ids(timeout_s), timeout_s)

    async def complete(self, call: AgentCall, *, timeout_s: float) -> EngineReply:
        """One ``chat.completions.create`` with the call's tool forced, raced against
        ``timeout_s``."""
        messages: list[ChatCompletionMessageParam] = [
            {"role": "system", "content": call.system},
            {"role": "user", "content": call.prompt},
        ]
        request = self._client.chat.completions.create(
            model=self.model,
            messages=messages,
            tools=[_function(call.tool)],
            tool_choice=_named(call.tool.name),
            max_tokens=call.max_tokens,
            timeout=timeout_s,
        )
        completion = await _guarded(call.agent, request, timeout_s)
        return self._reply(call, completion)

    async def complete_with_tools(
        self, call: AgentCall, tools: ToolBox, *, timeout_s: float
    ) -> EngineReply:
        """The tool-use loop (see the module docstring), all of it within ``timeout_s``."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        final = call.tool.name
        functions = [_function(spec) for spec in (*tools.specs, call.tool)]
        messages: list[ChatCompletionMessageParam] = [
            {"role": "system", "content": call.system},
            {"role": "user", "content": call.prompt},
        ]
        transcript: list[dict[str, Any]] = []
        tokens: tuple[int | None, int | None] = (None, None)
        model: str | None = None
        for turn in range(MAX_TURNS):
            choice: ChatCompletionToolChoiceOptionParam = (
                _named(final) if forced(tools, turn) else "required"
            )
            left = remaining(deadline, call.agent, timeout_s)
            request = self._client.chat.completions.create(
                model=self.model,
                messages=messages,
                tools=functions,
                tool_choice=choice,
                max_tokens=call.max_tokens,
                timeout=left,
            )
            completion = await _guarded(call.agent, request, left)
            message = _first_message(call, completion)
            blocks = _blocks(message)
            transcript += blocks
            usage = getattr(completion, "usage", None)
            tokens = (
                add_tokens(tokens[0], getattr(usage, "prompt_tokens", None)),
                add_tokens(tokens[1], getattr(usage, "completion_tokens", None)),
            )
            model = getattr(completion, "model", None) or model
            uses = [b for b in blocks if b.get("type") == "tool_use"]
            if not uses or any(b.get("name") == final for b in uses):
                return final_reply(
                    call,
                    transcript,
                    model=model or self.model,
                    tokens=tokens,
                    meta={"id": getattr(completion, "id", None), "turns": turn + 1},
                )
            messages.append(_assistant(message))
            for use in uses:
                arguments = use["input"] if "input" in use else use.get("input_text")
                result = await tools.run(str(use.get("name")), arguments)
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": str(use.get("id")),
                        "content": json.dumps(result),
                    }
                )
        raise EngineError("malformed", f"{call.agent}: no final answer in {MAX_TURNS} turns")

    def _reply(self, call: AgentCall, completion: Any) -> EngineReply:
        first = _first_choice(call, completion)
        blocks = _blocks(getattr(first, "message", None))
        raw, tool_input = tool_reply(call, blocks)
        usage = getattr(completion, "usage", None)
        return EngineReply(
            tool_input=tool_input,
            raw=raw,
            model=getattr(completion, "model", None) or self.model,
            tokens_in=getattr(usage, "prompt_tokens", None),
            tokens_out=getattr(usage, "completion_tokens", None),
            meta={
                "id": getattr(completion, "id", None),
                "finish_reason": getattr(first, "finish_reason", None),
                "base_url": str(self._client.base_url),
            },
        )


def _function(tool: ToolSpec) -> ChatCompletionToolParam:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": dict(tool.input_schema),
        },
    }


def _named(name: str) -> ChatCompletionNamedToolChoiceParam:
    return {"type": "function", "function": {"name": name}}


def _first_choice(call: AgentCall, completion: Any) -> Any:
    choices = getattr(completion, "choices", None)
    if not isinstance(choices, list) or not choices:
        # the SDK hands back text (not a ChatCompletion) when the body is not JSON-typed
        raise EngineError(
            "malformed",
            f"{call.agent}: response is not a chat completion: {str(completion)[:120]!r}",
        )
    return choices[0]


def _first_message(call: AgentCall, completion: Any) -> Any:
    return getattr(_first_choice(call, completion), "message", None)


def _assistant(message: Any) -> ChatCompletionMessageParam:
    """The model's message as it is sent back: its text and its tool calls as they came."""
    calls = [
        {
            "id": getattr(c, "id", None),
            "type": "function",
            "function": {
                "name": getattr(c.function, "name", None),
                "arguments": getattr(c.function, "arguments", None),
            },
        }
        for c in getattr(message, "tool_calls", None) or ()
    ]
    sent = {"role": "assistant", "content": getattr(message, "content", None), "tool_calls": calls}
    return cast(ChatCompletionMessageParam, sent)


async def _guarded(what: str, request: Any, timeout_s: float) -> Any:
    return await guarded(
        openai,
        what,
        request,
        timeout_s,
        status_text=_status_text,
        connection_text=lambda exc: f"{exc} ({_cause(exc)})",
    )


def _blocks(message: Any) -> list[dict[str, Any]]:
    """The message as the shared content blocks: its text, then each tool call as
    ``tool_use`` (arguments parsed from their JSON text; text that is not JSON is kept as
    ``input_text``, so the block has no object input and the call is malformed)."""
    blocks: list[dict[str, Any]] = []
    text = getattr(message, "content", None)
    if isinstance(text, str) and text:
        blocks.append({"type": "text", "text": text})
    for tool_call in getattr(message, "tool_calls", None) or ():
        function = getattr(tool_call, "function", None)
        block: dict[str, Any] = {
            "type": "tool_use",
            "id": getattr(tool_call, "id", None),
            "name": getattr(function, "name", None),
        }
        arguments = getattr(function, "arguments", None)
        try:
            block["input"] = json.loads(arguments) if isinstance(arguments, str) else arguments
        except ValueError:
            block["input_text"] = arguments
        blocks.append(block)
    return blocks


def _cause(exc: BaseException) -> str:
    cause = exc.__cause__ or exc.__context__
    return f"{type(cause).__name__}: {cause}" if cause is not None else "no detail"


def _status_text(exc: openai.APIStatusError) -> str:
    body = exc.body
    detail = None
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            detail = f"{error.get('type') or error.get('code') or 'error'}: {error.get('message')}"
    return f"HTTP {exc.status_code} {detail or exc.message}"
