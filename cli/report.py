"""``isr report``: a traced run as a static page (or picture) to share.

    isr report RUN --out report.html|report.png [--db URL]

The map of the flown paths, the charts (points collected and planned, fuel per drone with
the reserve, replan latency) and, in HTML, the plan history and the event list; one file,
nothing to serve. Bad input: one line on stderr, exit 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from cli.common import check_writable, fail, trace_url
from executive.errors import ExecutiveError
from executive.traces import TraceReader

__all__ = ["report"]


def report(
    run: Annotated[str, typer.Argument(help="the run (its id or a unique prefix)")],
    out: Annotated[Path, typer.Option(help="where to write it: a .html or .png file")],
    db: Annotated[str | None, typer.Option(help="SQLAlchemy URL of the trace store")] = None,
) -> None:
    """Write a run's report: map, charts, plans and events."""
    check_writable(out, "--out", (".html", ".png"))
    url = trace_url(db, must_exist=True)
    if url is None:
        raise fail("--db none: this command reads a trace store")
    from executive.traces.report import render_report  # matplotlib only when asked

    reader = TraceReader(url)
    try:
        written = render_report(reader, reader.run(run)["run_id"], out)
    except ExecutiveError as exc:
        raise fail(str(exc)) from None
    finally:
        reader.close()
    Console(stderr=True, highlight=False).print(f"wrote {written}", markup=False)
