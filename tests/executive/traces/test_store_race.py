"""Processes opening a new trace store at the same moment (a batch's workers, a reader that
polls it) all get a working store: the loser of the CREATE race looks again."""

from __future__ import annotations

import multiprocessing as mp
import sys

from sqlalchemy import inspect

from executive.traces.engine import open_store


def _open(url: str, start: object) -> None:
    start.wait()  # type: ignore[attr-defined]
    try:
        open_store(url).dispose()
    except Exception as exc:  # said on stderr (pytest shows it), the exit code tells
        print(f"open_store failed: {exc!r}", file=sys.stderr, flush=True)
        raise SystemExit(1) from None


def test_processes_opening_a_new_store_at_once_all_succeed(tmp_path):
    for round_ in range(3):  # the race is a matter of timing: try it a few times
        url = f"sqlite:///{tmp_path / f'race{round_}.db'}"
        ctx = mp.get_context("fork")  # a fresh engine in each: nothing shared
        start = ctx.Event()
        procs = [ctx.Process(target=_open, args=(url, start)) for _ in range(4)]
        for p in procs:
            p.start()
        start.set()
        for p in procs:
            p.join(60)
        assert [p.exitcode for p in procs] == [0, 0, 0, 0]
        engine = open_store(url)
        assert "runs" in inspect(engine).get_table_names()
        engine.dispose()
