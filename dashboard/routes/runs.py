"""Recorded runs, read from the trace store in worker threads (404 without a store).

``GET /api/runs`` pages the runs, newest first (``limit``, ``offset``, ``status``,
``scenario``); ``/api/runs/{id}`` is one run's record and summary; the rest serve the replay
view: ``telemetry?from=&to=&every=`` (stored rows in a tick range, thinned in the database),
``events?from=&to=`` (with the playback bar's ``markers``), ``state?tick=`` (the whole
picture at a tick: ``executive.traces.timeline``), ``plans`` (every plan version and what it
changed) and ``series`` (the charts). Ids are exact (``reader.run_id_problem`` first); a tick
past what the run has stored, a reversed range or too many rows at once is a 422 naming the
query field. A reader without the ground truth gets every answer public (``dashboard.truth``).
``GET /api/compare?a=&b=`` puts two runs side by side. ``POST /api/runs/{id}/fork {"tick"}``
(with the token) starts a fork of the run at that tick as a live run and answers where it is
served (202), through the launcher the wiring point gave the app (409 without one); the run
and the tick are checked first (404, 422); one fork starts at a time (a second one while the
first starts is a 409).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, Query, Request
from fastapi.encoders import jsonable_encoder
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from dashboard.deps import ContextDep, TraceStoreDep, require_token
from dashboard.errors import BadRange, CannotFork, UnknownRun
from dashboard.truth import public_scene
from executive.errors import ExecutiveError

# The store's queries (SQLAlchemy, the planner's path codec) are imported by the answers
# that read them (in their worker thread): a dashboard without traces never loads them.
if TYPE_CHECKING:
    from executive.traces.reader import TraceReader

__all__ = ["MAX_TELEMETRY_ROWS", "router"]

router = APIRouter(prefix="/api", tags=["traces"])

MAX_TELEMETRY_ROWS = 5000  # per answer: ask for a larger `every` (or a shorter range)
MAX_TICK = 2**40  # beyond any mission the limits allow; a bigger number is refused

T = TypeVar("T")
Tick = Annotated[int, Query(ge=0, le=MAX_TICK)]


async def _off_loop(fn: Callable[[], T]) -> T:
    return await asyncio.to_thread(fn)


async def _json_off_loop(fn: Callable[[], Any]) -> Response:
    """``fn``'s answer (plain JSON data, as the store holds it) encoded in the same worker
    thread: a seek's picture holds thousands of numbers, too many for
    ``jsonable_encoder`` on the event loop."""

    def encode() -> bytes:
        return json.dumps(fn(), separators=(",", ":"), allow_nan=False).encode()

    return Response(await asyncio.to_thread(encode), media_type="application/json")


def _row(reader: TraceReader, run_id: str) -> dict[str, Any]:
    """The run's record by its exact id, or 404 naming it."""
    try:
        return reader.run(run_id, prefix=False)
    except ExecutiveError as exc:
        raise UnknownRun(str(exc)) from None


def _last_tick(reader: TraceReader, row: dict[str, Any]) -> int:
    """The last tick the run has stored (a running run: so far)."""
    ticks = (row.get("outcome") or {}).get("ticks")
    if ticks:
        return int(ticks) - 1
    last = reader.telemetry_at(row["run_id"], MAX_TICK)
    return max(int(row.get("last_tick") or 0), last["tick"] if last else 0)


def _range(
    first: int, last: int | None, end: int, field: str = "from", where: str = "query"
) -> tuple[int, int]:
    """``first``..``last`` checked against the run's stored ticks ``0..end`` (``field``
    names ``first`` in an error)."""
    if first > end:
        raise BadRange(field, f"tick {first} is past the run's last stored tick {end}", where)
    last = end if last is None else min(last, end)
    if last < first:
        raise BadRange("to", f"must be at least from ({first}), got {last}")
    return first, last


@router.get("/runs", summary="Recorded runs, newest first, paged")
async def runs(
    traces: TraceStoreDep,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=10**9)] = 0,
    status: Annotated[str | None, Query(pattern="^(ended|interrupted|crashed|running)$")] = None,
    scenario: Annotated[str | None, Query(max_length=200)] = None,
) -> dict[str, Any]:
    """The runs of the trace store summarised (id, scenario, started, duration, status,
    points, drones lost, replans, engine, parent run), newest first; `status` and `scenario`
    (part of the scenario file's name) filter, `limit` and `offset` page."""
    reader = traces.reader
    rows = await _off_loop(
        lambda: reader.listing(limit=limit, offset=offset, status=status, scenario=scenario)
    )
    return jsonable_encoder({"runs": rows, "limit": limit, "offset": offset})


