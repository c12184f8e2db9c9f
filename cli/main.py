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
import importlib
import os
import signal
import sys
from typing import Any, Final

import typer
from typer.core import TyperGroup

__all__ = ["COMMANDS", "DEBUG_ENV", "GuardedGroup", "LazyGroup", "build_app", "main"]

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


# Every command: its name -> the module and attribute that hold it (a function, or a typer
# app for a group of its own), and the click command class it needs, if not the default.
# Only the command that runs is imported (`isr validate` never loads the executive, the
# dashboard or Dask); `isr --help` imports them all.
COMMANDS: Final[dict[str, tuple[str, ...]]] = {
    "validate": ("cli.plan", "validate"),
    "plan": ("cli.plan", "plan", "cli.interop", "ExportCommand"),  # --export may be repeated
    "schema": ("cli.schema", "schema"),
    "sim": ("cli.sim", "sim"),
    "run": ("cli.run", "run"),
    "replay": ("cli.replay", "replay_cmd"),
    "runs": ("cli.runs", "runs"),
    "fork": ("cli.fork", "fork"),
    "compare": ("cli.compare", "compare"),
    "report": ("cli.report", "report"),
    "eval": ("cli.eval", "eval_app"),
    "ask": ("cli.words", "ask"),
    "edit": ("cli.live", "edit"),
    "command": ("cli.live", "command"),
    "memory": ("cli.words", "memory_app"),
    "scenario": ("cli.scenario", "scenario_app"),
    "import": ("cli.interop", "import_app"),
    "dashboard": ("cli.dashboard", "dashboard"),
}


def _load(name: str) -> Any:  # a click command of typer's own (vendored) click
    """The click command of ``name``, its module imported now."""
    module, attribute, *cls_at = COMMANDS[name]
    target = getattr(importlib.import_module(module), attribute)
    if isinstance(target, typer.Typer):  # a group of its own: isr eval ..., isr scenario ...
        command: Any = typer.main.get_group(target)
    else:
        one = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
        cls = getattr(importlib.import_module(cls_at[0]), cls_at[1]) if cls_at else None
        one.command(name, cls=cls)(target)
        command = typer.main.get_command(one)
    command.name = name
    return command


class LazyGroup(GuardedGroup):
    """The ``isr`` group, its commands loaded when they are asked for (click's lazy group)."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            self.add_command(_load(cmd_name), cmd_name)
        return self.commands.get(cmd_name)


def build_app() -> typer.Typer:
    """The ``isr`` app; each command's room is imported only when that command is called."""
    app = typer.Typer(
        cls=LazyGroup,
        add_completion=False,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        help="ISR multi-drone mission system.",
    )
    app.callback()(_no_options)
    return app


def _no_options() -> None:
    """ISR multi-drone mission system."""


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
