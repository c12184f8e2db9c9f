"""The pacer: schedule arithmetic over a fake clock (no test here sleeps for real)."""

from __future__ import annotations

import math

import pytest

from sim import MAX_SPEED, MIN_SPEED, Pacer, Sim, SimError, run_paced
from tests.sim.conftest import line_world

HZ = 20.0


class FakeClock:
    """Time moves only when a test (or a sleep) moves it."""

    def __init__(self, t: float = 100.0) -> None:
        self.t = t
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0
        self.sleeps.append(seconds)
        self.t += seconds


def started_pacer(speed: float | None = 1.0, tick: int = 0) -> tuple[Pacer, FakeClock]:
    clock = FakeClock()
    pacer = Pacer(HZ, speed, clock=clock)
    pacer.start(tick)
    return pacer, clock


def test_ticks_are_due_one_period_apart_from_the_start():
    pacer, clock = started_pacer(1.0, tick=5)
    assert pacer.period == pytest.approx(0.05)
    assert pacer.due(5) == 100.0 and pacer.due(7) == pytest.approx(100.1)
    assert pacer.delay(5) == 0.0 and pacer.delay(6) == pytest.approx(0.05)
    clock.t += 0.03
    assert pacer.delay(6) == pytest.approx(0.02) and pacer.slack(6) == pytest.approx(0.02)
    clock.t += 0.05
    assert pacer.delay(6) == 0.0 and pacer.slack(6) == pytest.approx(-0.03)  # late


def test_a_result_is_taken_within_a_time_if_ready_by_the_last_tick_due_within_it():
    pacer, clock = started_pacer(1.0, tick=5)  # tick 5 due at 100.0, a tick every 50 ms
    clock.t += 0.001  # tick 5 runs: tick 15 is due 0.499 s from now
    # within 0.5 s with 5 ms for the tick's lateness: tick 14's due time, 0.449 s from now
    assert pacer.within(5, 0.5, 0.005) == pytest.approx(0.449)
    assert pacer.within(5, 0.5) == pytest.approx(0.499)  # no margin: tick 15 is in time
    clock.t += 0.02  # later in the same tick: tick 15 is 0.479 s away, tick 14 0.429 s
    assert pacer.within(5, 0.5, 0.005) == pytest.approx(0.479)
    # sooner than the next tick: the next tick's, the earliest anything is taken
    assert pacer.within(5, 0.01, 0.005) == pytest.approx(0.029)
    clock.t += 0.1  # running late: the next tick is overdue, taken at once
    assert pacer.within(5, 0.01) == 0.0
    fast = Pacer(HZ, None, clock=clock)
    fast.start(0)
    assert fast.within(0, 0.5, 0.005) == 0.5  # as fast as possible: no schedule


def test_each_tick_start_records_its_lateness_and_the_worst():
    pacer, clock = started_pacer(2.0)  # period 25 ms
    assert pacer.started(0) == 0.0
    clock.t = 100.025 + 0.004  # tick 1 starts 4 ms late
    assert pacer.started(1) == pytest.approx(0.004)
    clock.t = 100.05 - 0.010  # tick 2 starts early: no lateness
    assert pacer.started(2) == 0.0
    clock.t = 100.075 + 0.020  # 20 ms late: still within a period
    pacer.started(3)
    assert pacer.lateness == pytest.approx([0.0, 0.004, 0.0, 0.020])
    assert pacer.worst[1] == 3 and pacer.worst[0] == pytest.approx(0.020)
    assert pacer.overruns == 0
    assert pacer.due(4) == pytest.approx(100.1)  # the schedule held


def test_worst_is_none_yet_before_any_late_tick():
    pacer, _ = started_pacer()
    assert pacer.worst == (0.0, -1) and pacer.lateness == [] and pacer.overruns == 0


def test_a_tick_more_than_a_period_late_is_an_overrun_and_the_schedule_restarts_from_now():
    pacer, clock = started_pacer(1.0)  # period 50 ms
    pacer.started(0)
    clock.t = 100.0 + 0.5  # a stall: tick 1 was due at 100.05
    assert pacer.started(1) == pytest.approx(0.45)
    assert pacer.overruns == 1 and pacer.worst[1] == 1
    # No burst to catch up: tick 2 is one period after tick 1 really started.
    assert pacer.due(2) == pytest.approx(100.55)
    assert pacer.delay(2) == pytest.approx(0.05)
    clock.t = 100.55
    assert pacer.started(2) == 0.0 and pacer.overruns == 1


def test_as_fast_as_possible_never_waits_and_records_nothing():
    pacer, clock = started_pacer(None)
    assert pacer.period is None and pacer.due(10) is None
    for tick in range(5):
        clock.t += 1.0  # however long a tick takes
        assert pacer.delay(tick) == 0.0 and pacer.slack(tick) == 0.0
        assert pacer.started(tick) == 0.0
    assert pacer.lateness == [] and pacer.overruns == 0 and pacer.worst == (0.0, -1)


