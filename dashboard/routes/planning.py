"""The seed's stateless planning endpoints (seed 000, Appendix F), open and bounded.

The work, its request models and its limits are in ``dashboard.planning_api``; each route
hands its body to the app's ``PlanningJobs`` (one job at a time, in a worker thread).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import StreamingResponse

from dashboard.deps import PlanningDep
from dashboard.planning_api import OptimizeRequest, SolveRequest
from dashboard.sse import sse_response
from planner.postopt import crossing_removal, insert_missed, trajectory_swap

__all__ = ["router"]

router = APIRouter(prefix="/api", tags=["planning (stateless)"])


@router.post("/agent_solve", summary="The operator's words on a posted mission (seed F.1)")
async def agent_solve(body: SolveRequest, planning: PlanningDep) -> dict[str, Any]:
    """Read ``user_message`` with the coordinator and answer it with the agent chain on the
    posted mission: plan or reallocate (the moves honoured, or why not), answer a question
    without replanning, plan a what-if on a copy; the responder's text, the plan's Solution
    JSON, the agent runs and the coordinator's decision (``dashboard.agent_solve``)."""
    return await planning.solve(body)


@router.post(
    "/agent_solve/stream",
    summary="As /api/agent_solve, answered as Server-Sent Events: the stages as they happen",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}},
)
async def agent_solve_stream(body: SolveRequest, planning: PlanningDep) -> StreamingResponse:
    """``text/event-stream`` (``dashboard.sse``): the coordinator's ``plan``, ``thinking``,
    ``tool_call_start`` / ``tool_call_end`` (the agent chain's planning, the responder),
    ``message`` deltas of the response, then ``done`` with what ``POST /api/agent_solve``
    answers, or ``error`` with the reason and the status it would have answered. A bad body
    is a 422 before any event."""
    return sse_response(lambda report: planning.solve(body, report))


@router.post("/insert_missed_optimize", summary="Insert unvisited targets where they fit")
async def insert_missed_optimize(body: OptimizeRequest, planning: PlanningDep) -> dict[str, Any]:
    """Insert the posted solution's unvisited targets where fuel allows."""
    return await planning.optimize(insert_missed, body)


@router.post(
    "/trajectory_swap_optimize",
    summary="Move targets to drones whose routes pass closer (cascade)",
)
async def trajectory_swap_optimize(body: OptimizeRequest, planning: PlanningDep) -> dict[str, Any]:
    """Move targets of the posted solution to drones whose routes pass closer."""
    return await planning.optimize(trajectory_swap, body)


@router.post("/crossing_removal_optimize", summary="2-opt: remove route self-crossings")
async def crossing_removal_optimize(body: OptimizeRequest, planning: PlanningDep) -> dict[str, Any]:
    """Remove the self-crossings of the posted solution's routes (2-opt)."""
    return await planning.optimize(crossing_removal, body)
