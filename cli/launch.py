"""Forks started from a dashboard: each one an ``isr fork`` child process with its own live
dashboard, recorded in the same trace store (``dashboard.context.ForkLauncher``).

The child gets the control token in its environment (never on its command line, where
``ps`` would show it), a free port on the dashboard's host and its run id from here, so the
answer can name both at once. It is ready when it prints its dashboard's address; one that
exits first is an ``ExecutiveError`` carrying its last words. No orphans: a child ends its
process when its mission ends (``--exit-when-done``: its page keeps the final picture), and
stops its mission once no page has watched it for ``idle_timeout_s`` (``--idle-timeout``);
each child that ends is reaped here. ``close()`` stops the children still running (SIGTERM:
each flushes its traces and ends ``interrupted``, "terminated by SIGTERM", in the store as on
the bus; SIGINT may be ignored by a child started in the background).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
from typing import Any

from executive.contracts import new_id
from executive.errors import ExecutiveError

__all__ = ["IDLE_TIMEOUT_S", "SubprocessForks"]

READY = "dashboard: "  # the line a live run prints once its dashboard listens
START_TIMEOUT_S = 120.0  # re-executing an hour-long parent to its last tick takes a few s
IDLE_TIMEOUT_S = 600.0  # a fork nobody watches for this long is stopped


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class SubprocessForks:
    """Start forks of the runs in ``trace_url`` as live runs served on ``host``."""

    def __init__(
        self,
        trace_url: str,
        token: str,
        host: str = "127.0.0.1",
        idle_timeout_s: float | None = IDLE_TIMEOUT_S,
    ) -> None:
        self.trace_url = trace_url
        self.token = token
        self.host = host
        self.idle_timeout_s = idle_timeout_s
        self.children: list[asyncio.subprocess.Process] = []
        self._drains: list[asyncio.Task[None]] = []

    async def __call__(
        self, parent: str, tick: int, *, back_url: str | None = None
    ) -> dict[str, Any]:
        """Start the fork of ``parent`` at ``tick``; its run id and page once it serves.
        ``back_url``: the dashboard asking, which the fork's page links back to."""
        # Here: the viewers' process unpickles this class and should not load the CLI's
        # printing (rich) with it.
        from cli.common import TOKEN_ENV

        port, run_id = _free_port(self.host), new_id()
        options = ["--exit-when-done"]
        if self.idle_timeout_s is not None:
            options += ["--idle-timeout", f"{self.idle_timeout_s:g}"]
        if back_url:
            options += ["--back-url", back_url]
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "cli.main",
            "fork",
            parent,
            "--at-tick",
            str(tick),
            "--db",
            self.trace_url,
            "--host",
            self.host,
            "--port",
            str(port),
            "--run-id",
            run_id,
            *options,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, TOKEN_ENV: self.token},
        )
        self.children.append(proc)
        said: list[str] = []
        try:
            await asyncio.wait_for(self._until_ready(proc, said), START_TIMEOUT_S)
        except TimeoutError:
            proc.kill()
            raise ExecutiveError(
                f"the fork did not start within {START_TIMEOUT_S:g} s: {' '.join(said[-3:])}"
            ) from None
        return {
            "run_id": run_id,
            "url": f"http://{self.host}:{port}/?token={self.token}",
            "pid": proc.pid,
        }

    async def _until_ready(self, proc: asyncio.subprocess.Process, said: list[str]) -> None:
        assert proc.stderr is not None
        while True:
            line = await proc.stderr.readline()
            if not line:
                await proc.wait()
                raise ExecutiveError(
                    f"the fork exited ({proc.returncode}): " + (" ".join(said[-3:]) or "no message")
                )
            text = line.decode(errors="replace").strip()
            said.append(text.removeprefix("error: "))
            if text.startswith(READY):
                # keep reading what it says, or its pipe fills and it blocks
                self._drains.append(asyncio.create_task(self._drain(proc)))
                return

    @staticmethod
    async def _drain(proc: asyncio.subprocess.Process) -> None:
        """Read what the child says until it ends, then reap it (no zombie)."""
        assert proc.stderr is not None
        while await proc.stderr.readline():
            pass
        await proc.wait()

    @property
    def running(self) -> list[asyncio.subprocess.Process]:
        """The children still running."""
        return [p for p in self.children if p.returncode is None]

    async def close(self) -> None:
        """Stop the children still running: SIGTERM, then SIGKILL after 10 s."""
        for proc in self.children:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGTERM)
        for proc in self.children:
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
        for task in self._drains:
            task.cancel()