def test_a_new_speed_takes_effect_at_once_from_the_next_tick():
    pacer, clock = started_pacer(0.0001)  # 500 s a tick
    pacer.started(0)
    assert pacer.delay(1) == pytest.approx(500.0)
    clock.t += 2.0  # the caller sleeps; the operator speeds up; the caller's sleep is cut
    pacer.set_speed(10.0)
    assert pacer.delay(1) == 0.0  # not the old due time
    assert pacer.started(1) == 0.0
    assert pacer.delay(2) == pytest.approx(1 / (HZ * 10.0))
    assert pacer.overruns == 0 and pacer.lateness == [0.0, 0.0]


def test_slowing_down_mid_tick_makes_the_next_tick_due_now_then_one_new_period_apart():
    pacer, clock = started_pacer(10.0)
    pacer.started(0)
    clock.t += 0.001
    pacer.set_speed(1.0)
    assert pacer.due(1) == pytest.approx(100.001)
    assert pacer.due(2) == pytest.approx(100.051)


def test_the_same_speed_again_changes_nothing():
    pacer, clock = started_pacer(1.0)
    pacer.started(0)
    clock.t += 0.02
    pacer.set_speed(1.0)
    assert pacer.due(1) == pytest.approx(100.05)


def test_switching_between_paced_and_as_fast_as_possible():
    pacer, clock = started_pacer(None)
    for tick in range(3):
        pacer.started(tick)
        clock.t += 0.001
    pacer.set_speed(1.0)  # from the next tick (3), due now
    assert pacer.delay(3) == 0.0 and pacer.due(4) == pytest.approx(clock.t + 0.05)
    pacer.started(3)
    pacer.set_speed(None)
    assert pacer.delay(4) == 0.0 and pacer.due(4) is None
    assert pacer.lateness == [0.0]


def test_a_speed_change_before_start_waits_for_the_start():
    clock = FakeClock()
    pacer = Pacer(HZ, None, clock=clock)
    pacer.set_speed(2.0)
    clock.t += 7.0
    pacer.start(3)
    assert pacer.due(3) == 107.0 and pacer.due(4) == pytest.approx(107.025)


@pytest.mark.parametrize("speed", [0.0, -1.0, math.nan, math.inf, -math.inf])
def test_a_speed_that_is_not_a_positive_number_is_refused(speed):
    with pytest.raises(SimError, match="speed must be a positive number or None"):
        Pacer(HZ, speed)


@pytest.mark.parametrize("speed", [MIN_SPEED / 2, MAX_SPEED * 2, 1e9])
def test_a_speed_out_of_range_is_refused_and_the_pace_stays(speed):
    with pytest.raises(SimError, match=r"within \[0.0001, 10000\]"):
        Pacer(HZ, speed)
    pacer, _ = started_pacer(1.0)
    with pytest.raises(SimError):
        pacer.set_speed(speed)
    assert pacer.speed == 1.0


@pytest.mark.parametrize("speed", [MIN_SPEED, 1.0, MAX_SPEED, None])
def test_the_range_is_inclusive(speed):
    assert Pacer(HZ, speed).speed == speed


def test_the_schedule_needs_a_start():
    pacer = Pacer(HZ, 1.0, clock=FakeClock())
    for ask in (pacer.delay, pacer.slack, pacer.due, pacer.started):
        with pytest.raises(SimError, match="start"):
            ask(0)


def test_the_default_clock_is_the_wall_clock():
    pacer = Pacer(HZ, 1.0)
    pacer.start(0)
    assert 0.0 <= pacer.delay(1) <= 0.05  # real time moves on; nothing here sleeps


# ----- run_paced on the pacer ---------------------------------------------------------------


def test_run_paced_restarts_after_a_stall_instead_of_bursting():
    clock = FakeClock(0.0)
    sim = Sim(line_world())

    def stall(result):
        if result.tick == 10:
            clock.t += 1.0  # one tick takes a second: twenty periods

    report = run_paced(sim, 1.0, until=30, on_tick=stall, clock=clock)
    assert report.ticks == 30 and report.overruns == 1
    assert report.worst_overrun == pytest.approx(1.0 - 0.05)
    # Every other tick slept a full period; right after the stall none was skipped.
    assert len(clock.sleeps) == 29 and all(s == pytest.approx(0.05) for s in clock.sleeps)
    assert report.wall_seconds == pytest.approx(29 * 0.05 + 1.0)


def test_run_paced_refuses_a_speed_out_of_range():
    with pytest.raises(SimError):
        run_paced(Sim(line_world()), MAX_SPEED * 10)
