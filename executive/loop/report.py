"""What a run reports at its end: the outcome in the world, every planning round, and how
well the ticks kept time."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from sim.outcome import Outcome

__all__ = ["Replan", "RunReport", "lateness_summary"]


@dataclass
class Replan:
    """One planning round, as the outcome reports it."""

    round_id: str
    trigger: str
    asked_tick: int
    cut_tick: int
    # planning | committed | review | superseded | failed | rejected | expired
    status: str = "planning"
    latency_ms: float | None = None
    agent_applied: bool = False  # an agent's proposal replaced the round's plan, late
    reasons: tuple[str, ...] = ()
    points: float | None = None  # the draft's planned points for the remainder
    rebased: int = 0  # times its draft was routed again from a later cut
    approved: str | None = None  # who let it fly: auto, operator, policy

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: every field, reasons as a list."""
        return {
            "round_id": self.round_id,
            "trigger": self.trigger,
            "asked_tick": self.asked_tick,
            "cut_tick": self.cut_tick,
            "status": self.status,
            "latency_ms": self.latency_ms,
            "agent_applied": self.agent_applied,
            "reasons": list(self.reasons),
            "points": self.points,
            "rebased": self.rebased,
            "approved": self.approved,
        }


@dataclass
class RunReport:
    """A run's end: what happened in the world, every planning round, how well it kept time."""

    run_id: str
    outcome: Outcome  # the sim's account: points, drones, losses, final state hash
    replans: list[Replan]
    wall_seconds: float  # from the first tick to the end
    ticks: int  # ticks simulated
    overruns: int  # paced ticks that started more than one tick period late
    jitter_ms: dict[str, float]  # paced ticks' start lateness: see lateness_summary
    safety_returns: list[str]  # drones the safety layer sent home
    initial_points: float  # what the first plan promised
    safety_actions: int = 0  # diverts, holds and returns the safety layer made
    commits: list[dict[str, Any]] = field(default_factory=list)  # each commit's provenance
    trace_dropped: int = 0  # trace records not stored (a full queue, a store down): never silently
    # per table: {"rows": n, "ticks": [[first, last], ...]} (executive.traces.loss)
    trace_lost: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def trace_complete(self) -> bool:
        """Every trace record the run emitted is in the store."""
        return self.trace_dropped == 0

    def note_trace_loss(self, dropped: int, lost: dict[str, dict[str, Any]]) -> None:
        """Losses counted after the report was made (the run's end record, a last batch)."""
        if dropped > self.trace_dropped:
            self.trace_dropped, self.trace_lost = dropped, lost

    def to_dict(self) -> dict[str, Any]:
        """The outcome's figures flattened with the run's, JSON-safe (``isr run --json``,
        the ``ended`` status, the run's stored outcome)."""
        out = self.outcome.model_dump(mode="json")
        return {
            "run_id": self.run_id,
            "total_points": out["total_points"],
            "drones": out["drones"],
            "lost": out["lost"],
            "state_hash": out["state_hash"],
            "ticks": self.ticks,
            "sim_seconds": out["sim_seconds"],
            "uncollected": out["uncollected"],
            "excluded": out["excluded"],
            "replans": [r.to_dict() for r in self.replans],
            "initial_planned_points": self.initial_points,
            "safety_returns": self.safety_returns,
            "safety_actions": self.safety_actions,
            "commits": self.commits,
            "trace_dropped": self.trace_dropped,
            "trace_lost": self.trace_lost,
            "wall_seconds": self.wall_seconds,
            "overruns": self.overruns,
            "jitter_ms": self.jitter_ms,
        }


def lateness_summary(lateness: list[float], worst_tick: int) -> dict[str, float]:
    """Tick start lateness in ms: p50, p99, max, mean, and the tick of the worst."""
    late = sorted(lateness)

    def pct(q: float) -> float:
        """The ``q`` quantile in ms (the sorted value at rank ``q * n``); 0 with no tick."""
        return 1000 * late[min(len(late) - 1, int(q * len(late)))] if late else 0.0

    return {
        "p50": pct(0.5),
        "p99": pct(0.99),
        "max": 1000 * (late[-1] if late else 0.0),
        "mean": 1000 * (statistics.fmean(late) if late else 0.0),
        "max_at_tick": worst_tick,
    }
