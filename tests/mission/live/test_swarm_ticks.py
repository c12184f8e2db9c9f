"""A swarm mission flown at 1x on the real clock for 15 s and until a replan has committed
(at most 40 s), as ``isr run --live`` flies it (the live host drawing its scene, scene
snapshots in a SQLite trace store, replans), and no tick late by more than a few periods:
the scene and the snapshots are drawn off the tick.

The bounds are generous because the test shares the machine with others (a second pytest
worker, other sessions): the tick's own work (wall time inside ``tick_once``) and the
99th percentile of the lateness within 5 periods (250 ms), and no tick later than 20
periods (1 s: what the issue measured was 2.9-9.5 s late, and a process starved of CPU by
its neighbours can be a few hundred ms late through no fault of its own). The strict
figures (0 overruns, p99 < 5 ms) are ``bench/executive_ticks.py``'s."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from executive.bus import InProcessBus
from executive.contracts import HumanCommand, SnapshotRecord
from executive.loop import Executive
from executive.loop.options import LoopOptions
from executive.loop.policy import Policy
from executive.planning.algorithmic import AlgorithmicPlanner
from executive.traces import TraceReader, TraceWriter
from executive.traces.sinks import ListSink, TeeSink
from mission.live.host import MissionHost
from mission.live.scene import capture_scene
from planner.scenario import parse_scenario
from planner.scenario.template import starter_scenario

DRONES, TARGETS, SAMS = 50, 500, 50
SECONDS = 15.0  # at least; then until a replan has committed (at most LONGEST)
# A round takes ~3 s on a quiet machine; with the suite's 4 workers on 2 cores none
# committed within 90 s once, so the bound is the time spent, and a commit is asked for only
# when the machine gave the round the time: the ticks' promise holds either way.
LONGEST = 40.0
REPLAN_EVERY_S = 5.0
LATE_PERIODS = 5  # the tick's own work, and the lateness's 99th percentile
STALL_PERIODS = 20  # no tick later than this, ever


@pytest.mark.slow
def test_a_swarm_flown_at_1x_with_replans_has_no_tick_late_by_more_than_a_few_periods(
    tmp_path: Path,
) -> None:
    scenario = parse_scenario(starter_scenario(DRONES, TARGETS, SAMS), "<swarm>")
    hz = scenario.sim.tick_hz
    url = f"sqlite:///{tmp_path / 'trace.sqlite'}"
    writer = TraceWriter(url)
    writer.start()
    records = ListSink()
    executive = Executive(
        scenario,
        planner=AlgorithmicPlanner(),  # searches 80 % of the 0.5 s deadline, in a worker
        sink=TeeSink(writer, records),
        # snapshots often (every 2 s, and 0.5 s after any event): the drawing is what the
        # tick used to pay for
        options=LoopOptions(policy=Policy(snapshot_every=40, snapshot_gap=10)),
        snapshot=capture_scene,
    )
    bus = InProcessBus()
    host = MissionHost(executive, bus, scene_every_s=0.25)
    published: list[int] = []  # the ticks of the scenes the host published, in order
    bus_publish = bus.publish

    def publish_on_bus(topic: str, payload: dict) -> None:
        if topic == "scene":
            published.append(payload["tick"])
        bus_publish(topic, payload)

    bus.publish = publish_on_bus  # type: ignore[method-assign]
    every = int(REPLAN_EVERY_S * hz)

    def replan_now_and_then(topic: str, payload: dict) -> None:
        # a REPLAN every few seconds, but not over one still planning: on a starved machine
        # a round can take longer than the gap, and each new REPLAN would supersede it
        tick = payload.get("tick", 0) if topic == "telemetry" else 0
        due = tick >= hz and (tick - hz) % every == 0  # from 1 s on: one has time to commit
        if due and not any(r.status == "planning" for r in executive.replans):
            executive.command(HumanCommand("REPLAN"))
        if tick >= SECONDS * hz and any(
            r.status == "committed" for r in executive.replans if r.trigger != "initial"
        ):
            executive.stop()  # the ticks around a commit were measured too

    publish = executive.recorder.publish
    assert publish is not None

    def tee(topic: str, payload: dict) -> None:
        publish(topic, payload)
        replan_now_and_then(topic, payload)

    executive.recorder.publish = tee
    work: list[float] = []  # wall seconds inside each tick
    tick_once = executive.tick_once

    def timed_tick():  # type: ignore[no-untyped-def]
        t0 = time.perf_counter()
        result = tick_once()
        work.append(time.perf_counter() - t0)
        return result

    executive.tick_once = timed_tick  # type: ignore[method-assign]
    started = time.perf_counter()
    report = asyncio.run(host.run(1.0, until=int(LONGEST * hz)))
    wall = time.perf_counter() - started
    writer.close()

    period_ms = 1000.0 / hz
    assert int(SECONDS * hz) <= report.ticks <= int(LONGEST * hz)
    assert len(work) == report.ticks
    assert max(work) * 1000 < LATE_PERIODS * period_ms, (max(work), report.jitter_ms)
    assert report.jitter_ms["p99"] < LATE_PERIODS * period_ms, (report.jitter_ms, wall)
    assert report.jitter_ms["max"] < STALL_PERIODS * period_ms, (report.jitter_ms, wall)
    replans = [r for r in report.replans if r.trigger != "initial"]
    assert replans, "no replan was asked for"  # the ticks above were measured with rounds on
    if report.ticks < int(LONGEST * hz):  # stopped early: by a commit (see the hook)
        assert any(r.status == "committed" for r in replans)
    # the snapshots drawn off the tick were stored, each the picture of its own tick (the
    # record's tick is the one just stepped; the scene's, the sim's clock after it)
    snapshots = records.of(SnapshotRecord)
    assert len(snapshots) >= report.ticks / 40
    assert [s.scene["tick"] for s in snapshots] == [s.tick + 1 for s in snapshots]
    assert all(len(s.scene["drones"]) == DRONES for s in snapshots)
    reader = TraceReader(url)
    try:
        stored = reader.snapshot_at(executive.run_id, report.ticks)
    finally:
        reader.close()
    assert stored is not None and stored["tick"] == snapshots[-1].tick
    # and the live scene reached the bus (every 0.25 s when something changed, at least
    # every 40 ticks), in order, the last one the run's end
    assert len(published) >= report.ticks / 40
    assert published == sorted(published) and published[-1] == report.ticks
