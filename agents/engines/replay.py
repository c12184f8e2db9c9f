"""The ``replay`` engine: answers an agent call with the reply recorded in a trace.

Options: the recorded agent runs (``AgentRunRecord`` objects or dicts with ``agent``,
``input_hash``, ``raw_output``, ``error`` and optionally ``model``, ``tokens_in``,
``tokens_out``, ``run_id``).

Replies are keyed on ``(agent, input_hash)`` and handed out first-in first-out per key, so a
run that asked the same question twice gets the two recorded answers in order. A recorded
``raw_output`` (content blocks JSON) is parsed with ``tool_input_from_blocks`` exactly as
the live engine parsed it; a record with no output and an ``error`` of the form
``"kind: message"`` re-raises ``EngineError(kind, message)``. A call with nothing (left)
recorded raises ``EngineError("not_recorded")``. No network, never blocks.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, get_args

from agents.engines.base import (
    AgentCall,
    EngineError,
    EngineReply,
    ErrorKind,
    tool_input_from_blocks,
)

__all__ = ["ReplayEngine"]

_KINDS: dict[str, ErrorKind] = {kind: kind for kind in get_args(ErrorKind)}


@dataclass(frozen=True)
class _Recorded:
    raw_output: str | None
    error: str | None
    model: str | None
    tokens_in: int | None
    tokens_out: int | None
    run_id: str | None


def _field(record: Any, name: str) -> Any:
    if isinstance(record, Mapping):
        return record.get(name)
    return getattr(record, name, None)


class ReplayEngine:
    """The engine that hands out the replies recorded in a trace, keyed on the call's input."""

    name = "replay"

    def __init__(self, records: Iterable[Any]) -> None:
        """Queue ``records`` per ``(agent, input_hash)``; the first model named is ``model``."""
        self._queues: dict[tuple[str, str], deque[_Recorded]] = {}
        self.model: str | None = None
        for record in records:
            agent, key_hash = _field(record, "agent"), _field(record, "input_hash")
            if not agent or not key_hash:
                continue
            recorded = _Recorded(
                raw_output=_field(record, "raw_output"),
                error=_field(record, "error"),
                model=_field(record, "model"),
                tokens_in=_field(record, "tokens_in"),
                tokens_out=_field(record, "tokens_out"),
                run_id=_field(record, "run_id"),
            )
            self._queues.setdefault((agent, key_hash), deque()).append(recorded)
            if self.model is None and recorded.model:
                self.model = recorded.model

    def remaining(self) -> int:
        """How many recorded replies have not been handed out yet."""
        return sum(len(queue) for queue in self._queues.values())

    async def complete(self, call: AgentCall, *, timeout_s: float) -> EngineReply:
        """The next reply recorded for ``(call.agent, call.input_hash)``, or its error."""
        key = (call.agent, call.input_hash)
        queue = self._queues.get(key)
        if not queue:
            state = "all used" if queue is not None else "none recorded"
            raise EngineError(
                "not_recorded",
                f"no recorded reply for agent {call.agent!r} "
                f"input_hash {call.input_hash} ({state})",
            )
        recorded = queue.popleft()
        if recorded.raw_output is None:
            raise _recorded_error(call, recorded.error)
        try:
            blocks = json.loads(recorded.raw_output)
        except ValueError as exc:
            raise EngineError(
                "malformed", f"recorded output of {call.agent!r} is not JSON: {exc}"
            ) from exc
        tool_input = tool_input_from_blocks(blocks, call.tool.name)
        return EngineReply(
            tool_input=tool_input,
            raw=recorded.raw_output,
            model=recorded.model,
            tokens_in=recorded.tokens_in,
            tokens_out=recorded.tokens_out,
            meta={"replayed_run_id": recorded.run_id},
        )


def _recorded_error(call: AgentCall, error: str | None) -> EngineError:
    if not error:
        return EngineError(
            "malformed", f"recorded reply of {call.agent!r} has neither an output nor an error"
        )
    written, sep, message = error.partition(": ")
    kind = _KINDS.get(written)
    if sep and kind is not None:
        return EngineError(kind, message)
    return EngineError("malformed", f"recorded error of {call.agent!r}: {error}")
