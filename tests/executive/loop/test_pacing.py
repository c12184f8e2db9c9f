"""The executive paces its ticks with the sim's ``Pacer`` on an injected clock: a fake clock
drives it here, and a speed change wakes a tick waiting on the old pace at once."""

from __future__ import annotations

import asyncio

import pytest

from executive.errors import ExecutiveError
from executive.loop import Executive, Policy
from executive.loop.options import LoopOptions
from executive.planning.algorithmic import AlgorithmicPlanner
from executive.traces.sinks import ListSink
from planner.scenario import load_scenario
from tests.conftest import SCENARIOS

DEMO = SCENARIOS / "demo.json"


class FakeClock:
    """Time moves only when the test says so."""

    def __init__(self) -> None:
        self.t = 1000.0

    def now(self) -> float:
        return self.t


def _executive(clock: FakeClock) -> Executive:
    return Executive(
        load_scenario(DEMO),
        planner=AlgorithmicPlanner(iterations=200),
        sink=ListSink(),
        options=LoopOptions(policy=Policy(replan=False)),
        clock=clock,
    )


def test_a_slow_pace_changed_to_a_fast_one_takes_effect_at_once():
    clock = FakeClock()
    executive = _executive(clock)
    ticks: list[int] = []

    async def go():
        # Each tick "takes" 1 ms of the fake clock; nothing else moves it.
        executive.watch(on_tick=lambda result: setattr(clock, "t", clock.t + 0.001))
        run = asyncio.create_task(executive.run(0.0001, until=40))  # one tick per 500 s
        while executive.last is None:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)  # it now waits for tick 1, due in 500 clock seconds
        ticks.append(executive.sim.tick)
        executive.set_speed(10_000)  # the operator speeds up: no waiting for the old due time
        return await asyncio.wait_for(run, timeout=10)

    report = asyncio.run(go())
    assert ticks == [1]  # stuck on the slow pace until the change...
    assert report.ticks == 40  # ...then ran on at once: 39 ticks in 39 ms of the fake clock


def test_lateness_is_read_on_the_injected_clock():
    clock = FakeClock()
    executive = _executive(clock)

    async def go():
        executive.watch(on_tick=lambda result: setattr(clock, "t", clock.t + 0.08))
        return await executive.run(20.0, until=30)  # period 2.5 ms; each tick "takes" 80 ms

    report = asyncio.run(go())
    # every tick started more than a period late by the fake clock: each is an overrun,
    # and the lateness is what the fake clock says (80 ms less one period), not wall time
    assert report.overruns == 29
    assert report.jitter_ms["max"] == pytest.approx(80 - 2.5, abs=1e-6)


def test_speeds_outside_the_bounds_are_refused():
    executive = _executive(FakeClock())
    with pytest.raises(ExecutiveError, match="speed must be within"):
        executive.set_speed(1e9)
    with pytest.raises(ExecutiveError, match="positive"):
        executive.set_speed(0.0)
