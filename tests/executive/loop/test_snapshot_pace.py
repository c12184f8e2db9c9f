"""A paced run's snapshots after a change are spaced by what drawing them costs: at most a
tenth of the run goes to drawing (a swarm's picture takes hundreds of ms of Python in a
worker thread, contending with the tick for the GIL)."""

from __future__ import annotations

import asyncio
import time

from executive.contracts import HumanCommand, SnapshotRecord
from executive.loop import Executive, Policy
from executive.loop.options import LoopOptions
from executive.planning.algorithmic import AlgorithmicPlanner
from executive.traces.sinks import ListSink
from planner.scenario import load_scenario
from tests.conftest import SCENARIOS

DRAW_S = 0.1  # wall seconds a drawing takes


def _slow_picture(executive: Executive):
    tick = executive.sim.tick

    def draw() -> dict:
        time.sleep(DRAW_S)
        return {"tick": tick}

    return draw


def _snapshots(speed: float | None, ticks: int) -> list[int]:
    sink = ListSink()
    executive = Executive(
        load_scenario(SCENARIOS / "demo.json"),
        planner=AlgorithmicPlanner(iterations=200),
        sink=sink,
        options=LoopOptions(policy=Policy(replan=False, snapshot_every=10_000, snapshot_gap=1)),
        snapshot=_slow_picture,
    )

    def something_changed(_result) -> None:
        executive.recorder.changed = True  # a snapshot is wanted after every tick

    executive.watch(on_tick=something_changed)
    asyncio.run(executive.run(speed, until=ticks))
    return [r.tick for r in sink.records if isinstance(r, SnapshotRecord)]


def test_paced_snapshots_after_a_change_wait_ten_times_their_drawing():
    ticks = _snapshots(1.0, 120)  # 6 s at 1x, 20 Hz: a drawing is 2 ticks of mission time
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    assert len(ticks) >= 3
    assert min(gaps[1:]) >= 10 * DRAW_S * 20  # the first gap follows no measured drawing


def test_as_fast_as_possible_every_change_is_drawn_at_once():
    ticks = _snapshots(None, 20)
    assert ticks == list(range(ticks[0], ticks[0] + len(ticks)))  # one after every tick
    assert len(ticks) >= 19


class _SlowPlanner:
    """The algorithmic planner, answering replans 0.3 s late (wall): a round in flight."""

    def __init__(self) -> None:
        self.inner = AlgorithmicPlanner(iterations=200)
        self.replans = 0

    async def plan(self, request):
        outcome = await self.inner.plan(request)
        if request.tick > 0:  # a replan, not the first plan
            await asyncio.sleep(0.3)
            self.replans += 1
        return outcome


def test_a_picture_captured_during_a_round_is_drawn_once_the_round_has_its_plan():
    planner = _SlowPlanner()
    # (a round planning when captured, its plan ready when drawn, the wait in s)
    drawn: list[tuple[bool, bool, float]] = []

    def picture(executive: Executive):
        r = executive.rounds.round
        planning = r is not None and not r.task.done()
        at = time.perf_counter()

        def draw() -> dict:
            ready = r is not None and r.task.done()
            drawn.append((planning, ready, time.perf_counter() - at))
            return {}

        return draw

    executive = Executive(
        load_scenario(SCENARIOS / "demo.json"),
        planner=planner,
        sink=ListSink(),
        options=LoopOptions(policy=Policy(snapshot_every=10_000, snapshot_gap=1)),
        snapshot=picture,
    )

    def every_tick(result) -> None:
        executive.recorder.changed = True  # a snapshot is wanted after every tick
        if result.tick in (10, 40):
            executive.command(HumanCommand("REPLAN"))

    executive.watch(on_tick=every_tick)
    asyncio.run(executive.run(1.0, until=70))
    assert planner.replans == 2
    during = [d for d in drawn if d[0]]
    assert len(during) >= 2  # pictures were taken while each round was planning...
    # ...and drawn once it had its plan (checked, not inferred from a fixed wait: under
    # load a capture may come late in the round)
    assert all(ready for _, ready, _ in during), during
    calm = [wait for flight, _, wait in drawn if not flight]
    assert calm and min(calm) < 0.1  # between rounds, at once
