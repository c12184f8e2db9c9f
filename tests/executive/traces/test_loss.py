"""Traces are never lost silently: as fast as possible the run waits for the writer
(nothing dropped, whatever the queue's size); paced, what a full queue drops is counted,
raised as an event and reported; a run's row carries a heartbeat, so a run that died
without an end record reads as crashed."""

from __future__ import annotations

import asyncio
import time

from executive.loop import Executive, Policy
from executive.loop.options import LoopOptions
from executive.planning.algorithmic import AlgorithmicPlanner
from executive.traces import TraceReader, TraceWriter
from executive.traces.reader import STALE_S, effective_status
from executive.traces.sinks import ListSink, TeeSink
from mission.config import RunConfig
from mission.session import run_mission
from planner.scenario import load_scenario
from tests.conftest import SCENARIOS, short_demo


def _run(url: str, *, speed: float | None, max_queue: int, until: int | None = None):
    listed = ListSink()
    with TraceWriter(url, max_queue=max_queue, flush_interval=0.05) as writer:
        executive = Executive(
            load_scenario(SCENARIOS / "demo.json"),
            planner=AlgorithmicPlanner(iterations=200),
            sink=TeeSink(writer, listed),
            options=LoopOptions(policy=Policy(replan=False, telemetry_every=1)),
        )
        report = asyncio.run(executive.run(speed, until=until))
        assert writer.flush(30)
    return executive, report, listed


def test_as_fast_as_possible_the_run_waits_for_the_writer(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    # 8,000 ticks of telemetry (of the demo's 33,900: the same back-pressure, a fifth of
    # the rows to write) through a queue of 64, far smaller than the run
    executive, report, _ = _run(url, speed=None, max_queue=64, until=8000)
    assert report.ticks == 8000
    assert report.trace_dropped == 0
    reader = TraceReader(url)
    last = reader.last_telemetry(executive.run_id)
    assert last is not None and last["tick"] == report.ticks - 1  # to the very last tick
    events = reader.events(executive.run_id)
    assert len(events) == sum(1 for r in _events(executive)) and events  # none lost
    reader.close()


def test_paced_losses_are_counted_raised_and_reported(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    # A queue of 3 with a writer that wakes every 50 ms: at 2000x some telemetry is lost.
    _, report, listed = _run(url, speed=2000.0, max_queue=3, until=4000)
    assert report.trace_dropped > 0
    assert report.to_dict()["trace_dropped"] == report.trace_dropped
    raised = [r for r in listed.records if getattr(r, "kind", "") == "TRACE_DROPPED"]
    assert raised and sum(r.payload["dropped"] for r in raised) <= report.trace_dropped
    assert raised[-1].payload["total"] <= report.trace_dropped


def test_a_run_that_stopped_beating_reads_as_crashed(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    config = RunConfig(trace_url=url, agents=False, policy=Policy(replan=False))
    # the demo ended by its max_duration after 300 s: a run that ended properly all the same
    report = asyncio.run(run_mission(load_scenario(short_demo(tmp_path)), config))
    reader = TraceReader(url)
    row = reader.run(report.run_id)
    # ended properly: "ended" whatever time it is, and the last tick stored
    assert row["status"] == "ended" and row["last_tick"] == report.ticks - 1
    assert effective_status(row, now=time.time() + 10 * STALE_S) == "ended"
    # a row still "running" whose heartbeat is old is a crashed run
    alive = {**row, "status": "running", "last_seen": time.time()}
    assert effective_status(alive) == "running"
    assert effective_status(alive, now=time.time() + STALE_S + 1) == "crashed"
    reader.close()


def _events(executive: Executive):
    """Every event the run recorded (the recorder keeps the last 500 only: count in the
    list sink instead)."""
    return [r for r in executive.sink.sinks[1].records if type(r).__name__ == "EventRecord"]
