"""``isr replay RUN``: re-execute a traced run from its recorded inputs and check that every
recorded state hash comes out the same. Exit 0 when exact, 1 on a mismatch, 2 on bad input,
3 when the trace is incomplete (telemetry, state hashes or inputs missing: the replay runs
what was stored, names the missing tick ranges, and never says "exactly"; a mismatch then
is most likely the gap's doing, and is reported with it).

RUN is a run id or a unique prefix of one (4+ characters; ``TraceReader.run``: an exact id
always wins, and a prefix is matched literally, ``_`` and ``%`` included)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from cli.common import EXIT_TRACE_INCOMPLETE, cell, fail, trace_url

__all__ = ["replay_cmd"]


def replay_cmd(
    run_id: Annotated[str, typer.Argument(help="the run id (or a unique prefix)")],
    db: Annotated[str | None, typer.Option(help="SQLAlchemy URL of the trace store")] = None,
) -> None:
    """Re-execute a traced run exactly and compare its state hashes."""
    from executive.errors import ExecutiveError
    from executive.traces import TraceReader
    from executive.traces.completeness import check
    from executive.traces.replay import replay

    try:
        reader = TraceReader(trace_url(db, must_exist=True) or "")
        run = reader.run(run_id)
        hashes = reader.state_hashes(run["run_id"])
        policy = (run.get("config") or {}).get("policy") or {}
        hash_every = policy.get("hash_every", 20)
        # A run that did not end (interrupted, crashed) is replayed as far as it was stored.
        early = run["status"] != "ended"
        why = (run.get("outcome") or {}).get("error")  # "terminated by SIGTERM", an error
        ended_as = f"{run['status']}: {why}" if early and why else run["status"]
        last = max([*hashes, run.get("last_tick") or 0])  # the last tick it stored
        inputs = reader.inputs(run["run_id"])
        whole = check(reader, run)
        if early and not any(r["kind"] in ("edit", "command") for r in inputs):
            Console(emoji=False, highlight=False).print(
                cell(
                    f"run {run['run_id']}: the run ended early at tick {last}"
                    f" ({ended_as}), before it recorded an input: nothing to replay"
                )
            )
            return
        result = replay(
            run["scenario"],
            inputs,
            hashes,
            hash_every=hash_every,
            until=last + 1 if early else None,
        )
    except ExecutiveError as exc:
        raise fail(str(exc)) from None
    console = Console(emoji=False, highlight=False)
    say = lambda text: console.print(cell(text))  # noqa: E731 - stored text, never markup
    if not whole.complete:
        say(f"run {run['run_id']}: the trace is incomplete: {whole.describe()}")
    if early:
        # No end record: the process was killed, or the store stopped taking writes (a full
        # disk): nothing in the store tells which, so say both, and claim no more than it holds.
        unended = (
            ""
            if run.get("ended_at")
            else (
                "; the store holds no end for it (its process killed, or the store stopped taking"
                " writes: the run's own exit said which)"
            )
        )
        say(
            f"run {run['run_id']}: the run ended early at tick {last}"
            f" ({ended_as}){unended}; replaying what it stored"
        )
    if early and result.compared == 0 and not result.mismatches:
        say(
            f"run {run['run_id']}: replayed its {result.ticks} ticks; it stored no state hash"
            " before it ended, so there is nothing to compare"
        )
        if not whole.complete:
            raise typer.Exit(EXIT_TRACE_INCOMPLETE)
        return
    if result.exact and not whole.complete:
        say(
            f"run {run['run_id']}: replayed what was stored, not exactly: {result.compared}"
            f" stored state hashes over {result.ticks} ticks match, but the trace is incomplete"
        )
        raise typer.Exit(EXIT_TRACE_INCOMPLETE)
    if result.exact:
        upto = f" up to tick {last}, where its stored trace ends" if early else ""
        say(
            f"run {run['run_id']}: replayed exactly{upto} — {result.compared} state hashes"
            f" over {result.ticks} ticks match; final {result.final_hash}"
        )
        return
    tick, want, got = result.mismatches[0] if result.mismatches else (-1, "-", "-")
    say(
        f"run {run['run_id']}: {len(result.mismatches)} of {len(hashes)} state hashes"
        f" differ (first at tick {tick}: recorded {want}, replayed {got})"
    )
    raise typer.Exit(1 if whole.complete else EXIT_TRACE_INCOMPLETE)
