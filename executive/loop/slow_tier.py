"""The slow tier: a round's agent chain answers late. Its proposal is rebased onto the state
when it arrives, together with the plan in force, and applied only if it beats it then
(auto) or offered for review; a newer round cancels it."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from executive.contracts import new_id
from executive.loop.drafts import AgentWork, Draft, Rebased, RebaseJob, better, ends_of
from planner.intent import intent_of

if TYPE_CHECKING:
    from executive.loop.rounds import Rounds

__all__ = ["finish_agents", "settle_agents"]

log = logging.getLogger(__name__)


def finish_agents(rounds: Rounds, work: AgentWork) -> None:
    """A round's agents answered: rebase an offered proposal with the plan in force."""
    host = rounds.host
    try:
        proposal = work.task.result()
    except asyncio.CancelledError:
        return
    except Exception as exc:  # the agents never break a run
        log.warning("agent chain of round %s failed: %s", work.replan.round_id, exc)
        return
    work.replan.reasons = (*work.replan.reasons, *proposal.reasons)
    host.recorder.event(
        host.sim.tick,
        "AGENTS_DONE",
        {
            "round_id": work.replan.round_id,
            "offered": proposal.solution is not None,
            "reasons": list(proposal.reasons),
        },
    )
    if proposal.solution is None or proposal.mission is None:
        return
    source = Draft(
        new_id(),
        work.replan,
        "agents",
        work.problem,
        proposal.mission,
        proposal.solution,
        [],
        intent_of(proposal.solution),
        ends_of(proposal.solution),
        host.sim.tick,
        agent_applied=True,
    )
    rounds._rebase(source, "agents", proposal=proposal)


def settle_agents(rounds: Rounds, job: RebaseJob, rebased: Rebased) -> None:
    """An agent's proposal, rebased with the plan in force onto the same cut: applied
    (auto) or offered (review) only if it beats the plan in force then."""
    host = rounds.host
    proposal = job.proposal
    assert proposal is not None
    if job.known_version != rounds.known_version:
        proposal.settle(False, "superseded: the world changed while it was rebased")
        return
    if host.sim.tick > job.cut:
        rounds._rebase(job.draft, "agents", proposal=proposal)  # late: again, from now
        return
    cand, current = rebased.solution, rebased.current
    if current is not None and not better(cand, current):
        decision = (
            f"not applied: {cand.total_points:g} points after the rebase, the plan in force"
            f" {current.total_points:g}"
        )
        proposal.settle(False, decision)
        host.recorder.event(
            host.sim.tick,
            "AGENT_PROPOSAL",
            {"round_id": job.draft.replan.round_id, "applied": False, "why": decision},
        )
        return
    decision = (
        f"applied after the rebase: {cand.total_points:g} points against"
        f" {current.total_points if current is not None else 0:g} for the plan in force"
    )
    new = rounds._draft_from(rebased, job.draft, "agents")
    new.agent_applied = True
    host.recorder.event(
        host.sim.tick,
        "AGENT_PROPOSAL",
        {"round_id": job.draft.replan.round_id, "applied": True, "why": decision},
    )
    if host.policy.commit == "auto":
        proposal.settle(True, decision)
        job.draft.replan.agent_applied = True
        rounds._commit(new, "auto")
    else:
        proposal.settle(False, f"offered for review: {decision}")
        rounds._offer(new, note="the agents' proposal beats the plan in force")
