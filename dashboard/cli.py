"""The ``isr`` entry point with the dashboard plugged in.

``main()`` takes the executive's typer app (``executive.cli.app``), registers
``start_dashboard`` as the live view of ``isr run`` (the executive never imports the
dashboard: the dashboard registers itself) and adds ``isr dashboard``:

    isr dashboard --mqtt mqtt://HOST:PORT [--run RUN_ID] [--host H] [--port P] [--token T]
                  [--db URL]

runs the dashboard as a process of its own, fed by an MQTT broker as a watcher (any number
of them can watch one mission; commands go back on ``isr/<run>/cmd``). Without ``--run`` it
watches the newest mission starting or running on the broker. It prints the page's address
with the token and serves until Ctrl-C. Bad options: one line on stderr, exit 2; an
unreachable broker, no mission, a port in use: one line, exit 1. Never a traceback.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from typing import Annotated, Optional

import typer
from rich.console import Console

__all__ = ["main"]

TOKEN_ENV = "ISR_TOKEN"


def _fail(message: str, code: int = 2) -> typer.Exit:
    err = Console(stderr=True)
    for line in message.splitlines():
        err.print(f"[bold red]error:[/] {line}", highlight=False, markup=True, soft_wrap=True)
    return typer.Exit(code)


def dashboard(
    mqtt: Annotated[str, typer.Option(help="the broker carrying the mission, mqtt://HOST:PORT")],
    run: Annotated[Optional[str], typer.Option(help="the run to watch (default: the newest one starting or running)")] = None,
    host: Annotated[str, typer.Option(help="address to serve the dashboard on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port (0: any free one)", min=0, max=65535)] = 8000,
    token: Annotated[Optional[str], typer.Option(help=f"control token for commands and edits (default: ${TOKEN_ENV} or a fresh random one)")] = None,
    db: Annotated[Optional[str], typer.Option(help="SQLAlchemy URL of the trace store, for /api/runs ('none' or absent: no traces)")] = None,
    wait: Annotated[float, typer.Option(help="seconds to wait for a mission on the broker", min=0.1)] = 30.0,
) -> None:
    """Serve the live dashboard of a mission running in another process (through MQTT)."""
    from executive.errors import ExecutiveError

    if not mqtt.startswith("mqtt://"):
        raise _fail(f"--mqtt {mqtt!r}: expected mqtt://HOST:PORT")
    token = token or os.environ.get(TOKEN_ENV) or secrets.token_urlsafe(12)
    trace_url = None if db is None or db.lower() == "none" else db
    try:
        asyncio.run(_serve(mqtt, run, host, port, token, trace_url, wait))
    except ExecutiveError as exc:
        raise _fail(str(exc), 1) from None
    except KeyboardInterrupt:
        raise typer.Exit(130) from None


async def _serve(mqtt: str, run: str | None, host: str, port: int, token: str,
                 trace_url: str | None, wait: float) -> None:
    from dashboard.server import start_dashboard
    from executive.bus.mqtt import MqttBus

    out = Console(stderr=True)
    bus = MqttBus(mqtt, run_id=run, role="watcher")
    await bus.start()
    server = None
    try:
        run_id = await bus.wait_for_run(wait)
        server = await start_dashboard(bus, host=host, port=port, token=token,
                                       trace_url=trace_url)
        out.print(f"dashboard: {server.page_url}", highlight=False)
        out.print(f"control token: {token}  (Authorization: Bearer TOKEN)", highlight=False)
        out.print(f"watching run {run_id} on {mqtt}; Ctrl-C to stop", highlight=False)
        await asyncio.Event().wait()
    except asyncio.CancelledError:  # Ctrl-C: asyncio.run cancels the main task
        pass
    finally:
        if server is not None:
            await server.stop()
        await bus.stop()


def main() -> None:
    from dashboard.server import start_dashboard
    from executive.cli import app
    from executive.cli_run import register_live_view

    register_live_view(start_dashboard)
    if not any(getattr(c, "name", None) == "dashboard" for c in app.registered_commands):
        app.command("dashboard")(dashboard)
    app()


if __name__ == "__main__":
    main()
