"""The final status of a run that stops without ending, by how it stopped.

* Ctrl-C (SIGINT): ``asyncio.run`` cancels the main task: ``interrupted``, the operator's
  own stop.
* SIGTERM: the CLI cancels the main task with ``TERMINATED`` as the cancellation's message
  (``cli.common.run_async``): ``interrupted`` like Ctrl-C (a service manager's or a
  container's orderly stop, ``docker stop``, ``systemctl stop``), with ``error`` naming
  the signal, so the record says who stopped it.
* Any other exception: ``crashed`` with the exception as ``error``.
* SIGKILL or a lost process: the broker's last will says ``crashed``.

``close_status(exc)`` is what ``Bus.close_run`` is given, so every exit path names its
state the same way.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["TERMINATED", "close_status"]

TERMINATED = "terminated by SIGTERM"  # the message of the cancellation a SIGTERM makes


def close_status(exc: BaseException) -> tuple[str, dict[str, Any]]:
    """The final ``(state, fields)`` for a run whose task stopped with ``exc``."""
    if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt):
        if TERMINATED in exc.args:
            return "interrupted", {"error": TERMINATED}
        return "interrupted", {}
    return "crashed", {"error": f"{type(exc).__name__}: {exc}"[:500]}
