"""What the routes depend on, handed over as ``Annotated[..., Depends(...)]``.

Everything comes from the one ``DashboardContext`` that ``create_app`` puts on
``app.state.context``; a test can replace any of these with ``app.dependency_overrides``.
``require_token`` is the check in front of every commanding route; ``TruthDep`` says whether
the reader sees the ground truth (``dashboard.truth``): with the token, or on a dashboard
started with ``show_truth``. The trace store a route gets is the reader's too: without the
truth its reader answers public rows (``truth.PublicTraceReader``).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from starlette.requests import HTTPConnection

from dashboard.context import DashboardContext
from dashboard.errors import Unauthorized
from dashboard.live_view import LiveView
from dashboard.planning_jobs import PlanningJobs
from dashboard.security import bearer_token, token_matches
from dashboard.settings import DashboardSettings
from dashboard.streams import LiveStreams
from dashboard.trace_store import TraceStore

__all__ = [
    "ContextDep",
    "PlanningDep",
    "SettingsDep",
    "StreamsDep",
    "TraceStoreDep",
    "TruthDep",
    "ViewDep",
    "get_context",
    "get_planning",
    "get_settings",
    "get_streams",
    "get_trace_store",
    "get_truth",
    "get_view",
    "require_token",
]


# The dependencies are coroutines: FastAPI would run plain functions in a thread pool.


async def get_context(connection: HTTPConnection) -> DashboardContext:
    """The app's context (HTTP requests and websockets alike)."""
    context: DashboardContext = connection.app.state.context
    return context


ContextDep = Annotated[DashboardContext, Depends(get_context)]


async def get_settings(context: ContextDep) -> DashboardSettings:
    """The app's settings."""
    return context.settings


SettingsDep = Annotated[DashboardSettings, Depends(get_settings)]


async def get_view(context: ContextDep) -> LiveView:
    """The mirror of the live run."""
    return context.view


ViewDep = Annotated[LiveView, Depends(get_view)]


async def get_streams(context: ContextDep) -> LiveStreams:
    """The websocket streams."""
    return context.streams


StreamsDep = Annotated[LiveStreams, Depends(get_streams)]


async def get_truth(connection: HTTPConnection, settings: SettingsDep) -> bool:
    """Whether this reader sees the ground truth: it sent the control token, or the
    dashboard was started with ``show_truth``. A wrong token is a 401, wherever it is sent."""
    given = bearer_token(connection.headers)
    if given is not None and not token_matches(given, settings):
        raise Unauthorized(missing=False)
    return settings.show_truth or given is not None


TruthDep = Annotated[bool, Depends(get_truth)]


async def get_trace_store(context: ContextDep, truth: TruthDep) -> TraceStore:
    """The trace store as this reader may see it; its ``reader`` says 404 when there is
    none."""
    return context.traces.for_reader(truth)


TraceStoreDep = Annotated[TraceStore, Depends(get_trace_store)]


async def get_planning(context: ContextDep) -> PlanningJobs:
    """The planning endpoints' one-job-at-a-time worker."""
    return context.planning


PlanningDep = Annotated[PlanningJobs, Depends(get_planning)]


async def require_token(request: Request, settings: SettingsDep) -> None:
    """Refuse the request (401) unless it carries ``Authorization: Bearer <token>``."""
    given = bearer_token(request.headers)
    if given is None or not token_matches(given, settings):
        raise Unauthorized(missing=given is None)
