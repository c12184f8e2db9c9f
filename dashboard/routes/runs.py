"""Recorded runs, read from the trace store in worker threads (404 without a store)."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.encoders import jsonable_encoder

from dashboard.deps import TraceStoreDep
from dashboard.errors import UnknownRun
from executive.errors import ExecutiveError

__all__ = ["router"]

router = APIRouter(prefix="/api", tags=["traces"])


@router.get("/runs", summary="Recorded runs, newest first")
async def runs(
    traces: TraceStoreDep, limit: Annotated[int, Query(ge=1, le=500)] = 50
) -> dict[str, Any]:
    """The newest `limit` runs of the trace store."""
    rows = await asyncio.to_thread(traces.reader.runs, limit)
    return jsonable_encoder({"runs": rows})


@router.get("/runs/{run_id}", summary="One run and its summary")
async def run(run_id: str, traces: TraceStoreDep) -> dict[str, Any]:
    """One run (by id or a unique prefix): its record, plan versions (without their
    solutions), its last 500 events with the total count, and its agent runs (without their
    raw output)."""
    reader = traces.reader

    def load() -> dict[str, Any]:
        """Everything the answer needs, read in one worker thread."""
        try:
            row = reader.run(run_id)
        except ExecutiveError as exc:
            raise UnknownRun(str(exc)) from None
        rid = row["run_id"]
        versions = [
            {k: v for k, v in pv.items() if k != "solution"}
            | {"points": (pv.get("solution") or {}).get("total_points")}
            for pv in reader.plan_versions(rid)
        ]
        events = reader.events(rid)
        agent_runs = [
            {k: v for k, v in a.items() if k != "raw_output"} for a in reader.agent_runs(rid)
        ]
        return {
            "run": row,
            "plan_versions": versions,
            "events_count": len(events),
            "events": events[-500:],
            "agent_runs": agent_runs,
        }

    return jsonable_encoder(await asyncio.to_thread(load))
