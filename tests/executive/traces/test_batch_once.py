"""A batch task runs exactly once in the store (``executive.traces.batch``): a real SQLite
file through SQLAlchemy, the runs written by the trace writer."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from executive.contracts import EventRecord, RunEndRecord, RunRecord
from executive.traces import TraceReader, TraceWriter
from executive.traces.batch import before_flying
from executive.traces.engine import open_store


def _fly(url: str, run_id: str, key: str, *, end: bool) -> None:
    with TraceWriter(url) as writer:
        writer.emit(RunRecord(run_id, {}, 0, {"batch_key": key}))
        writer.emit(EventRecord(run_id, 3, "x", {}))
        if end:
            writer.emit(RunEndRecord(run_id, 1.0, "ended", {"total_points": 7.0}))


def test_an_ended_task_is_not_flown_again_and_a_dead_attempt_is_replaced(tmp_path):
    url = f"sqlite:///{tmp_path / 'eval.db'}"
    assert before_flying(url, "ev/m1/auto") is None  # nothing stored: fly
    _fly(url, "aaaa000000000001", "ev/m1/auto", end=True)
    done = before_flying(url, "ev/m1/auto")
    assert done is not None and done["run_id"] == "aaaa000000000001"
    # an attempt whose worker died mid-flight: deleted with its trace, the retry flies
    _fly(url, "bbbb000000000002", "ev/m2/auto", end=False)
    assert before_flying(url, "ev/m2/auto") is None
    reader = TraceReader(url)
    assert [r["run_id"] for r in reader.runs()] == ["aaaa000000000001"]
    assert reader.events("bbbb000000000002") == []
    reader.close()


def test_the_store_refuses_a_second_run_under_one_key(tmp_path):
    url = f"sqlite:///{tmp_path / 'eval.db'}"
    _fly(url, "aaaa000000000001", "ev/m1/auto", end=True)
    engine = open_store(url)
    with pytest.raises(sa.exc.IntegrityError), engine.begin() as conn:
        conn.execute(
            sa.text(
                "insert into runs (run_id, scenario, seed, config, started_at, status, batch_key)"
                " values ('cccc000000000003', '{}', 0, '{}', 0, 'running', 'ev/m1/auto')"
            )
        )
    engine.dispose()
