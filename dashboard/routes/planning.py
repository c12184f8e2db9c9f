"""The seed's stateless planning endpoints (seed 000, Appendix F), open and bounded.

The work, its request models and its limits are in ``dashboard.planning_api``; each route
hands its body to the app's ``PlanningJobs`` (one job at a time, in a worker thread).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from dashboard.deps import PlanningDep
from dashboard.planning_api import OptimizeRequest, SolveRequest
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
