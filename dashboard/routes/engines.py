"""The agents' engines and their health (open to read): ``GET /api/engines``; the planning
agents' switches (``GET /api/agent_switches``: each on or off, and its cadence), which the
engines panel flips with ``AGENT_OFF`` / ``AGENT_ON`` through ``POST /api/commands``.

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
from dashboard.deps import ContextDep, ViewDep

__all__ = ["AgentSwitch", "AgentSwitches", "EnginesAnswer", "router"]

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


class AgentSwitch(BaseModel):
    """One planning agent: on or off (and why), and its cadence if it has one."""

    model_config = ConfigDict(extra="forbid")

    role: str
    on: bool
    off_reason: str | None = None  # why it is off ("switched off by operator at tick 1200")
    cadence_s: float | None = None  # also asked every so many mission seconds; None: events


class AgentSwitches(BaseModel):
    """The run's planning agents as the engines panel switches them."""

    model_config = ConfigDict(extra="forbid")

    known: bool  # False: no running status has said yet (starting, or no run)
    agents: list[AgentSwitch]


@router.get("/agent_switches", summary="The planning agents: each on or off, and its cadence")
async def agent_switches(view: ViewDep) -> AgentSwitches:
    """Each planning agent of the run (strategist, allocator, critic when the run asks
    agents), ``on`` or off with the reason, and ``cadence_s``; switched with
    ``POST /api/commands {"command": "AGENT_OFF" | "AGENT_ON", "text": ROLE}``."""
    switches = view.agent_switches
    if switches is None:
        return AgentSwitches(known=False, agents=[])
    off = switches.get("off") or {}
    cadence = switches.get("cadence_s") or {}
    return AgentSwitches(
        known=True,
        agents=[
            AgentSwitch(
                role=role, on=role not in off, off_reason=off.get(role), cadence_s=cadence.get(role)
            )
            for role in switches.get("roles") or ()
        ],
    )
