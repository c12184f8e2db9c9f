"""The rules answer to a debugging question ("Why is the solver crashing?"): the run's
planning troubles from the state (``MissionState.planning``, see
``agents.words.troubles``), with the numbers: planning rounds and how many failed or
were rejected by the validator, planning agents' runs that failed or timed out, orders the
executive refused. With none: "No planner errors in this run", and what was checked."""

from __future__ import annotations

from collections import Counter

from agents.responder.written import Answer
from agents.words.state import MissionState
from agents.words.troubles import PlanningTrouble

__all__ = ["debug"]

_SHOWN = 5  # troubles of one kind spelled out; the rest are counted


def _n(count: int, noun: str) -> str:
    """``count`` and ``noun``, plural unless one."""
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _listed(items: list[PlanningTrouble]) -> str:
    shown = [f"tick {t.tick}: {t.what}: {t.reason}" for t in items[:_SHOWN]]
    if len(items) > _SHOWN:
        shown.append(f"and {len(items) - _SHOWN} more")
    return "; ".join(shown)


def debug(a: Answer, state: MissionState) -> None:
    """Answer a debugging question from the state's planning log."""
    log = state.planning
    failed, rejected = log.of("replan_failed"), log.of("replan_rejected")
    agents, refused = log.of("agent_failed"), log.of("command_ignored")
    rebases = log.of("rebase_failed")
    a.num("planning rounds", log.rounds)
    a.num("planning rounds failed", len(failed))
    a.num("planning rounds rejected by the validator", len(rejected))
    a.num("agent runs failed", len(agents))
    a.num("orders refused", len(refused))
    if log.agent_runs is not None:
        a.num("planning agent runs", log.agent_runs)
    runs = (
        _n(log.agent_runs, "planning agent run")
        if log.agent_runs is not None
        else "the agents' results in each round"
    )
    rounds = _n(log.rounds, "planning round")
    if not log.troubles:
        a.lines.append(
            f"No planner errors in this run: {rounds} after the first plan, none failed or"
            f" rejected by the validator; {runs}, none failed; no order refused."
        )
        return
    a.lines.append(
        f"Planner errors in this run: of {rounds} after the first plan, {len(failed)} failed"
        f" and {len(rejected)} {'was' if len(rejected) == 1 else 'were'} rejected by the"
        f" validator; {_n(len(agents), 'agent run')} failed"
        + (f" (of {log.agent_runs})" if log.agent_runs is not None else "")
        + f"; {_n(len(refused), 'order')} refused."
    )
    if failed:
        a.lines.append("Failed rounds (the safety layer held the drones): " + _listed(failed) + ".")
    if rejected:
        a.lines.append("Rejected by the validator: " + _listed(rejected) + ".")
    if rebases:
        a.lines.append("Drafts that could not be routed again: " + _listed(rebases) + ".")
    if agents:
        kinds = Counter(t.reason.split(":", 1)[0] for t in agents)
        a.lines.append(
            "Agent runs that failed ("
            + ", ".join(f"{n} {kind}" for kind, n in kinds.most_common())
            + "; the algorithmic baseline stood): "
            + _listed(agents)
            + "."
        )
    if refused:
        a.lines.append("Orders refused: " + _listed(refused) + ".")
