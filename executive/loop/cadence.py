"""Agents on a timer: each agent of the planning chain given a cadence (mission seconds) is
also asked at its due ticks, on top of the rounds the world's changes start.

Time is the sim's (ticks), so a run and its replay ask at the same ticks. A due agent is
asked by a planning round like any other (``Rounds``: trigger ``cadence:<role>``, the other
agents not asked), so its proposal is judged, rebased and applied the same way. The agent
chain is one pipeline: while a round or its agents are still working (the due agent's own
previous call among them) the due agent waits, and is asked at the first tick the chain is
free; its next run is due one period after it started.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

__all__ = ["CADENCE", "AgentCadence", "cadence_roles"]

CADENCE = "cadence:"  # a cadence round's trigger: cadence:<role>


def cadence_roles(trigger: str) -> set[str] | None:
    """The agents a round's trigger (triggers joined by " + ") asks on a cadence, or None
    when anything else triggered it too (then every agent on is asked)."""
    parts = [t.removeprefix("superseded:") for t in trigger.split(" + ")]
    if not all(p.startswith(CADENCE) for p in parts):
        return None
    return {p.removeprefix(CADENCE) for p in parts}


class AgentCadence:
    """Each cadenced agent's next due tick."""

    def __init__(self, every_s: Mapping[str, float], tick_hz: float, tick: int) -> None:
        """The first run of each is due one period after ``tick`` (the run's start)."""
        self.every_s = dict(every_s)
        self.period = {r: max(1, math.ceil(s * tick_hz - 1e-9)) for r, s in every_s.items()}
        self.next_due = {r: tick + p for r, p in self.period.items()}

    def due(self, tick: int) -> list[str]:
        """The agents due at ``tick`` (due earlier and still waiting included)."""
        return [r for r, t in self.next_due.items() if tick >= t]

    def started(self, role: str, tick: int) -> None:
        """``role`` is asked at ``tick``: its next run is due a period later."""
        self.next_due[role] = tick + self.period[role]
