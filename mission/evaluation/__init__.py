"""Batch evaluation: every mission of a suite under every policy, run headless as fast as
possible, each traced to the store with its suite, mission and policy; figures read back
from the store (``mission.evaluation.figures``), so a batch resumes where it stopped.
Dask schedules the runs (``cli.eval``); this package knows nothing of Dask."""

from mission.evaluation.policies import POLICIES, VARIANTS, EvalTask, config_for
from mission.evaluation.run import run_one

__all__ = ["POLICIES", "VARIANTS", "EvalTask", "config_for", "run_one"]
