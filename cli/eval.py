"""``isr eval``: every mission of a suite under every policy, on Dask, and its report.

    isr eval SUITE_DIR [--policies auto,review-accept-30s,no-replan,full-knowledge-t0,clairvoyant]
             [--engine rules]
             [--workers N] [--scheduler tcp://HOST:8786] [--db URL] [--limit N]
             [--no-agents] [--out DIR] [--json]
    isr eval report SUITE_NAME_OR_DIR --out report.html [--db URL] [--dashboard URL]

``SUITE_DIR`` is what ``isr scenario generate`` wrote (its ``suite.json`` lists the missions).
Each mission x policy runs headless as fast as possible on a Dask worker, traced to the store
(``--db``) with its suite, mission, policy and disruption, so any run can be replayed and
opened in the dashboard. By default a ``LocalCluster`` of ``--workers`` processes on this
machine; ``--scheduler`` uses an existing Dask cluster (its workers must reach the suite's
files and the store). Resumable: runs already stored for the suite are skipped. A run that
raises is retried once, one whose worker dies up to three times, and then reported as
failed; the batch goes on. Each task's run is stored once, whatever Dask runs again.
At the end: per policy and disruption class, points as a share of the clairvoyant reference's
(mean ± 95 % CI, median; ``mission.evaluation.figures.references``) and its gap to the
relaxation bound, or of the full-knowledge-at-t0 plan's when no clairvoyant run is in the
batch (labelled so: it is not an upper bound), drones lost to a known / an unknown SAM, fuel-outs, safety actions, replan latency;
with ``--out DIR`` also the report (``report.html`` and its PNG charts) there.

Each worker compiles (or loads from numba's on-disk cache) the planner's kernels once, when
it starts (a Dask worker plugin), not once per run.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from typer.core import TyperGroup

from cli.common import EXIT_FAILED, check_writable, fail, trace_url, write_atomically
from executive.traces import TraceReader
from mission.evaluation import POLICIES, VARIANTS, EvalTask
from mission.evaluation.figures import done_keys, reference_name, run_rows, suite_names, summary
from mission.evaluation.policies import config_for, suite_tasks

__all__ = ["eval_app"]


class _RunByDefault(TyperGroup):
    """``isr eval SUITE_DIR ...`` runs a batch; ``isr eval report ...`` writes a report:
    a first word that is not a subcommand is the suite of ``run``."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


eval_app = typer.Typer(
    cls=_RunByDefault,
    no_args_is_help=True,
    help="Run a suite under several policies on Dask (isr eval SUITE_DIR), or report on one.",
)


@eval_app.command("run")
def eval_cmd(
    suite: Annotated[Path, typer.Argument(help="a folder written by isr scenario generate")],
    policies: Annotated[str, typer.Option(help="comma-separated")] = ",".join(
        p for p in POLICIES if p not in VARIANTS
    ),
    workers: Annotated[int, typer.Option(help="local worker processes", min=1, max=64)] = 2,
    scheduler: Annotated[
        str | None, typer.Option(help="an existing Dask scheduler, tcp://HOST:PORT")
    ] = None,
    db: Annotated[str | None, typer.Option(help="SQLAlchemy URL of the trace store")] = None,
    limit: Annotated[int | None, typer.Option(help="only the first N missions", min=1)] = None,
    agents: Annotated[bool, typer.Option(help="the agent chain next to the planner")] = True,
    engine: Annotated[
        str, typer.Option(help="the agents' engine (rules: deterministic)")
    ] = "rules",
    out: Annotated[
        Path | None, typer.Option(help="a folder for the report (report.html and PNG charts)")
    ] = None,
    dashboard: Annotated[
        str, typer.Option(help="the dashboard the report's replay links open")
    ] = "http://127.0.0.1:8000",
    as_json: Annotated[bool, typer.Option("--json", help="the figures as one JSON object")] = False,
) -> None:
    """Run a suite under several policies on Dask and print how each did."""
    chosen = [p.strip() for p in policies.split(",") if p.strip()]
    unknown = [p for p in chosen if p not in POLICIES]
    if unknown or not chosen:
        raise fail(f"--policies {policies!r}: choose from {', '.join(POLICIES)}")
    if scheduler is not None and not scheduler.startswith(("tcp://", "tls://", "inproc://")):
        raise fail(f"--scheduler {scheduler!r}: a Dask address such as tcp://127.0.0.1:8786")
    url = trace_url(db)
    if url is None:
        raise fail("--db none: a batch is read back from its trace store")
    if out is not None and out.exists() and not out.is_dir():
        raise fail(f"--out {out}: not a folder")
    try:
        name, tasks = suite_tasks(suite, chosen, url, limit=limit, agents=agents, engine=engine)
    except ValueError as exc:
        raise fail(str(exc)) from None
    try:  # refused at the door, not by every worker
        config_for(tasks[0]) if tasks else None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "config"
        raise fail(f"--engine {engine!r}: {where}: {first['msg']}") from None
    reader = TraceReader(url)
    done = done_keys(reader, name)
    todo = [t for t in tasks if t.key not in done]
    err = Console(stderr=True, highlight=False)
    err.print(
        f"{name}: {len(tasks)} runs, {len(tasks) - len(todo)} already stored, {len(todo)} to run",
        markup=False,
    )
    failed = _run(todo, workers, scheduler, err) if todo else []
    rows = run_rows(reader, name, {t.mission for t in tasks})  # this batch's missions only
    reader.close()
    figures = summary(rows)
    if as_json:
        sys.stdout.write(
            json.dumps({"suite": name, "runs": len(rows), "failed": failed, "figures": figures})
            + "\n"
        )
    else:
        _print(name, figures, failed)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        _write_report(rows, out / "report.html", name, dashboard, failed, err)
    if failed:
        raise typer.Exit(EXIT_FAILED)


