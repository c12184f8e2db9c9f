"""The planning endpoints' worker (``PlanningJobs``): one job at a time, in worker threads,
so that the event loop, and the live tick, is never blocked by ``agent_solve`` or an
optimiser; and the engine agent_solve's agents ask (``solve_engine``).

The work itself is in ``dashboard.planning_api`` (the optimisers, the posted missions) and
``dashboard.agent_solve`` (which builds on it); this module sits above both.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from agents.engines.base import Engine
from agents.engines.per_role import aclose_engine, role_engines
from agents.engines.rules import RulesEngine
from agents.engines.spec import AGENT_ROLES, EngineSpec
from agents.words.stages import StageReport
from dashboard.agent_solve import agent_solve
from dashboard.errors import ApiError
from dashboard.planning_api import Limits, OptimizeRequest, PostOptTool, SolveRequest, optimize
from executive.errors import ExecutiveError

__all__ = ["PlanningJobs", "solve_engine"]

_T = TypeVar("_T")


def solve_engine(specs: Mapping[str, EngineSpec] | None) -> Engine:
    """The engine agent_solve's agents ask: each role on the engine the dashboard's run gives
    it (``RunConfig.engine_table()``), a role the run gives none (its agents are off) on the
    rules, and a ``replay`` role on the rules too (a posted mission has no recorded answers).
    No run (``None``): the rules for every role."""
    if not specs:
        return RulesEngine()
    rules = EngineSpec()
    chosen = {role: specs.get(role, rules) for role in AGENT_ROLES}
    return role_engines(
        {role: rules if spec.engine == "replay" else spec for role, spec in chosen.items()}
    )


class PlanningJobs:
    """The planning endpoints' worker: one job at a time (two cores, and a live tick), in
    worker threads, within ``limits``. agent_solve's agents are answered by ``engine`` when
    given, else by the engines of the dashboard's run (``engines``: each role's spec, built
    on the first request, on the serving loop: ``solve_engine``), else by the offline
    ``rules`` engine."""

    def __init__(
        self,
        limits: Limits,
        engine: Engine | None = None,
        *,
        engines: Mapping[str, EngineSpec] | None = None,
    ) -> None:
        self.limits = limits
        self._engine: Engine | None = engine
        self._specs = dict(engines) if engines else None
        self._gate = asyncio.Semaphore(1)

    @property
    def engine(self) -> Engine:
        """The engine agent_solve's agents ask (built from the run's specs when first read;
        503 naming the reason when the run's engines cannot be built here, e.g. no key)."""
        if self._engine is None:
            try:
                self._engine = solve_engine(self._specs)
            except ExecutiveError as exc:
                raise ApiError(503, f"the run's agent engines cannot be used here: {exc}") from None
        return self._engine

    @engine.setter
    def engine(self, engine: Engine) -> None:
        self._engine = engine

    async def aclose(self) -> None:
        """Close the engine's connections (the SDK engines hold some)."""
        if self._engine is not None:
            await aclose_engine(self._engine)

    async def _run(self, fn: Callable[..., _T], *args: Any) -> _T:
        async with self._gate:
            return await asyncio.to_thread(fn, *args)

    async def solve(
        self, body: SolveRequest, on_stage: StageReport | None = None
    ) -> dict[str, Any]:
        """``agent_solve`` of ``body`` when the worker is free (``on_stage``: its stages)."""
        async with self._gate:
            return await agent_solve(body, self.limits, self.engine, on_stage)

    async def optimize(self, tool: PostOptTool, body: OptimizeRequest) -> dict[str, Any]:
        """``optimize(tool, body)`` when the worker is free."""
        return await self._run(optimize, tool, body, self.limits)
