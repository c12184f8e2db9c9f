"""The trace store under real faults loses nothing silently: a SQLite file locked by another
process (waited for, then every row stored; or, past the retries, what was lost counted per
table and tick range), a disk that fills (a tiny tmpfs), a store that does not take writes
(refused before the first tick, one line, no traceback), PostgreSQL refusing and killing
connections for a while; and ``isr replay`` on a run whose trace has gaps says so.

In every case: records emitted == records stored + records counted as lost."""

from __future__ import annotations

import os
import re
import sqlite3
import time

import pytest
from typer.testing import CliRunner

from cli.main import build_app
from executive.errors import ExecutiveError
from executive.traces import TraceWriter
from tests.conftest import POSTGRES_ADMIN, SCENARIOS, copy_of
from tests.executive.traces.fault_kit import (
    can_mount,
    emit_run,
    held_exclusive,
    immutable,
    pg_refused,
    remount_read_only,
    stored_rows,
    tiny_tmpfs,
)

runner = CliRunner()
app = build_app()
root_mounts = pytest.mark.skipif(
    os.geteuid() != 0 or not can_mount(), reason="needs root that may mount a tmpfs"
)


def test_a_store_locked_by_another_process_is_waited_for_and_nothing_is_lost(tmp_path):
    path = tmp_path / "runs.db"
    url = f"sqlite:///{path}"
    with TraceWriter(url, flush_interval=0.05) as writer:
        assert writer.flush(10)
        with held_exclusive(path, 8.0):  # longer than SQLite's own 5 s busy wait
            emitted = emit_run(writer, "lockedrun0000001", 300, pause=0.005)
        assert writer.flush(60)
    assert writer.errors > 0  # it was refused, and retried
    assert writer.dropped == 0 and writer.loss.summary() == {}
    assert stored_rows(url, "lockedrun0000001") == emitted


@pytest.mark.slow
def test_a_store_locked_past_the_retries_counts_what_it_lost_per_table_and_ticks(tmp_path):
    path = tmp_path / "runs.db"
    url = f"sqlite:///{path}"
    writer = TraceWriter(url, flush_interval=0.05, retry_s=1.0)
    writer.start()
    emit_run(writer, "warmrun000000001", 5)
    assert writer.flush(10)
    with held_exclusive(path, 14.0):
        emitted = emit_run(writer, "lockedrun0000002", 200)
        assert writer.flush(60)
    writer.close()
    lost = writer.loss.summary()
    assert lost["telemetry"]["rows"] > 0 and lost["telemetry"]["ticks"][0][0] == 0
    stored = stored_rows(url, "lockedrun0000002")
    assert stored + writer.dropped == emitted  # nothing lost unreported
    assert sum(t["rows"] for t in lost.values()) == writer.dropped


@root_mounts
def test_a_disk_that_fills_loses_nothing_unreported(tmp_path):
    with tiny_tmpfs(tmp_path / "small", "400k") as small:
        url = f"sqlite:///{small / 'runs.db'}"
        writer = TraceWriter(url, flush_interval=0.05, retry_s=1.0, batch=200)
        writer.start()
        emitted = emit_run(writer, "fullrun000000001", 3000)
        assert writer.flush(120)
        writer.close()
        stored = stored_rows(url, "fullrun000000001")
    assert writer.dropped > 0 and stored > 0  # it filled part way
    assert stored + writer.dropped == emitted
    lost = writer.loss.summary()
    assert sum(t["rows"] for t in lost.values()) == writer.dropped
    spans = [span for t in lost.values() for span in t["ticks"]]
    assert spans and all(0 <= a <= b <= 2999 for a, b in spans), lost  # named, not hidden


@root_mounts
def test_a_read_only_store_is_refused_before_the_first_tick(tmp_path):
    where = tmp_path / "ro"
    with tiny_tmpfs(where, "4m"):
        url = f"sqlite:///{where / 'runs.db'}"
        TraceWriter(url).close()  # a store with its tables
        remount_read_only(where)
        # SQLite in WAL mode cannot even open a file in a read-only folder (no -shm): either
        # way the store is refused with one line, before anything flies
        refused = "does not take writes|cannot open trace store"
        with pytest.raises(ExecutiveError, match=refused):
            TraceWriter(url)
        done = runner.invoke(
            app, ["run", str(SCENARIOS / "demo.json"), "--headless", "--db", url, "--json"]
        )
        assert done.exit_code == 1, done.output
        assert re.search(refused, done.output) and "Traceback" not in done.output
        assert '"run_id"' not in done.stdout  # nothing flown, no run id printed


