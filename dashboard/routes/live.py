"""Reading the live run (open to all): the mirror's state, events, agent runs, the websocket
clients and the dashboard's health. The state and the events are the public view
(``dashboard.truth``) unless the reader sees the ground truth (``deps.TruthDep``)."""

from __future__ import annotations

import time
from typing import Annotated, Any

from fastapi import APIRouter, Query

from dashboard.deps import ContextDep, StreamsDep, TruthDep, ViewDep
from dashboard.truth import public_events, public_state

__all__ = ["router"]

router = APIRouter(prefix="/api", tags=["live"])


@router.get("/state", summary="Latest scene, telemetry and mode")
async def state(view: ViewDep, truth: TruthDep) -> dict[str, Any]:
    """The run id, status, mode and tick, with the latest scene and telemetry as published
    (hidden SAMs only for a reader of the ground truth: send the token)."""
    return view.state() if truth else public_state(view.state())


@router.get("/events", summary="Events numbered above `since`")
async def events(
    view: ViewDep,
    truth: TruthDep,
    since: Annotated[int, Query(ge=0, description="the last seq you have")] = 0,
    limit: Annotated[int, Query(ge=1, le=5000)] = 1000,
) -> dict[str, Any]:
    """The newest `limit` events numbered above `since`, oldest first, and the last number
    (without the ground truth, the events that are truth are left out: numbers may skip)."""
    found = view.events_since(since, limit)
    if not truth:
        found = public_events(found)
    return {"run_id": view.run_id, "events": found, "last_seq": view.last_seq}


@router.get("/agents", summary="Agent runs as trees (run_id -> children)")
async def agents(view: ViewDep) -> dict[str, Any]:
    """The agent runs kept, each under its parent run."""
    return {"run_id": view.run_id, "count": len(view.agents), "runs": view.agent_tree()}


@router.get("/clients", summary="Websocket clients and their drops")
async def clients(streams: StreamsDep) -> dict[str, Any]:
    """Each connected websocket client's counts (sent, dropped per topic, pending), the
    last ones that left, and how many frames were encoded."""
    return {
        "clients": streams.clients(),
        "departed": streams.departed(),
        "frames_encoded": streams.cache.encoded,
    }


@router.get("/health")
async def health(context: ContextDep) -> dict[str, Any]:
    """Whether the dashboard hears the run: messages, their age, drops, clients, traces."""
    view = context.view
    age = None if view.last_message_at is None else time.monotonic() - view.last_message_at
    return {
        "ok": True,
        "run_id": view.run_id,
        "state": (view.status or {}).get("state"),
        "mode": view.mode,
        "messages": view.received,
        "last_message_age_s": age,
        "mirror_dropped": view.dropped,
        "clients": len(context.streams.clients()),
        "uptime_s": time.monotonic() - context.started_at,
        "traces": context.traces.available,
    }
