"""The executive's exception root; third-party errors are translated where they are caught."""

from __future__ import annotations

__all__ = ["ExecutiveError"]


class ExecutiveError(Exception):
    """Something the executive could not do (bad configuration, a failed engine, a bad run id)."""
