"""A paced run's background work runs below its tick (``executive.loop.workers``): the
planning round's threads, and the threads they start, one priority step down (Linux
threads' own priorities); the loop's thread, the tick's, keeps its own."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Callable
from typing import TypeVar

import pytest

from executive.contracts import HumanCommand, PlanOutcome, PlanRequest
from executive.loop import Executive, Policy, workers
from executive.loop.options import LoopOptions
from executive.loop.workers import STEP, install_workers, lower_this_thread
from executive.planning.algorithmic import AlgorithmicPlanner
from executive.traces.sinks import ListSink
from planner.scenario import load_scenario
from tests.conftest import SCENARIOS

T = TypeVar("T")

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="per-thread priorities")


def _priority() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def _in_thread(job: Callable[[], T]) -> T:
    """``job()`` in a thread started here (as a compile starts its pool)."""
    out: list[T] = []
    thread = threading.Thread(target=lambda: out.append(job()))
    thread.start()
    thread.join()
    return out[0]


def test_a_thread_lowers_itself_alone_and_the_threads_it_starts_inherit_it():
    mine = _priority()

    def lowered() -> tuple[bool, int, int]:
        ok = lower_this_thread()
        return ok, _priority(), _in_thread(_priority)

    ok, own, child = _in_thread(lowered)
    assert ok
    assert own == child == min(19, mine + STEP)
    assert _priority() == mine  # the caller's thread (and the process) keep theirs


def test_a_priority_the_os_refuses_is_said_once_and_changes_nothing(monkeypatch, caplog):
    def refuse(*args: object) -> None:
        raise PermissionError("not permitted")

    monkeypatch.setattr(os, "setpriority", refuse)
    monkeypatch.setattr(workers, "_refused", False)
    mine = _priority()
    with caplog.at_level("WARNING", logger="executive.loop.workers"):
        assert _in_thread(lower_this_thread) is False
        assert _in_thread(lower_this_thread) is False
    said = [r.getMessage() for r in caplog.records if r.name == "executive.loop.workers"]
    assert len(said) == 1 and "not permitted" in said[0]
    assert _in_thread(_priority) == mine


def test_a_loop_gets_one_pool_whose_threads_run_below_it():
    async def go() -> tuple[int, int, bool]:
        loop = asyncio.get_running_loop()
        pool = install_workers(loop)
        again = install_workers(loop)
        return _priority(), await asyncio.to_thread(_priority), pool is again

    loop_thread, worker, once = asyncio.run(go())
    assert worker == min(19, loop_thread + STEP)
    assert once


class _Recording(AlgorithmicPlanner):
    """Notes the priority its rounds' work runs at, from a thread they start (as a
    compile's pool is started), and the loop thread's."""

    def __init__(self) -> None:
        super().__init__(iterations=200)
        self.seen: list[tuple[int, int]] = []

    async def plan(self, request: PlanRequest) -> PlanOutcome:
        worker = await asyncio.to_thread(_in_thread, _priority)
        self.seen.append((_priority(), worker))
        return await super().plan(request)


def _fly(speed: float | None) -> list[tuple[int, int]]:
    planner = _Recording()
    executive = Executive(
        load_scenario(SCENARIOS / "demo.json"),
        planner=planner,
        sink=ListSink(),
        options=LoopOptions(policy=Policy()),
    )

    async def go() -> None:
        executive.command(HumanCommand("REPLAN"))  # taken at the run's first tick
        report = await asyncio.wait_for(executive.run(speed, until=40), timeout=60)
        assert report.ticks == 40
        assert "operator:REPLAN" in [r.trigger for r in report.replans]

    asyncio.run(go())
    assert len(planner.seen) >= 2
    return planner.seen[1:]  # the run's rounds (the first plan is made before its ticks)


def test_a_paced_runs_planning_rounds_run_below_its_tick():
    rounds = _fly(1.0)  # 2 s at 1x
    assert rounds, "the REPLAN made no round"
    for loop_thread, worker in rounds:
        assert worker == min(19, loop_thread + STEP)


def test_a_run_as_fast_as_possible_leaves_its_threads_as_they_were():
    rounds = _fly(None)
    assert rounds, "the REPLAN made no round"
    for loop_thread, worker in rounds:
        assert worker == loop_thread
