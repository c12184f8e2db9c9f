"""The simulation's exception root, and the world's internal signal for a rejected input."""

from __future__ import annotations

__all__ = ["SimError"]


class SimError(Exception):
    """The simulation was asked something it cannot do (bad set-up, not a bad input: inputs
    that cannot be applied are rejected with an event, never raised)."""


class Rejected(Exception):
    """An edit or command that cannot be applied; its message is the reason in the
    ``EditRejected`` / ``CommandRejected`` event. Internal: it never leaves the world."""