@router.get("/runs/{run_id}", summary="One run and its summary")
async def run(run_id: str, traces: TraceStoreDep) -> dict[str, Any]:
    """One run by its exact id: its record, its last stored tick, plan versions (without
    their solutions), its last 500 events with the total count, its agent runs (without
    their raw output), and whether its trace is whole (`trace`: `complete`, and `gaps`
    naming the missing tick ranges: a replay of an incomplete trace is not exact)."""
    reader = traces.reader

    def load() -> dict[str, Any]:
        """Everything the answer needs, read in one worker thread."""
        row = _row(reader, run_id)
        rid = row["run_id"]
        versions = [
            {k: v for k, v in pv.items() if k != "solution"}
            | {"points": (pv.get("solution") or {}).get("total_points")}
            for pv in reader.plan_versions(rid)
        ]
        events = reader.events(rid)
        from executive.traces.completeness import check

        agent_runs = [
            {k: v for k, v in a.items() if k != "raw_output"} for a in reader.agent_runs(rid)
        ]
        whole = check(reader, row)
        return {
            "run": row,
            "trace": {
                "complete": whole.complete,
                "gaps": whole.describe(),
                "missing": whole.missing,
            },
            "last_tick": _last_tick(reader, row),
            "plan_versions": versions,
            "events_count": len(events),
            "events": events[-500:],
            "agent_runs": agent_runs,
        }

    return jsonable_encoder(await _off_loop(load))


