"""Packed telemetry: the sim's frames stored packed and read back exactly; any other frame,
and rows a store holds from before packing, read as JSON."""

from __future__ import annotations

import json
import sqlite3

from executive.contracts import PlanVersionRecord, RunRecord, SnapshotRecord, TelemetryRecord
from executive.traces import TraceReader, TraceWriter
from executive.traces.packing import pack_frame, pack_json, unpack_frame, unpack_json
from planner.scenario import load_scenario
from sim import Sim
from tests.conftest import SCENARIOS


def _sim_frame() -> dict:
    sim = Sim(load_scenario(SCENARIOS / "popup_sam.json"), None)
    return sim.step().fleet.telemetry()


def _swarm_frame(n: int) -> dict:
    statuses = ("parked", "flying", "holding", "landed", "lost")
    return {
        str(i + 1): {
            "x": 0.1 * i - 250.0,
            "y": -0.0 if i == 0 else 1e-300 * i,
            "heading": 3.141592653589793 / (i + 1),
            "fuel": 1234.5678901234567 - i,
            "s": float(i) / 7.0,
            "status": statuses[i % 5],
            "points": float(i % 11),
        }
        for i in range(n)
    }


def test_a_frame_comes_back_bit_for_bit_in_its_order():
    for frame in (_sim_frame(), _swarm_frame(1000), {}):
        packed = pack_frame(frame)
        assert packed is not None
        back = unpack_frame(packed)
        assert back == frame
        # the same JSON text: same keys in the same order, same floats (-0.0 included)
        assert json.dumps(back) == json.dumps(frame)


def test_a_swarm_frame_packs_several_times_smaller_than_its_json():
    frame = _swarm_frame(1000)
    packed = pack_frame(frame)
    assert packed is not None
    assert len(packed) * 2.5 < len(json.dumps(frame).encode())


def test_a_frame_not_of_the_sims_shape_is_not_packed():
    frame = _swarm_frame(3)
    assert pack_frame({**frame, "9": {**frame["1"], "fuel": 5}}) is None  # an int
    assert pack_frame({**frame, "9": {**frame["1"], "extra": 1.0}}) is None
    assert pack_frame({"1": {"status": "flying", "x": 0.0}}) is None


def test_the_store_keeps_packed_and_json_frames_and_reads_old_rows(tmp_path):
    path = tmp_path / "t.db"
    url = f"sqlite:///{path}"
    sim_frame, odd = _sim_frame(), {"1": {"x": 1, "note": "not the sim's"}}
    with TraceWriter(url) as writer:
        writer.emit(RunRecord("run-pack", {"x": 1}, 0, {}))
        writer.emit(TelemetryRecord("run-pack", 0, sim_frame))
        writer.emit(TelemetryRecord("run-pack", 5, odd))
    # a row as a store written before packing holds it: JSON, no packed column value
    old = _swarm_frame(4)
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO telemetry (run_id, tick, drones) VALUES (?, ?, ?)",
            ("run-pack", 10, json.dumps(old)),
        )
        stored = conn.execute("SELECT tick, drones, packed IS NOT NULL FROM telemetry").fetchall()
    assert stored[0] == (0, "{}", 1)  # the sim's frame: packed
    assert stored[1][2] == 0 and stored[2][2] == 0  # the odd one and the old one: JSON
    reader = TraceReader(url)
    rows = reader.telemetry_range("run-pack")
    assert [(r["tick"], r["drones"]) for r in rows] == [(0, sim_frame), (5, odd), (10, old)]
    assert all(set(r) == {"tick", "drones"} for r in rows)
    assert reader.telemetry_at("run-pack", 4) == {"tick": 0, "drones": sim_frame}
    last = reader.last_telemetry("run-pack")
    assert last is not None and last["drones"] == old and "packed" not in last


def _scene(n: int) -> dict:
    """A scene of the live picture's shape: floats, nested lists, odd values."""
    return {
        "tick": 40,
        "targets": [{"id": f"T{i}", "x": i / 3, "status": "pending"} for i in range(n)],
        "drones": {
            str(i): {"planned": [[i + 0.25 * k, -k / 7] for k in range(30)]} for i in range(n)
        },
        "odd": [1e-300, -0.0, "é ☃", None, True],
    }


