"""Server-Sent Events of an answer's stages (seed 004's event flow, ``agents.words.stages``):
what ``POST /api/ask/stream`` and ``POST /api/agent_solve/stream`` answer.

Contract
--------
Consumes
    A piece of work ``work(report) -> dict``: it reports each stage as it happens and
    returns the whole answer (what the non-streaming route answers).
Produces
    ``text/event-stream``: one frame per stage (``id``, ``event``, ``data`` as one JSON
    line), then ``done`` with the whole answer, or ``error`` with a reason (and the status
    the plain route would have answered); then the stream closes.
Behaviour
    The stages wait in a bounded queue (``MAX_PENDING``); beyond it a stage is dropped (a
    client that reads too slowly loses stages, never ``done``). A client that goes away
    cancels the work.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from fastapi.responses import StreamingResponse

from agents.words.stages import Done, ErrorStage, Stage, StageReport, sse_frame
from dashboard.errors import ApiError

__all__ = ["MAX_PENDING", "SSE_HEADERS", "sse_response", "staged"]

MAX_PENDING = 1024
# no caching, and no buffering by a reverse proxy (nginx): each frame goes out as it comes
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}

Work = Callable[[StageReport], Coroutine[Any, Any, dict[str, Any]]]


async def staged(work: Work) -> AsyncIterator[Stage]:
    """Run ``work`` in a task and yield each stage it reports, then ``Done`` with its answer
    or ``ErrorStage`` with why it failed."""
    queue: asyncio.Queue[Stage | None] = asyncio.Queue()

    def report(stage: Stage) -> None:
        if queue.qsize() < MAX_PENDING:
            queue.put_nowait(stage)

    task = asyncio.create_task(work(report), name="sse-work")
    task.add_done_callback(lambda _: queue.put_nowait(None))  # after every stage it reported
    try:
        while (stage := await queue.get()) is not None:
            yield stage
        if task.cancelled():
            yield ErrorStage(reason="cancelled: the dashboard is shutting down", status=503)
            return
        exc = task.exception()
        if isinstance(exc, ApiError):
            problems = "; ".join(f"{p['path']}: {p['message']}" for p in exc.problems)
            yield ErrorStage(
                reason=exc.error + (f" ({problems})" if problems else ""), status=exc.status
            )
        elif exc is not None:
            yield ErrorStage(reason=f"{type(exc).__name__}: {exc}", status=500)
        else:
            yield Done(answer=task.result())
    finally:
        if not task.done():  # the client went away: nobody hears the answer
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


def sse_response(work: Work) -> StreamingResponse:
    """``text/event-stream`` of ``work``'s stages (see the module docstring)."""

    async def frames() -> AsyncIterator[str]:
        seq = 0
        async for stage in staged(work):
            seq += 1
            yield sse_frame(stage, seq)

    return StreamingResponse(frames(), media_type="text/event-stream", headers=SSE_HEADERS)
