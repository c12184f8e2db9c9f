"""A batch task that Dask runs again (a retry, or a result recomputed after its worker was
lost) flies once: the second execution reports the run the store holds; and a worker process
killed mid-batch (SIGKILL, on a real LocalCluster) costs a retry, never a run stored twice."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from cli.main import build_app
from executive.traces import TraceReader
from executive.traces import schema as S
from executive.traces.engine import open_store
from mission.evaluation.policies import EvalTask, suite_tasks
from mission.evaluation.run import run_one
from tests.conftest import SCENARIOS


def small_suite(folder: Path) -> Path:
    """Four small missions, written by ``isr scenario generate`` (one writer of a suite's
    files and manifest): a 30 km square (the generator's smallest) and 10-18 targets, each
    flown in about 0.6 CPU s where the standard suite's take 2; the batch is what is under
    test, not the missions."""
    done = CliRunner().invoke(
        build_app(),
        ["scenario", "generate", "--name", "once", "--count", "4", "--targets", "10..18"]
        + ["--drones", "2..4", "--size", "30", "--disruptions", "popup_sam,lost_drone"]
        + ["--out", str(folder)],
    )
    assert done.exit_code == 0, done.output
    return folder


def test_a_task_run_twice_stores_one_run(tmp_path):
    url = f"sqlite:///{tmp_path / 'eval.db'}"
    task = EvalTask(
        suite="once",
        mission="demo.json",
        path=str(SCENARIOS / "demo.json"),
        policy="no-replan",
        trace_url=url,
        agents=False,
    )
    first = run_one(task)
    again = run_one(task)  # as Dask recomputes it
    assert first["stored"] is False and again["stored"] is True
    assert again["run_id"] == first["run_id"] and again["points"] == first["points"]
    reader = TraceReader(url)
    runs = reader.runs()
    reader.close()
    assert [r["run_id"] for r in runs] == [first["run_id"]]


@pytest.mark.slow
def test_a_worker_killed_mid_batch_costs_a_retry_and_no_run_twice(tmp_path):
    """The batch ``isr eval run`` runs, on a LocalCluster of two worker processes: the one
    flying a run is SIGKILLed after the first run ends (its nanny starts another); every task
    is stored once, ended with its outcome, and Dask reports the killed run retried."""
    from mission.evaluation.batch import batch_client, run_batch, warm  # Dask only here

    url = f"sqlite:///{tmp_path / 'eval.db'}"
    TraceReader(url).close()  # the schema, as isr eval makes it before the workers write
    # 8 tasks on 2 threads: more than twice the threads, so Dask queues them on the
    # scheduler, as it does a real suite's (a smaller batch is handed out whole)
    _, tasks = suite_tasks(
        small_suite(tmp_path / "suite"), ["auto", "no-replan"], url, agents=False
    )
    assert len(tasks) == 8
    killed: list[list[str]] = []
    with batch_client(2) as client:
        warm(client)

        def kill_once(task: EvalTask, error: str | None) -> None:
            if killed:
                return
            time.sleep(0.5)  # into the next run: killed mid-flight
            address, keys = next((a, k) for a, k in client.processing().items() if k)
            os.kill(client.run(os.getpid, workers=[address])[address], signal.SIGKILL)
            killed.append(keys)

        result = run_batch(client, tasks, kill_once)
    # one run flying; on a starved machine (the suite's other workers on 2 cores) the
    # scheduler may already have handed the worker the next run as the first ended, and
    # Dask blames both: each is retried, none lost (before the fix it held two always and
    # a second kill lost one; bench/dask_kill.py)
    assert len(killed) == 1 and 1 <= len(killed[0]) <= 2, killed
    assert result.failed == []
    blamed = killed[0]  # Dask's keys of the runs: run-<task key>-<ns>
    assert [k for k in result.retried if any(b.startswith(f"run-{k}-") for b in blamed)], (
        result.started
    )
    engine = open_store(url)
    with engine.connect() as conn:
        rows = conn.execute(sa.select(S.runs.c.batch_key, S.runs.c.status, S.runs.c.outcome)).all()
    engine.dispose()
    keys = [r.batch_key for r in rows]
    assert sorted(keys) == sorted(t.key for t in tasks)  # stored runs == tasks, none twice
    assert all(r.status == "ended" and r.outcome["total_points"] >= 0 for r in rows)
