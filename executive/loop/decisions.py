"""What the parts of a plan's life decide, as values: rebase, review and the slow tier each
*return* one of these, and one owner (``executive.loop.rounds.Rounds``) applies it. A
decision never acts by itself; every one carries the reason it was taken.

* ``Commit``: the draft flies now (its cut is still ahead).
* ``Offer``: the draft waits for the operator (policy ``commit="review"``).
* ``Rebase``: the draft is routed again from a later cut before anything else happens.
* ``Hold``: approved while the run is paused: rebased and flown when it resumes.
* ``Drop``: the draft (or an agents' proposal) is not flown; ``cause`` says what follows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from executive.contracts import AgentProposal
from executive.loop.drafts import Approval, Draft

__all__ = [
    "AgentVerdict",
    "Commit",
    "Decision",
    "Drop",
    "DropCause",
    "Hold",
    "Moment",
    "Offer",
    "Purpose",
    "Rebase",
    "Rebasing",
]

Purpose = Literal["commit", "preview", "agents"]  # what a rebase is for

# Why something is not flown, which says what the owner does next:
# rebase_failed: REBASE_FAILED, then plan again (or settle the proposal as not applied);
# superseded / not_better: an agents' proposal is settled as not applied;
# rejected / expired: the draft under review leaves it (operator, reset, timeout);
# no_proposal: the agents had nothing to offer, nothing to do.
DropCause = Literal[
    "rebase_failed", "superseded", "not_better", "rejected", "expired", "no_proposal"
]


@dataclass(frozen=True)
class Moment:
    """What a decision may read of the run when it is taken."""

    tick: int
    known_version: int  # bumps on every change that invalidates work in flight
    paused: bool
    commit: Literal["auto", "review"]  # the policy's commit mode


@dataclass(frozen=True)
class AgentVerdict:
    """An agents' proposal and the verdict on it after the rebase (settled when applied)."""

    proposal: AgentProposal
    verdict: str  # e.g. "applied after the rebase: 74 points against 64 ..."


@dataclass(frozen=True)
class Rebasing:
    """The draft a new one was rebased from: it counts as rebased once more, and with
    ``recorded`` its own version is traced as "rebased"."""

    parent: Draft
    recorded: bool = True


@dataclass(frozen=True)
class Commit:
    """Fly ``draft`` now."""

    draft: Draft
    approved: Approval
    reason: str
    rebased: Rebasing | None = None
    agents: AgentVerdict | None = None


@dataclass(frozen=True)
class Offer:
    """Put ``draft`` under review; ``reason`` is the note the review event shows (if any)."""

    draft: Draft
    reason: str | None = None
    rebased: Rebasing | None = None
    agents: AgentVerdict | None = None


@dataclass(frozen=True)
class Rebase:
    """Route ``draft``'s intent again from a cut ahead of now, for ``purpose``."""

    draft: Draft
    purpose: Purpose
    reason: str
    approved: Approval | None = None
    proposal: AgentProposal | None = None


@dataclass(frozen=True)
class Hold:
    """Approved while paused: kept, rebased and flown when the run resumes."""

    draft: Draft
    approved: Approval
    reason: str = "approved while paused"


@dataclass(frozen=True)
class Drop:
    """Not flown, because of ``cause``; ``reason`` says it in words."""

    draft: Draft | None
    cause: DropCause
    reason: str
    purpose: Purpose | None = None  # the rebase that failed (cause rebase_failed)
    proposal: AgentProposal | None = None


Decision = Commit | Offer | Rebase | Hold | Drop
