"""Issue 24's fault table for the trace store: rows lost unreported, per fault.

    python bench/trace_faults.py [--quick] [--no-postgres]

Each fault flies ``scenarios/demo.json`` (agents off, as fast as possible) through
``mission.session.run_mission`` with the default writer (retries for 60 s) and a list sink
beside the store that counts every record the run emitted. Per table (inputs, telemetry,
events, state hashes, snapshots, agent runs) ``unreported = emitted - stored - counted lost``;
the table prints the sum (target: 0 in each row), the rows counted lost, whether the run's
result says its trace is incomplete, and what ``isr replay`` says of the run.

* disk full: the store on a 3 MB tmpfs (root only);
* locked 20 s: another process holds the SQLite file ``BEGIN EXCLUSIVE`` for 20 s from when
  the run's row lands (``--quick``: 8 s);
* read-only: the store's tmpfs remounted read-only before the run (refused before the first
  tick: nothing flies, nothing is lost);
* PostgreSQL down 15 s: a database of the bench's own refuses new connections and has its
  open ones killed for 15 s (``--quick``: 5 s); the shared server is never stopped.

The fault helpers are the tests' (``tests/executive/traces/fault_kit.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import re
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import sqlalchemy as sa
from typer.testing import CliRunner

from cli.main import build_app
from executive.errors import ExecutiveError
from executive.loop import Policy
from executive.traces.loss import table_of
from executive.traces.sinks import ListSink
from mission.config import RunConfig
from mission.session import run_mission
from planner.scenario import load_scenario
from tests.executive.traces.fault_kit import (
    held_exclusive,
    pg_refused,
    remount_read_only,
    tiny_tmpfs,
)

TABLES = ("inputs", "telemetry", "events", "state_hashes", "snapshots", "agent_runs")
POSTGRES_ADMIN = "postgresql://postgres@127.0.0.1:5432/test"


def _stored(url: str, run_id: str) -> Counter[str]:
    engine = sa.create_engine(url)
    out: Counter[str] = Counter()
    try:
        with engine.connect() as conn:
            for table in TABLES:
                column = "mission_run_id" if table == "agent_runs" else "run_id"
                out[table] = conn.execute(
                    sa.text(f"select count(*) from {table} where {column} = :r"), {"r": run_id}
                ).scalar_one()
    finally:
        engine.dispose()
    return out


def _fly(url: str, during: Callable[[str], contextlib.AbstractContextManager[Any]]) -> dict:
    """One run with the fault ``during(url)`` applied from when its row lands."""
    live = ListSink()
    config = RunConfig(trace_url=url, agents=False, policy=Policy(replan=False))
    started = threading.Event()
    stop = threading.Event()

    def fault() -> None:
        while not stop.is_set():  # the run's row is queued: the run is flying
            if any(type(r).__name__ == "RunRecord" for r in live.records[:1]):
                break
            time.sleep(0.05)
        if stop.is_set():
            return
        started.set()
        with during(url):
            pass

    thread = threading.Thread(target=fault, daemon=True)
    thread.start()
    began = time.perf_counter()
    try:
        report = asyncio.run(
            run_mission(load_scenario(ROOT / "scenarios" / "demo.json"), config, sink=live)
        )
    finally:
        stop.set()
        thread.join(120)
    wall = time.perf_counter() - began
    assert report is not None
    emitted: Counter[str] = Counter(table_of(r) for r in live.records)
    stored = _stored(url, report.run_id)
    lost = {t: v["rows"] for t, v in report.trace_lost.items()}
    unreported = sum(max(0, emitted[t] - stored[t] - lost.get(t, 0)) for t in TABLES)
    replay = CliRunner().invoke(build_app(), ["replay", report.run_id, "--db", url])
    said = " ".join(replay.output.split())
    return {
        "emitted": sum(emitted[t] for t in TABLES),
        "stored": sum(stored[t] for t in TABLES),
        "lost (counted)": report.trace_dropped,
        "unreported": unreported,
        "run says": "trace incomplete" if not report.trace_complete else "complete",
        "replay": f"exit {replay.exit_code}: {_replay_said(said)}",
        "wall s": f"{wall:.0f}",
        "fault applied": started.is_set(),
    }


def _replay_said(said: str) -> str:
    """The gist of what ``isr replay`` said."""
    parts = []
    if gap := re.search(r"the trace is incomplete: ([^;]+?)(?: run |$)", said):
        parts.append(f"incomplete: {gap.group(1)[:60]}")
    if "holds no end" in said:
        parts.append("no end stored")
    if exact := re.search(r"replayed exactly( up to tick \d+)?", said):
        parts.append(exact.group(0))
    elif "not exactly" in said:
        parts.append("not exact")
    return "; ".join(parts) or said[:90]


def disk_full(tmp: Path) -> dict:
    with tiny_tmpfs(tmp / "full", "3m") as where:
        return _fly(f"sqlite:///{where / 'runs.db'}", lambda url: contextlib.nullcontext())


def locked(tmp: Path, seconds: float) -> dict:
    path = tmp / "locked.db"
    return _fly(f"sqlite:///{path}", lambda url: held_exclusive(path, seconds))


def read_only(tmp: Path) -> dict:
    from executive.traces import TraceWriter

    where = tmp / "ro"
    with tiny_tmpfs(where, "4m"):
        url = f"sqlite:///{where / 'runs.db'}"
        TraceWriter(url).close()
        remount_read_only(where)
        try:
            asyncio.run(
                run_mission(
                    load_scenario(ROOT / "scenarios" / "demo.json"),
                    RunConfig(trace_url=url, agents=False),
                )
            )
        except ExecutiveError as exc:
            return {
                "emitted": 0,
                "stored": 0,
                "lost (counted)": 0,
                "unreported": 0,
                "run says": f"refused before the first tick: {str(exc)[-60:]}",
                "replay": "-",
                "wall s": "0",
                "fault applied": True,
            }
    raise AssertionError("a read-only store was not refused")


@contextlib.contextmanager
def _pg_database() -> Iterator[tuple[str, str]]:
    import psycopg
    from psycopg import sql

    name = f"isr_bench_faults_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(POSTGRES_ADMIN, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}", name
    finally:
        with psycopg.connect(POSTGRES_ADMIN, autocommit=True) as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


def postgres_down(seconds: float) -> dict:
    with _pg_database() as (url, name):
        return _fly(url, lambda _: pg_refused(POSTGRES_ADMIN, name, seconds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.CRITICAL)
    rows: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        if os.geteuid() == 0:
            rows["disk full (3 MB tmpfs)"] = disk_full(tmp)
        lock_s = 8.0 if args.quick else 20.0
        rows[f"store locked {lock_s:g} s"] = locked(tmp, lock_s)
        if os.geteuid() == 0:
            rows["store read-only"] = read_only(tmp)
        if not args.no_postgres:
            pg_s = 5.0 if args.quick else 15.0
            rows[f"PostgreSQL down {pg_s:g} s"] = postgres_down(pg_s)
    print(f"uptime: {os.popen('uptime').read().strip()}")
    columns = ["fault", *next(iter(rows.values())).keys()]
    print(" | ".join(columns))
    for fault, row in rows.items():
        print(" | ".join([fault, *(str(row[c]) for c in columns[1:])]))


if __name__ == "__main__":
    main()