def test_scenes_are_stored_packed_read_back_as_given_and_old_rows_still_read(tmp_path):
    path = tmp_path / "t.db"
    url = f"sqlite:///{path}"
    small, big = _scene(2), _scene(400)
    with TraceWriter(url) as writer:
        writer.emit(RunRecord("run-scene", {"x": 1}, 0, {}))
        writer.emit(SnapshotRecord("run-scene", 0, small))
        writer.emit(SnapshotRecord("run-scene", 20, big))
    old = _scene(3)  # as a store written before packing holds it: JSON, nothing packed
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO snapshots (run_id, tick, scene) VALUES (?, ?, ?)",
            ("run-scene", 30, json.dumps(old)),
        )
        stored = conn.execute(
            "SELECT tick, scene, length(packed) FROM snapshots ORDER BY tick"
        ).fetchall()
    assert [(t, s) for t, s, _ in stored[:2]] == [(0, "{}"), (20, "{}")]
    assert stored[1][2] * 4 < len(json.dumps(big))  # several times smaller than its JSON
    assert stored[2][2] is None
    reader = TraceReader(url)
    rows = reader.snapshots("run-scene")
    assert rows == [
        {"tick": 0, "scene": small},
        {"tick": 20, "scene": big},
        {"tick": 30, "scene": old},
    ]
    assert reader.snapshot_at("run-scene", 25) == {"tick": 20, "scene": big}
    assert reader.snapshot_at("run-scene", 99) == {"tick": 30, "scene": old}
    assert unpack_json(pack_json(big)) == json.loads(json.dumps(big))


def test_a_store_made_before_packed_scenes_gets_the_column_and_keeps_its_rows(tmp_path):
    path = tmp_path / "old.db"
    scene = _scene(5)
    with sqlite3.connect(path) as conn:  # the snapshots table as it was made before
        conn.execute(
            "CREATE TABLE snapshots (id INTEGER PRIMARY KEY AUTOINCREMENT,"
            " run_id VARCHAR(32) NOT NULL, tick INTEGER NOT NULL, scene JSON NOT NULL)"
        )
        conn.execute(
            "INSERT INTO snapshots (run_id, tick, scene) VALUES (?, ?, ?)",
            ("old-run", 7, json.dumps(scene)),
        )
    url = f"sqlite:///{path}"
    with TraceWriter(url) as writer:  # opening it adds the column; new scenes are packed
        writer.emit(SnapshotRecord("old-run", 9, scene))
    rows = TraceReader(url).snapshots("old-run")
    assert rows == [{"tick": 7, "scene": scene}, {"tick": 9, "scene": scene}]


def test_plan_versions_keep_their_solution_packed_through_every_upsert(tmp_path):
    path = tmp_path / "t.db"
    url = f"sqlite:///{path}"
    draft = {
        "routes": {
            str(d): {"route": ["A1", *(f"T{k}" for k in range(40)), "A1"]} for d in range(50)
        }
    }
    better = {**draft, "total_points": 12.5}
    with TraceWriter(url) as writer:
        writer.emit(RunRecord("run-plan", {"x": 1}, 0, {}))
        writer.emit(PlanVersionRecord("run-plan", "p1", None, 3, "draft", "t", draft, 12.0))
        writer.emit(PlanVersionRecord("run-plan", "p1", None, 3, "committed", "", {}))  # status
        writer.emit(PlanVersionRecord("run-plan", "p2", "p1", 9, "draft", "t2", draft))
        writer.emit(PlanVersionRecord("run-plan", "p2", "p1", 9, "committed", "t2", better))
    old = {"routes": {"1": {"route": ["A1", "A1"]}}}  # as a store made before holds it
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO plan_versions (plan_id, run_id, tick, status, trigger, solution)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            ("p0", "run-plan", 0, "superseded", "initial", json.dumps(old)),
        )
        stored = conn.execute(
            "SELECT plan_id, solution, packed IS NOT NULL FROM plan_versions ORDER BY tick"
        ).fetchall()
    assert stored == [("p0", json.dumps(old), 0), ("p1", "{}", 1), ("p2", "{}", 1)]
    versions = TraceReader(url).plan_versions("run-plan")
    assert [(v["plan_id"], v["status"], v["solution"]) for v in versions] == [
        ("p0", "superseded", old),
        ("p1", "committed", draft),
        ("p2", "committed", better),
    ]
    assert all("packed" not in v for v in versions)