def _run(
    todo: list[EvalTask], workers: int, scheduler: str | None, err: Console
) -> list[dict[str, str]]:
    from mission.evaluation.batch import batch_client, run_batch, warm  # Dask: only to run

    with ExitStack() as closing:
        try:
            client = closing.enter_context(batch_client(workers, scheduler))
        except (OSError, TimeoutError) as exc:
            raise fail(f"--scheduler {scheduler}: cannot reach it ({exc})", EXIT_FAILED) from None
        seconds = warm(client)
        if seconds:
            took = ", ".join(f"{s:.1f}" for s in seconds.values())
            err.print(f"kernels ready on {len(seconds)} worker(s) in {took} s", markup=False)
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("failed {task.fields[failed]}"),
            TimeRemainingColumn(),
            console=err,
        ) as progress:
            bar = progress.add_task("runs", total=len(todo), failed=0)
            failures = 0

            def advance(task: EvalTask, error: str | None) -> None:
                nonlocal failures
                failures += error is not None
                progress.update(bar, advance=1, failed=failures)

            result = run_batch(client, todo, advance)
    wall = result.wall_s
    err.print(
        f"{len(todo)} runs in {wall:.0f} s ({60 * len(todo) / wall:.1f} missions per minute)",
        markup=False,
    )
    if result.retried:
        err.print(f"{len(result.retried)} run(s) retried by Dask", markup=False)
    return result.failed


def _fmt(x: float | None, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def _print(name: str, figures: list[dict[str, Any]], failed: list[dict[str, str]]) -> None:
    reference = reference_name(figures)
    if all(f["share_mean"] is None for f in figures):
        title = f"suite {name}: points (no reference run in this batch: no shares)"
    else:
        title = f"suite {name}: points as a share of {reference}, and what went wrong"
    table = Table(title=title)
    for column in (
        "policy",
        "disruption",
        "runs",
        "points",
        "share",
        "median",
        "gap to bound",
        "lost known SAM",
        "lost unknown SAM",
        "fuel-outs",
        "safety actions",
        "replan ms p50 / p95",
    ):
        table.add_column(column)
    for f in figures:
        mean, half = f["share_mean"], f["share_ci95"]
        share = "-" if mean is None else f"{100 * mean:.1f} %"
        if mean is not None and half is not None:
            share += f" ± {100 * half:.1f}"
        table.add_row(
            f["policy"],
            f["disruption"],
            str(f["runs"]),
            f"{f['points_mean']:.1f}",
            share,
            "-" if f["share_median"] is None else f"{100 * f['share_median']:.1f} %",
            "-" if f["bound_gap"] is None else f"{100 * f['bound_gap']:.1f} %",
            str(f["lost_known"]),
            str(f["lost_unknown"]),
            str(f["fuel_outs"]),
            str(f["safety_actions"]),
            f"{_fmt(f['latency_p50'], '.0f')} / {_fmt(f['latency_p95'], '.0f')}",
        )
    console = Console(emoji=False, highlight=False, width=180)  # twelve columns: not for 80
    console.print(table)
    for f in failed:
        console.print(f"failed: {f['key']}: {f['error']}", markup=False)


@eval_app.command("report")
def report_cmd(
    suite: Annotated[
        str,
        typer.Argument(help="the suite's name, as isr eval stored its runs, or its folder"),
    ],
    out: Annotated[Path, typer.Option(help="the report's .html (its PNG charts go beside it)")],
    db: Annotated[str | None, typer.Option(help="SQLAlchemy URL of the trace store")] = None,
    dashboard: Annotated[
        str, typer.Option(help="the dashboard the replay links open")
    ] = "http://127.0.0.1:8000",
) -> None:
    """Write the report of a suite's stored runs: table, charts, worst missions."""
    check_writable(out, "--out", (".html",))
    url = trace_url(db, must_exist=True)
    if url is None:
        raise fail("--db none: this command reads a trace store")
    suite = _suite_name(suite)
    reader = TraceReader(url)
    try:
        rows = run_rows(reader, suite)
        stored = suite_names(reader) if not rows else {}
    finally:
        reader.close()
    if not rows:
        listed = ", ".join(f"{n} ({k} runs)" for n, k in stored.items()) or "none"
        raise fail(f"{suite}: no ended run of this suite in the store ({url}); stored: {listed}")
    _print(suite, summary(rows), [])
    _write_report(rows, out, suite, dashboard, [], Console(stderr=True, highlight=False))


def _suite_name(given: str) -> str:
    """A suite's folder (its suite.json names it) or its name as given."""
    manifest = Path(given) / "suite.json"
    if not manifest.is_file():
        return given
    try:
        return str(json.loads(manifest.read_text())["spec"]["name"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise fail(f"{manifest}: not a suite written by isr scenario generate ({exc})") from None


def _writer(data: bytes) -> Callable[[Path], object]:
    return lambda tmp: tmp.write_bytes(data)


def _write_report(
    rows: list[dict[str, Any]],
    out: Path,
    suite: str,
    dashboard: str,
    failed: list[dict[str, str]],
    err: Console,
) -> None:
    from mission.evaluation.report import eval_report  # matplotlib only when asked

    files = eval_report(rows, out, suite=suite, dashboard=dashboard, failed=failed)
    for path, data in files.items():
        write_atomically(path, _writer(data))
    err.print(f"wrote {', '.join(str(p) for p in files)}", markup=False)
