"""The dashboard app's state: one typed object that ``create_app`` builds and the lifespan
starts and stops.

Contract
--------
Options
    ``DashboardContext.build(bus, settings)``: any ``executive.bus.Bus`` and the
    ``DashboardSettings``.
Consumes
    The bus's out topics, through the ``LiveView`` mirror and one subscription per websocket
    client (``LiveStreams``).
Produces
    Nothing by itself: the routes read it through ``dashboard.deps``.
Lifecycle
    ``await start()`` (mirror started, trace reader opened) and ``await stop()`` (websockets
    closed, mirror stopped, reader closed), both from the app's lifespan.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from dashboard.live_view import LiveView
from dashboard.planning_api import PlanningJobs
from dashboard.settings import DashboardSettings
from dashboard.streams import LiveStreams
from dashboard.trace_store import TraceStore
from executive.bus import Bus

__all__ = ["DashboardContext", "ForkLauncher"]

# Starts a fork of a stored run at a tick as a live run and says where it is served:
# ``await forks(run_id, tick)`` -> {"run_id", "url"}. Given by the wiring point (the
# dashboard does not start runs itself); raises ``ExecutiveError`` when it cannot.
ForkLauncher = Callable[[str, int], Awaitable[dict[str, Any]]]


@dataclass
class DashboardContext:
    """Settings, the bus and the parts built on it, for every route of one app."""

    settings: DashboardSettings
    bus: Bus
    view: LiveView
    streams: LiveStreams
    traces: TraceStore
    planning: PlanningJobs
    forks: ForkLauncher | None = None
    started_at: float = field(default_factory=time.monotonic)

    @classmethod
    def build(
        cls, bus: Bus, settings: DashboardSettings, forks: ForkLauncher | None = None
    ) -> DashboardContext:
        """The parts for ``bus``, configured by ``settings`` (nothing started yet)."""
        view = LiveView(bus)
        return cls(
            settings=settings,
            bus=bus,
            view=view,
            streams=LiveStreams(bus, view, stall_timeout_s=settings.stall_timeout_s),
            traces=TraceStore(settings.trace_url),
            planning=PlanningJobs(settings.limits),
            forks=forks,
        )

    async def start(self) -> None:
        """Start the mirror, then open the trace store (if any)."""
        await self.view.start()
        await self.traces.open()

    async def stop(self) -> None:
        """Close the websockets, stop the mirror, close the trace store."""
        await self.streams.close()
        await self.view.stop()
        self.traces.close()
