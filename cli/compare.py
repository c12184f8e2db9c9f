"""``isr compare``: two traced runs side by side.

    isr compare RUN_A RUN_B [--db URL] [--json]

Outcome (points, drones lost, fuel used, replans, ticks) of each, the differences, and the
first tick where their recorded states diverge (a run and its fork agree up to the fork;
replan against no-replan usually part at the first replan). Ids or unique prefixes. Bad
input: one line on stderr, exit 2.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from cli.common import cell, fail, trace_url
from executive.errors import ExecutiveError
from executive.traces import TraceReader
from executive.traces.analysis import compare as compare_runs

__all__ = ["compare", "compare_table"]


def compare_table(side: dict[str, Any]) -> Table:
    """``executive.traces.analysis.compare``'s answer as a table."""
    a, b = side["a"], side["b"]
    table = Table(title="compare")
    for column in ("", cell(a["run_id"]), cell(b["run_id"]), "b - a"):
        table.add_column(column)
    for key in ("points", "fuel_used", "replans", "ticks"):
        x, y = a[key], b[key]
        delta = f"{y - x:+g}" if isinstance(x, int | float) and isinstance(y, int | float) else ""
        table.add_row(
            key, f"{x:g}" if x is not None else "-", f"{y:g}" if y is not None else "-", delta
        )
    table.add_row("lost", cell(", ".join(a["lost"]) or "-"), cell(", ".join(b["lost"]) or "-"), "")
    table.add_row("status", a["status"], b["status"], "")
    diverged = side["first_divergence"]
    table.caption = (
        "the same state on every tick both recorded"
        if diverged is None
        else f"first divergence at tick {diverged}"
    )
    return table


def compare(
    run_a: Annotated[str, typer.Argument(help="a run id (or a unique prefix)")],
    run_b: Annotated[str, typer.Argument(help="another run id (or a unique prefix)")],
    db: Annotated[str | None, typer.Option(help="SQLAlchemy URL of the trace store")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="one JSON object")] = False,
) -> None:
    """Compare two traced runs: outcomes side by side and where they diverge."""
    url = trace_url(db, must_exist=True)
    if url is None:
        raise fail("--db none: this command reads a trace store")
    reader = TraceReader(url)
    try:
        side = compare_runs(reader, reader.run(run_a), reader.run(run_b))
    except ExecutiveError as exc:
        raise fail(str(exc)) from None
    finally:
        reader.close()
    if as_json:
        sys.stdout.write(json.dumps(side) + "\n")
        return
    Console(emoji=False, highlight=False).print(compare_table(side))
