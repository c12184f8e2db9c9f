"""The executive's exception root; third-party errors are translated where they are caught."""

from __future__ import annotations

__all__ = ["ExecutiveError", "TraceDamaged"]


class ExecutiveError(Exception):
    """Something the executive could not do (bad configuration, a failed engine, a bad run id)."""


class TraceDamaged(ExecutiveError):
    """A stored row cannot be read (a damaged file, a row written by something else): the
    store's fault, not the asker's; the message names the run, the table and the tick."""
