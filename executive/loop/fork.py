"""An executive that begins where a traced run was at a tick (``executive.traces.fork``).

``start_forked(executive, fork)`` stands in for the first plan of ``Executive.start``: it
records the new run (``parent_run_id``, ``config.fork``), copies the parent's trace up to the
fork tick as the fork's own, re-executes the parent's inputs from tick 0 to the fork tick in
a worker thread (never on the event loop), checks the world against the parent's state hash
there, and takes over the plan in force and the pause. The loop then runs on from the next
tick like any run: what is decided from then on is the fork's own.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from executive.contracts import PlanVersionRecord, RunRecord, TraceRecord
from executive.errors import ExecutiveError
from executive.traces.codec import input_from_json
from executive.traces.fork import ForkPoint
from executive.traces.sinks import backlog, drain
from planner.intent import intent_of
from planner.model import Solution
from sim import Sim

if TYPE_CHECKING:
    from executive.loop.loop import Executive

__all__ = ["start_forked"]


def _advance(sim: Sim, until: int, check_tick: int | None) -> str | None:
    """Step ``sim`` through tick ``until``; the state hash at ``check_tick``."""
    seen = None
    while sim.tick <= until:
        result = sim.step()
        if result.tick == check_tick:
            seen = result.state_hash
    return seen


def _flown(record: TraceRecord) -> Solution | None:
    """A copied plan version that flew (committed, or committed then superseded), else None."""
    if not isinstance(record, PlanVersionRecord) or not record.solution:
        return None
    if record.status not in ("committed", "superseded"):
        return None
    return Solution.model_validate(record.solution)


async def start_forked(executive: Executive, fork: ForkPoint) -> Solution | None:
    """Begin ``executive`` at the end of ``fork.tick``; the plan in force (None if none)."""
    sink, run_id = executive.sink, executive.run_id
    started = time.perf_counter()
    sink.emit(
        RunRecord(
            run_id,
            executive.scenario.model_dump(mode="json", by_alias=True),
            executive.seed,
            executive.options.record(),
            parent_run_id=fork.parent_id,
        )
    )
    copied = 0
    for record in fork.records(run_id):
        sink.emit(record)
        if executive.recorder.first_plan is None:
            # the parent's first plan is the one this run's past started with
            executive.recorder.first_plan = _flown(record)
        copied += 1
        if copied % 512 == 0 and backlog(sink) >= 0.5:
            await drain(sink)  # the writer catches up; nothing of the past is dropped
    fork.close()
    sim = Sim(executive.scenario, None, hash_every=executive.policy.hash_every)
    for row in fork.inputs:
        if row["kind"] in ("edit", "command") and row.get("source") != "timeline":
            sim.submit(input_from_json(row["kind"], row["payload"]))
    seen = await asyncio.to_thread(_advance, sim, fork.tick, fork.check_tick)
    if fork.check_hash is not None and seen != fork.check_hash:
        raise ExecutiveError(
            f"the fork does not rebuild run {fork.parent_id} at tick {fork.check_tick}: "
            f"state hash {seen} instead of {fork.check_hash} (was the scenario changed "
            "before the fork tick?)"
        )
    executive.adopt(sim, fork)
    executive.recorder.event(
        fork.tick,
        "FORKED",
        {
            "parent": fork.parent_id,
            "tick": fork.tick,
            "checked_tick": fork.check_tick,
            "records_copied": copied,
            "rebuilt_s": round(time.perf_counter() - started, 3),
            "paused": fork.paused,
        },
    )
    if fork.plan is None:
        return None
    solution = Solution.model_validate(fork.plan["solution"])
    stored = fork.plan.get("intent")
    intent = {d: tuple(ts) for d, ts in stored.items()} if stored else intent_of(solution)
    executive.rounds.take_over(fork.plan["plan_id"], solution, intent, fork.plan["ends"])
    return solution
