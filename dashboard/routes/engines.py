"""The agents' engines and their health (open to read): ``GET /api/engines``.

Each distinct engine of the run (the roles that share one are listed together) is asked its
cheapest question, a list of its server's models, at most once per ``EngineMonitor.ttl_s``
whoever asks (``agents.engines.health``): its latency in ms, ok or the reason it is not.
No key is ever shown. A dashboard that serves no run of its own (``isr dashboard``) knows no
engines and says so (``configured: false``).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict

from agents.engines.health import EngineHealth, EngineMonitor
from dashboard.deps import ContextDep

__all__ = ["EnginesAnswer", "router"]

router = APIRouter(prefix="/api", tags=["engines"])


class EnginesAnswer(BaseModel):
    """The engines of the run and their health."""

    model_config = ConfigDict(extra="forbid")

    configured: bool  # False: this dashboard was given no run's engines
    ok: bool  # every engine answered
    engines: list[EngineHealth]


async def get_engines(context: ContextDep) -> EngineMonitor | None:
    """The run's engine monitor (None on a dashboard that serves no run of its own)."""
    return context.engines


EnginesDep = Annotated[EngineMonitor | None, Depends(get_engines)]


@router.get("/engines", summary="Each agent engine's health: reachability and latency")
async def engines(monitor: EnginesDep) -> EnginesAnswer:
    """Each engine with the roles it answers for, its model and server, ``ok`` with the
    reachability call's ``latency_ms``, or the ``error`` that says why not."""
    if monitor is None:
        return EnginesAnswer(configured=False, ok=True, engines=[])
    found = await monitor.check()
    return EnginesAnswer(configured=True, ok=all(e.ok for e in found), engines=found)
