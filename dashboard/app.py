"""The dashboard's FastAPI app: the page, the REST API and the live websocket.

Contract
--------
Options
    ``create_app(bus, *, token, trace_url=None, ask_timeout_s=30.0,
    max_body_bytes=1_000_000, limits=Limits(), show_truth=False, stall_timeout_s=15.0,
    forks=None, engines=None, live=True, idle_timeout_s=None, back_url=None)``:
    ``bus`` is any ``executive.bus.Bus`` (in-process or MQTT); ``token`` guards everything
    that commands, and the ground truth; ``trace_url`` (a SQLAlchemy URL) serves
    ``/api/runs`` from the trace store; ``show_truth`` (exercise control) shows the ground
    truth to every reader; ``stall_timeout_s`` is how long a websocket client may accept no
    data before it is dropped; ``live`` False for a dashboard of stored runs only (no live
    run will come: the page opens on the runs list); ``idle_timeout_s`` stops the live run
    once no page has watched it that long; ``back_url`` the dashboard that started this run
    (a fork). They become the one ``DashboardSettings``. ``engines`` (the
    run's engine of each agent role, ``RunConfig.engine_table()``) are checked, on request,
    by ``GET /api/engines`` (``dashboard.routes.engines``) and answer ``/api/agent_solve``'s
    agents (none: the offline rules).
Consumes
    The bus's out topics (one subscription for the ``LiveView`` mirror, one per websocket
    client). HTTP requests.
Produces
    ``cmd`` messages on the bus (``command``, ``edit``, ``speed``, ``ask``), never anything
    else: the dashboard does not reach into the sim or the executive. HTTP answers; the
    ``/ws/live`` stream (``dashboard.streams``).
Lifecycle
    Everything is built here (one ``DashboardContext`` on ``app.state.context``) and started
    and stopped by the app's lifespan (mirror started, trace reader opened; on shutdown:
    websockets closed, mirror stopped, reader closed). Serve it with
    ``dashboard.server.start_dashboard``.

The routes are routers in ``dashboard.routes`` that get what they need through
``dashboard.deps``. Reading is open, without the ground truth (``dashboard.truth``) unless
the reader sends the token or the app shows it to all; ``POST /api/commands``,
``/api/edits``, ``/api/speed`` and ``/api/ask`` need ``Authorization: Bearer <token>``.
Errors: ``dashboard.errors`` (4xx JSON naming the field). Every answer carries the security
headers (``dashboard.security``); the live websocket serves only its own origin.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.types import ASGIApp

from agents.engines.spec import EngineSpec
from dashboard.body_limit import BodyLimit
from dashboard.context import DashboardContext, ForkLauncher
from dashboard.errors import install_error_handlers
from dashboard.planning_api import Limits
from dashboard.routes import commands, pages, planning, runs, stream
from dashboard.routes import engines as engine_health
from dashboard.routes import live as live_api
from dashboard.security import SecurityHeaders
from dashboard.settings import DashboardSettings
from executive.bus import Bus

__all__ = ["create_app"]

_DESCRIPTION = (
    "Live view, commands, edits and questions for a running ISR mission, and the seed's "
    "stateless planning endpoints. Reading is open; commanding needs `Authorization: Bearer "
    "TOKEN`, and the same header shows the ground truth (hidden SAMs) to a reader."
)


class _App(FastAPI):
    """FastAPI with the security headers outside everything, its own error answers
    (the 500s of ``ServerErrorMiddleware``) included."""

    def build_middleware_stack(self) -> ASGIApp:
        """The usual stack, wrapped in ``SecurityHeaders``."""
        return SecurityHeaders(super().build_middleware_stack())


def create_app(
    bus: Bus,
    *,
    token: str,
    trace_url: str | None = None,
    ask_timeout_s: float = 30.0,
    max_body_bytes: int = 1_000_000,
    limits: Limits | None = None,
    show_truth: bool = False,
    stall_timeout_s: float = 15.0,
    forks: ForkLauncher | None = None,
    engines: Mapping[str, EngineSpec] | None = None,
    live: bool = True,
    idle_timeout_s: float | None = None,
    back_url: str | None = None,
    max_anonymous_viewers: int = 500,
) -> FastAPI:
    """The dashboard app for the run on ``bus`` (see the module's contract)."""
    if not token:
        raise ValueError("the dashboard needs a non-empty control token")
    settings = DashboardSettings(
        token=token,
        trace_url=trace_url,
        ask_timeout_s=ask_timeout_s,
        max_body_bytes=max_body_bytes,
        limits=limits or Limits(),
        show_truth=show_truth,
        stall_timeout_s=stall_timeout_s,
        live=live,
        idle_timeout_s=idle_timeout_s,
        back_url=back_url,
        max_anonymous_viewers=max_anonymous_viewers,
    )
    # the run's engine of each agent role: checked by /api/engines, asked by agent_solve
    context = DashboardContext.build(bus, settings, forks, engines)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        """Start the context before the first request; stop it after the last."""
        await context.start()
        try:
            yield
        finally:
            await context.stop()

    app = _App(
        title="ISR mission dashboard",
        version="1",
        lifespan=lifespan,
        docs_url=None,  # served by routes.pages from local files
        description=_DESCRIPTION,
    )
    app.state.context = context
    # The parts by name too, for tests and benches that look at them.
    app.state.view = context.view
    app.state.streams = context.streams
    install_error_handlers(app)
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)

    app.include_router(pages.router)
    pages.mount_static(app)
    for area in (live_api, runs, commands, planning, stream, engine_health):
        app.include_router(area.router)
    return app
