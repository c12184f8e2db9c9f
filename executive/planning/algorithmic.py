"""The planner alone behind the ``MissionPlanner`` interface: the team search in a worker
thread, no agents, no trace records.

The simplest ``MissionPlanner``, for tests and embedding. It plans the request's scenario
only: ``request.constraints`` (the operator's moves and forbidden targets) are not applied.
A run built by ``mission.session`` does not use it: with agents off it uses
``agents.planning.round.AgentPlanner`` without the chain, so constraints still hold.
"""

from __future__ import annotations

import asyncio
import time

from executive.contracts import PlanOutcome, PlanRequest
from executive.errors import ExecutiveError
from planner.errors import PlannerError
from planner.mission import Mission, compile_mission
from planner.planning import PlanResult, plan_mission

__all__ = ["AlgorithmicPlanner", "PlanningFailed"]


class PlanningFailed(ExecutiveError):
    """No valid plan could be made for a request."""


class AlgorithmicPlanner:
    """Plans each request with ``planner.planning.plan_mission`` (team search, post-optimised,
    validated).

    ``iterations``: a fixed search budget, so a seed reproduces the plan; None searches for
    80 % of the request's ``deadline_s`` instead (at least 10 ms of wall time).
    """

    def __init__(self, *, seed: int = 0, iterations: int | None = None) -> None:
        self.seed = seed
        self.iterations = iterations

    def _plan(self, request: PlanRequest) -> tuple[Mission, PlanResult]:
        mission = compile_mission(request.scenario)
        seconds = None if self.iterations else max(0.01, 0.8 * request.deadline_s)
        result = plan_mission(mission, seconds=seconds, iterations=self.iterations, seed=self.seed)
        # planned (and validated) around the drones that cannot be planned: the mission
        # narrowed to the others
        return result.mission or mission, result

    async def plan(self, request: PlanRequest) -> PlanOutcome:
        """Plan ``request`` in a worker thread (the event loop never waits on the search).

        The outcome's solution and baseline are the same plan, ``agent_applied`` is False.
        Raises ``PlanningFailed`` when the planner cannot make a valid plan.
        """
        started = time.perf_counter()
        try:
            mission, result = await asyncio.to_thread(self._plan, request)
        except PlannerError as exc:
            raise PlanningFailed(f"planning round {request.round_id}: {exc}") from exc
        return PlanOutcome(
            request.round_id,
            request.tick,
            result.solution,
            result.solution,
            agent_applied=False,
            reasons=("agents off", *result.rerouted.values(), *result.left_out.values()),
            latency_ms=(time.perf_counter() - started) * 1000,
            mission=mission,
            left_out=dict(result.left_out),
        )
