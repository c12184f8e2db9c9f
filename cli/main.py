"""The ``isr`` command: the app is built here, from every room's commands, when it runs.

    isr validate | plan | schema | sim | run | replay | ask | memory | dashboard

Nothing registers itself at import time: ``build_app()`` assembles the commands and
``main()`` runs them. Every command runs under one guard (``GuardedGroup``): an exception
no command expected is one line on stderr, ``error: internal error: ...``, and exit code 1,
never a traceback (``ISR_DEBUG=1`` lets it through with its traceback, for debugging). ``isr run`` gets the dashboard as its view through its own module
(``cli.run``), which is the only place the executive and the dashboard meet.
"""

from __future__ import annotations

import errno
import os
import signal
import sys
from typing import Any

import typer
from typer.core import TyperGroup

__all__ = ["DEBUG_ENV", "GuardedGroup", "build_app", "main"]

DEBUG_ENV = "ISR_DEBUG"  # set: an unexpected error shows its traceback


def _internal_error(exc: BaseException) -> typer.Exit:
    from cli.common import EXIT_FAILED, fail

    detail = str(exc).strip().splitlines()
    what = type(exc).__name__ + (f": {detail[0][:300]}" if detail else "")
    return fail(f"internal error: {what} (set {DEBUG_ENV}=1 to see where)", EXIT_FAILED)


def _guarded(exc: Exception) -> bool:
    """Whether the guard turns ``exc`` into one line: not typer's own exits, aborts and
    usage errors, nor a closed pipe (typer ends those quietly)."""
    if isinstance(exc, typer.Exit | typer.Abort | typer.TyperException):
        return False
    if isinstance(exc, OSError) and exc.errno == errno.EPIPE:
        return False
    return not os.environ.get(DEBUG_ENV)


class GuardedGroup(TyperGroup):
    """The ``isr`` group: whatever a command raises that it did not expect (MemoryError,
    RecursionError, a bug) becomes one line on stderr and exit code 1."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except Exception as exc:
            if not _guarded(exc):
                raise
            raise _internal_error(exc) from None


def build_app() -> typer.Typer:
    """The ``isr`` app with every command; each room is imported only now, when called."""
    from cli.compare import compare
    from cli.dashboard import dashboard
    from cli.eval import eval_app
    from cli.fork import fork
    from cli.interop import ExportCommand, import_app
    from cli.live import command, edit
    from cli.plan import plan, validate
    from cli.replay import replay_cmd
    from cli.report import report
    from cli.run import run
    from cli.runs import runs
    from cli.scenario import scenario_app
    from cli.schema import schema
    from cli.sim import sim
    from cli.words import ask, memory_app

    app = typer.Typer(
        cls=GuardedGroup,
        add_completion=False,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        help="ISR multi-drone mission system.",
    )
    app.command("validate")(validate)
    app.command("plan", cls=ExportCommand)(plan)  # --export may be repeated
    app.command("schema")(schema)
    app.command("sim")(sim)
    app.command("run")(run)
    app.command("replay")(replay_cmd)
    app.command("runs")(runs)
    app.command("fork")(fork)
    app.command("compare")(compare)
    app.command("report")(report)
    app.add_typer(eval_app, name="eval")
    app.command("ask")(ask)
    app.command("edit")(edit)
    app.command("command")(command)
    app.add_typer(memory_app, name="memory")
    app.add_typer(scenario_app, name="scenario")
    app.add_typer(import_app, name="import")
    app.command("dashboard")(dashboard)
    return app


def _terminated(signum: int, frame: object) -> None:
    """SIGTERM before a command's own handler is in place (while it starts): exit 143 at
    once, as a terminated command does, instead of dying by the signal."""
    raise SystemExit(143)


def main() -> None:
    """The ``isr`` entry point: build the app and run it on ``sys.argv``; whatever escapes
    even the commands' guard is one line and exit code 1. SIGTERM is an exit (143) from the
    first moment; a running mission handles it like Ctrl-C (``cli.common.run_async``)."""
    signal.signal(signal.SIGTERM, _terminated)
    try:
        build_app()()
    except Exception as exc:
        if not _guarded(exc):
            raise
        _internal_error(exc)
        sys.exit(1)


if __name__ == "__main__":
    main()
