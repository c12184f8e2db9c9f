"""The SQLAlchemy trace store: a real SQLite file, written off the loop, replayed exactly."""

from __future__ import annotations

import asyncio
import json
import sqlite3

import pytest
from typer.testing import CliRunner

from cli.main import build_app
from executive.contracts import EventRecord, RunRecord
from executive.errors import ExecutiveError
from executive.traces import TraceReader, TraceWriter
from tests.conftest import SCENARIOS

runner = CliRunner()
app = build_app()


def test_a_traced_run_replays_exactly_from_the_database(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs' / 'isr.db'}"
    done = runner.invoke(
        app, ["run", str(SCENARIOS / "popup_sam.json"), "--headless", "--db", url, "--json"]
    )
    assert done.exit_code == 0, done.output
    out = json.loads(done.stdout.strip().splitlines()[-1])
    reader = TraceReader(url)
    run = reader.run(out["run_id"][:8])
    assert run["status"] == "ended" and run["outcome"]["total_points"] == out["total_points"]
    kinds = {e["kind"] for e in reader.events(run["run_id"])}
    assert {"sam_detected", "CUT_AND_FREEZE", "DRAFT_READY", "COMMIT_PLAN"} <= kinds
    statuses = [p["status"] for p in reader.plan_versions(run["run_id"])]
    assert statuses.count("committed") == 1 and "superseded" in statuses  # the first plan
    assert reader.last_telemetry(run["run_id"]) is not None
    replayed = runner.invoke(app, ["replay", run["run_id"], "--db", url])
    assert replayed.exit_code == 0, replayed.output
    assert "replayed exactly" in replayed.output


def test_emit_never_blocks_and_drops_are_counted(tmp_path):
    writer = TraceWriter(f"sqlite:///{tmp_path / 't.db'}", max_queue=10)
    for i in range(100):  # the writer thread is not started: the queue fills
        writer.emit(EventRecord("r1", i, "x", {}))
    assert writer.dropped == 90
    writer.start()
    writer.close()
    assert writer.written == 10


def test_drain_returns_when_the_writer_takes_a_batch_not_at_its_next_wake(tmp_path):
    """A run as fast as possible waits in ``drain`` for room in the queue: the writer wakes
    it when it takes the records, not a quarter of its flush interval later (an hour here)."""
    writer = TraceWriter(f"sqlite:///{tmp_path / 't.db'}", max_queue=10, flush_interval=3600)
    for i in range(10):
        writer.emit(EventRecord("r1", i, "x", {}))
    assert writer.backlog == 1.0

    async def drained() -> None:
        waiting = asyncio.ensure_future(writer.drain())
        await asyncio.sleep(0)
        assert not waiting.done()  # the thread has not started: no room
        writer.start()
        await asyncio.wait_for(waiting, 30)

    asyncio.run(drained())
    assert writer.backlog < 0.5 and writer.dropped == 0
    writer.close()
    assert writer.written == 10


def test_flushed_batches_survive_a_writer_that_never_closes(tmp_path):
    path = tmp_path / "t.db"
    writer = TraceWriter(f"sqlite:///{path}")
    writer.start()
    writer.emit(RunRecord("run-abcd", {"x": 1}, 0, {}))
    for i in range(50):
        writer.emit(EventRecord("run-abcd", i, "tick", {"i": i}))
    assert writer.flush(timeout=10)
    # Read with the plain sqlite3 module while the writer is still open (as after a kill).
    with sqlite3.connect(path) as conn:
        assert (
            conn.execute("select count(*) from events where run_id='run-abcd'").fetchone()[0] == 50
        )
    writer.close()


def test_bad_urls_and_unknown_runs_are_clear_errors(tmp_path):
    try:
        TraceReader("nosuchdb://x")
    except ExecutiveError as exc:
        assert "cannot open trace store 'nosuchdb://x'" in str(exc)
    else:
        raise AssertionError("a bad URL opened")
    reader = TraceReader(f"sqlite:///{tmp_path / 'e.db'}")
    try:
        reader.run("zzzzzz")
    except ExecutiveError as exc:
        assert "no run 'zzzzzz'" in str(exc)
    done = runner.invoke(app, ["replay", "zzzzzz", "--db", f"sqlite:///{tmp_path / 'e.db'}"])
    assert done.exit_code == 2 and "no run 'zzzzzz'" in done.output


@pytest.mark.postgres
def test_a_postgresql_url_holds_a_run_that_replays_exactly(postgres_url):
    """Teams keep many runs in PostgreSQL: the same tables, the same exact replay."""
    done = runner.invoke(
        app,
        ["run", str(SCENARIOS / "lost_drone.json"), "--headless", "--db", postgres_url, "--json"],
    )
    assert done.exit_code == 0, done.output
    out = json.loads(done.stdout.strip().splitlines()[-1])
    reader = TraceReader(postgres_url)
    run = reader.run(out["run_id"])
    assert run["status"] == "ended" and run["outcome"]["total_points"] == out["total_points"]
    assert any(r["agent"] == "planning_round" for r in reader.agent_runs(run["run_id"]))
    reader.close()
    replayed = runner.invoke(app, ["replay", out["run_id"], "--db", postgres_url])
    assert replayed.exit_code == 0, replayed.output
    assert "replayed exactly" in replayed.output
