"""``isr replay RUN``: re-execute a traced run from its recorded inputs and check that every
recorded state hash comes out the same. Exit 0 when exact, 1 on a mismatch, 2 on bad input."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.console import Console

from executive.cli_sim import _fail

__all__ = ["replay_cmd"]


def replay_cmd(
    run_id: Annotated[str, typer.Argument(help="the run id (or a unique prefix)")],
    db: Annotated[Optional[str], typer.Option(help="SQLAlchemy URL of the trace store")] = None,
) -> None:
    """Re-execute a traced run exactly and compare its state hashes."""
    from executive.errors import ExecutiveError
    from executive.replay import replay
    from executive.traces import TraceReader, default_url

    try:
        reader = TraceReader(db or default_url())
        run = reader.run(run_id)
        hashes = reader.state_hashes(run["run_id"])
        hash_every = run["config"].get("policy", {}).get("hash_every", 20)
        result = replay(run["scenario"], reader.inputs(run["run_id"]), hashes,
                        hash_every=hash_every)
    except ExecutiveError as exc:
        raise _fail(str(exc)) from None
    console = Console()
    if result.exact:
        console.print(f"run {run['run_id']}: replayed exactly — {result.compared} state hashes"
                      f" over {result.ticks} ticks match; final {result.final_hash}", highlight=False)
        return
    tick, want, got = (result.mismatches or [(None, "-", "-")])[0]
    console.print(f"run {run['run_id']}: {len(result.mismatches)} of {len(hashes)} state hashes"
                  f" differ (first at tick {tick}: recorded {want}, replayed {got})", highlight=False)
    raise typer.Exit(1)
