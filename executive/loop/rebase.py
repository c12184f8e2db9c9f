"""Rebasing: a draft whose cut has passed is cut again from the current state and its intent
routed exactly from the new checkpoints, in a worker thread, then committed (or, in review,
offered again when targets had to be dropped). Never flown blindly, never thrown away."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Literal

from executive.contracts import AgentProposal, new_id
from executive.loop.cut import ReplanProblem, build_replan
from executive.loop.drafts import Approval, Draft, Rebased, RebaseJob, airborne
from executive.loop.plan_commands import fly_commands
from planner.feasibility import plannable
from planner.intent import Intent, route_intent
from planner.mission import compile_mission
from planner.model import drone_label
from planner.solution import build_solution
from planner.validation import validate_solution

if TYPE_CHECKING:
    from executive.loop.rounds import Rounds

__all__ = ["draft_from", "finish_job", "fly", "rebase", "rebase_failed", "rebase_job"]

log = logging.getLogger(__name__)


def fly(rounds: Rounds, draft: Draft, approved: Approval) -> None:
    """Commit ``draft`` now if its cut is still ahead, else rebase it first."""
    if rounds.host.sim.tick <= draft.cut:
        rounds._commit(draft, approved)
    else:
        rounds._rebase(draft, "commit", approved=approved)


def rebase(
    rounds: Rounds,
    draft: Draft,
    purpose: Literal["commit", "preview", "agents"],
    *,
    approved: Approval | None = None,
    proposal: AgentProposal | None = None,
) -> None:
    """Route ``draft``'s intent again from a cut a rebase's latency ahead (worker thread)."""
    host = rounds.host
    sim = host.sim
    cut = sim.tick + rounds._rebase_lookahead()
    problem = build_replan(
        sim.world, cut, reserve=host.policy.fuel_reserve, not_planned=host.returning
    )
    gone = {t: "collected" for t in sim.world.collected()}
    gone.update({t: "reached before the cut" for t in problem.frozen_targets})
    compare = (rounds.intent, rounds.ends) if purpose == "agents" else None
    task = asyncio.get_running_loop().create_task(
        asyncio.to_thread(rebase_job, problem, draft.intent, draft.ends, gone, compare),
        name=f"rebase-{purpose}-{draft.plan_id}",
    )
    rounds.jobs.append(
        RebaseJob(
            purpose,
            draft,
            task,
            cut,
            rounds.known_version,
            time.perf_counter(),
            approved,
            proposal,
        )
    )
    if purpose != "preview":
        host.recorder.event(
            sim.tick,
            "REBASE",
            {"plan_id": draft.plan_id, "purpose": purpose, "cut_tick": cut},
        )


def finish_job(rounds: Rounds, job: RebaseJob) -> None:
    """A rebase is done: commit it, offer it, run it again, or drop it."""
    host = rounds.host
    tick = host.sim.tick
    draft = job.draft
    if job.purpose != "preview":
        rounds._rebase_latencies = [
            *rounds._rebase_latencies[-7:],
            (time.perf_counter() - job.started) * 1000,
        ]
    failure: str | None = None
    rebased: Rebased | None = None
    try:
        rebased = job.task.result()
    except asyncio.CancelledError:
        return
    except Exception as exc:
        log.warning("rebasing %s failed: %s", draft.plan_id, exc)
        failure = f"{type(exc).__name__}: {exc}"
    if rebased is not None and rebased.violations:
        failure = "; ".join(map(str, rebased.violations))
    if job.purpose == "preview":
        if rebased is not None and failure is None and rounds.review is draft:
            draft.preview = rebased
        return
    if failure is not None or rebased is None:
        rounds._rebase_failed(job, failure or "no plan")
        return
    if job.purpose == "agents":
        rounds._settle_agents(job, rebased)
        return
    # An approved (or automatic) commit.
    if host.paused:
        assert job.approved is not None
        rounds.approved_waiting.append((draft, job.approved))
        return
    if job.known_version != rounds.known_version or tick > job.cut:
        assert job.approved is not None
        rounds._rebase(draft, "commit", approved=job.approved)  # again, from now
        return
    new = rounds._draft_from(rebased, draft, "rebase")
    if rebased.dropped and job.approved == "operator":
        # The operator approved other targets: what changed needs a new approval.
        host.recorder.plan_version(
            draft.plan_id,
            rounds.plan_id,
            draft.cut,
            "rebased",
            draft.replan.trigger,
            draft.solution,
            None,
            draft.replan.round_id,
        )
        rounds._offer(new, note="rebased: targets had to be dropped")
        return
    assert job.approved is not None
    host.recorder.plan_version(
        draft.plan_id,
        rounds.plan_id,
        draft.cut,
        "rebased",
        draft.replan.trigger,
        draft.solution,
        None,
        draft.replan.round_id,
    )
    rounds._commit(new, job.approved)


def rebase_failed(rounds: Rounds, job: RebaseJob, why: str) -> None:
    """A rebase could not be flown: say so, and plan again from the state."""
    host = rounds.host
    host.recorder.event(
        host.sim.tick,
        "REBASE_FAILED",
        {"plan_id": job.draft.plan_id, "purpose": job.purpose, "reason": why},
    )
    if job.purpose == "agents" and job.proposal is not None:
        job.proposal.settle(False, f"rebase failed: {why}")
        return
    # An approved plan could not be flown: plan again from the state (a review run's
    # new draft waits for its own approval); the safety layer keeps the drones safe.
    job.draft.replan.status = "failed"
    rounds.pending.insert(0, f"rebase_failed:{job.draft.replan.trigger}")


def draft_from(rounds: Rounds, rebased: Rebased, parent: Draft, origin: str) -> Draft:
    """The rebased plan as a new draft whose parent is ``parent``."""
    draft = Draft(
        new_id(),
        parent.replan,
        origin,
        rebased.problem,
        rebased.mission,
        rebased.solution,
        rebased.commands,
        rebased.intent,
        rebased.ends,
        rounds.host.sim.tick,
        parent_id=parent.plan_id,
        dropped=dict(rebased.dropped),
        agent_applied=parent.agent_applied,
        left_out=dict(rebased.left_out),
    )
    parent.replan.rebased += 1
    return draft


def rebase_job(
    problem: ReplanProblem,
    intent: Intent,
    ends: dict[str, str],
    gone: dict[str, str],
    compare: tuple[Intent, dict[str, str]] | None,
) -> Rebased:
    """Route ``intent`` again on the remainder ``problem`` (worker thread). With ``compare``
    (the plan in force's intent) the intent is an agent's allocation, routed in its best
    order, and the plan in force is rebased on the same cut to be compared with it."""
    narrowed = plannable(compile_mission(problem.scenario))
    mission = narrowed.mission
    routed = route_intent(mission, intent, ends=ends, gone=gone, reorder=compare is not None)
    dropped = dict(routed.dropped)
    planned = {spec.id for spec in mission.drones}
    for drone_id, targets in intent.items():
        if drone_id in planned:
            continue
        why = problem.left_out.get(drone_id) or narrowed.left_out.get(drone_id) or "not planned"
        for target in targets:
            if target not in gone:
                dropped[target] = f"{drone_label(drone_id)} is not planned ({why})"
    solution = build_solution(mission, routed.routes)
    violations = validate_solution(mission, solution)
    commands = fly_commands(mission, solution, problem.tick, airborne(problem))
    current = None
    if compare is not None:
        now = route_intent(mission, compare[0], ends=compare[1], gone=gone)
        current = build_solution(mission, now.routes)
    return Rebased(
        problem,
        mission,
        solution,
        commands,
        list(violations),
        routed.kept,
        routed.ends,
        dropped,
        {**problem.left_out, **narrowed.left_out},
        current,
    )
