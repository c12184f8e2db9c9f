"""One run of a batch, as a worker process runs it: synchronous, self-contained, traced."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from executive.loop import Executive
from executive.traces.batch import before_flying
from mission.evaluation.policies import EvalTask, accept_after, config_for
from mission.session import run_mission
from planner.bound import upper_bound
from planner.scenario import load_scenario

__all__ = ["run_one"]


def run_one(task: EvalTask) -> dict[str, Any]:
    """Fly ``task`` headless as fast as possible; its key, run id, points and wall time (the
    figures are read back from the trace store). Raises what the run raised.

    Exactly once: a task whose run the store already holds (Dask recomputing a result lost
    with its worker, or a retry) reports that run without flying
    (``executive.traces.batch``); ``stored`` says so."""
    logging.getLogger("executive").setLevel(logging.ERROR)  # failed rounds are counted
    config = config_for(task)
    started = time.perf_counter()
    if config.trace_url is not None and config.batch_key is not None:
        done = before_flying(config.trace_url, config.batch_key)
        if done is not None:
            return {
                "key": task.key,
                "run_id": done["run_id"],
                "points": (done.get("outcome") or {}).get("total_points"),
                "wall_s": round(time.perf_counter() - started, 3),
                "stored": True,
            }
    scenario = load_scenario(task.path)
    if task.policy == "clairvoyant":  # its bound goes with it: the report shows the gap
        bound = f"{upper_bound(scenario):.3f}"
        config = config.model_copy(update={"labels": {**config.labels, "bound": bound}})

    def operator(executive: Executive) -> None:
        accept_after(executive, 30.0)

    hook = operator if task.policy == "review-accept-30s" else None
    report = asyncio.run(run_mission(scenario, config, on_executive=hook))
    if report is None:
        raise RuntimeError(f"{task.key}: the run did not end")
    return {
        "key": task.key,
        "run_id": report.run_id,
        "points": report.outcome.total_points,
        "wall_s": round(time.perf_counter() - started, 3),
        "stored": False,
    }
