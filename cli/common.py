"""What every ``isr`` command shares: errors on stderr with an exit code, loading a
scenario, writing a file whole, the speed and URL options.

Bad input never produces a traceback: every problem is one line on stderr naming the file
and the JSON path (or the option), and the exit code is 2; a failure that is not the
input's fault exits 1 (anything unexpected too: ``cli.main`` guards every command). Text
from the input is printed as text, never read as markup: ``shown`` makes it one printable
line, ``cell`` a rich ``Text`` for tables and titles, and ``fail`` escapes what it prints.
"""

from __future__ import annotations

import contextlib
import math
import os
import secrets
import signal
import tempfile
from collections.abc import Callable, Coroutine, Iterable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from pydantic import SecretStr
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from planner.model import Scenario
from planner.scenario import ScenarioError, load_scenario

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_TERMINATED",
    "EXIT_TRACE_INCOMPLETE",
    "MQTT_PASSWORD_ENV",
    "TOKEN_ENV",
    "HostOption",
    "MqttCaOption",
    "MqttPasswordFileOption",
    "PortOption",
    "TokenOption",
    "cell",
    "check_mqtt_url",
    "check_number",
    "check_writable",
    "control_token",
    "fail",
    "load",
    "mqtt_password",
    "parse_speed",
    "run_async",
    "shown",
    "token_from_env",
    "token_line",
    "trace_url",
    "write_atomically",
]

EXIT_BAD_INPUT = 2
EXIT_FAILED = 1
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143  # 128 + SIGTERM
EXIT_TRACE_INCOMPLETE = 3  # the run flew (or replayed) but its trace misses records
T = TypeVar("T")
TOKEN_ENV = "ISR_TOKEN"  # the dashboard's control token, when --token is not given
MQTT_PASSWORD_ENV = "ISR_MQTT_PASSWORD"  # the broker's password, when not in a file or URL

# The dashboard's options, the same on every command that serves one.
HostOption = Annotated[str, typer.Option(help="address to serve the dashboard on")]
PortOption = Annotated[int, typer.Option(help="port (0: any free one)", min=0, max=65535)]
TokenOption = Annotated[
    str | None,
    typer.Option(
        help=f"control token for commands and edits (default: ${TOKEN_ENV} or a fresh random one)"
    ),
]


# At most this many problems are printed, then one line saying how many more there are.
MAX_PROBLEMS_SHOWN = 50


def shown(text: object) -> str:
    """``text`` as one printable line: control characters, line breaks and anything else
    not printable (lone surrogates included) written as their escapes (``\\n``,
    ``\\x1b``). Input text goes through this wherever the CLI prints it."""
    line = str(text)
    if line.isprintable():
        return line
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape", "backslashreplace").decode("ascii")
        for c in line
    )


def cell(text: object, style: str = "") -> Text:
    """``text`` for a rich table cell or title: ``shown``, and never read as markup."""
    return Text(shown(text), style=style)


def fail(message: str | Iterable[str], code: int = EXIT_BAD_INPUT) -> typer.Exit:
    """Print each problem (each line of a string, or each item) as one error line on stderr,
    as text; the exit to raise. Past ``MAX_PROBLEMS_SHOWN`` the rest are counted."""
    lines = message.splitlines() if isinstance(message, str) else [str(m) for m in message]
    if len(lines) > MAX_PROBLEMS_SHOWN:
        more = len(lines) - MAX_PROBLEMS_SHOWN
        lines = [*lines[:MAX_PROBLEMS_SHOWN], f"... and {more} more problem(s)"]
    err = Console(stderr=True, emoji=False, highlight=False)
    for line in lines or ["(no detail)"]:
        err.print(f"[bold red]error:[/] {escape(shown(line))}", soft_wrap=True)
    return typer.Exit(code)


def check_number(value: float, option: str, low: float, high: float) -> None:
    """Refuse an ``option`` value outside [low, high], NaN included (click lets NaN through
    its ranges); exit 2."""
    if not low <= value <= high:
        raise fail(f"{option} {value!r}: expected a number from {low:g} to {high:g}")


def load(path: Path) -> Scenario:
    """The scenario in ``path``, or every problem in it on stderr and exit 2."""
    try:
        return load_scenario(path)
    except ScenarioError as exc:
        raise fail(f"{exc.source}: {p}" for p in exc.problems) from None


def parse_speed(text: str, option: str = "--speed") -> float | None:
    """'max' (None: as fast as possible) or a positive multiple of real time."""
    from sim.pacing import MAX_SPEED, MIN_SPEED  # the simulation only for commands that fly

    if text.strip().lower() == "max":
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (MIN_SPEED <= value <= MAX_SPEED):  # NaN fails this too
        raise fail(
            f"{option} {text!r}: expected 'max' or a number from {MIN_SPEED:g} to"
            f" {MAX_SPEED:g} (times real time)"
        )
    return value


# The MQTT options, the same on every command that talks to a broker.
MqttCaOption = Annotated[
    Path | None,
    typer.Option(
        "--mqtt-ca", help="CA certificate (PEM) that checks an mqtts:// broker", metavar="FILE"
    ),
]
MqttPasswordFileOption = Annotated[
    Path | None,
    typer.Option(
        "--mqtt-password-file",
        help=f"file holding the broker password for the URL's user (or ${MQTT_PASSWORD_ENV})",
        metavar="FILE",
    ),
]


