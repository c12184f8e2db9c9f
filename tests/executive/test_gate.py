"""The tick gate: a paced tick closes it; the trace writer waits for it to open before it
writes, so a tick that records hundreds of inputs is not slowed by the writer beside it."""

from __future__ import annotations

import asyncio
import threading
import time

from executive.contracts import EventRecord
from executive.gate import GATE, TickGate
from executive.loop import Executive, Policy
from executive.loop.options import LoopOptions
from executive.planning.algorithmic import AlgorithmicPlanner
from executive.traces import TraceWriter
from executive.traces import writer as writer_module
from executive.traces.sinks import ListSink
from planner.scenario import load_scenario
from tests.conftest import SCENARIOS


def test_the_gate_is_closed_until_the_last_of_concurrent_ticks_ends():
    gate = TickGate()
    assert gate.is_open and gate.wait(0)
    inside, leave = threading.Event(), threading.Event()

    def other_tick() -> None:
        with gate.ticking():
            inside.set()
            leave.wait(10)

    other = threading.Thread(target=other_tick)
    other.start()
    assert inside.wait(10)
    with gate.ticking():
        assert not gate.is_open
    assert not gate.is_open and not gate.wait(0.01)  # the other tick still runs
    leave.set()
    other.join(10)
    assert gate.is_open and gate.wait(0)


def test_an_exception_in_a_tick_opens_the_gate():
    gate = TickGate()
    try:
        with gate.ticking():
            raise RuntimeError("the tick failed")
    except RuntimeError:
        pass
    assert gate.is_open


def test_the_writer_waits_for_a_tick_to_end_then_writes_everything(tmp_path, monkeypatch):
    # no bounded wait here: the writer must not pass a closed gate however slow the test is
    monkeypatch.setattr(writer_module, "_GATE_WAIT_S", 60.0)
    writer = TraceWriter(f"sqlite:///{tmp_path / 't.db'}", flush_interval=0.01)
    writer.start()
    try:
        with GATE.ticking():
            for i in range(300):
                writer.emit(EventRecord("r1", i, "x", {"i": i}))
            time.sleep(0.2)  # the writer, woken by the first record, waits
            assert writer.written == 0
        assert writer.flush(10)
        assert writer.written == 300 and writer.dropped == 0
    finally:
        writer.close()


def test_a_paced_run_closes_the_gate_for_each_tick_and_only_then():
    seen: list[bool] = []

    def executive() -> Executive:
        ex = Executive(
            load_scenario(SCENARIOS / "demo.json"),
            planner=AlgorithmicPlanner(iterations=200),
            sink=ListSink(),
            options=LoopOptions(policy=Policy(replan=False)),
        )
        ex.watch(on_tick=lambda result: seen.append(GATE.is_open))
        return ex

    asyncio.run(executive().run(50.0, until=20))
    assert len(seen) == 20 and not any(seen)
    assert GATE.is_open
    seen.clear()
    asyncio.run(executive().run(None, until=20))  # as fast as possible: never closed
    assert len(seen) == 20 and all(seen)
