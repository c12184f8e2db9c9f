"""Load the planner's numba kernels once per Dask worker, when it starts, not once per run."""

from __future__ import annotations

import time
from typing import Any

from distributed import WorkerPlugin

__all__ = ["WarmKernels"]

_READY: list[float] = []  # this process's warm-up time, once done


class WarmKernels(WorkerPlugin):
    """A worker plugin: compile, or load from numba's on-disk cache, every kernel."""

    def setup(self, worker: Any) -> None:
        """Warm this worker's process (a worker that joins later gets it too)."""
        if _READY:
            return
        from planner.team_search import warmup

        started = time.perf_counter()
        warmup()
        _READY.append(time.perf_counter() - started)

    @staticmethod
    def seconds() -> float:
        """How long this process took to get its kernels ready (0 if it has not)."""
        return _READY[0] if _READY else 0.0
