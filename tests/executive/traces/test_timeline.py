"""A stored run at any tick (``executive.traces.timeline.state_at``): the picture from the
nearest snapshot, the events after it and the telemetry, checked against the run
re-executed to that tick from its inputs (the truth)."""

from __future__ import annotations

import asyncio
import json
import sqlite3

import httpx
import pytest
from typer.testing import CliRunner

from cli.main import build_app
from dashboard.server import start_dashboard
from executive.bus import InProcessBus
from executive.errors import ExecutiveError
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


# Every kind of edit on the timeline (planner.edits), a hidden SAM among them, and no
# snapshot after the start: a seek rebuilds the picture from the edits' events alone.
EDITS = [
    {"t": 20, "op": "move_target", "id": "T9", "x": 88, "y": 75},
    {"t": 30, "op": "set_priority", "id": "T11", "priority": 2},
    {"t": 40, "op": "remove_target", "id": "T10"},
    {"t": 50, "op": "add_sam", "id": "S9", "pos": [90, 50], "range": 3},
    {"t": 60, "op": "add_sam", "id": "H1", "pos": [5, 95], "range": 2, "hidden": True},
    {"t": 70, "op": "move_sam", "id": "SAM1", "pos": [33, 44], "range": 11},
    {"t": 75, "op": "move_sam", "id": "H1", "pos": [6, 96]},
    {"t": 80, "op": "reveal_sam", "id": "H1"},
    {"t": 90, "op": "remove_sam", "id": "S9"},
    {"t": 100, "op": "set_fuel", "drone": "2", "fuel": 150},
    {"t": 110, "op": "disable_drone", "drone": "3"},
    {"t": 120, "op": "add_target", "id": "T14", "x": 95, "y": 5, "priority": 4, "type": "B"},
]


@pytest.fixture(scope="module")
def edited(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('runs') / 'runs.db'}"
    data = json.loads((SCENARIOS / "new_target.json").read_text())
    data["timeline"] += EDITS
    scenario = parse_scenario(data, "every edit")
    policy = Policy(batch_iterations=300, snapshot_every=0)
    config = RunConfig(trace_url=url, agents=False, policy=policy)
    report = asyncio.run(run_mission(scenario, config))
    reader = TraceReader(url)
    yield reader, reader.run(report.run_id), report
    reader.close()


def test_a_seek_applies_every_kind_of_edit_as_the_run_did(edited):
    reader, run, report = edited
    assert reader.snapshot_at(run["run_id"], report.ticks) is None  # the events alone
    ticks = [int(e["t"] * 20) + 1 for e in EDITS] + [report.ticks - 1]
    truth = resimulate(run["scenario"], reader.inputs(run["run_id"]), hash_every=20)
    for tick in sorted(t for t in ticks if t < report.ticks):
        while truth.tick <= tick:
            truth.step()
        world, scene = truth.world, state_at(reader, run, tick)
        live = {t.id: (t.x, t.y, t.priority, t.type) for t in world.truth_environment.targets}
        seen = {t["id"]: (t["x"], t["y"], t["priority"], t["type"]) for t in scene["targets"]}
        assert seen == live, tick
        known = {s.id for s in world.known_environment.sams}
        live_sams = {s.id: (s.x, s.y, s.range, s.id in known) for s in world.truth_environment.sams}
        seen_sams = {s["id"]: (s["x"], s["y"], s["range"], s["known"]) for s in scene["sams"]}
        assert seen_sams == live_sams, tick


def test_a_damaged_packed_row_is_said_with_its_table_and_tick_never_read_as_empty(stored, tmp_path):
    """A packed scene, frame or plan that does not unpack (a damaged file) is an error
    naming the run, the table and the tick, in the reader, the seek, the dashboard (a 500,
    the store's fault) and ``isr report`` (exit 2, nothing written); the rows around it
    still read."""
    reader, run, report = stored
    rid = run["run_id"]
    copy = tmp_path / "damaged.db"
    with (
        sqlite3.connect(reader.url.removeprefix("sqlite:///")) as source,
        sqlite3.connect(copy) as target,
    ):
        source.backup(target)  # the store is in WAL mode: a file copy could miss pages
    with sqlite3.connect(copy) as conn:
        (scene_tick,) = conn.execute(
            "SELECT max(tick) FROM snapshots WHERE run_id = ? AND packed IS NOT NULL", (rid,)
        ).fetchone()
        (frame_tick,) = conn.execute(
            "SELECT max(tick) FROM telemetry WHERE run_id = ? AND packed IS NOT NULL", (rid,)
        ).fetchone()
        (plan_tick,) = conn.execute(
            "SELECT min(tick) FROM plan_versions WHERE run_id = ? AND packed IS NOT NULL", (rid,)
        ).fetchone()
        for table, tick, blob in (
            ("snapshots", scene_tick, b"\x00\x01junk"),  # not even the packed header
            ("telemetry", frame_tick, None),  # a packed frame cut short (set below)
            ("plan_versions", plan_tick, None),
        ):
            if blob is None:  # the right header, the compressed body cut in half
                (whole,) = conn.execute(
                    f"SELECT packed FROM {table} WHERE run_id = ? AND tick = ?", (rid, tick)
                ).fetchone()
                blob = whole[: len(whole) // 2]
            conn.execute(
                f"UPDATE {table} SET packed = ? WHERE run_id = ? AND tick = ?", (blob, rid, tick)
            )
    damaged = TraceReader(f"sqlite:///{copy}")
    try:
        for read, table, tick in (
            (lambda: damaged.snapshot_at(rid, report.ticks), "snapshots", scene_tick),
            (lambda: damaged.snapshots(rid), "snapshots", scene_tick),
            (lambda: damaged.telemetry_range(rid), "telemetry", frame_tick),
            (lambda: damaged.last_telemetry(rid), "telemetry", frame_tick),
            (lambda: damaged.plan_versions(rid), "plan_versions", plan_tick),
            (lambda: state_at(damaged, run, report.ticks), "snapshots", scene_tick),
        ):
            with pytest.raises(ExecutiveError) as info:
                read()
            said = str(info.value)
            assert f"run {rid}" in said and f"{table} row at tick {tick} is damaged" in said
        # what is not damaged still reads
        assert damaged.telemetry_at(rid, frame_tick - 1)["tick"] < frame_tick
        assert damaged.snapshot_at(rid, scene_tick - 1) is not None
    finally:
        damaged.close()

    # the dashboard over the damaged store: the store's fault, a 500 that names the row
    async def serve() -> list[httpx.Response]:
        server = await start_dashboard(
            InProcessBus(), port=0, token="t", trace_url=f"sqlite:///{copy}"
        )
        try:
            async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
                return [
                    await http.get(f"/api/runs/{rid}/{path}")
                    for path in (f"state?tick={scene_tick}", "plans")
                ]
        finally:
            await server.stop()

    for answer, (table, tick) in zip(
        asyncio.run(serve()), (("snapshots", scene_tick), ("plan_versions", plan_tick))
    ):
        said = answer.json()["error"]
        assert answer.status_code == 500 and f"{table} row at tick {tick} is damaged" in said
    out = tmp_path / "report.html"
    done = CliRunner().invoke(
        build_app(), ["report", rid, "--db", f"sqlite:///{copy}", "--out", str(out)]
    )
    assert done.exit_code == 2, done.output
    assert "is damaged" in done.stderr and "Traceback" not in done.output
    assert not out.exists()
