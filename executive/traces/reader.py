"""Reading traces back: runs, their inputs, events, plan versions, state hashes, telemetry.

Rows come back as plain dicts, one key per column. ``run()`` takes a run id or, with
``prefix=True`` (the default, what the CLI offers), a unique prefix of it (4+ characters)
and returns the full id in its row; an exact id always wins, and a prefix is matched
literally (``_`` and ``%`` are escaped, never LIKE wildcards). ``run(..., prefix=False)``
matches exact ids only (the dashboard's ``/api/runs/{id}``). Both refuse an id that is not
1 to ``RUN_ID_MAX_LENGTH`` of ``RUN_ID_CHARACTERS`` (``run_id_problem``) before any query.
Every other method wants the full id. Reads are synchronous: call them off the event loop,
or between ticks.
"""

from __future__ import annotations

import contextlib
import re
import struct
import time
import zlib
from collections.abc import Iterator
from typing import Any

from sqlalchemy import ColumnElement, Select, Table, select

from executive.errors import ExecutiveError, TraceDamaged
from executive.traces import schema as S
from executive.traces.engine import open_store
from executive.traces.packing import unpack_frame, unpack_json

__all__ = [
    "MIN_PREFIX",
    "RUN_ID_CHARACTERS",
    "RUN_ID_MAX_LENGTH",
    "STALE_S",
    "Row",
    "TraceReader",
    "effective_status",
    "run_id_problem",
]

Row = dict[str, Any]
"""A stored row: one key per column, the JSON columns decoded (a run's config, a plan's
solution, an event's payload)."""

RUN_ID_MAX_LENGTH = 64  # ids are 16 hex digits (executive.contracts.new_id); names fit too
RUN_ID_CHARACTERS = "letters, digits, '_', '-', '.' and ':'"
_RUN_ID = re.compile(r"[A-Za-z0-9_.:-]+")
MIN_PREFIX = 4  # characters of a prefix, so that a short one is not a lottery

_Columns = tuple[Table | ColumnElement[Any], ...]  # what a ranged query selects


def run_id_problem(run_id: object) -> str | None:
    """What is wrong with ``run_id`` as a run id (one line), or None when it may be one."""
    if not isinstance(run_id, str) or not run_id:
        return "a run id is not empty"
    if len(run_id) > RUN_ID_MAX_LENGTH:
        return f"a run id is at most {RUN_ID_MAX_LENGTH} characters, got {len(run_id):,}"
    if not _RUN_ID.fullmatch(run_id):
        return f"run id {run_id!r}: a run id is made of {RUN_ID_CHARACTERS}"
    return None


# A run whose writer has not stamped it alive for this long is dead: the writer beats every
# few seconds while its process lives, whatever the pace of the run.
STALE_S = 30.0


def effective_status(row: Row, now: float | None = None) -> str:
    """A run's status as stored, except that a run still "running" whose heartbeat stopped
    more than ``STALE_S`` ago is "crashed" (killed, or its machine lost)."""
    status = str(row.get("status") or "running")
    if status != "running":
        return status
    seen = row.get("last_seen") or row.get("started_at") or 0.0
    return "crashed" if (now if now is not None else time.time()) - seen > STALE_S else status


