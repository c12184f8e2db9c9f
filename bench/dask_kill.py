"""A batch runs exactly once however often its workers die: kill a Dask worker mid-batch, count
the stored runs.

    python bench/dask_kill.py [--missions 8] [--policies auto,no-replan] [--kills 0.2,0.45,0.7]

A suite is generated with ``isr scenario generate`` into a temporary folder and run through
``mission.evaluation.batch`` (what ``isr eval run`` runs) on a ``LocalCluster`` of two worker
processes, each under a nanny, into a fresh SQLite store. When the given shares of the tasks
are done, the worker process that is running a task is killed with SIGKILL (its nanny starts
a new one, warmed by the worker plugin), and the next kill waits for the second worker to be
back. Then the store is read through SQLAlchemy: one ended run with its outcome per task,
no batch key (nor suite/mission/policy) stored twice. Printed: tasks, kills, the tasks Dask
started more than once, stored runs, duplicates, missing and incomplete runs, wall time and
the load (``uptime``) before and after. Exits 1 when a run is duplicated, missing or failed.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sqlalchemy import select

from executive.traces import TraceReader
from executive.traces import schema as S
from executive.traces.engine import open_store
from mission.evaluation import EvalTask, suite_tasks
from mission.evaluation.batch import batch_client, run_batch, warm


def _load() -> str:
    """The load averages as ``uptime`` prints them."""
    out = subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout
    return out.rsplit("load average:", 1)[-1].strip()


def _suite(folder: Path, missions: int) -> Path:
    """A small suite, written by ``isr scenario generate``."""
    out = folder / "suite"
    subprocess.run(
        [sys.executable, "-m", "cli", "scenario", "generate", "--name", "kill"]
        + ["--count", str(missions), "--targets", "10..18", "--drones", "2..4"]
        + ["--disruptions", "popup_sam,lost_drone,new_target", "--out", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    return out


class Killer(threading.Thread):
    """SIGKILLs the worker process running a task once ``done`` passes each threshold."""

    def __init__(self, client: Any, thresholds: list[int]) -> None:
        super().__init__(daemon=True)
        self.client = client
        self.thresholds = thresholds
        self.done = 0
        self.changed = threading.Condition()
        self.kills: list[dict[str, Any]] = []

    def on_done(self, task: EvalTask, error: str | None) -> None:
        """run_batch's callback: one more task ended."""
        with self.changed:
            self.done += 1
            self.changed.notify_all()

    def run(self) -> None:
        for threshold in self.thresholds:
            with self.changed:
                self.changed.wait_for(lambda t=threshold: self.done >= t)  # type: ignore[misc]
            self.client.wait_for_workers(2, timeout=120)  # the last kill's worker is back
            time.sleep(1.0)  # into the next run: killed mid-flight, not between runs
            busy = {a: keys for a, keys in self.client.processing().items() if keys}
            if not busy:
                continue  # the batch is over
            address = sorted(busy)[len(self.kills) % len(busy)]
            pid = self.client.run(os.getpid, workers=[address])[address]
            os.kill(pid, signal.SIGKILL)
            self.kills.append({"done": self.done, "pid": pid, "tasks": busy[address]})


def audit(url: str, tasks: list[EvalTask]) -> dict[str, int]:
    """The store against the batch: runs stored, batch keys (and suite/mission/policy labels)
    stored more than once, tasks without an ended run, stored runs not ended or without an
    outcome."""
    engine = open_store(url)
    with engine.connect() as conn:
        rows = conn.execute(
            select(S.runs.c.batch_key, S.runs.c.status, S.runs.c.outcome, S.runs.c.config)
        ).all()
    engine.dispose()
    keys = Counter(r.batch_key for r in rows)
    labels = Counter(
        "/".join(str(r.config["labels"].get(k)) for k in ("suite", "mission", "policy"))
        for r in rows
    )
    complete = {r.batch_key for r in rows if r.status == "ended" and r.outcome}
    return {
        "stored": len(rows),
        "duplicates": sum(n - 1 for n in keys.values()) + sum(n - 1 for n in labels.values()),
        "missing": sum(1 for t in tasks if t.key not in complete),
        "incomplete": sum(1 for r in rows if r.status != "ended" or not r.outcome),
    }


def main() -> None:
    """Generate the suite, run it with the kills and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--missions", type=int, default=8)
    parser.add_argument("--policies", default="auto,no-replan")
    parser.add_argument("--kills", default="0.2,0.45,0.7", help="shares of the tasks done")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        suite = _suite(folder, args.missions)
        url = f"sqlite:///{folder / 'eval.db'}"
        TraceReader(url).close()  # the schema, made once before the workers write
        _, tasks = suite_tasks(suite, args.policies.split(","), url)
        thresholds = [max(1, math.ceil(float(s) * len(tasks))) for s in args.kills.split(",")]
        load_before = _load()
        started = time.perf_counter()
        with batch_client(2) as client:
            warm(client)
            killer = Killer(client, thresholds)
            killer.start()
            result = run_batch(client, tasks, killer.on_done)
            killer.join(5)
        wall = time.perf_counter() - started
        found = audit(url, tasks)
    print(
        f"{len(tasks)} tasks ({args.missions} missions x {args.policies}) on a LocalCluster"
        f" of 2 worker processes (nannies), {os.cpu_count()} cores; SQLite store"
    )
    for i, kill in enumerate(killer.kills, 1):
        print(
            f"kill {i}: SIGKILL worker pid {kill['pid']} after {kill['done']} of {len(tasks)}"
            f" tasks done, holding {len(kill['tasks'])} task(s)"
        )
    for key in result.retried:
        print(f"retried by Dask: {key} (started {result.started[key]} times)")
    for failure in result.failed:
        print(f"failed: {failure['key']}: {failure['error']}")
    print(
        f"{'tasks':>5} {'kills':>5} {'retried':>7} {'stored':>6} {'duplicates':>10}"
        f" {'missing':>7} {'incomplete':>10} {'failed':>6} {'wall s':>6}  load before -> after"
    )
    print(
        f"{len(tasks):>5} {len(killer.kills):>5} {len(result.retried):>7} {found['stored']:>6}"
        f" {found['duplicates']:>10} {found['missing']:>7} {found['incomplete']:>10}"
        f" {len(result.failed):>6} {wall:>6.0f}  {load_before} -> {_load()}"
    )
    bad = found["duplicates"] or found["missing"] or found["incomplete"] or result.failed
    if bad or found["stored"] != len(tasks):
        sys.exit(1)


if __name__ == "__main__":
    main()
