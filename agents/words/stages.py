"""The stages of an answer, as they happen (seed 004's SSE event flow): one definition for
the pipeline that reports them, the bus that carries a live run's, the SSE routes and
``isr ask --stream`` that show them.

Contract
--------
Produces
    ``Stage`` values, in this order for one request: ``plan`` (the coordinator's decision:
    intent, orders, errors), ``thinking`` (what the pipeline does next), ``tool_call_start``
    / ``tool_call_end`` around each step that takes time (the responder, a what-if's
    planning, a command, a memory), ``message`` deltas of the answer text, then ``done``
    (the whole answer, as the non-streaming route gives it) or ``error`` (a reason). The
    pipeline reports the first five; the route that answers adds ``done`` or ``error``.
Lifecycle
    ``StageReport`` is a plain callable, called on the serving loop (never from a worker
    thread); ``None`` means nobody listens.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Annotated, Any, Literal, assert_never

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

__all__ = [
    "STAGE",
    "STAGE_EVENTS",
    "Done",
    "ErrorStage",
    "MessageDelta",
    "PlanStage",
    "Stage",
    "StageReport",
    "Thinking",
    "ToolCallEnd",
    "ToolCallStart",
    "deltas",
    "sse_frame",
    "stage_line",
]


class _Stage(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PlanStage(_Stage):
    """The coordinator's decision on the words, before anything is done."""

    event: Literal["plan"] = "plan"
    intent: str
    orders: list[str] = Field(default_factory=list, description="the typed constraints, in words")
    errors: list[str] = Field(default_factory=list, description="why nothing will be done")
    warnings: list[str] = Field(default_factory=list)


class Thinking(_Stage):
    """What the pipeline does next, in words."""

    event: Literal["thinking"] = "thinking"
    text: str


class ToolCallStart(_Stage):
    """A step that takes time began (``tool``: responder, what_if_planner, command, memory)."""

    event: Literal["tool_call_start"] = "tool_call_start"
    tool: str


class ToolCallEnd(_Stage):
    """That step ended: whether it went through, how long it took and why not."""

    event: Literal["tool_call_end"] = "tool_call_end"
    tool: str
    ok: bool
    duration_ms: float
    error: str | None = None


class MessageDelta(_Stage):
    """A piece of the answer text; the pieces in order make the whole answer."""

    event: Literal["message"] = "message"
    delta: str


class Done(_Stage):
    """The whole answer, as the non-streaming route answers it."""

    event: Literal["done"] = "done"
    answer: dict[str, Any]


class ErrorStage(_Stage):
    """The request failed: no ``done`` follows."""

    event: Literal["error"] = "error"
    reason: str
    status: int | None = Field(None, description="the HTTP status the plain route would give")


Stage = Annotated[
    PlanStage | Thinking | ToolCallStart | ToolCallEnd | MessageDelta | Done | ErrorStage,
    Field(discriminator="event"),
]
STAGE: TypeAdapter[Stage] = TypeAdapter(Stage)
STAGE_EVENTS = (
    "plan",
    "thinking",
    "tool_call_start",
    "tool_call_end",
    "message",
    "done",
    "error",
)

StageReport = Callable[[Stage], None]


def deltas(text: str, words: int = 4) -> Iterator[MessageDelta]:
    """``text`` in pieces of a few words (whitespace kept), so joined they give it back.
    The engines answer whole today; the pieces are what a token stream would give."""
    if not text:
        return
    parts = text.split(" ")
    for i in range(0, len(parts), words):
        piece = " ".join(parts[i : i + words])
        yield MessageDelta(delta=piece if i + words >= len(parts) else piece + " ")


def sse_frame(stage: Stage, seq: int) -> str:
    """One Server-Sent Events frame: ``id``, ``event`` (the stage's name), ``data`` (its JSON
    on one line)."""
    data = json.dumps(stage.model_dump(mode="json", exclude={"event"}), separators=(",", ":"))
    return f"id: {seq}\nevent: {stage.event}\ndata: {data}\n\n"


def stage_line(stage: Stage) -> str | None:
    """One line of words for a stage as a terminal shows it (None: a ``message`` delta, which
    is printed as it comes, and ``done``, whose answer is printed whole)."""
    match stage:
        case PlanStage():
            said = "; ".join(stage.errors or stage.orders)
            return f"plan: {stage.intent}" + (f" ({said})" if said else "")
        case Thinking():
            return f"thinking: {stage.text}"
        case ToolCallStart():
            return f"{stage.tool}..."
        case ToolCallEnd():
            how = "done" if stage.ok else (stage.error or "failed")
            return f"{stage.tool}: {how} ({stage.duration_ms:.0f} ms)"
        case ErrorStage():
            return f"error: {stage.reason}"
        case MessageDelta() | Done():
            return None
        case _:
            assert_never(stage)
