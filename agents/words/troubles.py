"""What went wrong in a run's planning, as the words layer reads it: the answer to "why is
the solver crashing?".

``PlanningLog`` counts the planning rounds (and, for a stored run, the planning agents'
runs) and lists each trouble the executive recorded:

    replan_failed    a round that produced no plan (REPLAN_FAILED: the planner raised)
    replan_rejected  a round whose plan the validator rejected (its violations)
    rebase_failed    a draft that could not be routed again from a later cut (REBASE_FAILED)
    agent_failed     a planning agent's run that failed, timed out or was invalid (the
                     baseline stood)
    command_ignored  an order the executive refused (COMMAND_IGNORED, with the reasons)

Builders: ``live_log(executive)`` from the executive's rounds (their status and reasons:
an agent's failure is one of a round's reasons) and its recent events; ``stored_log(...)``
from a stored run's outcome or events and its agent run rows.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["PlanningLog", "PlanningTrouble", "live_log", "stored_log"]

TroubleKind = Literal[
    "replan_failed", "replan_rejected", "rebase_failed", "agent_failed", "command_ignored"
]

# agents whose failures are the solver's: the words layer's own (coordinator, responder) are not
_WORDS_AGENTS = ("coordinator", "responder")
# a round's reason naming an agent's failure: "allocator: server_error: ...", "strategist:
# timeout: ... (rules answer used)", "agents: failed: ...", "proposal invalid: ..."
_AGENT_REASON = re.compile(
    r"^(?:(?P<agent>strategist|allocator|critic|agents): (?:failed: )?"
    r"(?=(?:timeout|rate_limited|server_error|malformed|unavailable|refused|invalid|auth)"
    r"\b|[A-Z]\w*(?:Error|Exception)\b)|(?P<proposal>proposal) invalid: )"
)


class PlanningTrouble(BaseModel):
    """One thing that went wrong in planning (see the module docstring for the kinds)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: TroubleKind
    tick: int | None = None
    what: str  # the round's trigger, the agent (and its engine), the command
    reason: str


class PlanningLog(BaseModel):
    """A run's planning so far: rounds, agent runs, and what went wrong."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rounds: int = 0  # planning rounds (replans) so far, the first plan apart
    agent_runs: int | None = None  # planning agents' runs (None: not counted, a live run)
    troubles: list[PlanningTrouble] = Field(default_factory=list)

    def of(self, kind: TroubleKind) -> list[PlanningTrouble]:
        """The troubles of one kind, in order."""
        return [t for t in self.troubles if t.kind == kind]


def _round_troubles(replans: Iterable[Mapping[str, Any]]) -> list[PlanningTrouble]:
    """A round that failed or was rejected, and each agent failure among its reasons."""
    out: list[PlanningTrouble] = []
    for r in replans:
        reasons = [str(x) for x in r.get("reasons") or ()]
        tick = r.get("asked_tick")
        trigger = str(r.get("trigger") or "replan")
        if r.get("status") == "failed":
            out.append(
                PlanningTrouble(
                    kind="replan_failed", tick=tick, what=trigger, reason="; ".join(reasons)
                )
            )
        elif r.get("status") == "rejected":
            out.append(
                PlanningTrouble(
                    kind="replan_rejected", tick=tick, what=trigger, reason="; ".join(reasons)
                )
            )
        for reason in reasons:
            m = _AGENT_REASON.match(reason)
            if m is not None:
                agent = m.group("agent") or "agents' proposal"
                out.append(
                    PlanningTrouble(
                        kind="agent_failed",
                        tick=tick,
                        what=agent,
                        reason=reason.split(": ", 1)[1] if m.group("agent") else reason,
                    )
                )
    return out


def _event_troubles(events: Iterable[Mapping[str, Any]]) -> list[PlanningTrouble]:
    """REBASE_FAILED and COMMAND_IGNORED events (``{"tick", "kind", ...payload}``)."""
    out: list[PlanningTrouble] = []
    for e in events:
        if e.get("kind") == "REBASE_FAILED":
            what = f"rebase of a draft ({e.get('purpose') or 'commit'})"
            out.append(
                PlanningTrouble(
                    kind="rebase_failed", tick=e.get("tick"), what=what, reason=str(e.get("reason"))
                )
            )
        elif e.get("kind") == "COMMAND_IGNORED":
            what = str(e.get("command") or "command")
            if e.get("text"):
                what += f" {e['text']!r}"
            out.append(
                PlanningTrouble(
                    kind="command_ignored",
                    tick=e.get("tick"),
                    what=what,
                    reason=str(e.get("reason")),
                )
            )
    return out


def live_log(executive: Any) -> PlanningLog:
    """A live executive's planning: its rounds (``Executive.replans``) and the events it
    still holds (``events_seen``, the last 500)."""
    replans = [r.to_dict() for r in getattr(executive, "replans", ())]
    events = list(getattr(executive, "events_seen", ()))
    troubles = _round_troubles(replans) + _event_troubles(events)
    return PlanningLog(rounds=len(replans), troubles=_by_tick(troubles))


def stored_log(
    run: Mapping[str, Any],
    events: Iterable[Mapping[str, Any]],
    agent_runs: Iterable[Mapping],
    until: int,
) -> PlanningLog:
    """A stored run's planning up to tick ``until`` (exclusive): its rounds from the
    outcome (a run that ended) or its REPLAN_FAILED events, its agent run rows, its events."""
    flat = [{"tick": e["tick"], "kind": e["kind"], **(e.get("payload") or {})} for e in events]
    flat = [e for e in flat if e["tick"] < until]
    outcome = run.get("outcome") or {}
    replans = [r for r in outcome.get("replans") or () if (r.get("asked_tick") or 0) < until]
    if outcome.get("replans") is not None:
        troubles = [t for t in _round_troubles(replans) if t.kind != "agent_failed"]
        rounds = len(replans)
    else:  # still running or crashed: no outcome, the events say which rounds failed
        troubles = [
            PlanningTrouble(
                kind="replan_failed", tick=e["tick"], what="replan", reason=str(e.get("reason"))
            )
            for e in flat
            if e["kind"] == "REPLAN_FAILED"
        ]
        rounds = sum(1 for e in flat if e["kind"] == "CUT_AND_FREEZE")
    planning = [
        r
        for r in agent_runs
        if r.get("agent") not in _WORDS_AGENTS and (r.get("tick") or 0) < until
    ]
    for r in sorted(planning, key=lambda r: r.get("tick") or 0):
        error = r.get("error")
        if error and not str(error).startswith("cancelled"):  # superseded: by design
            engine = r.get("engine") or "?"
            model = f":{r['model']}" if r.get("model") else ""
            troubles.append(
                PlanningTrouble(
                    kind="agent_failed",
                    tick=r.get("tick"),
                    what=f"{r.get('agent')} ({engine}{model})",
                    reason=str(error),
                )
            )
    troubles += _event_troubles(flat)
    return PlanningLog(rounds=rounds, agent_runs=len(planning), troubles=_by_tick(troubles))


def _by_tick(troubles: list[PlanningTrouble]) -> list[PlanningTrouble]:
    return sorted(troubles, key=lambda t: t.tick if t.tick is not None else -1)
