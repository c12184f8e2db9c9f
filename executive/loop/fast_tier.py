"""The fast tier's judge: a round's fresh draft (a team search from scratch) is flown only if
it is worth at least the plan in force rebased onto the same cut, on the same mission (the
points it can still collect there, routed within fuel and clear of known SAMs, as the
validator judges); otherwise the plan in force flies on, rebased. So a replan never makes
the plan worse than keeping what flies, unless the change forces it (the plan in force
cannot fly on, or no longer honours the operator's constraints). Applied by the
lifecycle's owner (``executive.loop.rounds``)."""

from __future__ import annotations

from executive.contracts import new_id
from executive.loop.decisions import Commit, Rebase
from executive.loop.drafts import Draft, Rival
from executive.loop.rebase import fly

__all__ = ["contends", "judge"]

_EPS = 1e-6


def contends(kept_points: float, fresh_points: float) -> bool:
    """Whether the plan in force, routed onto the cut to collect ``kept_points``, could be
    flown instead of a fresh draft worth ``fresh_points``: only then is it worth validating
    and making into commands (a fresh draft worth as much flies whatever the rebase's
    validation would say)."""
    return kept_points > fresh_points + _EPS


def judge(fresh: Draft, rival: Rival | None, tick: int) -> Commit | Rebase:
    """Fly ``fresh``, or the plan in force rebased (``rival``) when that is worth more."""
    f = fresh.solution.total_points
    if rival is None:
        return fly(fresh, "auto", tick, "the fresh search: no plan in force to compare with")
    kept = rival.rebased
    if kept is None:  # routed only: the fresh draft is worth at least as much
        assert not contends(rival.points, f)
        return fly(
            fresh,
            "auto",
            tick,
            f"the fresh search: {f:g} points, the plan in force rebased onto the cut"
            f" {rival.points:g}",
        )
    k = kept.solution.total_points
    if kept.violations:
        why = "; ".join(map(str, kept.violations))
        return fly(
            fresh, "auto", tick, f"the fresh search: the plan in force cannot fly on ({why})"
        )
    if len(rival.breaks) > len(rival.fresh_breaks):
        why = "; ".join(rival.breaks)
        return fly(
            fresh, "auto", tick, f"the fresh search: the plan in force breaks a constraint ({why})"
        )
    if not contends(k, f):
        return fly(
            fresh,
            "auto",
            tick,
            f"the fresh search: {f:g} points, the plan in force rebased onto the cut {k:g}",
        )
    draft = Draft(
        new_id(),
        fresh.replan,
        "rebase",
        kept.problem,
        kept.mission,
        kept.solution,
        kept.commands,
        kept.intent,
        kept.ends,
        tick,
        parent_id=rival.plan_id,
        dropped=dict(kept.dropped),
        left_out=dict(kept.left_out),
    )
    return fly(
        draft,
        "auto",
        tick,
        f"the plan in force, rebased onto the cut: {k:g} points, the fresh search {f:g}",
    )
