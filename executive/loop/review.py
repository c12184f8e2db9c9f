"""Review: nothing flies that the operator did not approve. A draft waits as long as the
operator needs (or until the policy's timeout) while the drones fly the plan in force under
the safety layer; its preview is rebased as time passes, for the review panel; ACCEPT flies
it, rebased when its cut has passed. What to do is decided here and applied by the
lifecycle's owner (``executive.loop.rounds``)."""

from __future__ import annotations

from typing import Any

from executive.loop.decisions import Commit, Drop, Hold, Moment, Rebase, Rebasing
from executive.loop.drafts import Draft
from executive.loop.policy import Policy
from executive.loop.rebase import draft_from, fly
from planner.intent import Intent
from sim import Sim

__all__ = ["accept", "remainder_diff", "review_view", "timed_out", "timeout"]


def accept(draft: Draft, now: Moment) -> Commit | Rebase | Hold:
    """The operator approved ``draft``: it flies (rebased if late; held while paused)."""
    preview = draft.preview
    if (
        now.tick > draft.cut
        and preview is not None
        and now.tick <= preview.problem.tick
        and not preview.dropped
        and not preview.violations
    ):
        # The review panel's rebase is still ahead of the drones: fly it now.
        new = draft_from(preview, draft, "rebase", now.tick)
        return Commit(
            new,
            "operator",
            "accepted: the review panel's rebase is still ahead of the drones",
            rebased=Rebasing(draft, recorded=False),
        )
    if now.paused:
        return Hold(draft, "operator")
    return fly(draft, "operator", now.tick, "accepted by the operator")


def timed_out(draft: Draft, tick: int, tick_hz: float, policy: Policy) -> float | None:
    """Seconds ``draft`` has waited, when that is past the policy's review timeout."""
    waited = (tick - draft.ready_tick) / tick_hz
    if policy.review_timeout_s is not None and waited >= policy.review_timeout_s:
        return waited
    return None


def timeout(draft: Draft, policy: Policy, tick: int) -> Commit | Rebase | Drop:
    """Nobody answered in time: by policy, commit the draft as if approved, or keep the
    plan in force (the draft expires)."""
    if policy.review_timeout_action == "commit":
        return fly(draft, "policy", tick, "no answer in time: committed by the policy")
    return Drop(draft, "expired", f"no answer within {policy.review_timeout_s:g} s")


def review_view(
    draft: Draft | None, intent: Intent, sim: Sim, policy: Policy
) -> dict[str, Any] | None:
    """The draft under review as the review panel shows it: made when, waited how long,
    its difference against the plan in force over the remainder, and the same rebased
    onto a recent state (what ACCEPT would fly), with what that rebase had to drop."""
    if draft is None:
        return None
    tick = sim.tick
    gone = set(sim.world.collected())
    priority = {t.id: t.priority for t in sim.world.known_environment.targets}
    view = {
        "plan_id": draft.plan_id,
        "origin": draft.origin,
        "ready_tick": draft.ready_tick,
        "cut_tick": draft.cut,
        "waited_s": (tick - draft.ready_tick) / sim.tick_hz,
        "timeout_s": policy.review_timeout_s,
        "points": draft.solution.total_points,
        "fuel": draft.solution.total_fuel,
        "dropped": draft.dropped,
        "diff": remainder_diff(intent, draft.intent, priority, gone),
        "solution": draft.solution,
        "rebased": None,
    }
    preview = draft.preview
    if preview is not None:
        view["rebased"] = {
            "cut_tick": preview.problem.tick,
            "points": preview.solution.total_points,
            "fuel": preview.solution.total_fuel,
            "dropped": preview.dropped,
            "solution": preview.solution,
        }
    return view


def remainder_diff(
    plan_intent: Intent,
    draft_intent: Intent,
    priority: dict[str, float],
    gone: set[str],
) -> dict[str, Any]:
    """What a draft changes against the plan in force, over what is still to do: targets
    already collected count as neither added nor removed, and points are those still to
    collect on each side."""
    routes: dict[str, Any] = {}
    for drone_id in sorted(set(plan_intent) | set(draft_intent)):
        old = [t for t in plan_intent.get(drone_id, ()) if t not in gone]
        new = [t for t in draft_intent.get(drone_id, ()) if t not in gone]
        if old != new:
            routes[drone_id] = {
                "added": sorted(set(new) - set(old)),
                "removed": sorted(set(old) - set(new)),
                "old": old,
                "new": new,
            }

    def points(intent: Intent) -> float:
        return sum(priority.get(t, 0.0) for ts in intent.values() for t in ts if t not in gone)

    in_force, drafted = points(plan_intent), points(draft_intent)
    return {
        "routes": routes,
        "points_in_force": in_force,
        "points_drafted": drafted,
        "points": drafted - in_force,
    }
