"""``isr dashboard``: the recorded runs of a trace store, and the live dashboard of a
mission running in another process.

    isr dashboard [--db URL] [--host H] [--port P] [--token T] [--fork-idle-timeout S]
    isr dashboard --mqtt mqtt[s]://[USER@]HOST[:PORT] --token T [--run RUN_ID] [--host H]
                  [--port P] [--db URL] [--mqtt-ca FILE] [--mqtt-password-file FILE]
                  [--stale-after S]

Without ``--mqtt`` it serves the runs of the trace store alone (``--db``, default
``sqlite:///runs/isr.db``; a store that does not exist is refused, not created): the page
opens on the runs list, with the replay and compare views, ``/api/runs`` and its ranges, and
Fork here (each fork a process of its own that ends with its mission, or once no page has
watched it for ``--fork-idle-timeout`` seconds); commands answer 409 (no live run). Its token (``--token``, ``$ISR_TOKEN`` or a fresh one)
shows the ground truth of stored runs. With ``--mqtt`` it runs the dashboard as a process of its own, fed by an MQTT broker as a watcher (any number
of them can watch one mission; commands go back on ``isr/<run>/cmd``). ``--token`` (or
``$ISR_TOKEN``) must be the mission's control token, the one ``isr run`` was given or
printed: the mission's messages are signed with it, and the dashboard trusts only those and
signs its commands with it. Without ``--run`` it watches the newest mission starting or
running on the broker, and moves on to the newest live one when its run goes stale (says
running, sends nothing for ``--stale-after`` seconds). The link to the broker is kept up
(reconnected with backoff); while it is down commands answer 503. It prints the page's
address with the token and serves until Ctrl-C. Bad options: one line on stderr, exit 2; an
unreachable broker, a refused password, no mission, a port in use: one line, exit 1. The
broker's password is never printed. Never a traceback.
"""

from __future__ import annotations

import asyncio
import os
from typing import Annotated

import typer
from rich.console import Console

from cli.common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    TOKEN_ENV,
    HostOption,
    MqttCaOption,
    MqttPasswordFileOption,
    PortOption,
    TokenOption,
    check_mqtt_url,
    control_token,
    fail,
    mqtt_password,
    run_async,
    token_from_env,
    token_line,
    trace_url,
)
from cli.launch import IDLE_TIMEOUT_S, SubprocessForks
from dashboard.server import start_dashboard
from executive.bus import InProcessBus
from executive.bus.mqtt import MqttBus
from executive.errors import ExecutiveError

__all__ = ["dashboard"]


def dashboard(
    mqtt: Annotated[
        str | None,
        typer.Option(
            help="the broker carrying a live mission, mqtt[s]://[USER@]HOST[:PORT] "
            "(absent: the stored runs alone)"
        ),
    ] = None,
    run: Annotated[
        str | None,
        typer.Option(help="the run to watch (default: the newest one starting or running)"),
    ] = None,
    host: HostOption = "127.0.0.1",
    port: PortOption = 8000,
    token: TokenOption = None,
    db: Annotated[
        str | None,
        typer.Option(
            help="SQLAlchemy URL of the trace store, for /api/runs ('none' or absent: no traces)"
        ),
    ] = None,
    wait: Annotated[
        float, typer.Option(help="seconds to wait for a mission on the broker", min=0.1)
    ] = 30.0,
    mqtt_ca: MqttCaOption = None,
    mqtt_password_file: MqttPasswordFileOption = None,
    stale_after: Annotated[
        float,
        typer.Option(
            "--stale-after",
            help="seconds without news from a running mission before it is marked stale",
            min=0.1,
        ),
    ] = 15.0,
    fork_idle_timeout: Annotated[
        float,
        typer.Option(
            "--fork-idle-timeout",
            help="a fork started from the page is stopped once no page has watched it for"
            " this many seconds (it also ends when its mission ends)",
            min=1.0,
        ),
    ] = IDLE_TIMEOUT_S,
) -> None:
    """Serve the stored runs of a trace store, and with --mqtt the live dashboard of a
    mission running in another process."""
    if mqtt is None:
        url = trace_url(db, must_exist=True)
        if url is None:
            raise fail("--db none: without --mqtt the dashboard serves a trace store's runs")
        try:
            hidden = token_from_env(token)
            run_async(
                _serve_stored(host, port, control_token(token), url, fork_idle_timeout, hidden)
            )
        except ExecutiveError as exc:
            raise fail(str(exc), EXIT_FAILED) from None
        except KeyboardInterrupt:
            raise typer.Exit(EXIT_INTERRUPTED) from None
        return
    check_mqtt_url(mqtt)
    password = mqtt_password(mqtt, mqtt_password_file, mqtt_ca)
    hidden = token_from_env(token)
    token = token or os.environ.get(TOKEN_ENV)
    if not token:
        raise fail(
            f"--token: give the mission's control token (the one isr run printed, or "
            f"${TOKEN_ENV}): its MQTT messages are signed with it"
        )
    store = None if db is None or db.lower() == "none" else trace_url(db)
    try:
        bus = MqttBus(
            mqtt,
            run_id=run,
            role="watcher",
            password=password,
            ca_file=str(mqtt_ca) if mqtt_ca is not None else None,
            token=token,
            stale_after=stale_after,
        )
        run_async(_serve(bus, host, port, token, store, wait, hidden))
    except ExecutiveError as exc:
        raise fail(str(exc), EXIT_FAILED) from None
    except KeyboardInterrupt:
        raise typer.Exit(EXIT_INTERRUPTED) from None


async def _serve_stored(
    host: str, port: int, token: str, url: str, fork_idle: float, hidden: bool
) -> None:
    """The dashboard of a trace store: an idle bus (no live run: the page opens on the runs
    list), the stored runs, and forks of them started as processes of their own."""
    out = Console(stderr=True)
    forks = SubprocessForks(url, token, host, idle_timeout_s=fork_idle)
    server = await start_dashboard(
        InProcessBus(), host=host, port=port, token=token, trace_url=url, forks=forks, live=False
    )
    try:
        out.print(f"dashboard: {server.url if hidden else server.page_url}", highlight=False)
        out.print(token_line(token, from_env=hidden), highlight=False)
        out.print(f"serving the runs of {url}; Ctrl-C to stop", highlight=False)
        await asyncio.Event().wait()
    except asyncio.CancelledError:  # Ctrl-C: asyncio.run cancels the main task
        pass
    finally:
        await server.stop()
        await forks.close()


async def _serve(
    bus: MqttBus,
    host: str,
    port: int,
    token: str,
    trace_url: str | None,
    wait: float,
    hidden: bool,
) -> None:
    out = Console(stderr=True)
    await bus.start()
    server = None
    try:
        run_id = await bus.wait_for_run(wait)
        server = await start_dashboard(bus, host=host, port=port, token=token, trace_url=trace_url)
        out.print(f"dashboard: {server.url if hidden else server.page_url}", highlight=False)
        out.print(token_line(token, from_env=hidden), highlight=False)
        out.print(f"watching run {run_id} on {bus.url}; Ctrl-C to stop", highlight=False)
        await asyncio.Event().wait()
    except asyncio.CancelledError:  # Ctrl-C: asyncio.run cancels the main task
        pass
    finally:
        if server is not None:
            await server.stop()
        await bus.stop()
