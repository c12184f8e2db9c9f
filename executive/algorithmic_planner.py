"""The planner alone behind the ``MissionPlanner`` interface: the team search in a worker
thread, no agents. What runs when agents are off, and the baseline everything else beats."""

from __future__ import annotations

import asyncio
import time

from executive.contracts import PlanOutcome, PlanRequest
from executive.errors import ExecutiveError
from planner.errors import PlannerError
from planner.mission import compile_mission
from planner.planning import plan_mission

__all__ = ["AlgorithmicPlanner", "PlanningFailed"]


class PlanningFailed(ExecutiveError):
    """No valid plan could be made for a request."""


class AlgorithmicPlanner:
    def __init__(self, *, seed: int = 0, iterations: int | None = None) -> None:
        self.seed = seed
        self.iterations = iterations

    def _plan(self, request: PlanRequest):
        mission = compile_mission(request.scenario)
        seconds = None if self.iterations else max(0.01, 0.8 * request.deadline_s)
        return plan_mission(mission, seconds=seconds, iterations=self.iterations, seed=self.seed)

    async def plan(self, request: PlanRequest) -> PlanOutcome:
        started = time.perf_counter()
        try:
            result = await asyncio.to_thread(self._plan, request)
        except PlannerError as exc:
            raise PlanningFailed(f"planning round {request.round_id}: {exc}") from exc
        return PlanOutcome(request.round_id, request.tick, result.solution, result.solution,
                           agent_applied=False, reasons=("agents off",),
                           latency_ms=(time.perf_counter() - started) * 1000)
