"""Batch evaluation: every mission of a suite under every policy, run headless as fast as
possible, each traced to the store with its suite, mission and policy; figures read back
from the store (``mission.evaluation.figures``), so a batch resumes where it stopped.
Dask schedules the runs (``mission.evaluation.batch``, for ``isr eval`` and the benches);
only that module and the worker plugin it registers import Dask."""

from mission.evaluation.policies import POLICIES, VARIANTS, EvalTask, config_for, suite_tasks
from mission.evaluation.run import run_one

__all__ = ["POLICIES", "VARIANTS", "EvalTask", "config_for", "run_one", "suite_tasks"]
