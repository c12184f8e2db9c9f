"""A batch task that Dask runs again (a retry, or a result recomputed after its worker was
lost) flies once: the second execution reports the run the store holds."""

from __future__ import annotations

from executive.traces import TraceReader
from mission.evaluation.policies import EvalTask
from mission.evaluation.run import run_one
from tests.conftest import SCENARIOS


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
