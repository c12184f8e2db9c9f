"""Python's cyclic collector under a paced run (``executive.loop.collector``): off for the
run's ticks, with what the set-up made frozen; the young generations collected between
ticks; put back as it was when the run ends. A run as fast as possible leaves it alone."""

from __future__ import annotations

import asyncio
import gc

from executive.loop import Executive, Policy
from executive.loop.collector import Collector
from executive.loop.options import LoopOptions
from executive.planning.algorithmic import AlgorithmicPlanner
from executive.traces.sinks import ListSink
from planner.scenario import load_scenario
from tests.conftest import SCENARIOS


def _executive() -> Executive:
    return Executive(
        load_scenario(SCENARIOS / "demo.json"),
        planner=AlgorithmicPlanner(iterations=200),
        sink=ListSink(),
        options=LoopOptions(policy=Policy(replan=False)),
    )


class _Kept:
    """One object of a burst. Not a list: CPython hands out a list from its free list (up to
    80 that earlier code freed) without counting it in ``gc.get_count()``, so a burst of
    lists counts a few short of its length, as many as the test process freed before."""

    def __init__(self, k: int) -> None:
        self.k = k


def _fly(executive: Executive, speed: float | None, ticks: int) -> list[tuple[bool, bool]]:
    """Run ``ticks`` ticks; per tick: was the automatic collector on, was anything frozen."""
    seen: list[tuple[bool, bool]] = []
    executive.watch(on_tick=lambda result: seen.append((gc.isenabled(), gc.get_freeze_count() > 0)))
    report = asyncio.run(executive.run(speed, until=ticks))
    assert report.ticks == ticks
    return seen


def test_a_paced_run_collects_between_ticks_and_puts_the_collector_back():
    assert gc.isenabled() and gc.get_freeze_count() == 0
    executive = _executive()
    hz = executive.scenario.sim.tick_hz
    ticks = int(3 * hz)  # three seconds of mission: the middle pass is due every second
    seen = _fly(executive, 1000.0, ticks)
    assert seen == [(False, True)] * ticks  # off for every tick, the set-up frozen
    assert gc.isenabled() and gc.get_freeze_count() == 0  # as it was
    collector = executive.collector
    assert collector is not None
    passes = collector.stats.passes
    # one pass after every tick: the youngest generation, the middle one at least once (a
    # second late at most when the ticks leave no slack), no full pass within 10 minutes
    assert sum(passes) == ticks
    assert passes[0] > 0 and passes[1] >= 1 and passes[2] == 0


def test_a_run_as_fast_as_possible_leaves_the_collector_alone():
    executive = _executive()
    seen = _fly(executive, None, 20)
    assert seen == [(True, False)] * 20
    assert executive.collector is None


def test_paced_runs_sharing_the_process_put_it_back_when_the_last_ends():
    was = gc.isenabled()
    gc.disable()  # as the host had it: the collector is put back off
    try:
        first, second = Collector(20.0), Collector(20.0)
        first.start()
        second.start()
        first.stop()
        assert not gc.isenabled() and gc.get_freeze_count() > 0  # the second still runs
        second.after_tick(1.0)
        second.stop()
        assert not gc.isenabled() and gc.get_freeze_count() == 0
        assert second.stats.passes == [1, 0, 0]
    finally:
        gc.unfreeze()
        if was:
            gc.enable()


def test_a_full_pass_comes_when_due_and_freezes_what_survives_it():
    collector = Collector(20.0, middle_every_s=0.1, full_every_s=0.5)  # 2 and 10 ticks
    collector.start()
    try:
        for _ in range(9):
            collector.after_tick(1.0)
        frozen = gc.get_freeze_count()
        kept = [[] for _ in range(1000)]  # lives on: frozen by the full pass
        collector.after_tick(1.0)  # tick 10: the full pass
        assert gc.get_freeze_count() >= frozen + len(kept)
        collector.after_tick(1.0)  # tick 11: the young generation only
        assert collector.stats.passes == [6, 4, 1]  # ticks 2, 4, 6, 8 middle; 10 full
    finally:
        collector.stop()
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_pass_waits_for_slack_but_not_forever():
    collector = Collector(20.0, middle_every_s=0.1, full_every_s=None)  # middle every 2
    collector.start()
    try:
        collector.after_tick(1.0)
        collector.after_tick(0.001)  # due, no slack: the young generation only
        assert collector.stats.passes == [2, 0, 0]
        collector.after_tick(0.001)
        collector.after_tick(0.001)  # a whole period late: done anyway
        assert collector.stats.passes == [3, 1, 0]
    finally:
        collector.stop()


def test_a_young_generation_a_worker_filled_is_frozen_not_walked():
    collector = Collector(20.0, middle_every_s=100.0, full_every_s=None, burst=5_000)
    collector.start()
    try:
        collector.after_tick(1.0)
        frozen = gc.get_freeze_count()
        burst = [_Kept(k) for k in range(20_000)]  # a planning worker's burst, kept
        collector.after_tick(1.0)
        assert gc.get_freeze_count() >= frozen + len(burst)
        assert collector.stats.bursts == 1 and collector.stats.burst_objects >= len(burst)
        assert collector.stats.passes == [1, 0, 0]  # frozen, not walked
        few = [[k] for k in range(100)]
        collector.after_tick(1.0)  # a few: walked as before
        assert collector.stats.passes == [2, 0, 0] and len(few) == 100
    finally:
        collector.stop()
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_middle_generation_the_young_passes_filled_is_frozen_not_walked():
    collector = Collector(20.0, middle_every_s=0.1, full_every_s=None, burst_middle=3_000)
    collector.start()  # middle every 2 ticks
    try:
        kept = []
        kept.append([[k] for k in range(2_000)])
        collector.after_tick(1.0)  # young pass: walked (under the young burst)
        kept.append([[k] for k in range(2_000)])
        frozen = gc.get_freeze_count()
        collector.after_tick(1.0)  # middle due: ~4,000 kept by young passes > 3,000
        assert collector.stats.passes == [1, 0, 0]
        assert collector.stats.bursts == 1
        assert gc.get_freeze_count() >= frozen + 2_000
        collector.after_tick(1.0)
        collector.after_tick(1.0)  # middle due again, little kept: walked
        assert collector.stats.passes == [2, 1, 0] and len(kept) == 2
    finally:
        collector.stop()
    assert gc.isenabled() and gc.get_freeze_count() == 0