class TraceReader:
    """Read-only queries on one trace store (``url``: any SQLAlchemy URL; tables are
    created if missing, so an empty store reads as no runs). ``close()`` when done."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._engine = open_store(url)

    def _rows(self, query: Select[Any]) -> list[Row]:
        with self._engine.connect() as conn:
            return [dict(row) for row in conn.execute(query).mappings()]

    def runs(self, limit: int = 50) -> list[Row]:
        """The newest ``limit`` runs first: id, start / end (Unix seconds), status, config
        and ``total_points`` (None until the run has ended)."""
        q = (
            select(
                S.runs.c.run_id,
                S.runs.c.started_at,
                S.runs.c.ended_at,
                S.runs.c.status,
                S.runs.c.config,
                S.runs.c.outcome,
                S.runs.c.last_seen,
                S.runs.c.last_tick,
            )
            .order_by(S.runs.c.started_at.desc())
            .limit(limit)
        )
        return [
            {
                **r,
                "status": effective_status(r),
                "total_points": (r.pop("outcome") or {}).get("total_points"),
            }
            for r in self._rows(q)
        ]

    def listing(
        self,
        *,
        limit: int = 50,
        offset: int = 0,
        status: str | None = None,
        scenario: str | None = None,
    ) -> list[Row]:
        """Runs newest first, summarised: id, scenario name, started (Unix s), duration
        (mission s), status (ended, interrupted, crashed, running), points, drones lost,
        replans, engine (each role's own after the run's, when roles are mixed: "rules;
        critic=openai:llama3.1"; ``engines``: those roles' engines), parent run. ``status``
        and ``scenario`` (a substring of the scenario file's name) filter; ``limit`` /
        ``offset`` page."""
        q = select(
            S.runs.c.run_id,
            S.runs.c.parent_run_id,
            S.runs.c.started_at,
            S.runs.c.ended_at,
            S.runs.c.status,
            S.runs.c.config,
            S.runs.c.outcome,
            S.runs.c.last_seen,
            S.runs.c.last_tick,
        ).order_by(S.runs.c.started_at.desc())
        out = []
        for r in self._rows(q):
            summary = _summary(r)
            if status is not None and summary["status"] != status:
                continue
            if scenario is not None and scenario not in (summary["scenario"] or ""):
                continue
            out.append(summary)
        return out[offset : offset + limit]

    def run(self, run_id: str, *, prefix: bool = True) -> Row:
        """The run's whole row (scenario, seed, config, outcome ...), by its id, or with
        ``prefix`` by a unique prefix of it (an exact id wins over longer ids it begins).

        Raises ``ExecutiveError`` for an id that cannot be one (``run_id_problem``), a prefix
        under ``MIN_PREFIX`` characters, no match or several matches.
        """
        problem = run_id_problem(run_id)
        if problem is not None:
            raise ExecutiveError(problem)
        exact = self._rows(select(S.runs).where(S.runs.c.run_id == run_id))
        rows = exact
        if not exact and prefix:
            if len(run_id) < MIN_PREFIX:
                raise ExecutiveError(
                    f"no run {run_id!r} in {self.url} (a prefix needs {MIN_PREFIX}+ characters)"
                )
            # autoescape: '_' and '%' in the id are literal characters, not LIKE wildcards
            rows = self._rows(
                select(S.runs).where(S.runs.c.run_id.startswith(run_id, autoescape=True)).limit(2)
            )
        if not rows:
            raise ExecutiveError(f"no run {run_id!r} in {self.url}")
        if len(rows) > 1:
            raise ExecutiveError(f"run id {run_id!r} is ambiguous in {self.url}: give more of it")
        return {**rows[0], "status": effective_status(rows[0])}

    def inputs(self, run_id: str) -> list[Row]:
        """The stamped edits and commands, in the order they were submitted (what a replay
        resubmits)."""
        return self._rows(
            select(S.inputs).where(S.inputs.c.run_id == run_id).order_by(S.inputs.c.id)
        )

    def events(self, run_id: str, since_tick: int | None = None) -> list[Row]:
        """The events in the order they were recorded; from tick ``since_tick`` on
        (inclusive) when given."""
        return self.events_range(run_id, since_tick or 0)

    def plan_versions(self, run_id: str) -> list[Row]:
        """Every plan version (committed, draft, superseded ...), by the tick it was made."""
        rows = self._rows(
            select(S.plan_versions)
            .where(S.plan_versions.c.run_id == run_id)
            .order_by(S.plan_versions.c.tick)
        )
        return [_json_in(row, "solution", run_id, "plan_versions") for row in rows]

    def state_hashes(self, run_id: str) -> dict[int, str]:
        """Tick -> the state hash recorded there (every ``hash_every`` ticks)."""
        rows = self._rows(
            select(S.state_hashes.c.tick, S.state_hashes.c.hash).where(
                S.state_hashes.c.run_id == run_id
            )
        )
        return {r["tick"]: r["hash"] for r in rows}

    def ticks(self, run_id: str, table: str) -> list[int]:
        """The ticks of ``table``'s rows of the run (``telemetry``, ``state_hashes`` ...),
        in tick order: what a completeness check counts."""
        t = S.METADATA.tables[table]
        rows = self._rows(select(t.c.tick).where(t.c.run_id == run_id).order_by(t.c.tick))
        return [int(r["tick"]) for r in rows]

    def input_numbers(self, run_id: str) -> list[tuple[int, int]]:
        """(seq, tick) of the run's numbered inputs, by number (none for runs stored before
        inputs were numbered): what a completeness check reads, without the payloads."""
        c = S.inputs.c
        rows = self._rows(
            select(c.seq, c.tick).where(c.run_id == run_id, c.seq.is_not(None)).order_by(c.seq)
        )
        return [(int(r["seq"]), int(r["tick"])) for r in rows]

    def last_telemetry(self, run_id: str) -> Row | None:
        """The latest telemetry row, or None when none was recorded."""
        return _frame(self._latest(S.telemetry, (S.telemetry,), run_id, 2**62), run_id)

    def agent_runs(self, run_id: str) -> list[Row]:
        """The agent runs recorded under this mission run, in no guaranteed order."""
        return self._rows(select(S.agent_runs).where(S.agent_runs.c.mission_run_id == run_id))

    # ----- ranges, for a replay that seeks and plays ---------------------------------------

    def _ranged(
        self, table: Table, columns: _Columns, run_id: str, start: int, end: int | None
    ) -> Select[Any]:
        """A query of ``columns`` of ``table``'s rows of ``run_id`` with start <= tick <= end."""
        q = select(*columns).where(table.c.run_id == run_id, table.c.tick >= start)
        return q if end is None else q.where(table.c.tick <= end)

    def _latest(self, table: Table, columns: _Columns, run_id: str, tick: int) -> Row | None:
        """``columns`` of ``table``'s last row of ``run_id`` at or before ``tick``."""
        rows = self._rows(
            self._ranged(table, columns, run_id, 0, tick).order_by(table.c.tick.desc()).limit(1)
        )
        return rows[0] if rows else None

    def telemetry_range(
        self, run_id: str, start: int = 0, end: int | None = None, every: int = 1
    ) -> list[Row]:
        """Telemetry rows with ``start <= tick <= end``, in tick order; with ``every`` > 1
        only the rows on ticks that are multiples of it (thinned in the database)."""
        t = S.telemetry
        q = self._ranged(t, (t.c.tick, t.c.drones, t.c.packed), run_id, start, end)
        if every > 1:
            q = q.where(t.c.tick % every == 0)
        return [_unpacked(row, run_id) for row in self._rows(q.order_by(t.c.tick))]

    def telemetry_at(self, run_id: str, tick: int) -> Row | None:
        """The last telemetry row (tick, drones) at or before ``tick``."""
        t = S.telemetry
        return _frame(self._latest(t, (t.c.tick, t.c.drones, t.c.packed), run_id, tick), run_id)

    def events_range(self, run_id: str, start: int = 0, end: int | None = None) -> list[Row]:
        """Events with ``start <= tick <= end``, in the order they were recorded."""
        q = self._ranged(S.events, (S.events,), run_id, start, end)
        return self._rows(q.order_by(S.events.c.id))

    def snapshot_at(self, run_id: str, tick: int) -> Row | None:
        """The last scene snapshot at or before ``tick`` (tick, scene), or None."""
        c = S.snapshots.c
        row = self._latest(S.snapshots, (c.tick, c.scene, c.packed), run_id, tick)
        return None if row is None else _json_in(row, "scene", run_id, "snapshots")

    def snapshots(self, run_id: str, start: int = 0, end: int | None = None) -> list[Row]:
        """The scene snapshots (tick, scene) with ``start <= tick <= end``, in tick order."""
        c = S.snapshots.c
        q = self._ranged(S.snapshots, (c.tick, c.scene, c.packed), run_id, start, end)
        rows = self._rows(q.order_by(c.tick))
        return [_json_in(row, "scene", run_id, "snapshots") for row in rows]

    def close(self) -> None:
        """Release the database connections."""
        self._engine.dispose()


_ROLES = ("strategist", "allocator", "critic", "responder")  # the roles that ask an engine


def _label(spec: Row) -> str:
    """``engine[:model]`` of a recorded engine spec (never its server's key)."""
    engine = str(spec.get("engine") or "rules")
    return engine + (f":{spec['model']}" if spec.get("model") else "")


def _role_engines(config: Row) -> dict[str, str]:
    """The engine of each role the recorded configuration gives its own, when it differs
    from the run's (``engine``, ``model``, ``engine_url``); with the agents off only the
    responder's counts (the planning roles ask none). The server is named only where the
    label alone would not tell it from the run's."""
    default = {
        "engine": config.get("engine") or "rules",
        "model": config.get("model"),
        "base_url": config.get("engine_url"),
    }
    own = config.get("agent_engines") or {}
    roles = _ROLES if config.get("agents", True) else ("responder",)
    out: dict[str, str] = {}
    for role in roles:
        spec = own.get(role)
        if not isinstance(spec, dict):
            continue
        mine = {key: spec.get(key) for key in default}
        if mine["engine"] is None:
            mine["engine"] = "rules"
        if mine == default:
            continue
        label = _label(mine)
        if label == _label(default) and mine["base_url"]:
            label += f"@{mine['base_url']}"
        out[role] = label
    return out


def _engines_text(config: Row) -> str:
    """The run's engine ("none" with the agents off) and each role's own where roles are
    mixed: "rules; critic=openai:llama3.1"."""
    default = _label(config) if config.get("agents", True) else "none"
    own = _role_engines(config)
    return "; ".join([default, *(f"{role}={label}" for role, label in own.items())])


def _summary(row: Row) -> Row:
    """One line of ``listing``: what a person picks a run by."""
    config = row.get("config") or {}
    outcome = row.get("outcome") or {}
    policy = config.get("policy") or {}
    hz = 20.0
    ticks = outcome.get("ticks") or row.get("last_tick")
    file = config.get("scenario_file") or ""
    return {
        "run_id": row["run_id"],
        "parent_run_id": row.get("parent_run_id"),
        "scenario": file.rsplit("/", 1)[-1] if file else None,
        "started_at": row["started_at"],
        "duration_s": outcome.get("sim_seconds") or ((ticks or 0) / hz if ticks else None),
        "status": effective_status(row),
        "points": outcome.get("total_points"),
        "lost": len(outcome.get("lost") or []),
        "replans": len(outcome.get("replans") or []),
        "engine": _engines_text(config),
        "engines": _role_engines(config),
        "commit": policy.get("commit", "auto"),
        "fork": config.get("fork"),
    }


def _frame(row: Row | None, run_id: str) -> Row | None:
    return None if row is None else _unpacked(row, run_id)


def _json_in(row: Row, key: str, run_id: str, table: str) -> Row:
    """A row with packed JSON (``packing.pack_json``) as it was given: unpacked into
    ``key``; a row a store made before packing holds is read as it is."""
    packed = row.pop("packed", None)
    if packed is not None:
        with _readable(run_id, table, row):
            row[key] = unpack_json(packed)
    return row


def _unpacked(row: Row, run_id: str) -> Row:
    """A telemetry row as it was given: a packed frame unpacked into ``drones``."""
    packed = row.pop("packed", None)
    if packed is not None:
        with _readable(run_id, "telemetry", row):
            row["drones"] = unpack_frame(packed)
    return row


@contextlib.contextmanager
def _readable(run_id: str, table: str, row: Row) -> Iterator[None]:
    """A packed value that does not unpack (a damaged file, a row written by something
    else) as ``TraceDamaged`` naming the run, the table and the row's tick: never a
    traceback, never read as an empty scene or frame."""
    try:
        yield
    except (ValueError, zlib.error, struct.error) as exc:  # JSON and UTF-8 errors are ValueErrors
        raise TraceDamaged(
            f"run {run_id}: the trace store's {table} row at tick {row.get('tick')} is damaged"
            f" and cannot be read ({exc})"
        ) from exc
