"""One SDK request raced against its timeout, its errors sorted into ``EngineError`` kinds.

The anthropic and openai SDKs are generated from the same template: their error classes
share names and meaning, so one mapping serves both (``sdk`` is the module).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import ModuleType
from typing import Any, Self

from agents.engines.base import (
    AgentCall,
    EngineError,
    ErrorKind,
    blocks_json,
    tool_input_from_blocks,
)

__all__ = ["PooledSdkEngine", "guarded", "tool_reply"]


def tool_reply(call: AgentCall, blocks: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """(raw, tool input) of a reply's content blocks; a reply without the forced tool is
    ``EngineError("malformed")`` naming the agent, carrying the raw text for the trace."""
    raw = blocks_json(blocks)
    try:
        return raw, tool_input_from_blocks(blocks, call.tool.name)
    except EngineError as exc:
        error = EngineError(exc.kind, f"{call.agent}: {exc.message}")
        error.raw = raw
        raise error from None


async def guarded(
    sdk: ModuleType,
    what: str,
    request: Any,
    timeout_s: float,
    *,
    status_text: Callable[[Any], str],
    connection_text: Callable[[BaseException], str] = str,
) -> Any:
    """``await request`` within ``timeout_s``, SDK errors turned into ``EngineError`` kinds."""
    try:
        return await asyncio.wait_for(request, timeout_s)
    except TimeoutError as exc:
        raise EngineError("timeout", f"{what}: no answer within {timeout_s:g} s") from exc
    except sdk.APITimeoutError as exc:
        raise EngineError("timeout", f"{what}: request timed out after {timeout_s:g} s") from exc
    except sdk.RateLimitError as exc:
        raise EngineError("rate_limited", f"{what}: {status_text(exc)}") from exc
    except sdk.APIStatusError as exc:
        kind: ErrorKind = "server_error" if exc.status_code >= 500 else "refused"
        raise EngineError(kind, f"{what}: {status_text(exc)}") from exc
    except sdk.APIResponseValidationError as exc:
        raise EngineError("malformed", f"{what}: invalid response: {exc}") from exc
    except sdk.APIConnectionError as exc:
        raise EngineError("unavailable", f"{what}: {connection_text(exc)}") from exc
    except ValueError as exc:  # json.JSONDecodeError: a 200 body that is not JSON
        raise EngineError("malformed", f"{what}: unparseable response body: {exc}") from exc


class PooledSdkEngine:
    """What a model engine over an SDK client does the same way whatever the SDK: close its
    connection pool, work as ``async with``, list the served models (the health call)."""

    _client: Any

    async def aclose(self) -> None:
        """Close the HTTP connection pool (call on the loop that used the engine)."""
        await self._client.close()

    async def __aenter__(self) -> Self:
        """The engine itself; leaving the block closes its connections."""
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Close the connection pool (``aclose``)."""
        await self.aclose()

    async def _model_ids(self, timeout_s: float) -> list[str]:
        page = await self._client.models.list(timeout=timeout_s)
        return [model.id for model in page.data]
