"""A batch task runs exactly once in the store: one run per task key (``runs.batch_key``,
unique).

Dask runs a task again when it is retried or when the worker holding its result is lost
(the result is recomputed). ``before_flying(url, key)`` is what the task asks first:

* the key's run has ended: it is returned, and the task reports it without flying;
* the key's run did not end (an attempt whose worker died mid-flight, or that failed and
  is being retried): that attempt is deleted with its trace, and None says "fly". Dask runs
  a key on one worker at a time, so an attempt it runs again is dead;
* no run: None, fly.

The run then records the key with its row (``RunConfig.batch_key``), under the unique
index: should two attempts ever fly at once, the second's run row is refused, never
stored twice.
"""

from __future__ import annotations

from sqlalchemy import delete, select

from executive.traces import schema as S
from executive.traces.engine import database_errors, open_store
from executive.traces.reader import Row

__all__ = ["before_flying"]

_PER_RUN = (S.inputs, S.telemetry, S.events, S.state_hashes, S.snapshots, S.plan_versions)


def before_flying(url: str, key: str) -> Row | None:
    """The ended run stored for ``key`` (do not fly), or None (fly) after deleting a dead
    attempt's trace. Raises ``ExecutiveError`` when the store cannot be read or written."""
    engine = open_store(url)
    try:
        with database_errors(f"cannot check batch key {key!r} in {url}"), engine.begin() as conn:
            row = conn.execute(select(S.runs).where(S.runs.c.batch_key == key)).mappings().first()
            if row is None:
                return None
            found = dict(row)
            if found["status"] == "ended":
                return found
            run_id = found["run_id"]
            for table in _PER_RUN:
                conn.execute(delete(table).where(table.c.run_id == run_id))
            conn.execute(delete(S.agent_runs).where(S.agent_runs.c.mission_run_id == run_id))
            conn.execute(delete(S.runs).where(S.runs.c.run_id == run_id))
            return None
    finally:
        engine.dispose()