def check_mqtt_url(url: str | None, option: str = "--mqtt") -> None:
    """Refuse an ``option`` value that is not a broker URL, ``mqtt[s]://[USER[:PASSWORD]@]
    HOST[:PORT]`` (exit 2, the password masked in the message); None passes."""
    if url is None:
        return
    from executive.bus.mqtt import parse_mqtt_url
    from executive.errors import ExecutiveError

    try:
        parse_mqtt_url(url)
    except ExecutiveError as exc:
        raise fail(f"{option}: {exc}") from None


def mqtt_password(
    url: str | None, password_file: Path | None, ca_file: Path | None
) -> SecretStr | None:
    """The broker password for ``url``: from ``--mqtt-password-file`` (its first line), else
    ``$ISR_MQTT_PASSWORD``; None when the URL has one already, or there is none. Never
    printed. Refuses (exit 2): a password given twice, one without a user in the URL, an
    unreadable or empty file, ``--mqtt-ca`` that is not a file or without mqtts://, any of
    them without ``--mqtt``."""
    if url is None:
        if password_file is not None or ca_file is not None:
            raise fail("--mqtt-password-file and --mqtt-ca need --mqtt URL")
        return None
    from executive.bus.mqtt import parse_mqtt_url

    address = parse_mqtt_url(url)  # checked already by check_mqtt_url
    if ca_file is not None:
        if not address.tls:
            raise fail(f"--mqtt-ca {ca_file}: a CA file is for TLS: use mqtts://HOST[:PORT]")
        if not ca_file.is_file():
            raise fail(f"--mqtt-ca {ca_file}: no such file")
    if password_file is not None:
        if address.password is not None:
            raise fail("--mqtt-password-file: the URL holds a password already; give it once")
        try:
            lines = password_file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "unreadable"
            raise fail(f"--mqtt-password-file {password_file}: {reason}") from None
        if not lines or not lines[0]:
            raise fail(f"--mqtt-password-file {password_file}: the first line is empty")
        password = SecretStr(lines[0])
    elif address.password is None and os.environ.get(MQTT_PASSWORD_ENV):
        password = SecretStr(os.environ[MQTT_PASSWORD_ENV])
    else:
        return None
    if not address.user:
        raise fail(
            "--mqtt: a broker password needs a user name in the URL: mqtt[s]://USER@HOST:PORT"
        )
    return password


def control_token(token: str | None) -> str:
    """The dashboard's control token: the option, else $ISR_TOKEN, else a fresh one."""
    return token or os.environ.get(TOKEN_ENV) or secrets.token_urlsafe(12)


def token_from_env(token: str | None) -> bool:
    """Whether the control token comes from $ISR_TOKEN: then it is never printed."""
    return not token and bool(os.environ.get(TOKEN_ENV))


def token_line(token: str, *, from_env: bool) -> str:
    """The line that names the control token: the token itself unless it is $ISR_TOKEN's."""
    if from_env:
        return f"control token: ${TOKEN_ENV} (not printed)"
    return f"control token: {token}  (Authorization: Bearer TOKEN)"


def trace_url(db: str | None, *, must_exist: bool = False) -> str | None:
    """The trace store's URL from ``--db`` (None: 'none', no traces); checked to be a
    SQLAlchemy URL, and with ``must_exist`` a SQLite file that is there."""
    if db is not None and db.strip().lower() == "none":
        return None  # before SQLAlchemy is imported: a run without a store never loads it
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    from executive.traces import default_url

    url = db or default_url()
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise fail(f"--db {url!r}: not a SQLAlchemy URL (e.g. {default_url()})") from None
    if (
        must_exist
        and parsed.get_backend_name() == "sqlite"
        and parsed.database
        and parsed.database != ":memory:"
        and not Path(parsed.database).is_file()
    ):
        raise fail(f"--db {url!r}: no trace store at {parsed.database} (run isr run first)")
    return url


def check_writable(path: Path | None, option: str, suffixes: tuple[str, ...]) -> None:
    """Refuse an output path before any work is done: wrong suffix, no folder, a folder."""
    if path is None:
        return
    if path.suffix.lower() not in suffixes:
        raise fail(f"{option} {path}: expected a file ending in {' or '.join(suffixes)}")
    if not path.parent.exists() or not path.parent.is_dir():
        raise fail(f"{option} {path}: folder {path.parent} does not exist")
    if path.is_dir():
        raise fail(f"{option} {path}: is a folder")


def write_atomically(path: Path, write: Callable[[Path], object]) -> None:
    """Write through a temporary file in the same folder, then rename: never half a file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=path.suffix)
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def run_async(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` with SIGTERM handled like Ctrl-C: the main task is cancelled,
    so every ``finally`` runs (traces flushed, the run's end recorded and its status
    published as ``interrupted``, "terminated by SIGTERM": ``executive.bus.exits``), then the
    command exits 143."""
    import asyncio  # here: isr validate, plan, schema... never start an event loop

    from executive.bus.exits import TERMINATED  # only commands that fly or serve get here

    terminated = False

    async def guarded() -> T:
        nonlocal terminated
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()

        def on_term() -> None:
            nonlocal terminated
            terminated = True
            if task is not None:
                task.cancel(TERMINATED)  # the run's final status names the signal

        # Only the main thread may handle signals; elsewhere SIGTERM keeps its default.
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signal.SIGTERM, on_term)
        try:
            return await main
        finally:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(signal.SIGTERM)

    try:
        result = asyncio.run(guarded())
    except asyncio.CancelledError:
        if terminated:
            raise typer.Exit(EXIT_TERMINATED) from None
        raise
    if terminated:
        raise typer.Exit(EXIT_TERMINATED)
    return result
