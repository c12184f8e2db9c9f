"""``isr runs``: the runs in a trace store, newest first.

    isr runs [--db URL] [--status ended|interrupted|crashed|running] [--scenario NAME]
             [--limit N] [--json]

One line per run: id, scenario, started, mission duration, status, points, drones lost,
replans, engine (the run's, then each role's own when roles are mixed: "rules;
critic=openai:llama3.1"), parent run (for a fork). A run still "running" whose writer stopped
beating is shown as crashed. Bad options: one line on stderr, exit 2.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from cli.common import fail, trace_url

__all__ = ["runs"]

STATUSES = ("ended", "interrupted", "crashed", "running", "failed")


def runs(
    db: Annotated[str | None, typer.Option(help="SQLAlchemy URL of the trace store")] = None,
    status: Annotated[str | None, typer.Option(help="only runs with this status")] = None,
    scenario: Annotated[
        str | None, typer.Option(help="only runs whose scenario file's name contains this")
    ] = None,
    limit: Annotated[int, typer.Option(help="at most this many", min=1, max=10_000)] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="one JSON array")] = False,
) -> None:
    """List the runs in a trace store, newest first."""
    from executive.errors import ExecutiveError
    from executive.traces import TraceReader

    if status is not None and status not in STATUSES:
        raise fail(f"--status {status!r}: choose one of {', '.join(STATUSES)}")
    url = trace_url(db, must_exist=True)
    if url is None:
        raise fail("--db none: this command reads a trace store")
    try:
        reader = TraceReader(url)
        rows = reader.listing(limit=limit, status=status, scenario=scenario)
        reader.close()
    except ExecutiveError as exc:
        raise fail(str(exc)) from None
    if as_json:
        sys.stdout.write(json.dumps(rows) + "\n")
        return
    table = Table(title=f"{len(rows)} run(s) in {url}")
    for column in (
        "run",
        "scenario",
        "started",
        "duration",
        "status",
        "points",
        "lost",
        "replans",
        "engine",
        "parent",
    ):
        table.add_column(column)
    for r in rows:
        started = dt.datetime.fromtimestamp(r["started_at"]).strftime("%Y-%m-%d %H:%M:%S")
        duration = r["duration_s"]
        table.add_row(
            r["run_id"],
            escape(r["scenario"] or "-"),
            started,
            f"{duration / 60:.1f} min" if duration else "-",
            r["status"],
            "-" if r["points"] is None else f"{r['points']:g}",
            str(r["lost"]),
            str(r["replans"]),
            escape(str(r["engine"] or "-")),
            (r["parent_run_id"] or "-")
            + (f" @ tick {r['fork']['tick']}" if isinstance(r.get("fork"), dict) else ""),
        )
    Console().print(table)