@pytest.mark.skipif(os.geteuid() != 0, reason="chattr +i needs root")
def test_an_immutable_store_file_is_refused_before_the_first_tick(tmp_path):
    path = tmp_path / "runs.db"
    url = f"sqlite:///{path}"
    TraceWriter(url).close()
    sqlite3.connect(path).execute("PRAGMA wal_checkpoint(TRUNCATE)").close()
    try:
        with immutable(path):
            done = runner.invoke(
                app, ["run", str(SCENARIOS / "demo.json"), "--headless", "--db", url]
            )
    except FileNotFoundError:
        pytest.skip("no chattr")
    assert done.exit_code == 1, done.output
    assert "does not take writes" in done.output and "Traceback" not in done.output


@pytest.mark.postgres
def test_postgresql_refusing_and_killing_connections_loses_nothing(postgres_url):
    database = postgres_url.rsplit("/", 1)[1]
    with TraceWriter(postgres_url, flush_interval=0.05) as writer:
        assert writer.flush(10)
        with pg_refused(POSTGRES_ADMIN, database, 4.0):
            time.sleep(0.3)  # the writer's connection is killed under it
            emitted = emit_run(writer, "pgdownrun0000001", 300, pause=0.01)
        assert writer.flush(60)
    assert writer.errors > 0
    assert writer.dropped == 0
    assert stored_rows(postgres_url, "pgdownrun0000001") == emitted


def test_replay_of_a_run_with_gaps_says_so_and_names_them(popup_sam_run, tmp_path):
    # popup_sam flown to its end with no agents: a copy of the session's store (the run is
    # flown once for every module that needs it), then gaps cut into the copy
    url, run_id = copy_of(popup_sam_run, tmp_path)
    path = tmp_path / "traces.db"
    with sqlite3.connect(path) as conn:  # as if the store had refused these batches
        conn.execute("delete from telemetry where tick between 585 and 1605")
        conn.execute(
            "delete from inputs where id = (select id from inputs where source != 'timeline'"
            " order by id desc limit 1)"
        )
    said = runner.invoke(app, ["replay", run_id, "--db", url])
    assert said.exit_code == 3, said.output
    text = " ".join(said.output.split())
    assert "the trace is incomplete" in text and "replayed exactly" not in text
    assert re.search(r"telemetry missing at ticks 585-1605", text), text
    assert "inputs missing at ticks" in text or "input(s) missing" in text, text


@root_mounts
def test_a_run_whose_disk_fills_says_its_trace_is_incomplete_and_exits_3(tmp_path):
    """``isr run`` (its ``fly``) on a store that fills mid-run: the outcome names what was
    not stored, the summary says "trace incomplete", the exit code is 3."""
    import typer
    from rich.console import Console

    from cli.run import fly
    from executive.loop import Policy
    from mission.config import RunConfig
    from planner.scenario import load_scenario

    with tiny_tmpfs(tmp_path / "small", "1m") as small:
        url = f"sqlite:///{small / 'runs.db'}"
        config = RunConfig(
            trace_url=url, agents=False, policy=Policy(replan=False), trace_retry_s=0.5
        )
        shown = []
        err = Console(file=(tmp_path / "err.txt").open("w"), width=400)
        with pytest.raises(typer.Exit) as exited:
            fly(load_scenario(SCENARIOS / "demo.json"), config, shown.append, err)
        err.file.close()
    assert exited.value.exit_code == 3
    said = (tmp_path / "err.txt").read_text()
    assert "trace incomplete:" in said and "telemetry" in said, said
    [report] = shown
    assert report.trace_dropped > 0 and report.trace_lost["telemetry"]["rows"] > 0
    out = report.to_dict()
    assert out["trace_lost"] == report.trace_lost


@root_mounts
def test_trace_dropped_goes_out_live_while_the_store_is_full(tmp_path):
    """The run's live stream (what the bus and the dashboard are given: a sink beside the
    store) hears TRACE_DROPPED with the tables and ticks while the store refuses, and the
    events add up to the report's count."""
    import asyncio

    from executive.contracts import EventRecord
    from executive.loop import Policy
    from executive.traces.sinks import ListSink
    from mission.config import RunConfig
    from mission.session import run_mission
    from planner.scenario import load_scenario

    live = ListSink()
    with tiny_tmpfs(tmp_path / "small", "1m") as small:
        config = RunConfig(
            trace_url=f"sqlite:///{small / 'runs.db'}",
            agents=False,
            policy=Policy(replan=False),
            trace_retry_s=0.5,
        )
        report = asyncio.run(run_mission(load_scenario(SCENARIOS / "demo.json"), config, sink=live))
    assert report is not None and report.trace_dropped > 0
    raised = [r for r in live.of(EventRecord) if r.kind == "TRACE_DROPPED"]
    assert raised and raised[-1].payload["tables"]["telemetry"]["rows"] > 0
    assert sum(r.payload["dropped"] for r in raised) == raised[-1].payload["total"]
    assert raised[-1].payload["total"] <= report.trace_dropped  # the end record may add one
