"""A stored run at any tick (``executive.traces.timeline.state_at``): the picture from the
nearest snapshot, the events after it and the telemetry, checked against the run
re-executed to that tick from its inputs (the truth)."""

from __future__ import annotations

import asyncio
import json

import pytest

from executive.loop import Policy
from executive.traces import TraceReader
from executive.traces.replay import resimulate
from executive.traces.timeline import state_at
from mission.config import RunConfig
from mission.session import run_mission
from planner.scenario import load_scenario, parse_scenario
from tests.conftest import SCENARIOS


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('runs') / 'runs.db'}"
    config = RunConfig(trace_url=url, agents=False, policy=Policy(batch_iterations=400))
    report = asyncio.run(run_mission(load_scenario(SCENARIOS / "popup_sam.json"), config))
    reader = TraceReader(url)
    yield reader, reader.run(report.run_id), report
    reader.close()


def test_the_run_keeps_snapshots_to_seek_from(stored):
    reader, run, report = stored
    first = reader.snapshot_at(run["run_id"], 0)
    last = reader.snapshot_at(run["run_id"], report.ticks)
    assert first is not None and last is not None and last["tick"] > first["tick"]
    # one at least every 30 s of mission time (600 ticks)
    assert report.ticks - last["tick"] <= 600


@pytest.mark.parametrize("fraction", [0.0, 0.13, 0.42, 0.77, 1.0])
def test_the_picture_at_a_tick_is_the_runs_state_then(stored, fraction):
    reader, run, report = stored
    tick = min(report.ticks - 1, int(fraction * report.ticks))
    scene = state_at(reader, run, tick)
    truth = resimulate(run["scenario"], reader.inputs(run["run_id"]), hash_every=20)
    for _ in range(tick + 1):
        truth.step()
    world = truth.world
    collected = {t["id"] for t in scene["targets"] if t["status"] == "collected"}
    assert collected == set(world.collected())
    known = {s["id"] for s in scene["sams"] if s["known"]}
    assert known == {s.id for s in world.known_environment.sams}
    for drone_id, d in scene["drones"].items():
        # the state then, not the telemetry row's a few ticks before (a landing or a loss
        # since that row counts: the run re-executed to the tick is the yardstick)
        assert d["status"] == world.status(drone_id)
        # positions from the telemetry at or before the tick: within a few ticks' flight
        x, y, _ = world.position(drone_id)
        assert abs(d["x"] - x) + abs(d["y"] - y) <= 5 * 0.1 / 20 * 2 + 1e-9
        assert len(d["flown"]) <= 402
    assert scene["tick"] == tick and scene["run_id"] == run["run_id"]


def test_a_drone_lost_at_a_tick_is_lost_at_that_tick_not_flying(tmp_path):
    """The stored telemetry row at or before T may be a few ticks old: a drone lost at T is
    lost in the picture at T (the replay used to show it "flying" there)."""
    url = f"sqlite:///{tmp_path / 'lost.db'}"
    config = RunConfig(trace_url=url, agents=False, policy=Policy(batch_iterations=300))
    mission = json.loads((SCENARIOS / "lost_drone.json").read_text())
    mission["timeline"][0]["t"] = 900.1  # between two stored rows (one every 5 ticks)
    report = asyncio.run(run_mission(parse_scenario(mission, "lost_drone"), config))
    reader = TraceReader(url)
    try:
        run = reader.run(report.run_id)
        lost = next(e for e in reader.events(run["run_id"]) if e["kind"] == "drone_lost")
        tick, drone = lost["tick"], lost["payload"]["drone"]
        row = reader.telemetry_at(run["run_id"], tick)
        assert row["tick"] < tick, "a row at the loss tick itself proves nothing here"
        assert row["drones"][drone]["status"] == "flying"
        scene = state_at(reader, run, tick)
        assert scene["drones"][drone]["status"] == "lost"
        assert scene["drones"][drone]["planned"] == [] and scene["drones"][drone]["frozen"] == []
        assert state_at(reader, run, tick - 1)["drones"][drone]["status"] == "flying"
    finally:
        reader.close()
