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
    ``await start()`` (mirror started, trace reader opened, the idle watch started when the
    settings have ``idle_timeout_s``: it publishes a ``stop`` command once no page has watched
    the live run for that long) and ``await stop()`` (websockets closed, mirror stopped,
    reader closed, agent_solve's engines closed), both from the app's lifespan.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from agents.engines.health import EngineMonitor
from agents.engines.spec import EngineSpec
from dashboard.live_view import LiveView
from dashboard.planning_jobs import PlanningJobs
from dashboard.settings import DashboardSettings
from dashboard.streams import LiveStreams
from dashboard.trace_store import TraceStore
from executive.bus import CMD, Bus
from executive.bus.messages import StopMessage

__all__ = ["DashboardContext", "ForkLauncher"]

log = logging.getLogger(__name__)


class ForkLauncher(Protocol):
    """Starts a fork of a stored run at a tick as a live run and says where it is served:
    ``await forks(run_id, tick, back_url=URL)`` -> ``{"run_id", "url"}``; ``back_url`` is
    this dashboard, which the fork's page links back to. Given by the wiring point (the
    dashboard does not start runs itself); raises ``ExecutiveError`` when it cannot."""

    def __call__(
        self, run_id: str, tick: int, *, back_url: str | None = None
    ) -> Awaitable[dict[str, Any]]: ...


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
    # the fork being started now ((parent, tick)): one at a time, a second one is refused
    fork_starting: tuple[str, int] | None = None
    _idle: asyncio.Task[None] | None = None

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
            streams=LiveStreams(
                bus,
                view,
                stall_timeout_s=settings.stall_timeout_s,
                live=settings.live,
                back_url=settings.back_url,
                max_anonymous=settings.max_anonymous_viewers,
            ),
            traces=TraceStore(settings.trace_url),
            planning=PlanningJobs(settings.limits, engines=engines),
            forks=forks,
            engines=EngineMonitor(engines) if engines is not None else None,
        )

    async def start(self) -> None:
        """Start the mirror, then open the trace store (if any), and the idle watch when
        the settings have an ``idle_timeout_s``."""
        await self.view.start()
        await self.traces.open()
        if self.settings.idle_timeout_s is not None:
            self._idle = asyncio.get_running_loop().create_task(self._watch_idle(), name="idle")

    async def _watch_idle(self) -> None:
        """Stop the live run (a ``stop`` command on the bus, once) when no page has watched
        it for ``idle_timeout_s``: a fork nobody looks at does not fly on for hours."""
        timeout = self.settings.idle_timeout_s
        assert timeout is not None
        while True:
            await asyncio.sleep(min(5.0, timeout / 4))
            view = self.view
            if view.run_id is None or view.ended or view.commands_blocked() is not None:
                continue
            if self.streams.unwatched_s() >= timeout:
                reason = f"no page watched this run for {timeout:g} s"
                log.warning("stopping run %s: %s", view.run_id, reason)
                self.bus.publish(CMD, StopMessage(reason=reason).wire())
                return

    async def stop(self) -> None:
        """Close the websockets, stop the mirror, close the trace store and the engines."""
        if self._idle is not None:
            self._idle.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._idle
        await self.streams.close()
        await self.view.stop()
        self.traces.close()
        await self.planning.aclose()
