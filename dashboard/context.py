"""The dashboard app's state: one typed object that ``create_app`` builds and the lifespan
starts and stops.

Contract
--------
Options
    ``DashboardContext.build(bus, settings, forks=None, engines=None)``: any
    ``executive.bus.Bus``, the ``DashboardSettings``, and the engine of each agent role of
    the run the dashboard serves (``RunConfig.engine_table()``): checked by ``/api/engines``
    and asked by ``/api/agent_solve``'s agents (none: the rules).
Consumes
    The bus's out topics, through the ``LiveView`` mirror and one subscription per websocket
    client (``LiveStreams``).
Produces
    Nothing by itself: the routes read it through ``dashboard.deps``.
Lifecycle
    ``await start()`` (mirror started, trace reader opened) and ``await stop()`` (websockets
    closed, mirror stopped, reader closed, agent_solve's engines closed), both from the
    app's lifespan.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agents.engines.health import EngineMonitor
from agents.engines.spec import EngineSpec
from dashboard.live_view import LiveView
from dashboard.planning_jobs import PlanningJobs
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
    engines: EngineMonitor | None = None  # the run's agent engines (/api/engines)
    started_at: float = field(default_factory=time.monotonic)

    @classmethod
    def build(
        cls,
        bus: Bus,
        settings: DashboardSettings,
        forks: ForkLauncher | None = None,
        engines: Mapping[str, EngineSpec] | None = None,
    ) -> DashboardContext:
        """The parts for ``bus``, configured by ``settings`` (nothing started yet);
        ``engines``: the run's engine of each agent role."""
        view = LiveView(bus)
        return cls(
            settings=settings,
            bus=bus,
            view=view,
            streams=LiveStreams(bus, view, stall_timeout_s=settings.stall_timeout_s),
            traces=TraceStore(settings.trace_url),
            planning=PlanningJobs(settings.limits, engines=engines),
            forks=forks,
            engines=EngineMonitor(engines) if engines is not None else None,
        )

    async def start(self) -> None:
        """Start the mirror, then open the trace store (if any)."""
        await self.view.start()
        await self.traces.open()

    async def stop(self) -> None:
        """Close the websockets, stop the mirror, close the trace store and the engines."""
        await self.streams.close()
        await self.view.stop()
        self.traces.close()
        await self.planning.aclose()
