"""Reading traces back: runs, their inputs, events, plan versions, state hashes, telemetry.

Rows come back as plain dicts. A run id may be given by a unique prefix (4+ characters).
"""

from __future__ import annotations

from sqlalchemy import select

from executive.errors import ExecutiveError
from executive.traces import schema as S
from executive.traces.engine import open_store

__all__ = ["TraceReader"]


class TraceReader:
    def __init__(self, url: str) -> None:
        self.url = url
        self._engine = open_store(url)

    def _rows(self, query) -> list[dict]:
        with self._engine.connect() as conn:
            return [dict(row._mapping) for row in conn.execute(query)]

    def runs(self, limit: int = 50) -> list[dict]:
        q = select(S.runs.c.run_id, S.runs.c.started_at, S.runs.c.ended_at, S.runs.c.status,
                   S.runs.c.config, S.runs.c.outcome).order_by(S.runs.c.started_at.desc()).limit(limit)
        return [{**r, "total_points": (r.pop("outcome") or {}).get("total_points")}
                for r in self._rows(q)]

    def run(self, run_id: str) -> dict:
        if len(run_id) < 4:
            raise ExecutiveError(f"run id {run_id!r}: give at least 4 characters")
        rows = self._rows(select(S.runs).where(S.runs.c.run_id.startswith(run_id)).limit(2))
        if not rows:
            raise ExecutiveError(f"no run {run_id!r} in {self.url}")
        if len(rows) > 1:
            raise ExecutiveError(f"run id {run_id!r} is ambiguous in {self.url}: give more of it")
        return rows[0]

    def inputs(self, run_id: str) -> list[dict]:
        return self._rows(select(S.inputs).where(S.inputs.c.run_id == run_id)
                          .order_by(S.inputs.c.id))

    def events(self, run_id: str, since_tick: int | None = None) -> list[dict]:
        q = select(S.events).where(S.events.c.run_id == run_id)
        if since_tick is not None:
            q = q.where(S.events.c.tick >= since_tick)
        return self._rows(q.order_by(S.events.c.id))

    def plan_versions(self, run_id: str) -> list[dict]:
        return self._rows(select(S.plan_versions).where(S.plan_versions.c.run_id == run_id)
                          .order_by(S.plan_versions.c.tick))

    def state_hashes(self, run_id: str) -> dict[int, str]:
        rows = self._rows(select(S.state_hashes.c.tick, S.state_hashes.c.hash)
                          .where(S.state_hashes.c.run_id == run_id))
        return {r["tick"]: r["hash"] for r in rows}

    def last_telemetry(self, run_id: str) -> dict | None:
        rows = self._rows(select(S.telemetry).where(S.telemetry.c.run_id == run_id)
                          .order_by(S.telemetry.c.tick.desc()).limit(1))
        return rows[0] if rows else None

    def agent_runs(self, run_id: str) -> list[dict]:
        return self._rows(select(S.agent_runs).where(S.agent_runs.c.mission_run_id == run_id))

    def close(self) -> None:
        self._engine.dispose()