@router.get("/runs/{run_id}/telemetry", summary="Stored telemetry in a tick range")
async def telemetry(
    run_id: str,
    traces: TraceStoreDep,
    start: Annotated[int, Query(alias="from", ge=0, le=MAX_TICK)] = 0,
    end: Annotated[int | None, Query(alias="to", ge=0, le=MAX_TICK)] = None,
    every: Annotated[int, Query(ge=1, le=10**6)] = 1,
) -> Response:
    """Telemetry rows (tick, drones) with `from` <= tick <= `to`, only those on multiples
    of `every` ticks; at most MAX_TELEMETRY_ROWS rows per answer."""
    reader = traces.reader

    def load() -> dict[str, Any]:
        row = _row(reader, run_id)
        first, last = _range(start, end, _last_tick(reader, row))
        stored = int(((row.get("config") or {}).get("policy") or {}).get("telemetry_every", 5))
        rows_max = (last - first) // max(every, stored) + 1
        if rows_max > MAX_TELEMETRY_ROWS:
            need = -(-(last - first + 1) // MAX_TELEMETRY_ROWS)
            raise BadRange(
                "every",
                f"{rows_max:,} rows at most from {first} to {last}; the limit is "
                f"{MAX_TELEMETRY_ROWS:,}: ask for every >= {need} or a shorter range",
            )
        rows = reader.telemetry_range(row["run_id"], first, last, every=every)
        return {"run_id": row["run_id"], "from": first, "to": last, "every": every, "rows": rows}

    return await _json_off_loop(load)


@router.get("/runs/{run_id}/events", summary="Stored events in a tick range, and markers")
async def events(
    run_id: str,
    traces: TraceStoreDep,
    start: Annotated[int, Query(alias="from", ge=0, le=MAX_TICK)] = 0,
    end: Annotated[int | None, Query(alias="to", ge=0, le=MAX_TICK)] = None,
) -> Response:
    """Events with `from` <= tick <= `to` in the order they were recorded, and the
    playback bar's markers among them (edits, detections, losses, replans, commits,
    reviews, safety actions)."""
    reader = traces.reader

    def load() -> dict[str, Any]:
        from executive.traces import analysis

        row = _row(reader, run_id)
        first, last = _range(start, end, _last_tick(reader, row))
        rows = reader.events_range(row["run_id"], first, last)  # public for the public
        return {
            "run_id": row["run_id"],
            "from": first,
            "to": last,
            "events": rows,
            "markers": analysis.markers(rows),
        }

    return await _json_off_loop(load)


@router.get("/runs/{run_id}/state", summary="The whole picture at a tick")
async def state(run_id: str, traces: TraceStoreDep, tick: Tick) -> Response:
    """The scene at the end of `tick` as the live view shows it: targets, SAMs, each
    drone's position, fuel, status, route and flown trail, the plan in force, the mode.
    Read from the nearest stored snapshot, the events since and the stored telemetry."""
    reader = traces.reader

    def load() -> dict[str, Any]:
        from executive.traces import timeline

        row = _row(reader, run_id)
        _range(tick, tick, _last_tick(reader, row), "tick")
        scene = timeline.state_at(reader, row, tick)
        return scene if traces.truth else (public_scene(scene) or scene)

    return await _json_off_loop(load)


@router.get("/runs/{run_id}/plans", summary="Every plan version and what it changed")
async def plans(run_id: str, traces: TraceStoreDep) -> Response:
    """The plan history: each version's status (draft, committed, rejected, stale,
    rebased, superseded), trigger, latency, points and planned fuel, the drones whose route
    changed against the plan in force before it, and each drone's planned path."""
    reader = traces.reader

    def load() -> dict[str, Any]:
        from executive.traces import analysis

        row = _row(reader, run_id)
        return {"run_id": row["run_id"], "plans": analysis.plan_history(reader, row["run_id"])}

    return await _json_off_loop(load)


@router.get("/runs/{run_id}/series", summary="The run's charts over time")
async def series(
    run_id: str, traces: TraceStoreDep, points: Annotated[int, Query(ge=10, le=5000)] = 600
) -> Response:
    """Points collected and planned over time, fuel per drone with the policy's reserve,
    and each planning round's latency, sampled at about `points` ticks."""
    reader = traces.reader

    def load() -> dict[str, Any]:
        from executive.traces import analysis

        row = _row(reader, run_id)
        return {"run_id": row["run_id"], **analysis.series(reader, row, points=points)}

    return await _json_off_loop(load)


class ForkRequest(BaseModel):
    """Where to fork a stored run: the end of this tick."""

    model_config = ConfigDict(extra="forbid", strict=True)

    tick: int = Field(ge=0, le=MAX_TICK, description="the fork begins at the end of this tick")


@router.post(
    "/runs/{run_id}/fork",
    status_code=202,
    summary="Fork a stored run at a tick, as a new live run",
    dependencies=[Depends(require_token)],
)
async def fork(
    run_id: str, body: ForkRequest, traces: TraceStoreDep, context: ContextDep, request: Request
) -> dict[str, Any]:
    """Start a new live run from the run's exact state at the end of `tick` (its inputs
    re-executed to there), recorded with the run as its parent; answers its `run_id` and
    the `url` of its live page. One at a time: while a fork starts, another is a 409."""
    from executive.errors import ExecutiveError

    reader = traces.reader

    def check() -> str:
        row = _row(reader, run_id)
        _range(body.tick, body.tick, _last_tick(reader, row), "tick", "body")
        return str(row["run_id"])

    parent = await _off_loop(check)
    if context.forks is None:
        raise CannotFork("this dashboard cannot start runs: use isr fork RUN --at TIME")
    if context.fork_starting is not None:
        was, at = context.fork_starting
        raise CannotFork(
            f"a fork is already starting (run {was[:8]} at tick {at}): wait for its page"
        )
    context.fork_starting = (parent, body.tick)
    try:
        back = str(request.base_url).rstrip("/")
        started = await context.forks(parent, body.tick, back_url=back)
    except ExecutiveError as exc:
        raise CannotFork(str(exc)) from None
    finally:
        context.fork_starting = None
    return jsonable_encoder({"parent_run_id": parent, "tick": body.tick, **started})


@router.get("/compare", summary="Two stored runs side by side")
async def compare(
    traces: TraceStoreDep,
    a: Annotated[str, Query(max_length=64, description="a run id")],
    b: Annotated[str, Query(max_length=64, description="another run id")],
    points: Annotated[int, Query(ge=10, le=2000)] = 400,
) -> Response:
    """Outcome side by side (points, drones lost, fuel used, replans, ticks), the first tick
    where the recorded states diverge, and both runs' flown tracks (about `points` per
    drone) and final scenes, to overlay on one map."""
    reader = traces.reader

    def load() -> dict[str, Any]:
        from executive.traces import analysis, timeline

        rows = [_row(reader, run_a) for run_a in (a, b)]
        side = analysis.compare(reader, rows[0], rows[1])
        for key, row in zip(("a", "b"), rows):
            end = _last_tick(reader, row)
            scene = timeline.state_at(reader, row, end)
            side[key]["tracks"] = analysis.tracks(reader, row, end, points=points)
            side[key]["scene"] = scene if traces.truth else (public_scene(scene) or scene)
        return side

    return await _json_off_loop(load)
