"""``/ws/live``: the live run streamed to each browser (``dashboard.streams`` does the work:
a bounded inbox per client, drops counted, frames encoded once). The door
(``dashboard.security.live_access``): a page of another origin is refused (1008), a wrong
token too (4401); the token (an ``isr.token.<base64url>`` subprotocol, or an
``Authorization: Bearer`` header) or ``show_truth`` opens the ground truth."""

from __future__ import annotations

from fastapi import APIRouter, WebSocket

from dashboard.deps import SettingsDep, StreamsDep
from dashboard.security import live_access

__all__ = ["router"]

router = APIRouter()


@router.websocket("/ws/live")
async def live(websocket: WebSocket, streams: StreamsDep, settings: SettingsDep) -> None:
    """One client's stream: the hello frame, then the bus's messages and stats frames."""
    access = live_access(
        websocket.headers,
        websocket.url.scheme,
        list(websocket.scope.get("subprotocols") or ()),
        settings,
    )
    await streams.serve(websocket, access)
