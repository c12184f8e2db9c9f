"""One answer's tool calls: access control, a call budget, a timeout per call, a trace row
per call. What an engine's tool-use loop is handed (``agents.engines.tool_loop.ToolBox``).

``ToolSession.run(name, arguments)`` never raises: a tool the role may not call, a call over
the budget, arguments that do not parse, a ``ToolError``, a timeout or any other exception
all become ``{"ok": false, "error": "..."}`` (seed 002: the orchestrator refuses, the model
reads why). Every call, refused ones too, counts against the budget and is traced as an
``AgentRunRecord`` (agent ``tool:<name>``, engine ``tools``) whose parent is the agent run
that asked, so the agent tree shows it.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from agents.engines.base import ToolSpec, canonical_json, validation_summary
from agents.engines.base import input_hash as hash_parts
from agents.tools.contract import Tool, ToolContext, ToolError, failed, succeeded
from agents.tools.registry import ROLE_TOOLS, TOOLS, specs_for
from agents.words.stages import StageReport, ToolCallEnd, ToolCallStart
from executive.contracts import AgentRunRecord, TraceSink, new_id

__all__ = ["DEFAULT_MAX_CALLS", "DEFAULT_TIMEOUT_S", "ToolCall", "ToolSession"]

DEFAULT_MAX_CALLS = 6  # per answer: a model that loops is stopped and asked to answer
DEFAULT_TIMEOUT_S = 15.0  # per call: a solve on the demo takes well under a second


@dataclass(frozen=True)
class ToolCall:
    """One call as it was made and answered (seed 002's ``tool_calls``)."""

    run_id: str
    tool: str
    arguments: Any
    result: dict[str, Any]
    duration_ms: float

    @property
    def ok(self) -> bool:
        return bool(self.result.get("ok"))


@dataclass
class ToolSession:
    """The tools one agent run may call while it answers (see the module docstring)."""

    role: str
    context: ToolContext
    sink: TraceSink
    parent_run_id: str | None = None  # the agent run the calls belong to
    max_calls: int = DEFAULT_MAX_CALLS
    timeout_s: float = DEFAULT_TIMEOUT_S
    on_stage: StageReport | None = None  # hears tool_call_start / tool_call_end per call
    calls: list[ToolCall] = field(default_factory=list)

    @property
    def specs(self) -> Sequence[ToolSpec]:
        """The tools the model is shown: only those its role may call."""
        return specs_for(self.role)

    @property
    def exhausted(self) -> bool:
        """No call left: the engine must ask for the final answer now."""
        return len(self.calls) >= self.max_calls

    async def run(self, name: str, arguments: Any) -> dict[str, Any]:
        """Call ``name`` with ``arguments``; the ``{ok, data | error}`` result, never raises."""
        started = time.perf_counter()
        if self.on_stage is not None:
            self.on_stage(ToolCallStart(tool=name))
        result = await self._answer(name, arguments)
        call = ToolCall(new_id(), name, arguments, result, (time.perf_counter() - started) * 1000)
        self.calls.append(call)
        self._trace(call)
        if self.on_stage is not None:
            self.on_stage(
                ToolCallEnd(
                    tool=name,
                    ok=call.ok,
                    duration_ms=round(call.duration_ms, 1),
                    error=result.get("error"),
                )
            )
        return result

    async def _answer(self, name: str, arguments: Any) -> dict[str, Any]:
        tool = TOOLS.get(name)
        allowed = ROLE_TOOLS.get(self.role, frozenset())
        if tool is None:
            return failed(f"unknown tool {name!r}: the {self.role} may call {_listed(allowed)}")
        if name not in allowed:
            return failed(
                f"access denied: the {self.role} may not call {name}"
                f" (it may call {_listed(allowed)})"
            )
        if self.exhausted:
            return failed(
                f"budget spent: {self.max_calls} tool calls per answer; give the final answer"
            )
        if not isinstance(arguments, dict):
            return failed(f"invalid arguments: not a JSON object: {str(arguments)[:80]!r}")
        try:
            args = tool.args.model_validate(arguments)
        except ValidationError as exc:
            return failed(f"invalid arguments: {validation_summary(exc)}")
        try:
            data = await asyncio.wait_for(_invoke(tool, self.context, args), self.timeout_s)
        except TimeoutError:
            return failed(f"timeout: {name} gave no answer within {self.timeout_s:g} s")
        except ToolError as exc:
            return failed(str(exc))
        except Exception as exc:  # a tool's bug is the model's error result, never a crash
            return failed(f"{name} failed: {type(exc).__name__}: {exc}")
        # through JSON now: what the model reads is what the trace keeps
        return succeeded(json.loads(canonical_json(data)))

    def _trace(self, call: ToolCall) -> None:
        written = canonical_json(call.arguments)
        result = call.result
        self.sink.emit(
            AgentRunRecord(
                run_id=call.run_id,
                parent_run_id=self.parent_run_id,
                mission_run_id=self.context.state.run_id,
                agent=f"tool:{call.tool}"[:32],
                engine="tools",
                model=None,
                input_hash=hash_parts(call.tool, written),
                input_size=len(written),
                tokens_in=None,
                tokens_out=None,
                duration_ms=call.duration_ms,
                raw_output=canonical_json(result),
                validated_output={
                    "tool": call.tool,
                    "role": self.role,
                    "arguments": json.loads(written),
                    "ok": call.ok,
                },
                clamp_actions=(),
                applied=call.ok,
                error=None if call.ok else str(result.get("error")),
                tick=self.context.state.tick,
            )
        )


async def _invoke(tool: Tool, context: ToolContext, args: Any) -> Any:
    """The handler's data: awaited if it is a coroutine function, in a worker thread if it
    plans (``blocking``), else called here."""
    if inspect.iscoroutinefunction(tool.handler):
        return await tool.handler(context, args)
    if tool.blocking:
        return await asyncio.to_thread(tool.handler, context, args)
    return tool.handler(context, args)


def _listed(names: frozenset[str]) -> str:
    return ", ".join(sorted(names)) or "no tool"
