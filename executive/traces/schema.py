"""The trace store's tables (SQLAlchemy 2.0 Core): one per trace record type.

Generic types only (JSON, not JSONB), so a SQLite file and a PostgreSQL URL hold the same.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
)

__all__ = [
    "METADATA",
    "agent_runs",
    "events",
    "inputs",
    "lessons",
    "memories",
    "plan_versions",
    "runs",
    "snapshots",
    "state_hashes",
    "telemetry",
    "writers",
]

METADATA = MetaData()


def _per_tick(name: str, *columns: Column[Any]) -> Table:
    """A table of rows stamped with a run and a tick, indexed for reading a run in order."""
    return Table(
        name,
        METADATA,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("run_id", String(32), nullable=False),
        Column("tick", Integer, nullable=False),
        *columns,
        Index(f"ix_{name}_run_tick", "run_id", "tick"),
    )


runs = Table(
    "runs",
    METADATA,
    Column("run_id", String(32), primary_key=True),
    Column("parent_run_id", String(32)),
    Column("scenario", JSON, nullable=False),
    Column("seed", Integer, nullable=False),
    Column("config", JSON, nullable=False),
    Column("started_at", Float, nullable=False),
    Column("ended_at", Float),
    Column("status", String(16), nullable=False, default="running"),
    Column("outcome", JSON),
    # The writer's heartbeat while the run is alive (Unix seconds), and the last tick it
    # stored: a run still "running" whose heartbeat stopped has crashed at that tick.
    Column("last_seen", Float),
    Column("last_tick", Integer),
    # inputs the run emitted (the last ``inputs.seq``), written with its end: a replay checks
    # that the store holds them all
    Column("inputs_emitted", Integer),
    # A batch task's key (isr eval: suite/mission/policy), unique: a task that Dask runs
    # again (a retry, a result lost with its worker) cannot store a second run.
    Column("batch_key", String(255)),
    Index("ux_runs_batch_key", "batch_key", unique=True),
)

inputs = _per_tick(
    "inputs",
    Column("kind", String(16), nullable=False),
    Column("payload", JSON, nullable=False),
    Column("source", String(16), nullable=False),
    Column("seq", Integer),  # 1, 2, 3 ... per run as emitted: a gap is a lost input
)

# A frame of the sim's shape is packed (``packing``; ``drones`` then holds {}), any other
# is JSON in ``drones``; the reader hands both back as ``drones``.
telemetry = _per_tick(
    "telemetry",
    Column("drones", JSON, nullable=False),
    Column("packed", LargeBinary),
)

events = _per_tick(
    "events", Column("kind", String(48), nullable=False), Column("payload", JSON, nullable=False)
)

plan_versions = Table(
    "plan_versions",
    METADATA,
    Column("plan_id", String(32), primary_key=True),
    Column("run_id", String(32), nullable=False, index=True),
    Column("parent_plan_id", String(32)),
    Column("round_id", String(32)),
    Column("tick", Integer, nullable=False),
    Column("status", String(16), nullable=False),
    Column("trigger", Text, nullable=False),
    # compressed in ``packed`` (``packing.pack_json``; then {}), or JSON from a store made
    # before packing: the reader hands both back as ``solution``
    Column("solution", JSON, nullable=False),
    Column("latency_ms", Float),
    Column("provenance", JSON),
    Column("packed", LargeBinary),
)

agent_runs = Table(
    "agent_runs",
    METADATA,
    Column("run_id", String(32), primary_key=True),
    Column("parent_run_id", String(32), index=True),
    Column("mission_run_id", String(32), nullable=False, index=True),
    Column("agent", String(32), nullable=False),
    Column("engine", String(16), nullable=False),
    Column("model", String(64)),
    Column("input_hash", String(32), nullable=False),
    Column("input_size", Integer, nullable=False),
    Column("tokens_in", Integer),
    Column("tokens_out", Integer),
    Column("duration_ms", Float, nullable=False),
    Column("raw_output", Text),
    Column("validated_output", JSON),
    Column("clamp_actions", JSON, nullable=False),
    Column("applied", Boolean, nullable=False),
    Column("error", Text),
    Column("tick", Integer),
)

state_hashes = _per_tick("state_hashes", Column("hash", String(64), nullable=False))

# A scene is stored compressed in ``packed`` (``packing.pack_json``; ``scene`` then holds
# {}); a store made before holds it as JSON in ``scene``. The reader hands both back.
snapshots = _per_tick(
    "snapshots", Column("scene", JSON, nullable=False), Column("packed", LargeBinary)
)

# Persistent memories (seed 001): instruction | note | preference | warning, injected into
# every agent prompt while active; removing one clears ``active`` (kept for the record).
memories = Table(
    "memories",
    METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("kind", String(16), nullable=False),
    Column("text", Text, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("active", Boolean, nullable=False, default=True),
)

# Outcome lessons (seed 003's learner): one per run that ended, computed from its report
# (agents.words.lessons); the most relevant recent ones go into agent prompts.
lessons = Table(
    "lessons",
    METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(32), nullable=False, unique=True),
    Column("mission", String(16), nullable=False, index=True),
    Column("classes", JSON, nullable=False),
    Column("text", Text, nullable=False),
    Column("value", JSON, nullable=False),
    Column("created_at", Float, nullable=False, index=True),
)

# Every trace writer that opened the store: the row it commits proves, before a run's
# first tick, that the store takes writes (executive.traces.writer).
writers = Table(
    "writers",
    METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("opened_at", Float, nullable=False),
    Column("host", String(64)),
    Column("pid", Integer),
)
