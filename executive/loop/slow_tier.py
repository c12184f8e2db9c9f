"""The slow tier: a round's agent chain answers late. Its proposal is rebased onto the state
when it arrives, together with the plan in force, and applied only if it beats it then
(auto) or offered for review; a newer round cancels it. What to do is decided here and
applied by the lifecycle's owner (``executive.loop.rounds``)."""

from __future__ import annotations

from executive.contracts import AgentProposal, new_id
from executive.loop.decisions import (
    AgentVerdict,
    Commit,
    Decision,
    Drop,
    Moment,
    Offer,
    Rebase,
    Rebasing,
)
from executive.loop.drafts import AgentWork, Draft, Rebased, RebaseJob, better, ends_of
from executive.loop.rebase import draft_from
from planner.intent import intent_of

__all__ = ["answered", "settle_agents"]


def answered(work: AgentWork, proposal: AgentProposal, tick: int) -> Rebase | Drop:
    """A round's agents answered: an offered proposal is rebased with the plan in force."""
    if proposal.solution is None or proposal.mission is None:
        return Drop(None, "no_proposal", "the agents offered nothing", proposal=proposal)
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
        tick,
        agent_applied=True,
    )
    return Rebase(
        source,
        "agents",
        "an agents' proposal, to compare with the plan in force",
        proposal=proposal,
    )


def settle_agents(job: RebaseJob, rebased: Rebased, now: Moment) -> Decision:
    """An agent's proposal, rebased with the plan in force onto the same cut: applied
    (auto) or offered (review) only if it beats the plan in force then."""
    proposal = job.proposal
    assert proposal is not None
    if job.known_version != now.known_version:
        return Drop(
            job.draft,
            "superseded",
            "superseded: the world changed while it was rebased",
            proposal=proposal,
        )
    if now.tick > job.cut:
        return Rebase(job.draft, "agents", "late: again, from now", proposal=proposal)
    cand, current = rebased.solution, rebased.current
    if current is not None and not better(cand, current):
        verdict = (
            f"not applied: {cand.total_points:g} points after the rebase, the plan in force"
            f" {current.total_points:g}"
        )
        return Drop(job.draft, "not_better", verdict, proposal=proposal)
    verdict = (
        f"applied after the rebase: {cand.total_points:g} points against"
        f" {current.total_points if current is not None else 0:g} for the plan in force"
    )
    new = draft_from(rebased, job.draft, "agents", now.tick, agent_applied=True)
    # The rebase is counted, not traced as a version of its own: the proposal was never one.
    rebased_from = Rebasing(job.draft, recorded=False)
    agents = AgentVerdict(proposal, verdict)
    if now.commit == "auto":
        return Commit(new, "auto", verdict, rebased=rebased_from, agents=agents)
    return Offer(
        new, "the agents' proposal beats the plan in force", rebased=rebased_from, agents=agents
    )
