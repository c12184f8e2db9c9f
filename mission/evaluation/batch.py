"""A batch on Dask, as ``isr eval run`` runs it: a client (a ``LocalCluster`` of worker
processes, or an existing scheduler), the kernels warmed once per worker, and every task run
to the end however its workers fare.

Each task is submitted once; Dask runs it again when it raises (once: ``retries=1``) or when
the worker running it dies (up to three times: ``allowed-failures``), and recomputes a result lost with its
worker. Whatever Dask does, a task's run is stored once (``run_one``; ``runs.batch_key``).
Dask is imported by this module: the CLI imports it only when a batch runs."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import dask
from distributed import Client, LocalCluster, as_completed

from mission.evaluation.policies import EvalTask
from mission.evaluation.run import run_one
from mission.evaluation.warm import WarmKernels

__all__ = ["BatchResult", "batch_client", "run_batch", "warm"]


@contextmanager
def batch_client(workers: int, scheduler: str | None = None) -> Iterator[Client]:
    """A client of ``scheduler``, or of a ``LocalCluster`` of ``workers`` processes (one
    thread each, each under a nanny that restarts it should it die), closed on exit. An
    existing scheduler keeps its own settings (allowed-failures and worker-saturation,
    below, go in its Dask config).
    Raises ``OSError`` or ``TimeoutError`` when the scheduler cannot be reached."""
    # A run whose worker dies is tried again on a live worker; one under which 4 workers
    # died (Dask's default) is reported failed: it kills its worker. Not after 2: a worker
    # killed from outside (OOM, an operator) twice under one long run failed a run that
    # was fine. And Dask blames a death on every task the worker held, the one it ran and
    # the one queued behind it (worker-saturation 1.1 sends two per thread): one task per
    # thread, so only the run that was flying is blamed (the queue stays on the scheduler;
    # a run lasts seconds, prefetching gains none). Dask queues so only a batch of more
    # tasks than twice the threads; a smaller one is handed out whole.
    dask.config.set(
        {
            "distributed.scheduler.allowed-failures": 3,
            "distributed.scheduler.worker-saturation": 1.0,
        }
    )
    if scheduler is not None:
        client = Client(scheduler, timeout=30)
    else:
        cluster = LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        if scheduler is None:
            cluster.close()


def warm(client: Client) -> dict[str, float]:
    """Every worker, now and any that joins later (a restarted one), loads the kernels
    once; the seconds each worker up now took."""
    client.register_plugin(WarmKernels(), name="isr-warm-kernels")
    return dict(client.run(WarmKernels.seconds))


@dataclass(frozen=True)
class BatchResult:
    """What a batch did: the tasks that failed (key, error), how often Dask started each
    task (its scheduler's transitions to processing), and the wall time of the batch."""

    failed: list[dict[str, str]]
    started: dict[str, int]
    wall_s: float

    @property
    def retried(self) -> list[str]:
        """The task keys Dask started more than once: a worker died under it, its result
        was lost with its worker and recomputed, or it raised and was retried."""
        return sorted(k for k, n in self.started.items() if n > 1)


def run_batch(
    client: Client,
    todo: list[EvalTask],
    on_done: Callable[[EvalTask, str | None], None] | None = None,
) -> BatchResult:
    """Run every task of ``todo`` on ``client``'s workers to its end: ``on_done(task,
    error)`` as each finishes (error None, or the last attempt's exception in words). A bad
    mission or a dead worker fails its task, never the batch."""
    started = time.perf_counter()
    dask_keys = {f"run-{t.key}-{time.time_ns()}": t for t in todo}
    futures = {
        client.submit(run_one, t, retries=1, pure=False, key=k): t for k, t in dask_keys.items()
    }
    failed: list[dict[str, str]] = []
    for future in as_completed(futures):
        task = futures.pop(future)  # its result taken, not kept on a worker to recompute
        error = None
        try:
            future.result()
        except Exception as exc:  # a bad mission or a dead worker: the batch goes on
            error = f"{type(exc).__name__}: {exc}"[:300]
            failed.append({"key": task.key, "error": error})
        del future
        if on_done is not None:
            on_done(task, error)
    wall = time.perf_counter() - started
    counts = client.run_on_scheduler(_starts, list(dask_keys))
    return BatchResult(
        failed=failed,
        started={dask_keys[k].key: n for k, n in counts.items()},
        wall_s=wall,
    )


def _starts(keys: list[str], dask_scheduler: Any) -> dict[str, int]:
    """On the scheduler: how often each key went to processing (its transition log)."""
    story = dask_scheduler.story(*keys)
    counts = Counter(t[0] for t in story if t[2] == "processing")
    return {k: counts.get(k, 0) for k in keys}
