"""The simulation's exception root."""

from __future__ import annotations

__all__ = ["SimError"]


class SimError(Exception):
    """The simulation was asked something it cannot do (bad set-up, not a bad input: inputs
    that cannot be applied are rejected with an event, never raised)."""
