"""Review: nothing flies that the operator did not approve. A draft waits as long as the
operator needs (or until the policy's timeout) while the drones fly the plan in force under
the safety layer; its preview is rebased as time passes, for the review panel; ACCEPT flies
it, rebased when its cut has passed."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from executive.contracts import PlanStatus
from executive.loop.drafts import Draft, provenance
from planner.intent import Intent

if TYPE_CHECKING:
    from executive.loop.rounds import Rounds

__all__ = ["accept", "drop_draft", "offer", "remainder_diff", "review_clock", "review_view"]


def offer(rounds: Rounds, draft: Draft, note: str | None = None) -> None:
    """The draft waits for the operator; an older one waiting is superseded."""
    host = rounds.host
    old = rounds.review
    if old is not None:
        old.replan.status = "superseded"
        host.recorder.plan_version(
            old.plan_id,
            rounds.plan_id,
            old.cut,
            "superseded",
            old.replan.trigger,
            old.solution,
            old.replan.latency_ms,
            old.replan.round_id,
        )
    draft.replan.status = "review"
    rounds.review = draft
    host.recorder.plan_version(
        draft.plan_id,
        rounds.plan_id,
        draft.cut,
        "draft",
        draft.replan.trigger,
        draft.solution,
        draft.replan.latency_ms,
        draft.replan.round_id,
        provenance=provenance(draft, None),
    )
    host.recorder.event(
        host.sim.tick,
        "REVIEW",
        {
            "plan_id": draft.plan_id,
            "points": draft.solution.total_points,
            "origin": draft.origin,
            "rebased_from": draft.parent_id,
            "dropped": draft.dropped,
            **({"note": note} if note else {}),
        },
    )


def accept(rounds: Rounds) -> None:
    """The operator approves the draft under review: it flies (rebased if late)."""
    draft = rounds.review
    assert draft is not None
    rounds.review = None
    draft.replan.approved = "operator"
    preview = draft.preview
    tick = rounds.host.sim.tick
    if (
        tick > draft.cut
        and preview is not None
        and tick <= preview.problem.tick
        and not preview.dropped
        and not preview.violations
    ):
        # The review panel's rebase is still ahead of the drones: fly it now.
        new = rounds._draft_from(preview, draft, "rebase")
        rounds._commit(new, "operator")
        return
    if rounds.host.paused:
        rounds.approved_waiting.append((draft, "operator"))
        return
    rounds._fly(draft, "operator")


def drop_draft(rounds: Rounds, status: PlanStatus, reason: str) -> None:
    """The draft under review is not flown (rejected by the operator, reset, expired)."""
    draft = rounds.review
    assert draft is not None
    rounds.review = None
    host = rounds.host
    replan = draft.replan
    replan.status = status
    host.recorder.plan_version(
        draft.plan_id,
        rounds.plan_id,
        draft.cut,
        status,
        replan.trigger,
        draft.solution,
        replan.latency_ms,
        replan.round_id,
    )
    host.recorder.event(
        host.sim.tick, "PLAN_REJECTED", {"plan_id": draft.plan_id, "reason": reason}
    )


def review_clock(rounds: Rounds) -> None:
    """A waiting draft: its timeout, and its preview rebased as time passes."""
    draft = rounds.review
    host = rounds.host
    if draft is None:
        return
    policy = host.policy
    waited = (host.sim.tick - draft.ready_tick) / host.sim.tick_hz
    if policy.review_timeout_s is not None and waited >= policy.review_timeout_s:
        if policy.review_timeout_action == "commit":
            rounds.review = None
            draft.replan.approved = "policy"
            host.recorder.event(
                host.sim.tick,
                "REVIEW_TIMEOUT",
                {"plan_id": draft.plan_id, "waited_s": waited, "action": "commit"},
            )
            rounds._fly(draft, "policy")
        else:
            rounds.drop_draft("expired", f"no answer within {policy.review_timeout_s:g} s")
        return
    # The review panel's preview: only for someone watching, only paced, one at a time.
    now = time.perf_counter()
    if (
        host.recorder.publish is not None
        and host.speed is not None
        and host.sim.tick > draft.cut
        and now - draft.preview_at >= policy.review_preview_s
        and not any(j.purpose == "preview" for j in rounds.jobs)
    ):
        draft.preview_at = now
        rounds._rebase(draft, "preview")


def review_view(rounds: Rounds) -> dict[str, Any] | None:
    """The draft under review as the review panel shows it: made when, waited how long,
    its difference against the plan in force over the remainder, and the same rebased
    onto a recent state (what ACCEPT would fly), with what that rebase had to drop."""
    draft = rounds.review
    if draft is None:
        return None
    host = rounds.host
    tick = host.sim.tick
    gone = set(host.sim.world.collected())
    priority = {t.id: t.priority for t in host.sim.world.known_environment.targets}
    view = {
        "plan_id": draft.plan_id,
        "origin": draft.origin,
        "ready_tick": draft.ready_tick,
        "cut_tick": draft.cut,
        "waited_s": (tick - draft.ready_tick) / host.sim.tick_hz,
        "timeout_s": host.policy.review_timeout_s,
        "points": draft.solution.total_points,
        "fuel": draft.solution.total_fuel,
        "dropped": draft.dropped,
        "diff": remainder_diff(rounds.intent, draft.intent, priority, gone),
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
